//! One-step inlining: a scan that provably runs exactly one step (`n_steps` is the
//! constant 1) is replaced by its step, copied into the enclosing graph. No loop, no
//! output buffers: the step's values are the results, each given the leading axis of
//! length 1 a scan's result has (`PathStep::NewAxis`, a view).
//!
//! The step's inputs become: a sequence tap `k`, the row the loop reads at step 0,
//! `seq[k + past]` (`past = -min(taps, 0)`), or going backwards the last usable one,
//! `seq[len - span - 1 + k + past]`, i.e. `seq[k - 1 - max(taps, 0)]` from the end; a SITSOT
//! tap, the initial state itself; a MITSOT tap `k`, `init[depth + k]`; a non-sequence, its
//! outer value.
//!
//! The loop's run-time checks stay, in the loop's order and with its `Err`s
//! (`LoopCheck`, made by the loop's own functions): every sequence's tap window, then its
//! rows for one step; every MITSOT initial state's rows; after the whole step, each
//! recurrent result's shape against its initial state. The loop computes every step
//! result and the `until` condition even when nothing reads them, so each result is read
//! only `After` all of them (and the checks): the same errors, in the same order. (So an
//! output nothing reads is still computed here, as by the loop; the dead pass, later in a
//! round, drops such outputs from loops only.)
//! `until` changes nothing with one step (the step runs, its results are the one row).
//! `unroll` and `interchange` change no value; `keep` (save-mem) of at least 1 row keeps
//! the one row there is.
//!
//! Never inlined: a scan whose `n_steps` is not the constant 1 (without `n_steps`, the
//! count comes from sequence lengths, known only at run time); one capped to no step by
//! save-mem (`max_steps = Some(0)`: the step must not run) or with an output keeping no
//! row that is read; one reading a sequence as the loop index (`arange`, set by
//! push_out_seq, which runs after this pass: such a scan's count was not known then).

use proc_macro2::Span;

use super::{scan_label, Log};
use crate::ir::{
    DType, Graph, Literal, LoopCheck, Node, NodeId, Op, OutputKind, PathStep, ScanOp, Type,
};

pub fn run(g: &mut Graph, log: &mut Log) {
    g.normalize();
    // One scan at a time: inlining renumbers the graph (and may expose nested scans).
    while let Some(scan) = (0..g.nodes.len())
        .map(NodeId)
        .find(|&id| runs_one_step(g, id))
    {
        let label = scan_label(g.node(scan));
        inline(g, scan);
        log.fired(format!("{label} runs one step: its step is inlined"));
    }
}

/// Whether node `id` is a scan this pass inlines: exactly one step, known now, and an IR
/// consistent enough to copy (anything unexpected is left to the loop).
fn runs_one_step(g: &Graph, id: NodeId) -> bool {
    let node = g.node(id);
    let Op::Scan(op) = &node.op else {
        return false;
    };
    let one = op
        .n_steps_input()
        .and_then(|k| node.inputs.get(k))
        .is_some_and(|&n| matches!(g.node(n).op, Op::Const(Literal::Int(1))));
    // A run-time direction is left to the loop (the row a tap reads depends on it).
    if !one || op.backwards_flag || op.max_steps == Some(0) || op.sequences.iter().any(|s| s.arange)
    {
        return false;
    }
    // The scan is read only through its results, each of which gets one row of the
    // step's type (an output keeping no row would have none).
    let reads_ok = !g.outputs.contains(&id)
        && g.nodes.iter().all(|n| match n.op {
            Op::ScanOutput { index } if n.inputs == [id] => {
                op.outputs.get(index).is_some_and(|o| o.keep != Some(0))
                    && op
                        .step
                        .outputs
                        .get(index)
                        .is_some_and(|&r| n.ty == row_type(op.step.ty(r), 1))
            }
            _ => !n.inputs.contains(&id),
        });
    reads_ok && consistent(g, node, op)
}

/// `ty` with `more` leading axes (negative: fewer; callers check there are that many).
fn row_type(ty: Type, more: isize) -> Type {
    ty.with_rank(ty.rank.wrapping_add_signed(more))
}

/// The scan's inputs, step inputs and results are where `ScanOp` says, each step input of
/// the type its outer value gives.
fn consistent(g: &Graph, node: &Node, op: &ScanOp) -> bool {
    let step = &op.step;
    if node.inputs.len() != op.n_outer_inputs()
        || step.outputs.len() != op.outputs.len() + op.has_until as usize
        || step.inputs.len() != op.first_non_sequence_step_input() + op.non_sequences.len()
    {
        return false;
    }
    let inputs_in_place = step.nodes.iter().enumerate().all(|(i, n)| match n.op {
        Op::Input { index, .. } => step.inputs.get(index) == Some(&NodeId(i)),
        _ => true,
    });
    inputs_in_place
        && (0..step.inputs.len()).all(|p| match source(op, p) {
            Source::Row { sequence, .. } => {
                let outer = g.ty(node.inputs[sequence]);
                outer.rank >= 1 && step.ty(step.inputs[p]) == row_type(outer, -1)
            }
            Source::Tap { output, .. } => {
                let Some(k) = op.init_input(output) else {
                    return false;
                };
                let init = g.ty(node.inputs[k]);
                let rows = op.outputs[output].kind() == OutputKind::Mitsot;
                (!rows || init.rank >= 1)
                    && step.ty(step.inputs[p]) == row_type(init, -(rows as isize))
            }
            Source::NonSequence(k) => {
                step.ty(step.inputs[p]) == g.ty(node.inputs[op.first_non_sequence_input() + k])
            }
        })
}

/// What step input `p` reads.
enum Source {
    Row { sequence: usize, tap: i64 },
    Tap { output: usize, tap: i64 },
    NonSequence(usize),
}

fn source(op: &ScanOp, p: usize) -> Source {
    for (s, seq) in op.sequences.iter().enumerate() {
        let first = op.first_sequence_tap_input(s);
        if let Some(&tap) = p.checked_sub(first).and_then(|k| seq.taps.get(k)) {
            return Source::Row { sequence: s, tap };
        }
    }
    for (j, out) in op.outputs.iter().enumerate() {
        let first = op.first_output_tap_input(j);
        if let Some(&tap) = p.checked_sub(first).and_then(|k| out.taps.get(k)) {
            return Source::Tap { output: j, tap };
        }
    }
    Source::NonSequence(p.saturating_sub(op.first_non_sequence_step_input()))
}

/// Replaces scan node `scan` of `g` by its step (see the module's documentation), in its
/// place: what came before the scan is still computed before, what came after, after.
/// A result read as `x[0]` or `x[-1]` (its one row) reads the step's value directly.
fn inline(g: &mut Graph, scan: NodeId) {
    let old = std::mem::take(&mut g.nodes);
    let mut new_id: Vec<Option<NodeId>> = vec![None; old.len()];
    let mut step = Inlined::default();
    // Output read by each old `ScanOutput` node of the scan.
    let mut output_of: Vec<Option<usize>> = vec![None; old.len()];
    // The graph is in topological order: every input is placed before its readers.
    let map = |new_id: &[Option<NodeId>], id: NodeId| new_id[id.0].expect("inputs come first");
    for (i, mut node) in old.into_iter().enumerate() {
        if i == scan.0 {
            let inputs: Vec<NodeId> = node.inputs.iter().map(|&x| map(&new_id, x)).collect();
            let Op::Scan(op) = node.op else {
                unreachable!("runs_one_step chose a scan")
            };
            step = splice(g, *op, &inputs, node.span);
            continue;
        }
        if let (&Op::ScanOutput { index }, [from]) = (&node.op, node.inputs.as_slice()) {
            if *from == scan {
                output_of[i] = Some(index);
                let path = vec![step.after(), PathStep::NewAxis];
                node.op = Op::Subtensor { path };
                node.inputs = step.reading(index, &[]);
                new_id[i] = Some(g.add(node));
                continue;
            }
        }
        if let Op::Subtensor { path } = &node.op {
            let j = node.inputs.first().and_then(|x| output_of[x.0]);
            let at = node.inputs.get(1).map(|&x| &g.node(map(&new_id, x)).op);
            if let (Some(j), [PathStep::Index, rest @ ..], Some(Op::Const(Literal::Int(0 | -1)))) =
                (j, path.as_slice(), at)
            {
                let more: Vec<NodeId> = node.inputs[2..].iter().map(|&x| map(&new_id, x)).collect();
                let mut path = vec![step.after()];
                path.extend(rest.iter().cloned());
                node.op = Op::Subtensor { path };
                node.inputs = step.reading(j, &more);
                new_id[i] = Some(g.add(node));
                continue;
            }
        }
        node.inputs = node.inputs.iter().map(|&x| map(&new_id, x)).collect();
        new_id[i] = Some(g.add(node));
    }
    g.inputs = g.inputs.iter().map(|&x| map(&new_id, x)).collect();
    g.outputs = g.outputs.iter().map(|&x| map(&new_id, x)).collect();
    g.normalize();
}

/// A scan's step copied into the enclosing graph.
#[derive(Default)]
struct Inlined {
    /// Each output's step value (shape-checked).
    results: Vec<NodeId>,
    /// Everything the loop computed and checked: what a result is read after.
    done: Vec<NodeId>,
}

impl Inlined {
    fn after(&self) -> PathStep {
        PathStep::Check(Box::new(LoopCheck::After(self.done.len())))
    }

    /// The inputs of a path reading output `j`'s value `After` the loop's work, then
    /// `more` operands.
    fn reading(&self, j: usize, more: &[NodeId]) -> Vec<NodeId> {
        let mut inputs = vec![self.results[j]];
        inputs.extend(&self.done);
        inputs.extend(more);
        inputs
    }
}

/// Appends to `g` the checks and the step of `op` (a scan at `span` whose outer inputs are
/// now `outer`).
fn splice(g: &mut Graph, op: ScanOp, outer: &[NodeId], span: Span) -> Inlined {
    let add = |g: &mut Graph, x: NodeId, path: Vec<PathStep>, more: Vec<NodeId>, ty, label| {
        let mut inputs = vec![x];
        inputs.extend(more);
        g.add(Node {
            op: Op::Subtensor { path },
            inputs,
            ty,
            span,
            label,
        })
    };
    let check = |g: &mut Graph, x: NodeId, check: LoopCheck, more: Vec<NodeId>, label: &str| {
        let ty = g.ty(x);
        let path = vec![PathStep::Check(Box::new(check))];
        add(g, x, path, more, ty, label.to_string())
    };
    let row = |g: &mut Graph, x: NodeId, at: i64, label: &str| {
        let index = g.add_const(Literal::Int(at.into()), DType::I64, span, &at.to_string());
        let ty = row_type(g.ty(x), -1);
        add(
            g,
            x,
            vec![PathStep::Index],
            vec![index],
            ty,
            label.to_string(),
        )
    };

    // The loop's checks before its step, in its order: every sequence's tap window, then
    // every sequence's rows for one step, then every MITSOT initial state's rows.
    let windows: Vec<NodeId> = op
        .sequences
        .iter()
        .enumerate()
        .map(|(s, seq)| {
            let c = LoopCheck::Window {
                sequence: seq.label.clone(),
                taps: seq.taps.clone(),
            };
            check(g, outer[s], c, vec![], &seq.label)
        })
        .collect();
    let sequences: Vec<NodeId> = op
        .sequences
        .iter()
        .zip(windows)
        .map(|(seq, w)| {
            let c = LoopCheck::Steps {
                sequence: seq.label.clone(),
                taps: seq.taps.clone(),
                n_steps: 1,
            };
            check(g, w, c, vec![], &seq.label)
        })
        .collect();
    let inits: Vec<Option<NodeId>> = (0..op.outputs.len())
        .map(|j| {
            let out = &op.outputs[j];
            let init = outer[op.init_input(j)?];
            Some(match out.kind() {
                OutputKind::Mitsot => {
                    let c = LoopCheck::InitialRows {
                        output: out.label.clone(),
                        taps: out.taps.clone(),
                    };
                    check(g, init, c, vec![], &out.label)
                }
                _ => init,
            })
        })
        .collect();

    // The step's inputs: the rows step 0 reads, the initial states, the non-sequences.
    let mut value: Vec<Option<NodeId>> = vec![None; op.step.nodes.len()];
    for (p, &input) in op.step.inputs.iter().enumerate() {
        let name = &op.step.node(input).label;
        value[input.0] = Some(match source(&op, p) {
            Source::Row { sequence, tap } => {
                let seq = &op.sequences[sequence];
                let at = if op.go_backwards {
                    // Row len - span - 1 + tap + past, counted from the end.
                    tap - 1 - seq.taps.iter().copied().max().unwrap_or(0).max(0)
                } else {
                    tap + seq.past()
                };
                row(g, sequences[sequence], at, name)
            }
            Source::Tap { output, tap } => {
                let init = inits[output].expect("a tap's output has an initial state");
                match op.outputs[output].kind() {
                    OutputKind::Mitsot => row(g, init, op.outputs[output].depth() + tap, name),
                    _ => init,
                }
            }
            Source::NonSequence(k) => outer[op.first_non_sequence_input() + k],
        });
    }

    // The step itself, node by node in its order.
    let ScanOp {
        outputs,
        step,
        has_until,
        ..
    } = op;
    let step_outputs = step.outputs.clone();
    let labels: Vec<String> = step_outputs
        .iter()
        .map(|&r| step.node(r).label.clone())
        .collect();
    for (i, node) in step.nodes.into_iter().enumerate() {
        if matches!(node.op, Op::Input { .. }) {
            continue;
        }
        let inputs = node
            .inputs
            .iter()
            .map(|x| value[x.0].expect("the step is in topological order"))
            .collect();
        value[i] = Some(g.add(Node { inputs, ..node }));
    }
    let result = |k: usize| value[step_outputs[k].0].expect("a step result is computed");

    // After the whole step, each recurrent result's shape, in output order (a scalar's
    // always fits: the loop does not check it).
    let results: Vec<NodeId> = outputs
        .iter()
        .enumerate()
        .map(|(j, out)| {
            let r = result(j);
            match inits[j] {
                Some(init) if g.ty(r).rank > 0 => {
                    let c = LoopCheck::StepShape {
                        output: format!("`{}`", out.label),
                        result: labels[j].clone(),
                        rows: out.kind() == OutputKind::Mitsot,
                    };
                    check(g, r, c, vec![init], &labels[j])
                }
                _ => r,
            }
        })
        .collect();

    // Each result is read after everything the loop computed and checked.
    let mut done: Vec<NodeId> = sequences;
    done.extend(
        outputs
            .iter()
            .zip(&inits)
            .filter(|(o, _)| o.kind() == OutputKind::Mitsot)
            .filter_map(|(_, init)| *init),
    );
    done.extend(&results);
    if has_until {
        done.push(result(outputs.len()));
    }
    Inlined { results, done }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{apply, assert_same_results, mat, vec1, Value};
    use super::super::{Config, Log, Pass};

    fn ramp(n: usize) -> Value {
        vec1(&(0..n).map(|i| i as f64 * 0.5 + 1.0).collect::<Vec<_>>())
    }

    /// No scan left in the graph after the pass.
    fn inlined(ir: &str) -> bool {
        !ir.contains("= scan sequences")
    }

    #[test]
    fn a_sitsot_of_one_step_is_inlined() {
        let src = "pub fn f(a: ArrayView1<f64>) -> Result<(Array2<f64>, Array1<f64>)> {
            let r = scan(|p, a| p * a + 1.0, outputs_info = a, non_sequences = a, n_steps = 1, name = \"once\");
            Ok((r, r[-1]))
        }";
        let (ir, fired) = apply(src, Pass::OneStep);
        assert_eq!(
            fired,
            ["one_step: scan `once` runs one step: its step is inlined"]
        );
        assert!(inlined(&ir), "{ir}");
        // `r` gets its leading axis; `r[-1]`, the one row, is the step's value itself.
        assert_eq!(ir.matches("NewAxis").count(), 1, "{ir}");
        // The shape of the result against the initial state's, as the loop checks it.
        assert!(ir.contains("has the shape of \"`a`\""), "{ir}");
        for n in [0, 1, 3] {
            assert_same_results(src, "f", &[ramp(n)]);
        }
    }

    #[test]
    fn mitsot_taps_read_the_initial_rows_and_a_map_output_gets_its_row() {
        let src = "pub fn f(x0: ArrayView1<i64>) -> Result<(Array1<i64>, Array1<i64>)> {
            let (x, d) = scan(|a, b| (a + b, b - a), outputs_info = [taps(x0, [-2, -1]), None], n_steps = 1);
            Ok((x, d))
        }";
        let (ir, fired) = apply(src, Pass::OneStep);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(inlined(&ir), "{ir}");
        assert!(ir.contains("rows of \"x0\" taps=[-2, -1]"), "{ir}");
        // Fewer rows than the taps need is the loop's error; extra rows are ignored.
        for x0 in [vec![5i64], vec![5, 8], vec![5, 8, 100]] {
            assert_same_results(src, "f", &[Value::from(ndarray::Array1::from(x0))]);
        }
    }

    #[test]
    fn sequence_taps_read_the_rows_of_step_zero_either_way() {
        for backwards in [false, true] {
            let src = format!(
                "pub fn f(u: ArrayView2<f64>, v: ArrayView1<f64>) -> Result<Array2<f64>> {{
                    let y = scan(|a, b, c, w| a * 100.0 + b * 10.0 + c + w, sequences = [taps(u, [-2, 0, 1]), v], n_steps = 1, go_backwards = {backwards});
                    Ok(y)
                }}"
            );
            let (ir, fired) = apply(&src, Pass::OneStep);
            assert_eq!(fired.len(), 1, "{fired:?}");
            assert!(inlined(&ir), "{ir}");
            // u needs 4 rows (window 3, one step), v one: every length around that.
            for n in 0..6 {
                assert_same_results(&src, "f", &[mat(n, 2, 0.1), ramp(n.min(2))]);
                assert_same_results(&src, "f", &[mat(5, 2, 0.1), ramp(n)]);
            }
        }
    }

    /// A direction chosen at run time picks the row a tap reads: left to the loop.
    #[test]
    fn a_run_time_direction_is_left_to_the_loop() {
        let src = "pub fn f(u: ArrayView2<f64>, back: bool) -> Result<Array2<f64>> {
            let y = scan(|a, b| a * 10.0 + b, sequences = taps(u, [-1, 1]), n_steps = 1, go_backwards = back);
            Ok(y)
        }";
        let (ir, fired) = apply(src, Pass::OneStep);
        assert!(fired.is_empty(), "{fired:?}");
        assert!(!inlined(&ir), "{ir}");
        for back in [false, true] {
            for n in 0..5 {
                assert_same_results(src, "f", &[mat(n, 2, 0.1), Value::from(back)]);
            }
        }
    }

    #[test]
    fn until_keeps_its_one_step_and_its_condition() {
        let src = "pub fn f(x0: f64, u: ArrayView1<f64>) -> Result<Array1<f64>> {
            let x = scan(|x, u| (x * 2.0, until(u.sum() > x)), outputs_info = x0, non_sequences = u, n_steps = 1);
            Ok(x)
        }";
        let (ir, fired) = apply(src, Pass::OneStep);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(inlined(&ir), "{ir}");
        // The condition, though nothing reads it, is still computed.
        assert!(ir.contains("sum"), "{ir}");
        for x0 in [-1.0, 0.0, 7.5] {
            assert_same_results(src, "f", &[Value::from(x0), ramp(3)]);
        }
    }

    #[test]
    fn a_nested_scan_of_one_step_is_inlined_in_its_step() {
        let src = "pub fn f(u: ArrayView2<f64>) -> Result<Array1<f64>> {
            let s = scan(|row, acc| {
                let inner = scan(|a, b, t| t + a * b, sequences = taps(row, [-1, 0]), outputs_info = 0.0, n_steps = 1);
                acc + inner[-1]
            }, sequences = u, outputs_info = 0.0);
            Ok(s)
        }";
        let (ir, fired) = apply(src, Pass::OneStep);
        assert_eq!(fired.len(), 1, "{fired:?}");
        // The outer loop stays (its count is u's length), the inner one is gone.
        assert_eq!(ir.matches("= scan sequences").count(), 1, "{ir}");
        for (rows, cols) in [(0, 3), (2, 3), (3, 1), (2, 0)] {
            assert_same_results(src, "f", &[mat(rows, cols, 0.4)]);
        }
    }

    #[test]
    fn an_outer_scan_of_one_step_brings_its_nested_loop_out() {
        let src = "pub fn f(u: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
            let s = scan(|a| {
                let c = scan(|x, a| x * a, outputs_info = 1.0, non_sequences = a, n_steps = k);
                c[-1]
            }, sequences = u, n_steps = 1);
            Ok(s)
        }";
        let (ir, fired) = apply(src, Pass::OneStep);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert_eq!(ir.matches("= scan sequences").count(), 1, "{ir}");
        for k in [0i64, 1, 4] {
            for n in [0, 1, 3] {
                assert_same_results(src, "f", &[ramp(n), Value::from(k)]);
            }
        }
    }

    #[test]
    fn not_when_the_count_is_unknown_or_not_one() {
        for count in [
            "n_steps = k",
            "n_steps = 2",
            "n_steps = 0",
            "n_steps = k * 0 + 1",
        ] {
            let src = format!(
                "pub fn f(u: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {{
                    let s = scan(|u_t, s| s + u_t, sequences = u, outputs_info = 0.0, {count});
                    Ok(s)
                }}"
            );
            let (ir, fired) = apply(&src, Pass::OneStep);
            assert!(fired.is_empty(), "{count}: {fired:?}");
            assert!(!inlined(&ir), "{count}: {ir}");
        }
        // A sequence of one row: one step, but only at run time.
        let src = "pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
            let s = scan(|u_t, s| s + u_t, sequences = u, outputs_info = 0.0);
            Ok(s)
        }";
        assert!(apply(src, Pass::OneStep).1.is_empty());
    }

    #[test]
    fn not_when_save_mem_capped_the_loop_to_no_step() {
        // `s[..0]` reads no row: save-mem lets the loop run no step, so the step's error
        // (a mismatch of v's size) is not raised; inlining would raise it.
        let src = "pub fn f(v: ArrayView1<f64>, x0: ArrayView1<f64>) -> Result<Array2<f64>> {
            let s = scan(|x, v| x + v, outputs_info = x0, non_sequences = v, n_steps = 1);
            Ok(s[..0])
        }";
        let (mut functions, _) = crate::compile_with(src, &Config::only(&[Pass::SaveMem])).unwrap();
        assert!(crate::ir::print::function(&functions[0]).contains("max_steps=0"));
        let mut log = Log {
            pass: Pass::OneStep,
            fired: Vec::new(),
        };
        super::run(&mut functions[0].graph, &mut log);
        assert!(log.fired.is_empty(), "{:?}", log.fired);
    }
}
