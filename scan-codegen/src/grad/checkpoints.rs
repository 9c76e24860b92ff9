//! The adjoint of a scan with `checkpoints = N` (PyTensor's `scan_checkpoints(..,
//! save_every_N = N)`, with output taps, sequence taps, `go_backwards`, a run-time
//! direction, `n_steps` and `until` as well): backpropagation through time that stores
//! the state before every N-th step instead of every state, and recomputes each segment
//! of N steps from its checkpoint when the backward pass reaches it. Built from nested
//! scans alone, so every rewrite, the emitter and the evaluator serve it unchanged.
//!
//! With `T` forward steps taken, `Q = T / N` full segments and `R = T - Q N` steps after
//! them (the tail), all in the outer graph:
//! - the checkpoint pass: a scan over the `Q` segments whose step runs the forward scan
//!   (`recompute`: the user's scan, its sequences cut to the segment's rows, from the
//!   carried window, `N` steps) and carries on the last `depth` states of each recurrent
//!   output (its tap window: the state itself for a SITSOT). Its traces, after the
//!   initial windows, are the windows before each segment: `Q + 1` rows;
//! - the tail: the forward scan recomputed over the last `R` steps from window `Q`, and
//!   its backward pass ([`super::scan::backward`]) from zero adjoints;
//! - the segments: a scan going backwards over the `Q` segments, carrying the adjoints of
//!   the recurrent outputs' taps and the non-sequences' sums (from where the tail left
//!   them), whose step recomputes its segment from its window (traces of N rows) and runs
//!   that recomputation's backward pass from the carried adjoints; each differentiated
//!   sequence tap's N rows of adjoints are a map output;
//! - the adjoints of the inputs as without checkpoints (`super::scan::contributions`),
//!   from the carried values left after the last segment and the rows of the tail and
//!   the segments (row `i` still forward step `T - 1 - i`).
//!
//! The forward scan's traces are not read: `T` comes from `n_steps`, from the sequences'
//! lengths, or (with `until`) from a counter output lowering added (`steps_taken`); and
//! the gradient rules that need only a trace's shape (the adjoint of `x[-1]` is zeros of
//! x's shape) get it from there too (`trace_shape`), so save-mem may still shrink the
//! traces the cost reads by their last rows. Peak memory for the gradient's intermediates
//! is then `Q + 1` windows plus a segment's traces (about `T / N + N` rows) instead of
//! `T`; the price is one more forward pass over the steps (the checkpoint pass) besides
//! the recomputation of each segment.

use super::scan::{backward, contributions, last_or, slice, Adjoints, Direction, Start};
use super::Builder;
use crate::ir::{
    DType, ElemOp, Graph, NodeId, NonSequence, Op, Output, OutputKind, PathStep, ScanOp, Sequence,
    Type,
};
use crate::messages as msg;
use crate::rewrite::edit::remove_step_inputs;

/// The number of forward steps the scan node `scan` took, as an i64 scalar, read without
/// its traces: its counter output's last row (with `until`), `n_steps`, or the steps its
/// sequences allow (the fewest). `None` unless the scan has `checkpoints`.
pub(super) fn steps_taken(b: &mut Builder, scan: NodeId) -> Option<NodeId> {
    let node = b.g.node(scan).clone();
    let Op::Scan(op) = &node.op else { return None };
    let ck = op.checkpoints?;
    if let Some(c) = ck.counter {
        let ty = Type::new(DType::I64, 1);
        let trace = b.add(Op::ScanOutput { index: c }, vec![scan], ty);
        let zero = b.int(0);
        return Some(last_or(b, zero, trace));
    }
    if let Some(k) = op.n_steps_input() {
        return Some(node.inputs[k]);
    }
    let mut fewest: Option<NodeId> = None;
    for (s, seq) in op.sequences.iter().enumerate() {
        let len = b.shape(node.inputs[s], 0);
        let allowed = if seq.span() == 0 {
            len
        } else {
            let span = b.int(seq.span());
            b.elem(ElemOp::Sub, vec![len, span])
        };
        fewest = Some(match fewest {
            None => allowed,
            Some(f) => b.elem(ElemOp::Minimum, vec![f, allowed]),
        });
    }
    fewest
}

/// The length of axis `axis` of the trace of output `index` of the scan node `scan`
/// (with `checkpoints`), read without the trace where it can be: the steps taken, and a
/// recurrent output's row shape from its initial state. `None` otherwise.
pub(super) fn trace_shape(
    b: &mut Builder,
    scan: NodeId,
    index: usize,
    axis: usize,
) -> Option<NodeId> {
    let node = b.g.node(scan).clone();
    let Op::Scan(op) = &node.op else { return None };
    op.checkpoints?;
    if axis == 0 {
        return steps_taken(b, scan);
    }
    let at = op.init_input(index)?;
    match op.outputs[index].kind() {
        OutputKind::Sitsot => Some(b.shape(node.inputs[at], axis - 1)),
        // The initial state's rows are the output's rows.
        _ => Some(b.shape(node.inputs[at], axis)),
    }
}

/// Whether `x` is a trace of a scan with `checkpoints`.
pub(super) fn is_checkpointed_trace(b: &Builder, x: NodeId) -> bool {
    let node = b.g.node(x);
    match (&node.op, node.inputs.first()) {
        (Op::ScanOutput { .. }, Some(&scan)) => {
            matches!(&b.g.node(scan).op, Op::Scan(op) if op.checkpoints.is_some())
        }
        _ => false,
    }
}

/// The forward scan as the gradient recomputes it: the same step over given rows from
/// given states for a given number of steps (`n_steps`, no `until`, no counter).
fn recomputed(op: &ScanOp) -> ScanOp {
    let mut base = op.clone();
    if base.has_until {
        base.step.outputs.pop();
    }
    if let Some(c) = base.checkpoints.and_then(|c| c.counter) {
        let tap = base.first_output_tap_input(c);
        base.outputs.remove(c);
        base.step.outputs.remove(c);
        remove_step_inputs(&mut base.step, &[tap]);
    }
    for out in &mut base.outputs {
        out.keep = None;
        out.total = false;
    }
    base.name = op.name.as_ref().map(|n| format!("{n}, recomputed"));
    base.has_n_steps = true;
    base.has_until = false;
    base.interchange = false;
    base.lanes = false;
    base.max_steps = None;
    base.truncate_gradient = None;
    base.checkpoints = None;
    base
}

/// What a recomputation reads, as nodes of the graph being built.
struct Inputs {
    /// The forward scan's sequences, whole.
    sequences: Vec<NodeId>,
    /// The window of each recurrent output (of the recomputed scan, in order) before the
    /// first step: the state (SITSOT) or its last `depth` rows (MITSOT).
    windows: Vec<NodeId>,
    non_sequences: Vec<NodeId>,
    /// The run-time direction, if any.
    flag: Option<NodeId>,
}

/// A scan node running `base` over the forward steps `a .. a + len` from `inputs.windows`:
/// each sequence cut to the rows those steps read (its tap window included), so the
/// recomputation reads each row the forward step read.
fn recompute(b: &mut Builder, base: &ScanOp, inputs: &Inputs, a: NodeId, len: NodeId) -> NodeId {
    let mut outer = Vec::new();
    for (seq, &x) in base.sequences.iter().zip(&inputs.sequences) {
        let span = b.int(seq.span());
        let forwards = a;
        // Going backwards, step t reads rows counted from the end: the steps a .. a + len
        // read L - span - a - len .. L - a.
        let backwards = |b: &mut Builder| {
            let length = b.shape(x, 0);
            let room = b.elem(ElemOp::Sub, vec![length, span]);
            let before = b.elem(ElemOp::Sub, vec![room, a]);
            b.elem(ElemOp::Sub, vec![before, len])
        };
        let start = match (base.go_backwards, inputs.flag) {
            (_, Some(flag)) => {
                let back = backwards(b);
                b.elem(ElemOp::Where, vec![flag, back, forwards])
            }
            (true, None) => backwards(b),
            (false, None) => forwards,
        };
        let rows = if seq.span() == 0 {
            len
        } else {
            b.elem(ElemOp::Add, vec![len, span])
        };
        let end = b.elem(ElemOp::Add, vec![start, rows]);
        outer.push(slice(b, x, Some(start), end));
    }
    outer.extend(&inputs.windows);
    outer.extend(&inputs.non_sequences);
    outer.push(len);
    outer.extend(inputs.flag);
    b.add(
        Op::Scan(Box::new(base.clone())),
        outer,
        Type::scalar(DType::Bool),
    )
}

/// The trace of output `o` of the scan node `scan` running `op`.
fn trace(b: &mut Builder, op: &ScanOp, scan: NodeId, o: usize) -> NodeId {
    let t = op.step.ty(op.step.outputs[o]);
    b.add(
        Op::ScanOutput { index: o },
        vec![scan],
        t.with_rank(t.rank + 1),
    )
}

/// The window of recurrent output `o` (of depth `d`) after the steps of the scan node
/// `scan` (running `op`, `steps` steps, at least 1) from `window`: the last state, or the
/// last `d` rows of the window followed by the trace.
fn window_after(
    b: &mut Builder,
    op: &ScanOp,
    scan: NodeId,
    o: usize,
    window: NodeId,
    steps: usize,
) -> NodeId {
    let out = &op.outputs[o];
    let rows = trace(b, op, scan, o);
    let minus_one = b.int(-1);
    if out.kind() == OutputKind::Sitsot {
        return b.subtensor(rows, vec![PathStep::Index], vec![minus_one]);
    }
    let d = out.depth();
    let rows = if steps as i64 >= d {
        rows
    } else {
        let t = b.ty(window);
        b.add(Op::Concatenate { axis: 0 }, vec![window, rows], t)
    };
    let from = b.int(-d);
    let path = vec![PathStep::Slice {
        start: true,
        end: false,
    }];
    b.subtensor(rows, path, vec![from])
}

/// A scan's own outputs (taps -1) and its step, put together by the passes below.
struct Loop {
    graph: Graph,
    outputs: Vec<Output>,
}

fn carried_output(label: String, span: proc_macro2::Span) -> Output {
    Output {
        taps: vec![-1],
        keep: None,
        total: false,
        label,
        span,
    }
}

fn map_output(label: String, span: proc_macro2::Span) -> Output {
    Output {
        taps: vec![],
        keep: None,
        total: false,
        label,
        span,
    }
}

/// A scan node of `b`'s graph: `sequences` (tap 0, each with its step input's type and
/// label), then the outputs of `body` with `inits`, the non-sequences, `n_steps`.
#[allow(clippy::too_many_arguments)]
fn build_scan(
    b: &mut Builder,
    name: Option<String>,
    sequences: &[(NodeId, String)],
    inits: Vec<NodeId>,
    non_sequences: &[(NodeId, String)],
    n_steps: NodeId,
    go_backwards: bool,
    body: Loop,
) -> NodeId {
    let span = b.span;
    let op = ScanOp {
        name,
        sequences: sequences
            .iter()
            .map(|(_, label)| Sequence {
                taps: vec![0],
                arange: false,
                label: label.clone(),
                span,
            })
            .collect(),
        outputs: body.outputs,
        non_sequences: non_sequences
            .iter()
            .map(|(_, label)| NonSequence {
                label: label.clone(),
                implicit: false,
            })
            .collect(),
        has_n_steps: true,
        go_backwards,
        backwards_flag: false,
        has_until: false,
        interchange: false,
        lanes: false,
        unroll: 1,
        max_steps: None,
        truncate_gradient: None,
        checkpoints: None,
        step: body.graph,
    };
    let mut outer: Vec<NodeId> = sequences.iter().map(|(x, _)| *x).collect();
    outer.extend(inits);
    outer.extend(non_sequences.iter().map(|(x, _)| *x));
    outer.push(n_steps);
    b.add(Op::Scan(Box::new(op)), outer, Type::scalar(DType::Bool))
}

/// The contributions of the scan node `scan` (with `checkpoints`), as
/// `super::scan::adjoints` gives them without.
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
    let Some(every) = op.checkpoints.map(|c| c.every) else {
        return Err(msg::grad_no_rule("a scan's result", None));
    };
    let xs = &node.inputs;
    let mut base = recomputed(op);
    // The passes below and the backward passes of the recomputations name the outputs by
    // the user's names (the counter, dropped, was the last output).
    for (o, out) in base.outputs.iter_mut().enumerate() {
        out.label = b.output_name(scan, o);
    }
    if base.outputs.is_empty() {
        return Ok(Vec::new());
    }
    let Some(steps) = steps_taken(b, scan) else {
        // Lowering gives every scan `n_steps`, a sequence or (with `until`) a counter.
        return Err(msg::grad_checkpoints_internal(&node.label));
    };
    let span = b.span;
    let first_ns = op.first_non_sequence_input();
    let want_seq = want[..op.sequences.len()].to_vec();
    let want_ns = want[first_ns..first_ns + op.non_sequences.len()].to_vec();
    let recurrent: Vec<usize> = base.recurrent_outputs().map(|(o, _)| o).collect();
    let gys: Vec<Option<NodeId>> = (0..base.outputs.len())
        .map(|o| gys.get(o).copied().flatten())
        .collect();
    let flag = match Direction::of(op, xs) {
        Direction::Flag(flag) => Some(flag),
        _ => None,
    };

    // Segments: Q = T / N of N steps, then R = T - Q N.
    let n = b.int(every as i64);
    let q = b.elem(ElemOp::FloorDiv, vec![steps, n]);
    let qn = b.elem(ElemOp::Mul, vec![q, n]);
    let r = b.elem(ElemOp::Sub, vec![steps, qn]);
    let segments = b.add(Op::Arange, vec![q], Type::new(DType::I64, 1));

    // The windows before the first step.
    let windows: Vec<NodeId> = recurrent
        .iter()
        .map(|&o| {
            let init = xs[op.init_input(o).expect("a recurrent output")];
            match base.outputs[o].kind() {
                OutputKind::Sitsot => init,
                _ => {
                    let d = b.int(base.outputs[o].depth());
                    slice(b, init, None, d)
                }
            }
        })
        .collect();
    let sequences: Vec<NodeId> = xs[..op.sequences.len()].to_vec();
    let non_sequences: Vec<NodeId> = xs[first_ns..first_ns + op.non_sequences.len()].to_vec();

    // The checkpoint pass: the window before every segment.
    let before = {
        let mut g = Graph::default();
        let index = g.add_input("segment", Type::scalar(DType::I64), span);
        let carried_windows: Vec<NodeId> = recurrent
            .iter()
            .zip(&windows)
            .map(|(&o, &w)| {
                let name = format!("window of {}", base.outputs[o].label);
                g.add_input(&name, b.ty(w), span)
            })
            .collect();
        let inputs = step_inputs(&mut g, b, op, &sequences, &non_sequences, flag);
        let mut inner = b.within(&mut g);
        let inputs = Inputs {
            windows: carried_windows.clone(),
            ..inputs
        };
        let n = inner.int(every as i64);
        let a = inner.elem(ElemOp::Mul, vec![index, n]);
        let segment = recompute(&mut inner, &base, &inputs, a, n);
        let next: Vec<NodeId> = recurrent
            .iter()
            .zip(&carried_windows)
            .map(|(&o, &w)| window_after(&mut inner, &base, segment, o, w, every))
            .collect();
        g.outputs = next;
        let outputs = recurrent
            .iter()
            .map(|&o| carried_output(format!("window of {}", base.outputs[o].label), span))
            .collect();
        let ns = outer_non_sequences(op, &sequences, &non_sequences, flag);
        let pass = build_scan(
            b,
            op.name.as_ref().map(|n| format!("checkpoints of {n}")),
            &[(segments, "segment".to_string())],
            windows.clone(),
            &ns,
            q,
            false,
            Loop { graph: g, outputs },
        );
        let ck_op = match &b.g.node(pass).op {
            Op::Scan(o) => (**o).clone(),
            _ => unreachable!("just built"),
        };
        recurrent
            .iter()
            .enumerate()
            .map(|(k, _)| {
                let stored = trace(b, &ck_op, pass, k);
                let first = b.new_axis(windows[k], 0);
                let t = b.ty(stored);
                b.add(Op::Concatenate { axis: 0 }, vec![first, stored], t)
            })
            .collect::<Vec<NodeId>>()
    };

    // The tail: its steps recomputed from window Q, and their backward pass.
    let tail_windows: Vec<NodeId> = before
        .iter()
        .map(|&w| b.subtensor(w, vec![PathStep::Index], vec![q]))
        .collect();
    let tail_inputs = Inputs {
        sequences: sequences.clone(),
        windows: tail_windows,
        non_sequences: non_sequences.clone(),
        flag,
    };
    let tail = recompute(b, &base, &tail_inputs, qn, r);
    let tail_gys: Vec<Option<NodeId>> = gys
        .iter()
        .map(|gy| {
            gy.map(|gy| {
                let path = vec![PathStep::Slice {
                    start: true,
                    end: false,
                }];
                b.subtensor(gy, path, vec![qn])
            })
        })
        .collect();
    let Some(tail_back) = backward(b, tail, &tail_gys, &want_seq, &want_ns, None, None)? else {
        return Ok(Vec::new());
    };
    let tail_adj = tail_back.adjoints;

    // The segments, last first.
    let mut g = Graph::default();
    let index = g.add_input("segment", Type::scalar(DType::I64), span);
    let segment_windows: Vec<NodeId> = recurrent
        .iter()
        .zip(&windows)
        .map(|(&o, &w)| {
            let name = format!("window of {}", base.outputs[o].label);
            g.add_input(&name, b.ty(w), span)
        })
        .collect();
    // What the tail's backward pass carries, in its order.
    let carry_inputs: Vec<Vec<NodeId>> = tail_adj
        .carries
        .iter()
        .map(|(o, firsts)| {
            firsts
                .iter()
                .enumerate()
                .map(|(j, &first)| {
                    let name = format!("adjoint of {}[t-{}]", base.outputs[*o].label, j + 1);
                    g.add_input(&name, b.ty(first), span)
                })
                .collect()
        })
        .collect();
    let sum_inputs: Vec<NodeId> = tail_adj
        .sums
        .iter()
        .map(|&(k, first)| {
            let name = format!("adjoint of {}", op.non_sequences[k].label);
            g.add_input(&name, b.ty(first), span)
        })
        .collect();
    let inputs = step_inputs(&mut g, b, op, &sequences, &non_sequences, flag);
    let gy_inputs: Vec<Option<NodeId>> = gys
        .iter()
        .enumerate()
        .map(|(o, gy)| {
            gy.map(|gy| {
                let name = format!("adjoint of {}", base.outputs[o].label);
                g.add_input(&name, b.ty(gy), span)
            })
        })
        .collect();
    let mut inner = b.within(&mut g);
    let inputs = Inputs {
        windows: segment_windows,
        ..inputs
    };
    let n_inner = inner.int(every as i64);
    let a = inner.elem(ElemOp::Mul, vec![index, n_inner]);
    let segment = recompute(&mut inner, &base, &inputs, a, n_inner);
    let end = inner.elem(ElemOp::Add, vec![a, n_inner]);
    let segment_gys: Vec<Option<NodeId>> = gy_inputs
        .iter()
        .map(|gy| gy.map(|gy| slice(&mut inner, gy, Some(a), end)))
        .collect();
    let start = Start {
        carries: carry_inputs,
        sums: sum_inputs,
    };
    let Some(seg_back) = backward(
        &mut inner,
        segment,
        &segment_gys,
        &want_seq,
        &want_ns,
        None,
        Some(start),
    )?
    else {
        return Ok(Vec::new());
    };
    let seg_adj = seg_back.adjoints;
    if seg_adj.carries.len() != tail_adj.carries.len()
        || seg_adj.sums.len() != tail_adj.sums.len()
        || seg_adj
            .rows
            .iter()
            .map(|r| (r.0, r.1))
            .ne(tail_adj.rows.iter().map(|r| (r.0, r.1)))
    {
        return Err(msg::grad_checkpoints_internal(&node.label));
    }
    let mut results = Vec::new();
    let mut outputs = Vec::new();
    for (o, finals) in &seg_adj.carries {
        for (j, &f) in finals.iter().enumerate() {
            results.push(f);
            let label = format!("adjoint of {}[t-{}]", base.outputs[*o].label, j + 1);
            outputs.push(carried_output(label, span));
        }
    }
    for &(k, sum) in &seg_adj.sums {
        results.push(sum);
        outputs.push(carried_output(
            format!("adjoint of {}", op.non_sequences[k].label),
            span,
        ));
    }
    for &(s, _, rows) in &seg_adj.rows {
        // The segment's N rows, in its backward order.
        results.push(rows);
        outputs.push(map_output(
            format!("adjoint of {}", op.sequences[s].label),
            span,
        ));
    }
    g.outputs = results;
    let inits: Vec<NodeId> = tail_adj
        .carries
        .iter()
        .flat_map(|(_, f)| f.iter().copied())
        .chain(tail_adj.sums.iter().map(|&(_, s)| s))
        .collect();
    let mut seqs = vec![(segments, "segment".to_string())];
    for (&o, &w) in recurrent.iter().zip(&before) {
        let rows = slice(b, w, None, q);
        seqs.push((rows, format!("window of {}", base.outputs[o].label)));
    }
    let mut ns = outer_non_sequences(op, &sequences, &non_sequences, flag);
    // The cost's adjoints of the traces, read by segment, last.
    ns.extend(
        gys.iter().enumerate().filter_map(|(o, gy)| {
            gy.map(|gy| (gy, format!("adjoint of {}", base.outputs[o].label)))
        }),
    );
    let pass = build_scan(
        b,
        op.name
            .as_ref()
            .map(|n| format!("adjoint of {n} by segments")),
        &seqs,
        inits,
        &ns,
        q,
        true,
        Loop { graph: g, outputs },
    );
    let pass_op = match &b.g.node(pass).op {
        Op::Scan(o) => (**o).clone(),
        _ => unreachable!("just built"),
    };

    // What the tail and the segments leave, together.
    let mut k = 0;
    let mut adjoints = Adjoints {
        carries: Vec::new(),
        sums: Vec::new(),
        rows: Vec::new(),
        shaped: true,
    };
    for (o, firsts) in &tail_adj.carries {
        let finals = firsts
            .iter()
            .map(|&first| {
                let t = trace(b, &pass_op, pass, k);
                k += 1;
                last_or(b, first, t)
            })
            .collect();
        adjoints.carries.push((*o, finals));
    }
    for &(n, first) in &tail_adj.sums {
        let t = trace(b, &pass_op, pass, k);
        k += 1;
        adjoints.sums.push((n, last_or(b, first, t)));
    }
    for &(s, j, tail_rows) in &tail_adj.rows {
        let by_segment = trace(b, &pass_op, pass, k);
        k += 1;
        // Rows of the tail (steps T-1 down to Q N), then of the segments (Q-1 first), each
        // segment's N rows in its backward order: row i is step T-1-i throughout. Each
        // part reshaped to the sequence's rows first (with no step, a map output's rows
        // have every axis 0).
        let t = b.ty(tail_rows);
        let dims: Vec<NodeId> = (1..t.rank).map(|k| b.shape(xs[s], k)).collect();
        let mut tail_dims = vec![tail_rows, r];
        tail_dims.extend(&dims);
        let tail_part = b.add(Op::Reshape, tail_dims, t);
        let mut seg_dims = vec![by_segment, qn];
        seg_dims.extend(&dims);
        let seg_part = b.add(Op::Reshape, seg_dims, t);
        let rows = b.add(Op::Concatenate { axis: 0 }, vec![tail_part, seg_part], t);
        adjoints.rows.push((s, j, rows));
    }
    Ok(contributions(b, &node, &adjoints, want, steps, steps))
}

/// The non-sequences of the passes over segments: the forward scan's sequences whole
/// (each segment cuts its rows), its non-sequences, and the run-time direction.
fn outer_non_sequences(
    op: &ScanOp,
    sequences: &[NodeId],
    non_sequences: &[NodeId],
    flag: Option<NodeId>,
) -> Vec<(NodeId, String)> {
    let mut ns: Vec<(NodeId, String)> = op
        .sequences
        .iter()
        .zip(sequences)
        .map(|(s, &x)| (x, s.label.clone()))
        .collect();
    ns.extend(
        op.non_sequences
            .iter()
            .zip(non_sequences)
            .map(|(n, &x)| (x, n.label.clone())),
    );
    if let Some(flag) = flag {
        ns.push((flag, "go_backwards".to_string()));
    }
    ns
}

/// The step inputs of a pass over segments that read [`outer_non_sequences`], added to
/// `g` in their order (the cost's adjoints, when the pass reads them, come after them).
fn step_inputs(
    g: &mut Graph,
    b: &Builder,
    op: &ScanOp,
    sequences: &[NodeId],
    non_sequences: &[NodeId],
    flag: Option<NodeId>,
) -> Inputs {
    let sequences = op
        .sequences
        .iter()
        .zip(sequences)
        .map(|(s, &x)| g.add_input(&s.label, b.ty(x), b.span))
        .collect();
    let non_sequences = op
        .non_sequences
        .iter()
        .zip(non_sequences)
        .map(|(n, &x)| g.add_input(&n.label, b.ty(x), b.span))
        .collect();
    let flag = flag.map(|f| g.add_input("go_backwards", b.ty(f), b.span));
    Inputs {
        sequences,
        windows: Vec::new(),
        non_sequences,
        flag,
    }
}
