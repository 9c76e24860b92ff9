//! The adjoint of a scan: backpropagation through time, as PyTensor's `Scan.L_op` builds
//! it. The backward pass is itself a `Scan` node, built in IR, that walks the forward steps
//! in reverse, so every rewrite, the emitter and the evaluator serve it unchanged.
//!
//! Every value the forward step `t` read is handed to the backward scan as an ordinary
//! sequence indexed by `t` (tap 0, `T` rows, `T` the forward steps actually taken, the
//! length of a trace): the rows each sequence tap read (views of the sequence, reversed for
//! a loop going backwards), the rows each output tap read (the trace shifted by the tap,
//! the initial state in front) and the adjoint of each output's trace that the cost gives.
//! The backward scan goes backwards over them, so its iteration `i` is forward step
//! `t = T - 1 - i`. Its step is a copy of the forward step (recomputing the step's
//! intermediate values from the inputs it read; its results are read back from their
//! traces, so work that only made them dies) followed by that copy's reverse sweep
//! (`super::sweep`), seeded with each output's adjoint at `t`: the cost's row plus, for a
//! recurrent output, the adjoint carried from the later steps that read it through their
//! taps. Carried (SITSOT outputs of the backward scan): for each float recurrent output of
//! depth `d`, `d` adjoints, `c_j` the part of the adjoint of `y[t - j]` gathered from the
//! steps done so far; and for each differentiated non-sequence, its adjoint summed over
//! the steps. Each sequence tap's adjoint is a map (NITSOT) output, one row per step.
//!
//! The results: an initial state's adjoint is the carried adjoints after the last backward
//! step (`c_d .. c_1` for the rows `init[0..d]`), a non-sequence's its sum, a sequence's the
//! rows of each tap added into zeros where the tap read them. `truncate_gradient = k` runs
//! the backward scan over the last `k` forward steps only (PyTensor's truncated BPTT). A
//! scan with `checkpoints = N` is handed to `checkpoints.rs`, which builds its gradient from
//! the two halves here: [`backward`] (the backward scan of any forward scan node, from given
//! carried adjoints) and [`contributions`] (the adjoints of the forward scan's inputs).

use std::collections::HashMap;

use super::{sweep, Builder};
use crate::ir::{
    DType, ElemOp, Graph, Literal, Node, NodeId, NonSequence, Op, Output, OutputKind, PathStep,
    ScanOp, Sequence, Type,
};
use crate::messages as msg;
use crate::rewrite::edit;

/// How the forward loop walks its sequences.
#[derive(Clone, Copy)]
pub(super) enum Direction {
    Forwards,
    Backwards,
    /// `go_backwards = flag`: known at run time.
    Flag(NodeId),
}

impl Direction {
    /// The direction of the scan `op` whose outer inputs are `xs`.
    pub(super) fn of(op: &ScanOp, xs: &[NodeId]) -> Direction {
        match op.backwards_flag_input() {
            Some(k) => Direction::Flag(xs[k]),
            None if op.go_backwards => Direction::Backwards,
            None => Direction::Forwards,
        }
    }
}

/// The contributions `(outer input position, node)` of the scan node `scan`, given the
/// adjoints `gys` of its outputs' traces (`None` where the cost reads none), for the outer
/// inputs `want` marks.
pub(super) fn adjoints(
    b: &mut Builder,
    scan: NodeId,
    gys: &[Option<NodeId>],
    want: &[bool],
) -> Result<Vec<(usize, NodeId)>, String> {
    let node = b.g.node(scan).clone();
    let Op::Scan(op) = &node.op else {
        return Err(msg::grad_no_rule("a scan's result", None));
    };
    if op.sequences.iter().any(|s| s.arange) {
        // Made by push_out_seq, which runs after `grad`.
        return Err(msg::grad_no_rule("a loop over its index", None));
    }
    if op.checkpoints.is_some() {
        return super::checkpoints::adjoints(b, scan, gys, want);
    }
    let first_ns = op.first_non_sequence_input();
    let want_seq = &want[..op.sequences.len()];
    let want_ns = &want[first_ns..first_ns + op.non_sequences.len()];
    let Some(back) = backward(b, scan, gys, want_seq, want_ns, op.truncate_gradient, None)? else {
        return Ok(Vec::new());
    };
    Ok(contributions(
        b,
        &node,
        &back.adjoints,
        want,
        back.steps,
        back.m,
    ))
}

/// What a backward pass leaves: the adjoints gathered over the steps it went through.
pub(super) struct Adjoints {
    /// Per float recurrent output (in output order, as [`carried`] lists them): the
    /// adjoints `c_1 .. c_d` after the last backward step, `c_j` that of `y[t - j]` for
    /// the first step `t` gone through.
    pub carries: Vec<(usize, Vec<NodeId>)>,
    /// Per differentiated non-sequence (in order): its adjoint summed over the steps.
    pub sums: Vec<(usize, NodeId)>,
    /// Per differentiated sequence tap that has an adjoint, `(sequence, tap position,
    /// rows)`: row `i` the adjoint of the row forward step `T - 1 - i` read through it.
    pub rows: Vec<(usize, usize, NodeId)>,
    /// The rows have the sequence's row shape also with no step (else, a map output's,
    /// they have every axis 0 then, and are reshaped).
    pub shaped: bool,
}

/// A backward pass built by [`backward`]: the forward steps taken `T`, those gone through
/// `m` (the last ones), and the adjoints.
pub(super) struct Backward {
    pub steps: NodeId,
    pub m: NodeId,
    pub adjoints: Adjoints,
}

/// Where the carried adjoints of a backward pass start (by default, zeros): `c_1 .. c_d`
/// per output of [`carried`], and a sum per differentiated non-sequence, each of the type
/// the pass carries.
pub(super) struct Start {
    pub carries: Vec<Vec<NodeId>>,
    pub sums: Vec<NodeId>,
}

/// The outputs whose adjoints a backward pass over `op` carries from step to step, with
/// their depth: the float recurrent ones, in output order.
fn carried(op: &ScanOp) -> Vec<(usize, usize)> {
    op.recurrent_outputs()
        .filter(|(o, _)| op.step.ty(op.step.outputs[*o]).dtype.is_float())
        .map(|(o, out)| (o, out.depth() as usize))
        .collect()
}

/// The backward scan of the forward scan node `scan` of `b`'s graph, appended there, with
/// the adjoints `gys` of the forward outputs' traces, differentiating the sequences and
/// non-sequences marked in `want_seq` and `want_ns`, through the last `truncate` steps (all
/// of them for `None`), its carried adjoints starting from `start` (zeros for `None`).
/// `None` when the scan has no output.
pub(super) fn backward(
    b: &mut Builder,
    scan: NodeId,
    gys: &[Option<NodeId>],
    want_seq: &[bool],
    want_ns: &[bool],
    truncate: Option<usize>,
    start: Option<Start>,
) -> Result<Option<Backward>, String> {
    let node = b.g.node(scan).clone();
    let Op::Scan(op) = &node.op else {
        return Err(msg::grad_no_rule("a scan's result", None));
    };
    let op: &ScanOp = op;
    let xs = &node.inputs;
    let f = &op.step;
    let direction = Direction::of(op, xs);
    let result_ty = |o: usize| f.ty(f.outputs[o]);
    // How the labels below name each output: the user's name of its trace if any.
    let names: Vec<String> = (0..op.outputs.len())
        .map(|o| b.output_name(scan, o))
        .collect();
    let traces: Vec<NodeId> = (0..op.outputs.len())
        .map(|o| {
            let t = result_ty(o);
            b.add(
                Op::ScanOutput { index: o },
                vec![scan],
                t.with_rank(t.rank + 1),
            )
        })
        .collect();
    // The steps taken, and those backpropagated through.
    let Some(&first) = traces.first() else {
        return Ok(None);
    };
    let steps = b.shape(first, 0);
    // Each recurrent output with the position of its initial state among the outer inputs.
    let recurrent: Vec<(usize, usize)> = op
        .recurrent_outputs()
        .filter_map(|(o, _)| op.init_input(o).map(|at| (o, at)))
        .collect();
    let m = match truncate {
        Some(k) => {
            let k = b.int(k as i64);
            b.elem(ElemOp::Minimum, vec![steps, k])
        }
        None => steps,
    };

    // The backward scan's sequences: (outer array of T rows, row type, label).
    let mut seqs: Vec<(NodeId, Type, String)> = Vec::new();
    let mut gy_seq = vec![None; op.outputs.len()];
    for (o, gy) in gys.iter().enumerate() {
        if let Some(gy) = *gy {
            gy_seq[o] = Some(seqs.len());
            let label = format!("adjoint of {}", names[o]);
            seqs.push((gy, result_ty(o), label));
        }
    }
    // The forward step's inputs, step by step: sequence taps, then output taps.
    let first_tap_seq = seqs.len();
    for (s, seq) in op.sequences.iter().enumerate() {
        // A loop over one sequence read at tap 0, with no `n_steps` or `until`, read all of
        // it: the sequence itself, so that work on it pushed out of both loops (the
        // input projection `x_t.dot(w_x)`, which the backward step recomputes) is one node.
        let whole = op.sequences.len() == 1
            && seq.taps == [0]
            && !op.has_n_steps
            && !op.has_until
            && op.max_steps.is_none();
        for (j, &k) in seq.taps.iter().enumerate() {
            let rows = if whole {
                xs[s]
            } else {
                let range = sequence_rows(b, xs[s], seq, k, steps, steps, direction);
                slice(b, xs[s], Some(range.start), range.end)
            };
            let window = in_step_order(b, rows, direction);
            let ty = f.ty(f.inputs[op.first_sequence_tap_input(s) + j]);
            seqs.push((window, ty, format!("{}[t{k:+}]", seq.label)));
        }
    }
    for &(o, at) in &recurrent {
        let (out, init) = (&op.outputs[o], xs[at]);
        let d = out.depth();
        let head = if out.kind() == OutputKind::Sitsot {
            b.new_axis(init, 0)
        } else {
            let d = b.int(d);
            slice(b, init, None, d)
        };
        let t = b.ty(head);
        let history = b.add(Op::Concatenate { axis: 0 }, vec![head, traces[o]], t);
        for (j, &k) in out.taps.iter().enumerate() {
            let start = b.int(d + k);
            let end = b.elem(ElemOp::Add, vec![start, steps]);
            let rows = slice(b, history, Some(start), end);
            let ty = f.ty(f.inputs[op.first_output_tap_input(o) + j]);
            seqs.push((rows, ty, format!("{}[t{k:+}]", names[o])));
        }
    }
    // Each computed step result, as forward step t left it in its trace: the adjoints read
    // those values (tanh's is 1 - y^2) from here rather than computing them again, so the
    // copied forward work that only made them dies (an Elman step's two products).
    let mut result_seq = vec![None; op.outputs.len()];
    for (o, &trace) in traces.iter().enumerate() {
        let computed = !matches!(f.node(f.outputs[o]).op, Op::Input { .. });
        if computed && result_ty(o).dtype.is_float() {
            result_seq[o] = Some(seqs.len());
            seqs.push((trace, result_ty(o), format!("{}[t]", names[o])));
        }
    }
    let n_inner_taps = op.first_non_sequence_step_input();
    let first_ns = op.first_non_sequence_input();
    let non_sequences: Vec<NodeId> = xs[first_ns..first_ns + op.non_sequences.len()].to_vec();

    // The backward step: its inputs first, in the scan's order.
    let mut g = Graph::default();
    let span = b.span;
    let seq_inputs: Vec<NodeId> = seqs
        .iter()
        .map(|(_, ty, name)| g.add_input(name, *ty, span))
        .collect();
    // Carried adjoints: per float recurrent output, c_1 .. c_d; then the sums.
    let mut carries: Vec<(usize, usize, Vec<NodeId>)> = Vec::new();
    for (o, d) in carried(op) {
        let Some(at) = op.init_input(o) else { continue };
        let c = (1..=d)
            .map(|j| {
                g.add_input(
                    &format!("adjoint of {}[t-{j}]", names[o]),
                    result_ty(o),
                    span,
                )
            })
            .collect();
        carries.push((o, at, c));
    }
    let wanted_ns: Vec<usize> = (0..non_sequences.len()).filter(|&n| want_ns[n]).collect();
    let sums: Vec<NodeId> = wanted_ns
        .iter()
        .map(|&n| {
            let name = format!("adjoint of {}", op.non_sequences[n].label);
            g.add_input(&name, b.ty(non_sequences[n]), span)
        })
        .collect();
    let ns_inputs: Vec<NodeId> = op
        .non_sequences
        .iter()
        .zip(&non_sequences)
        .map(|(ns, &x)| g.add_input(&ns.label, b.ty(x), span))
        .collect();
    // The forward step copied, reading the backward step's inputs.
    let mut map: Vec<NodeId> = Vec::with_capacity(f.nodes.len());
    for fnode in &f.nodes {
        let id = match &fnode.op {
            Op::Input { index, .. } if *index < n_inner_taps => seq_inputs[first_tap_seq + index],
            Op::Input { index, .. } => ns_inputs[index - n_inner_taps],
            _ => g.add(Node {
                inputs: fnode.inputs.iter().map(|i| map[i.0]).collect(),
                ..fnode.clone()
            }),
        };
        map.push(id);
    }

    let mut inner = b.within(&mut g);
    // Each output's adjoint at t: the cost's row plus the carried part.
    let mut seeds = Vec::new();
    for o in (0..op.outputs.len()).filter(|&o| result_ty(o).dtype.is_float()) {
        let carried = carries
            .iter()
            .find(|(p, _, _)| *p == o)
            .map(|(_, _, c)| c[0]);
        let from_cost = gy_seq[o].map(|k| seq_inputs[k]);
        inner.label = format!("adjoint of {}[t]", names[o]);
        let seed = match (from_cost, carried) {
            (Some(a), Some(c)) => inner.elem(ElemOp::Add, vec![a, c]),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => continue,
        };
        seeds.push((map[f.outputs[o].0], seed));
    }
    // Differentiated: the taps of the wanted sequences, every float output tap (the
    // adjoint flows on through them), the wanted non-sequences.
    let mut wrt: Vec<NodeId> = Vec::new();
    let mut seq_wrt = Vec::new();
    for (s, seq) in op.sequences.iter().enumerate() {
        if want_seq[s] {
            for j in 0..seq.taps.len() {
                seq_wrt.push((s, j, wrt.len()));
                wrt.push(seq_inputs[first_tap_seq + op.first_sequence_tap_input(s) + j]);
            }
        }
    }
    let mut tap_wrt = Vec::new();
    for (o, _, _) in &carries {
        for j in 0..op.outputs[*o].taps.len() {
            tap_wrt.push(wrt.len());
            wrt.push(map[f.inputs[op.first_output_tap_input(*o) + j].0]);
        }
    }
    let first_ns_wrt = wrt.len();
    wrt.extend(wanted_ns.iter().map(|&n| ns_inputs[n]));
    let grads = sweep(&mut inner, &seeds, &wrt, false)
        .map_err(|e| msg::grad_in_scan_step(&e.message(), &node.label))?;

    // The backward step's results: the carried adjoints, the sums, the sequences' rows.
    let mut results: Vec<NodeId> = Vec::new();
    let mut outputs: Vec<Output> = Vec::new();
    let carry_output = |label: String| Output {
        taps: vec![-1],
        keep: None,
        total: false,
        label,
        span,
    };
    let mut tap_grads = tap_wrt.iter().map(|&w| grads[w]);
    for (o, _, c) in &carries {
        let out = &op.outputs[*o];
        let by_tap: Vec<(i64, Option<NodeId>)> = out
            .taps
            .iter()
            .map(|&k| (k, tap_grads.next().flatten()))
            .collect();
        let d = c.len();
        for j in 1..=d {
            // Read at step t, c[j] (c_{j+1}) holds the later steps' part of the adjoint of
            // y[t - j]; after step t, c_j holds it, with step t's own through tap -j.
            let from_tap = by_tap
                .iter()
                .find(|(k, _)| *k == -(j as i64))
                .and_then(|(_, g)| *g);
            let older = (j < d).then(|| c[j]);
            let label = format!("adjoint of {}[t-{j}]", names[*o]);
            inner.label = label.clone();
            let v = match (older, from_tap) {
                (Some(a), Some(g)) => inner.elem(ElemOp::Add, vec![a, g]),
                (Some(a), None) | (None, Some(a)) => a,
                (None, None) => inner.zeros_like(c[j - 1]),
            };
            results.push(v);
            outputs.push(carry_output(label));
        }
    }
    for (i, (n, &acc)) in wanted_ns.iter().zip(&sums).enumerate() {
        let label = format!("adjoint of {}", op.non_sequences[*n].label);
        inner.label = label.clone();
        let v = match grads[first_ns_wrt + i] {
            Some(gn) => inner.elem(ElemOp::Add, vec![acc, gn]),
            None => acc,
        };
        results.push(v);
        outputs.push(carry_output(label));
    }
    let mut seq_rows = Vec::new();
    for &(s, j, w) in &seq_wrt {
        if let Some(gs) = grads[w] {
            seq_rows.push((s, j, outputs.len()));
            results.push(gs);
            outputs.push(Output {
                taps: vec![],
                keep: None,
                total: false,
                label: format!("adjoint of {}", op.sequences[s].label),
                span,
            });
        }
    }
    // The forward step's results read back from their traces (above).
    for (o, k) in result_seq.iter().enumerate() {
        if let Some(k) = *k {
            g.replace_uses(map[f.outputs[o].0], seq_inputs[k]);
        }
    }
    g.outputs = results;

    // The backward scan's outer inputs: sequences, initial carries, non-sequences, steps.
    let mut outer: Vec<NodeId> = seqs.iter().map(|(x, _, _)| *x).collect();
    let (first_carries, first_sums) = match start {
        Some(Start { carries, sums }) => (carries, sums),
        None => {
            let mut zero_rows = Vec::new();
            for (o, at, c) in &carries {
                let init = xs[*at];
                let zero = if op.outputs[*o].kind() == OutputKind::Sitsot {
                    b.zeros_like(init)
                } else {
                    let first = b.int(0);
                    let row = b.subtensor(init, vec![PathStep::Index], vec![first]);
                    b.zeros_like(row)
                };
                zero_rows.push(vec![zero; c.len()]);
            }
            let zero_sums = wanted_ns
                .iter()
                .map(|&n| b.zeros_like(non_sequences[n]))
                .collect();
            (zero_rows, zero_sums)
        }
    };
    for ((o, _, c), first) in carries.iter().zip(&first_carries) {
        if first.len() != c.len() {
            return Err(msg::grad_internal("scan", b.ty(first[0]), result_ty(*o)));
        }
        for &zero in first {
            if b.ty(zero) != result_ty(*o) {
                return Err(msg::grad_internal("scan", b.ty(zero), result_ty(*o)));
            }
            outer.push(zero);
        }
    }
    outer.extend(&first_sums);
    outer.extend(&non_sequences);
    outer.push(m);
    let backward = ScanOp {
        name: op.name.as_ref().map(|n| format!("adjoint of {n}")),
        sequences: seqs
            .iter()
            .map(|(_, _, label)| Sequence {
                taps: vec![0],
                arange: false,
                label: label.clone(),
                span,
            })
            .collect(),
        outputs,
        non_sequences: op
            .non_sequences
            .iter()
            .map(|ns| NonSequence {
                label: ns.label.clone(),
                implicit: false,
            })
            .collect(),
        has_n_steps: true,
        go_backwards: true,
        backwards_flag: false,
        has_until: false,
        interchange: false,
        lanes: false,
        unroll: 1,
        max_steps: None,
        truncate_gradient: None,
        checkpoints: None,
        step: g,
    };
    let mut backward = backward;
    keep_for_backward(b, scan, f, &map, &mut backward, &mut outer);
    let out_types: Vec<Type> = backward
        .step
        .outputs
        .iter()
        .map(|&r| backward.step.ty(r))
        .collect();
    let bscan = b.add(
        Op::Scan(Box::new(backward)),
        outer,
        Type::scalar(DType::Bool),
    );
    let btrace = |b: &mut Builder, k: usize| {
        let t = out_types[k];
        b.add(
            Op::ScanOutput { index: k },
            vec![bscan],
            t.with_rank(t.rank + 1),
        )
    };

    // What the pass leaves: each carried value's last row (its start when no step ran).
    let mut adjoints = Adjoints {
        carries: Vec::new(),
        sums: Vec::new(),
        rows: Vec::new(),
        shaped: false,
    };
    let mut k = 0;
    for ((o, _, c), first) in carries.iter().zip(&first_carries) {
        let finals: Vec<NodeId> = (0..c.len())
            .map(|j| {
                let trace = btrace(b, k + j);
                last_or(b, first[j], trace)
            })
            .collect();
        k += c.len();
        adjoints.carries.push((*o, finals));
    }
    for (&n, &first) in wanted_ns.iter().zip(&first_sums) {
        let trace = btrace(b, k);
        k += 1;
        adjoints.sums.push((n, last_or(b, first, trace)));
    }
    for (s, j, index) in seq_rows {
        adjoints.rows.push((s, j, btrace(b, index)));
    }
    Ok(Some(Backward { steps, m, adjoints }))
}

/// The adjoints of the outer inputs of the forward scan `node` from what its backward
/// pass left, `(outer input position, node)` for the inputs `want` marks: an initial
/// state's from the carried adjoints, a non-sequence's its sum, a sequence's the rows of
/// each tap added into zeros where the tap read them over the last `m` of `steps` steps.
pub(super) fn contributions(
    b: &mut Builder,
    node: &Node,
    adjoints: &Adjoints,
    want: &[bool],
    steps: NodeId,
    m: NodeId,
) -> Vec<(usize, NodeId)> {
    let Op::Scan(op) = &node.op else {
        return Vec::new();
    };
    let xs = &node.inputs;
    let direction = Direction::of(op, xs);
    let mut out = Vec::new();
    for (o, finals) in &adjoints.carries {
        let Some(at) = op.init_input(*o) else {
            continue;
        };
        if !want[at] {
            continue;
        }
        let init = xs[at];
        let g = if op.outputs[*o].kind() == OutputKind::Sitsot {
            finals[0]
        } else {
            // init[0] is y[-d], the row whose adjoint is c_d.
            let rows: Vec<NodeId> = finals.iter().rev().copied().collect();
            let t = b.ty(init);
            let stacked = b.add(Op::Stack { axis: 0 }, rows, t);
            let zeros = b.zeros_like(init);
            let d = b.int(finals.len() as i64);
            let path = vec![PathStep::Slice {
                start: false,
                end: true,
            }];
            b.add(
                Op::SetSubtensor { path, inc: false },
                vec![zeros, stacked, d],
                t,
            )
        };
        out.push((at, g));
    }
    let first_ns = op.first_non_sequence_input();
    for &(n, sum) in &adjoints.sums {
        out.push((first_ns + n, sum));
    }
    let mut by_seq: Vec<Option<NodeId>> = vec![None; op.sequences.len()];
    for &(s, j, trace) in &adjoints.rows {
        let seq = &op.sequences[s];
        // Row i of the trace is step T-1-i: reversed for a forward loop, its rows come in
        // the sequence's order either way.
        let reversed = match direction {
            Direction::Forwards => Direction::Backwards,
            Direction::Backwards => Direction::Forwards,
            Direction::Flag(flag) => {
                let t = b.ty(flag);
                Direction::Flag(b.add(Op::Elemwise(ElemOp::Not), vec![flag], t))
            }
        };
        let mut rows = in_step_order(b, trace, reversed);
        let t = b.ty(rows);
        if t.rank > 1 && !adjoints.shaped {
            // With no step, a map output's rows have every axis 0 (PyTensor's shape):
            // reshaped to the sequence's rows, so that adding no row is no error.
            let mut dims = vec![rows, b.int(-1)];
            dims.extend((1..t.rank).map(|k| b.shape(xs[s], k)));
            rows = b.add(Op::Reshape, dims, t);
        }
        let range = sequence_rows(b, xs[s], seq, seq.taps[j], steps, m, direction);
        let acc = match by_seq[s] {
            Some(acc) => acc,
            None => b.zeros_like(xs[s]),
        };
        let t = b.ty(acc);
        let path = vec![PathStep::Slice {
            start: true,
            end: true,
        }];
        by_seq[s] = Some(b.add(
            Op::SetSubtensor { path, inc: true },
            vec![acc, rows, range.start, range.end],
            t,
        ));
    }
    for (s, g) in by_seq.into_iter().enumerate() {
        if let Some(g) = g {
            out.push((s, g));
        }
    }
    out
}

/// A range `start..end` of a sequence's rows.
struct Rows {
    start: NodeId,
    end: NodeId,
}

/// The rows of `x` that tap `k` of `seq` read over the last `m` of `steps` forward steps
/// (`m = steps` for all of them), as a range in the sequence's order: going forwards, step
/// t reads row `t + past + k`; going backwards, `L - span - 1 - t + past + k`.
fn sequence_rows(
    b: &mut Builder,
    x: NodeId,
    seq: &Sequence,
    k: i64,
    steps: NodeId,
    m: NodeId,
    direction: Direction,
) -> Rows {
    let offset = b.int(seq.past() + k);
    let forwards = |b: &mut Builder| {
        // The first of the last m steps is T - m.
        let skipped = b.elem(ElemOp::Sub, vec![steps, m]);
        b.elem(ElemOp::Add, vec![offset, skipped])
    };
    let backwards = |b: &mut Builder| {
        // The last step read the lowest row: L - span - T + past + k.
        let len = b.shape(x, 0);
        let span = b.int(seq.span());
        let room = b.elem(ElemOp::Sub, vec![len, span]);
        let first = b.elem(ElemOp::Sub, vec![room, steps]);
        b.elem(ElemOp::Add, vec![first, offset])
    };
    let start = match direction {
        Direction::Forwards => forwards(b),
        Direction::Backwards => backwards(b),
        Direction::Flag(flag) => {
            let (back, fwd) = (backwards(b), forwards(b));
            b.elem(ElemOp::Where, vec![flag, back, fwd])
        }
    };
    let end = b.elem(ElemOp::Add, vec![start, m]);
    Rows { start, end }
}

/// Rows of a sequence read one per step, put in step order: reversed when the loop went
/// backwards (a view).
pub(super) fn in_step_order(b: &mut Builder, x: NodeId, direction: Direction) -> NodeId {
    match direction {
        Direction::Forwards => x,
        Direction::Backwards => b.flip(x, 0),
        Direction::Flag(flag) => {
            let (minus, plus) = (b.int(-1), b.int(1));
            let step = b.elem(ElemOp::Where, vec![flag, minus, plus]);
            let path = vec![PathStep::Stepped {
                start: false,
                end: false,
            }];
            b.subtensor(x, path, vec![step])
        }
    }
}

/// The products and transcendental functions of the forward step that read its
/// recurrence (an output tap) and that the backward step still needs after its sweep (an
/// LSTM's four gate activations, which their adjoints read; not an Elman step's `tanh`,
/// whose value is `h_t`, already a trace, nor an LSTM's `tanh(c_t)`, a function of `c_t`'s
/// trace alone, [`recomputed_from_inputs`]): kept by the forward loop as map outputs and
/// read back from their traces, not computed again. Computed again, each
/// would be a second pass of the forward loop's costliest work (its products: a GEMM over
/// every step once pushed out; its transcendentals); kept, it costs its trace. Last node
/// first, so that a value needed only to compute a kept one (the gate block, and its
/// products) is not kept too; what is then needed only for its shape takes it from its
/// operands ([`shapes_from_operands`]). `map` takes forward step nodes to their copies in
/// the backward step.
fn keep_for_backward(
    b: &mut Builder,
    scan: NodeId,
    f: &Graph,
    map: &[NodeId],
    backward: &mut ScanOp,
    outer: &mut Vec<NodeId>,
) {
    let Op::Scan(op) = &b.g.node(scan).op else {
        return;
    };
    let taps: Vec<NodeId> =
        f.inputs[op.first_output_tap_input(0)..op.first_non_sequence_step_input()].to_vec();
    // Last first: a product read only by a later product that is kept is not needed.
    for v in (0..f.nodes.len()).rev().map(NodeId) {
        let costly = match f.node(v).op {
            Op::Dot => true,
            Op::Elemwise(op) => op.is_transcendental(),
            _ => false,
        };
        let wanted = costly
            && f.ty(v).dtype.is_float()
            && backward.step.live()[map[v.0].0]
            && crate::rewrite::edit::depends_on(f, v, &taps)
            && !recomputed_from_inputs(&backward.step, f, v, map);
        if !wanted {
            continue;
        }
        let (ty, label, span) = (f.ty(v), f.node(v).label.clone(), f.node(v).span);
        let Op::Scan(op) = &mut b.g.nodes[scan.0].op else {
            return;
        };
        // Already a map output (differentiated twice): its trace.
        let k = match (0..op.outputs.len())
            .find(|&k| op.step.outputs[k] == v && op.outputs[k].kind() == OutputKind::Nitsot)
        {
            Some(k) => k,
            None => crate::rewrite::edit::add_map_output(op, v, &label, span),
        };
        let trace = b.add(
            Op::ScanOutput { index: k },
            vec![scan],
            ty.with_rank(ty.rank + 1),
        );
        let read = crate::rewrite::edit::add_sequence(
            backward,
            outer,
            trace,
            &[0],
            ty,
            &format!("{label}[t]"),
            span,
        );
        backward.step.replace_uses(map[v.0], read[0]);
        // A unary function's operand has its shape: lengths read off the operand come
        // from the kept value, so the operand (an LSTM's gate block) is not recomputed
        // for its shape alone.
        if let [x] = f.node(v).inputs[..] {
            if matches!(f.node(v).op, Op::Elemwise(_)) {
                let step = &mut backward.step;
                for node in &mut step.nodes {
                    if matches!(node.op, Op::Shape { .. }) && node.inputs == [map[x.0]] {
                        node.inputs = vec![read[0]];
                    }
                }
            }
        }
        shapes_from_operands(&mut backward.step);
    }
    backward.step.normalize();
}

/// Whether forward step node `v` is an elementwise function whose copy in the backward
/// step reads nothing but that step's inputs (a step result read back from its trace, a
/// tap, a non-sequence): computed there again, it costs the same function over the same
/// elements as the pass that would fill its trace (push_out_output computes such a kept
/// value after the forward loop, from the result's trace), it fuses with the backward
/// step's other elementwise work (push_out_seq leaves it there), and it needs no trace: an
/// LSTM's `tanh(c_t)`, 8.4 MB of SPEC's lstm_grad.
fn recomputed_from_inputs(step: &Graph, f: &Graph, v: NodeId, map: &[NodeId]) -> bool {
    matches!(f.node(v).op, Op::Elemwise(_))
        && step
            .node(map[v.0])
            .inputs
            .iter()
            .all(|&i| matches!(step.node(i).op, Op::Input { .. }))
}

/// Backward step values now computed only for their shape (their lengths read, or the
/// zeros an adjoint is accumulated into, `zeros_like`): each such use takes the lengths
/// from the value's operands instead (numpy's broadcast of an elementwise operation's, a
/// product's), so the value is not computed again: an LSTM's gate block `x_t.dot(w_x) +
/// h_tm1.dot(w_h) + b` once its four activations are kept, and with it the products.
/// The forward step computed the same values from operands of the same shapes, so they
/// broadcast, and nothing can fail here that would not have failed there.
fn shapes_from_operands(step: &mut Graph) {
    loop {
        let live = step.live();
        let mut readers = step.consumers();
        for r in &mut readers {
            r.retain(|u| live[u.0]);
            r.dedup();
        }
        let shape_only = |x: usize| {
            live[x]
                && step.nodes[x].ty.rank > 0
                && !step.outputs.contains(&NodeId(x))
                && !readers[x].is_empty()
                && readers[x]
                    .iter()
                    .all(|&u| matches!(step.node(u).op, Op::Shape { .. } | Op::FillLike { .. }))
                && has_length_rule(step, NodeId(x))
        };
        let Some(x) = (0..step.nodes.len()).find(|&x| shape_only(x)).map(NodeId) else {
            return;
        };
        let Some(dims) = operand_lengths(step, x, &mut HashMap::new()) else {
            return;
        };
        let (ty, span) = (step.ty(x), step.node(x).span);
        for &u in &readers[x.0] {
            match step.node(u).op {
                Op::Shape { axis } => step.replace_uses(u, dims[axis]),
                _ => {
                    let zero = step.add_const(Literal::zero(ty.dtype), ty.dtype, span, "0");
                    let mut inputs = vec![zero];
                    inputs.extend(&dims);
                    let like = step.add(Node {
                        op: Op::BroadcastTo,
                        inputs,
                        ty,
                        span,
                        label: step.node(x).label.clone(),
                    });
                    step.nodes[u.0].inputs = vec![like];
                }
            }
        }
    }
}

/// Whether [`operand_lengths`] knows `x`'s lengths from its operands'.
fn has_length_rule(step: &Graph, x: NodeId) -> bool {
    let node = step.node(x);
    match node.op {
        Op::Elemwise(_) | Op::Cast => true,
        Op::Dot => {
            let (ra, rb) = (step.ty(node.inputs[0]).rank, step.ty(node.inputs[1]).rank);
            ra > 0 && rb > 0 && ra + rb - 2 == node.ty.rank
        }
        _ => false,
    }
}

/// The lengths of `x`'s axes from its operands' (added to `step`), when `x` is an
/// elementwise operation or cast (numpy's broadcast, trailing axes aligned) or a product
/// (numpy's `dot`: `a`'s axes but the last, then `b`'s but the second to last); an
/// operand of another kind gives its own `Shape`s. `None` for `x` itself of another kind.
fn operand_lengths(
    step: &mut Graph,
    x: NodeId,
    done: &mut HashMap<NodeId, Vec<NodeId>>,
) -> Option<Vec<NodeId>> {
    if let Some(dims) = done.get(&x) {
        return Some(dims.clone());
    }
    let node = step.node(x).clone();
    let rank = node.ty.rank;
    let dims = match node.op {
        Op::Elemwise(_) | Op::Cast => {
            let operands = node
                .inputs
                .iter()
                .map(|&i| lengths_of(step, i, done))
                .collect();
            edit::broadcast_shapes(step, rank, operands, node.span)?
        }
        Op::Dot if has_length_rule(step, x) => {
            let (a, b) = (node.inputs[0], node.inputs[1]);
            let (ra, rb) = (step.ty(a).rank, step.ty(b).rank);
            let (da, db) = (lengths_of(step, a, done), lengths_of(step, b, done));
            let mut dims = da[..ra - 1].to_vec();
            if rb >= 2 {
                dims.extend(&db[..rb - 2]);
                dims.push(db[rb - 1]);
            }
            dims
        }
        _ => return None,
    };
    done.insert(x, dims.clone());
    Some(dims)
}

/// [`operand_lengths`], or `x`'s own `Shape`s.
fn lengths_of(step: &mut Graph, x: NodeId, done: &mut HashMap<NodeId, Vec<NodeId>>) -> Vec<NodeId> {
    operand_lengths(step, x, done).unwrap_or_else(|| {
        let span = step.node(x).span;
        (0..step.ty(x).rank)
            .map(|axis| edit::length(step, x, axis, span))
            .collect()
    })
}

/// `x[start..end]` (`x[..end]` without a start), a view.
pub(super) fn slice(b: &mut Builder, x: NodeId, start: Option<NodeId>, end: NodeId) -> NodeId {
    let path = vec![PathStep::Slice {
        start: start.is_some(),
        end: true,
    }];
    let operands = start.into_iter().chain([end]).collect();
    b.subtensor(x, path, operands)
}

/// The last row of `trace`, or `first` when it has none (no step was taken):
/// `concatenate([first[None], trace[-1..]])[-1]`, which save-mem shrinks the trace for.
pub(super) fn last_or(b: &mut Builder, first: NodeId, trace: NodeId) -> NodeId {
    let head = b.new_axis(first, 0);
    let minus_one = b.int(-1);
    let path = vec![PathStep::Slice {
        start: true,
        end: false,
    }];
    let tail = b.subtensor(trace, path, vec![minus_one]);
    let t = b.ty(trace);
    let both = b.add(Op::Concatenate { axis: 0 }, vec![head, tail], t);
    let minus_one = b.int(-1);
    b.subtensor(both, vec![PathStep::Index], vec![minus_one])
}
