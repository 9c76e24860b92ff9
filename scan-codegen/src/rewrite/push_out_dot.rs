//! Push-out of a dot: a recurrent output that accumulates a product,
//! `acc_t = acc_{t-1} + dot(a_t, w)`, of which only the last step is read, is
//! `acc_0 + dot(a_0 + a_1 + .., w)`: the loop sums the rows `a_t` (one addition per
//! element) and one product after the loop replaces one per step. The initial value is
//! kept (PyTensor's `scan_pushout_dot1` drops it).
//!
//! Applies when the output has the single tap -1, the outer graph reads only its last row
//! (`acc[-1]`), its step result is `acc + dot(a, w)` (either order) with `a` a vector or
//! matrix that reads no output tap, `w` a matrix non-sequence, the tap read only there and
//! the product used only there. The output then carries the sum of the `a_t` (initial
//! value zeros shaped like `a`, made from `acc_0` and `w` so that no row is read), keeps one
//! row, and the outer graph computes `acc_0 + dot(sum[-1..], w)`: with no step that is no
//! row, and `acc[-1]` is the same error as before. (The addition read by anything else in
//! the step, another output or `until`, would read the rewritten sum: not then.)
//!
//! The general form, where both operands change from step to step (the gradient of a
//! weight, `acc_t = acc_{t-1} + dot(x_t.t(), d_t)`; PyTensor's `PushOutDot1`): with
//! `P = [p_0 p_1 ..]` (m x T*k) and `Q = [q_0; q_1; ..]` (T*k x n), `Σ_t p_t · q_t = P · Q`,
//! one GEMM after the loop. Applies under the same conditions with `p` and `q` matrices
//! (so `acc` is one), neither a non-sequence nor computed from non-sequences and constants
//! alone (that is the form above, or nothing when the invariant matrix is on the left),
//! neither reading the accumulator's tap. Each operand, with a transpose taken off
//! (`x_t.t()` is `x_t` read transposed), has a stack of its values over the steps: the
//! scan's only sequence when it is read at tap 0 for every one of its rows, forwards (no
//! `n_steps`, no `until`, not `go_backwards`), no copy; else the trace of another output
//! whose step result it is (kept whole); else, for a sequence tap (with no run-time
//! direction), the rows that tap read in step order, a view of the sequence (reversed
//! going backwards: a gradient's backward loop reads x_t and h[t-1] so) as long as the
//! other operand's stack, a trace of the steps taken (of two sequence taps, the first is
//! stacked by the loop); else a new map output. An operand `sum_to_shape(g, like)` (an
//! adjoint summed to an addend's shape: a gradient's dW_x and dW_h both read the gates'
//! adjoint so, summed to the shapes of `x_t.dot(w_x)` and `h.dot(w_h)`, which agree only
//! at run time) is stacked as `g` when another product also sums `g` or g's stack is kept
//! anyway, and summed after the loop to `[T, like's lengths]`, a view when they agree:
//! like's lengths lifted out of the loop (`lift_shape`: constants, non-sequences, the rows
//! of sequences and outputs, through broadcasts and scalar arithmetic), and g's too when a
//! new map output stacks it (its rows must agree wherever the sums' did). The
//! accumulator's output is removed, and its reads read `Op::DotSum(acc_0, P, Q)`:
//! `acc_0 + Σ_t p_t · q_t` as a stack of one row, or of no row when no step ran (the
//! output's last row: `acc[-1]` of no step is the same error as before). The runtime's
//! `kernels::dot_sum` views the stacks as `P` and `Q` without a copy when their strides
//! allow (the rows of a contiguous sequence transposed, a trace, both reversed), one
//! product; otherwise one product per chunk of steps, the stack that does not merge (a
//! reversed view beside a trace) copied a chunk at a time.
//!
//! The sums run in a different order from the loop's, so float results may differ in the
//! last bits (integers wrap and agree exactly): with running_sum, the passes that
//! reassociate, checked by `eval::rewrites_agree` within the evaluator's tolerance instead
//! of bit for bit.

use super::edit::{
    add_map_output, broadcast_shapes, depends_on, int, length, outer_input, redirect_output,
    remove_output, scalar, scan_outputs,
};
use super::save_mem::last_rows_read;
use super::{output_label, scan_label, Log};
use crate::ir::graph::dot_sum_type;
use crate::ir::{
    DType, ElemOp, Graph, Literal, Node, NodeId, Op, OutputKind, PathStep, ScanOp, Type,
};

pub fn run(g: &mut Graph, log: &mut Log) {
    g.normalize();
    for i in 0..g.nodes.len() {
        if !matches!(g.nodes[i].op, Op::Scan(_)) {
            continue;
        }
        let mut j = 0;
        while let Op::Scan(op) = &g.nodes[i].op {
            if j >= op.outputs.len() {
                break;
            }
            let label = scan_label(&g.nodes[i]);
            if let Some(found) = accumulated_product(g, NodeId(i), j) {
                let what = push_out(g, NodeId(i), j, found);
                log.fired(format!("{label}: {what}"));
            } else if let Some(found) = accumulated_step_product(g, NodeId(i), j) {
                // Output j is gone: the next one is now at j.
                let what = push_out_step_product(g, NodeId(i), j, found);
                log.fired(format!("{label}: {what}"));
                continue;
            }
            j += 1;
        }
    }
    g.normalize();
}

/// The step nodes of `acc + dot(a, b)` accumulated by a SITSOT output of which only the
/// last row is read, the conditions both forms share: the tap read only by the addition,
/// the product only by it, the addition only as the output's step result; one type.
#[derive(Clone, Copy)]
struct Sum {
    tap: NodeId,
    sum: NodeId,
    product: NodeId,
    a: NodeId,
    b: NodeId,
}

fn accumulated_dot(g: &Graph, scan: NodeId, j: usize) -> Option<Sum> {
    let Op::Scan(op) = &g.node(scan).op else {
        return None;
    };
    if op.outputs[j].taps != [-1] || op.outputs[j].keep.is_some() {
        return None;
    }
    let users = g.consumers();
    let reads = scan_outputs(g, scan, op.outputs.len());
    if reads[j].is_empty() || last_rows_read(g, &users, &reads[j])?.0 != 1 {
        return None;
    }
    let step = &op.step;
    let tap = step.inputs[op.first_output_tap_input(j)];
    let sum = step.outputs[j];
    let node = step.node(sum);
    if !matches!(node.op, Op::Elemwise(ElemOp::Add)) {
        return None;
    }
    let product = match node.inputs[..] {
        [x, p] if x == tap && p != tap => p,
        [p, x] if x == tap && p != tap => p,
        _ => return None,
    };
    let step_users = step.consumers();
    let only_here = |id: NodeId| step_users[id.0] == [sum] && !step.outputs[..].contains(&id);
    let counted_in_outputs = step.outputs.iter().filter(|&&o| o == sum).count();
    // The sum itself read by another step node (another output, the `until` condition)
    // would see the rewritten value.
    if !only_here(tap)
        || !only_here(product)
        || counted_in_outputs != 1
        || !step_users[sum.0].is_empty()
    {
        return None;
    }
    let p = step.node(product);
    if !matches!(p.op, Op::Dot) || p.ty != node.ty || step.ty(tap) != node.ty {
        return None;
    }
    if matches!(node.ty.dtype, DType::Bool) {
        return None;
    }
    Some(Sum {
        tap,
        sum,
        product,
        a: p.inputs[0],
        b: p.inputs[1],
    })
}

/// The step nodes of `acc + dot(a, w)`.
#[derive(Clone, Copy)]
struct Accumulation {
    tap: NodeId,
    sum: NodeId,
    a: NodeId,
    /// The outer node of the non-sequence `w`.
    w_outer: NodeId,
}

/// Whether output `j` of `scan` accumulates a product with a matrix non-sequence on the
/// right that the pass can move, and its parts.
fn accumulated_product(g: &Graph, scan: NodeId, j: usize) -> Option<Accumulation> {
    let Sum {
        tap, sum, a, b: w, ..
    } = accumulated_dot(g, scan, j)?;
    let Op::Scan(op) = &g.node(scan).op else {
        return None;
    };
    let step = &op.step;
    let first_ns = op.first_non_sequence_step_input();
    if !matches!(step.node(w).op, Op::Input { index, .. } if index >= first_ns) {
        return None;
    }
    let w_outer = outer_input(op, &g.node(scan).inputs, w)?;
    let out_taps: Vec<NodeId> = step.inputs[op.first_output_tap_input(0)..first_ns].to_vec();
    let a_rank = step.ty(a).rank;
    let fits = (1..=2).contains(&a_rank) && step.ty(w).rank == 2 && !depends_on(step, a, &out_taps);
    fits.then_some(Accumulation {
        tap,
        sum,
        a,
        w_outer,
    })
}

/// Where the stack of one operand's values over the steps comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stack {
    /// The scan's only sequence, read at tap 0 for as many steps as it has rows: the
    /// sequence itself (an outer node), no copy.
    Sequence(NodeId),
    /// The step result of another output kept whole: its trace.
    Output(usize),
    /// Tap `tap` of sequence `sequence`: the rows it read, in step order (a view of the
    /// sequence, reversed going backwards), as many as the other operand's stack has (a
    /// trace, one row per step taken).
    Rows { sequence: usize, tap: i64 },
    /// A step value that becomes a new map output.
    NewOutput(NodeId),
}

/// One operand of the product: its stack, and whether it is the transpose of the stacked
/// step value (`x_t.t()`: the rows of `x` read transposed).
#[derive(Clone, Copy)]
struct Operand {
    stack: Stack,
    transposed: bool,
    /// The step node whose values are stacked.
    value: NodeId,
    /// The step's `sum_to_shape(value, like)` when that is the operand (an adjoint summed
    /// to the shape of what it is the adjoint of): the stack of `value`, shared with
    /// another product or kept anyway, is summed to like's shape after the loop.
    summed: Option<NodeId>,
}

/// The parts of `acc + dot(p, q)` with both operands step values.
struct StepProduct {
    product: NodeId,
    operands: [Operand; 2],
}

/// The product and its operands when output `j` of `scan` accumulates a product of two
/// matrices that both change from step to step (neither reading the accumulator; a
/// non-sequence or constant operand is left to the form above, or to no rewrite).
fn step_product(g: &Graph, scan: NodeId, j: usize) -> Option<(NodeId, [NodeId; 2])> {
    let Sum {
        tap, product, a, b, ..
    } = accumulated_dot(g, scan, j)?;
    let Op::Scan(op) = &g.node(scan).op else {
        return None;
    };
    let step = &op.step;
    let first_ns = op.first_non_sequence_step_input();
    let init = g.node(scan).inputs[op.init_input(j)?];
    let varying: Vec<NodeId> = step.inputs[..first_ns].to_vec();
    // Matrices of one dtype (so the stacks and the accumulator fit `dot_sum_type`).
    let ty = step.ty(product);
    let fits = ty.rank == 2
        && step.ty(a) == ty
        && step.ty(b) == ty
        && g.ty(init) == ty
        && [a, b]
            .iter()
            .all(|&x| depends_on(step, x, &varying) && !depends_on(step, x, &[tap]));
    fits.then_some((product, [a, b]))
}

/// Whether output `j` of `scan` accumulates a product of two step values, and where the
/// stacks of its operands come from.
fn accumulated_step_product(g: &Graph, scan: NodeId, j: usize) -> Option<StepProduct> {
    let (product, [a, b]) = step_product(g, scan, j)?;
    let Op::Scan(op) = &g.node(scan).op else {
        return None;
    };
    let step = &op.step;
    let is_sum = |x: NodeId| matches!(step.node(untransposed(step, x)).op, Op::Unbroadcast);
    // The operands of the other accumulated products, which a sum may share its stack
    // with (looked for only when there is a sum).
    let others: Vec<NodeId> = if is_sum(a) || is_sum(b) {
        (0..op.outputs.len())
            .filter(|&k| k != j)
            .filter_map(|k| step_product(g, scan, k))
            .flat_map(|(_, xs)| xs)
            .map(|x| untransposed(step, x))
            .collect()
    } else {
        Vec::new()
    };
    let inputs = &g.node(scan).inputs;
    let mut operands = [a, b].map(|x| operand(op, inputs, j, x, &others));
    // Rows of a sequence take their length from the other stack: a trace.
    if let [Operand {
        stack: Stack::Rows { .. },
        value,
        ..
    }, Operand {
        stack: Stack::Rows { .. },
        ..
    }] = operands
    {
        operands[0].stack = Stack::NewOutput(value);
    }
    Some(StepProduct { product, operands })
}

/// `x` without a transpose.
fn untransposed(step: &Graph, x: NodeId) -> NodeId {
    match step.node(x).op {
        Op::Transpose => step.node(x).inputs[0],
        _ => x,
    }
}

/// The operand `x` (a matrix step value) of the product accumulated by output `j`;
/// `others` are the other accumulated products' operands, transposes taken off.
fn operand(op: &ScanOp, inputs: &[NodeId], j: usize, x: NodeId, others: &[NodeId]) -> Operand {
    let step = &op.step;
    let value = untransposed(step, x);
    let transposed = value != x;
    let (value, summed) = match shared_sum(op, inputs, j, value, others) {
        Some(source) => (source, Some(value)),
        None => (value, None),
    };
    Operand {
        stack: stack(op, j, value),
        transposed,
        value,
        summed,
    }
}

/// `g` when `x` is `sum_to_shape(g, like)` and stacking `g` costs nothing new (its
/// stack is a sequence or a trace kept anyway) or is shared with another product's
/// operand `sum_to_shape(g, ..)` (a gradient's two weights read the adjoint of one
/// pre-activation summed to two operands' shapes, which agree only at run time): the
/// stack of `g` summed to like's shape after the loop is x's stack. Like's lengths must
/// be the same at every step, and outside the loop (`lift_shape`); so must g's when a new
/// map output stacks it (its rows must agree where x's did).
fn shared_sum(
    op: &ScanOp,
    inputs: &[NodeId],
    j: usize,
    x: NodeId,
    others: &[NodeId],
) -> Option<NodeId> {
    let step = &op.step;
    let node = step.node(x);
    let (Op::Unbroadcast, &[source, like]) = (&node.op, &node.inputs[..]) else {
        return None;
    };
    // Of x's rank: the stack's leading axis is the steps', which the sum must keep.
    if step.ty(source) != node.ty {
        return None;
    }
    let shared = others
        .iter()
        .any(|&o| matches!(step.node(o).op, Op::Unbroadcast) && step.node(o).inputs[0] == source);
    // A dry run: the nodes go to a scratch graph.
    let lifts = |y: NodeId| lift_shape(&mut Graph::default(), op, inputs, y).is_some();
    let kept = !matches!(stack(op, j, source), Stack::NewOutput(_));
    (lifts(like) && (kept || shared && lifts(source))).then_some(source)
}

/// Where the stack of step value `x` (a matrix) comes from.
fn stack(op: &ScanOp, j: usize, x: NodeId) -> Stack {
    let step = &op.step;
    // A sequence row is its sequence's row t when that sequence alone sets the steps,
    // all of them, forwards (the other operand's stack is in step order): one tap 0, no
    // n_steps, no `until`, no cap, not backwards.
    let whole_sequence = op.sequences.len() == 1
        && op.sequences[0].taps == [0]
        && !op.sequences[0].arange
        && !op.has_n_steps
        && !op.has_until
        && !op.go_backwards
        && !op.backwards_flag
        && op.max_steps.is_none()
        && step.inputs.first() == Some(&x);
    if whole_sequence {
        // Its outer node is the scan's first input (read in `push_out_step_product`).
        return Stack::Sequence(x);
    }
    if let Some(k) = (0..op.outputs.len())
        .find(|&k| k != j && step.outputs[k] == x && op.outputs[k].keep.is_none())
    {
        return Stack::Output(k);
    }
    match sequence_tap(op, x) {
        // With a run-time direction the rows would be chosen by `where`: left to the loop.
        Some((sequence, tap)) if !op.backwards_flag && !op.sequences[sequence].arange => {
            Stack::Rows { sequence, tap }
        }
        _ => Stack::NewOutput(x),
    }
}

/// The sequence and the tap that step input `x` reads, if it reads a sequence.
fn sequence_tap(op: &ScanOp, x: NodeId) -> Option<(usize, i64)> {
    let Op::Input { index, .. } = op.step.node(x).op else {
        return None;
    };
    op.sequences.iter().enumerate().find_map(|(s, seq)| {
        let k = index.checked_sub(op.first_sequence_tap_input(s))?;
        seq.taps.get(k).map(|&tap| (s, tap))
    })
}

/// The outer nodes, added to `g`, that equal at every step the lengths of step value
/// `x`'s axes, when those are loop invariants: a broadcast's lengths, a sum's `like`'s,
/// numpy's broadcast of an elementwise operation's operands', the rows of a sequence or a
/// recurrent output (their array's after its first axis; a recurrent output's rows keep
/// its initial state's shape, checked at every step), a non-sequence's. `None` otherwise
/// (what was added is then unused). `inputs` are the scan's outer inputs.
fn lift_shape(g: &mut Graph, op: &ScanOp, inputs: &[NodeId], x: NodeId) -> Option<Vec<NodeId>> {
    let node = op.step.node(x);
    let rank = node.ty.rank;
    if rank == 0 {
        return Some(Vec::new());
    }
    match &node.op {
        Op::BroadcastTo => node.inputs[1..]
            .iter()
            .map(|&d| lift_scalar(g, op, inputs, d))
            .collect(),
        Op::Unbroadcast => lift_shape(g, op, inputs, node.inputs[1]),
        Op::Elemwise(_) | Op::Cast => {
            let operands = node
                .inputs
                .iter()
                .map(|&i| lift_shape(g, op, inputs, i))
                .collect::<Option<Vec<_>>>()?;
            broadcast_shapes(g, rank, operands, node.span)
        }
        Op::Input { index, .. } => {
            let (outer, skip) = if let Some((s, _)) = sequence_tap(op, x) {
                if op.sequences[s].arange {
                    return None;
                }
                (inputs[s], 1)
            } else if *index < op.first_non_sequence_step_input() {
                let o = (0..op.outputs.len())
                    .rev()
                    .find(|&o| op.first_output_tap_input(o) <= *index)?;
                let mitsot = op.outputs[o].kind() == OutputKind::Mitsot;
                (inputs[op.init_input(o)?], usize::from(mitsot))
            } else {
                (outer_input(op, inputs, x)?, 0)
            };
            Some(
                (0..rank)
                    .map(|k| length(g, outer, k + skip, node.span))
                    .collect(),
            )
        }
        _ => None,
    }
}

/// The outer node, added to `g`, that equals step scalar `x` at every step, when it is
/// computed from constants, non-sequences and the lengths `lift_shape` finds, through
/// elementwise operations and casts (which cannot fail).
fn lift_scalar(g: &mut Graph, op: &ScanOp, inputs: &[NodeId], x: NodeId) -> Option<NodeId> {
    let node = op.step.node(x);
    if node.ty.rank != 0 {
        return None;
    }
    match &node.op {
        Op::Const(_) => Some(g.add(node.clone())),
        Op::Input { index, .. } if *index >= op.first_non_sequence_step_input() => {
            outer_input(op, inputs, x)
        }
        Op::Shape { axis } => lift_shape(g, op, inputs, node.inputs[0])?
            .get(*axis)
            .copied(),
        Op::Elemwise(_) | Op::Cast => {
            let lifted = node
                .inputs
                .iter()
                .map(|&i| lift_scalar(g, op, inputs, i))
                .collect::<Option<Vec<NodeId>>>()?;
            Some(g.add(Node {
                inputs: lifted,
                ..node.clone()
            }))
        }
        _ => None,
    }
}

/// The rows tap `tap` of sequence `s` read over `steps` steps, in step order: going
/// forwards, step t read row `t + past + tap`; going backwards, row `A - 1 - t + past +
/// tap`, `A` the steps the sequence allows (its length less the tap window).
fn sequence_rows(
    g: &mut Graph,
    op: &ScanOp,
    inputs: &[NodeId],
    (s, tap): (usize, i64),
    steps: NodeId,
    span: proc_macro2::Span,
) -> NodeId {
    let (seq, x) = (&op.sequences[s], inputs[s]);
    let elem = |g: &mut Graph, e: ElemOp, a: NodeId, b: NodeId| {
        scalar(g, Op::Elemwise(e), vec![a, b], DType::I64, span)
    };
    let offset = int(g, seq.past() + tap, span);
    let (start, end) = if op.go_backwards {
        let len = length(g, x, 0, span);
        let window = int(g, seq.span(), span);
        let allowed = elem(g, ElemOp::Sub, len, window);
        let first = elem(g, ElemOp::Sub, allowed, steps);
        (
            elem(g, ElemOp::Add, first, offset),
            elem(g, ElemOp::Add, allowed, offset),
        )
    } else {
        (offset, elem(g, ElemOp::Add, offset, steps))
    };
    let ty = g.ty(x);
    let label = format!("{}[t{tap:+}]", seq.label);
    let view = |g: &mut Graph, path: PathStep, inputs: Vec<NodeId>| {
        g.add(Node {
            op: Op::Subtensor { path: vec![path] },
            inputs,
            ty,
            span,
            label: label.clone(),
        })
    };
    let path = PathStep::Slice {
        start: true,
        end: true,
    };
    let rows = view(g, path, vec![x, start, end]);
    if !op.go_backwards {
        return rows;
    }
    let minus_one = int(g, -1, span);
    let path = PathStep::Stepped {
        start: false,
        end: false,
    };
    view(g, path, vec![rows, minus_one])
}

/// `stack` (a value's rows over the steps) with each row summed as the step's
/// `sum_to_shape(value, like)` node `sum` sums it: a `sum_to_shape` of the whole stack
/// to `[steps, like's lengths]` (`lift_shape`'s; with no step, the stack's own, as a map
/// output of no step has every axis 0). `None` when like's lengths do not lift.
fn summed_stack(
    g: &mut Graph,
    op: &ScanOp,
    inputs: &[NodeId],
    stack: NodeId,
    sum: NodeId,
) -> Option<NodeId> {
    let sum_node = op.step.node(sum).clone();
    let lengths = lift_shape(g, op, inputs, sum_node.inputs[1])?;
    let (span, ty) = (sum_node.span, g.ty(stack));
    let steps = length(g, stack, 0, span);
    let zero = int(g, 0, span);
    let none = scalar(
        g,
        Op::Elemwise(ElemOp::Eq),
        vec![steps, zero],
        DType::Bool,
        span,
    );
    let value = match ty.dtype {
        DType::F32 | DType::F64 => Literal::Float(0.0),
        _ => Literal::Int(0),
    };
    let mut operands = vec![scalar(g, Op::Const(value), vec![], ty.dtype, span), steps];
    for (k, d) in lengths.into_iter().enumerate() {
        let own = length(g, stack, k + 1, span);
        let where_ = Op::Elemwise(ElemOp::Where);
        operands.push(scalar(g, where_, vec![none, own, d], DType::I64, span));
    }
    let shaped = g.add(Node {
        op: Op::BroadcastTo,
        inputs: operands,
        ty,
        span,
        label: op.step.node(sum_node.inputs[1]).label.clone(),
    });
    Some(g.add(Node {
        op: Op::Unbroadcast,
        inputs: vec![stack, shaped],
        ty,
        span,
        label: sum_node.label,
    }))
}

/// Output `j` (the accumulator) is removed; its reads become one `Op::DotSum` of the
/// operands' stacks and its initial state after the loop. Returns the log line.
fn push_out_step_product(g: &mut Graph, scan: NodeId, j: usize, found: StepProduct) -> String {
    let StepProduct { product, operands } = found;
    let scan_node = g.node(scan).clone();
    let Op::Scan(op) = &scan_node.op else {
        unreachable!()
    };
    let inputs = &scan_node.inputs;
    let init = inputs[op
        .init_input(j)
        .expect("a SITSOT output has an initial state")];
    let text = output_label(op, j);
    let product_text = op.step.node(product).label.clone();
    let result_text = op.step.node(op.step.outputs[j]).label.clone();
    let span = scan_node.span;

    // The new map outputs (one per distinct step value), then every stack's outer node.
    let mut new_outputs: Vec<(NodeId, usize)> = Vec::new();
    let mut said = Vec::new();
    for x in &operands {
        let value_text = op.step.node(x.value).label.clone();
        let source = match x.stack {
            Stack::Sequence(_) => format!("from sequence `{}`", op.sequences[0].label),
            Stack::Output(k) => format!("from the steps of output {k} ({})", output_label(op, k)),
            Stack::Rows { sequence, .. } => format!(
                "from the rows of sequence `{}` it read",
                op.sequences[sequence].label
            ),
            Stack::NewOutput(_) => "from a new map output".to_string(),
        };
        let shown = match x.summed {
            Some(sum) => format!(
                "`{}` summed after the loop from `{value_text}`",
                op.step.node(sum).label
            ),
            None => format!("`{value_text}`"),
        };
        let transposed = if x.transposed { " (transposed)" } else { "" };
        said.push(format!("{shown}{transposed} {source}"));
        if let Stack::NewOutput(value) = x.stack {
            if new_outputs.iter().all(|&(v, _)| v != value) {
                let Op::Scan(op) = &mut g.nodes[scan.0].op else {
                    unreachable!()
                };
                let k = add_map_output(op, value, &value_text, span);
                new_outputs.push((value, k));
            }
        }
    }
    // (`op` is the scan before the new outputs: the same step nodes.)
    let trace = |g: &mut Graph, k: usize, value: NodeId| {
        let ty = op.step.ty(value);
        g.add(Node {
            op: Op::ScanOutput { index: k },
            inputs: vec![scan],
            ty: ty.with_rank(ty.rank + 1),
            span,
            label: op.step.node(value).label.clone(),
        })
    };
    // Sequences and traces first: rows of a sequence are as many as the other stack has.
    let mut stacks = operands.map(|x| match x.stack {
        Stack::Sequence(_) => Some(inputs[0]),
        Stack::Output(k) => Some(trace(g, k, x.value)),
        Stack::Rows { .. } => None,
        Stack::NewOutput(value) => {
            let k = new_outputs
                .iter()
                .find(|&&(v, _)| v == value)
                .map(|&(_, k)| k)
                .expect("every new stack has its output");
            Some(trace(g, k, value))
        }
    });
    for i in 0..2 {
        if let Stack::Rows { sequence, tap } = operands[i].stack {
            let other = stacks[1 - i].expect("rows of a sequence beside a trace");
            let steps = length(g, other, 0, span);
            stacks[i] = Some(sequence_rows(g, op, inputs, (sequence, tap), steps, span));
        }
    }
    let mut read = [init; 2];
    for (i, x) in operands.iter().enumerate() {
        let stack = stacks[i].expect("every operand has its stack");
        read[i] = match x.summed {
            Some(sum) => summed_stack(g, op, inputs, stack, sum).expect("lengths that lift"),
            None => stack,
        };
    }
    let acc_ty = g.ty(init);
    let ty = dot_sum_type(acc_ty, g.ty(read[0]), g.ty(read[1]))
        .expect("a matrix accumulator of two stacks of matrices of its dtype");
    let total = g.add(Node {
        op: Op::DotSum {
            transpose: [operands[0].transposed, operands[1].transposed],
            output: format!("`{}`", op.outputs[j].label),
            result: result_text,
        },
        inputs: vec![init, read[0], read[1]],
        ty,
        span,
        label: product_text.clone(),
    });
    redirect_output(g, scan, j, total);
    remove_output(g, scan, j);
    format!(
        "output {j} ({text}) accumulates `{product_text}` of two step values: one product of \
         their stacks after the loop ({}; only its last step is read)",
        said.join(", ")
    )
}

/// Rewrites output `j` to sum the `a_t` and the outer graph to apply the product once.
/// Returns the log line.
fn push_out(g: &mut Graph, scan: NodeId, j: usize, found: Accumulation) -> String {
    let Accumulation {
        tap,
        sum,
        a,
        w_outer,
    } = found;
    let scan_node = g.node(scan).clone();
    let Op::Scan(op) = &scan_node.op else {
        unreachable!()
    };
    let init_pos = op
        .init_input(j)
        .expect("a recurrent output has an initial state");
    let init = scan_node.inputs[init_pos];
    let acc_ty = g.ty(init);
    let a_ty = op.step.ty(a);
    let text = output_label(op, j);
    let a_text = op.step.node(a).label.clone();
    let span = scan_node.span;
    let node = |op: Op, inputs: Vec<NodeId>, ty: Type, label: &str| Node {
        op,
        inputs,
        ty,
        span,
        label: label.to_string(),
    };

    // Zeros shaped like `a`: [K] from w [K, N] · acc_0 [N], [M, K] from acc_0 [M, N] · w'.
    // An `acc_0` whose columns do not match the product's fails here, before the loop, as
    // a product-size error named by the step's sum (SEMANTICS: the loop's first step would
    // have reported a step result of another shape).
    let sum_text = op.step.node(sum).label.clone();
    let shaped = if a_ty.rank == 1 {
        g.add(node(Op::Dot, vec![w_outer, init], a_ty, &sum_text))
    } else {
        let wt = g.add(node(Op::Transpose, vec![w_outer], g.ty(w_outer), &a_text));
        g.add(node(Op::Dot, vec![init, wt], a_ty, &sum_text))
    };
    let zero = match a_ty.dtype {
        DType::F32 | DType::F64 => Literal::Float(0.0),
        _ => Literal::Int(0),
    };
    let sum_init = g.add(node(
        Op::FillLike { value: zero },
        vec![shaped],
        a_ty,
        &a_text,
    ));

    // After the loop: acc_0 + dot(sums, w), over the at most one row kept.
    let old_reads = scan_outputs(g, scan, op.outputs.len())[j].clone();
    let stacked = acc_ty.with_rank(acc_ty.rank + 1);
    let sums = g.add(node(
        Op::ScanOutput { index: j },
        vec![scan],
        a_ty.with_rank(a_ty.rank + 1),
        &a_text,
    ));
    let product = g.add(node(Op::Dot, vec![sums, w_outer], stacked, &text));
    let total = g.add(node(
        Op::Elemwise(ElemOp::Add),
        vec![init, product],
        stacked,
        &text,
    ));
    for r in old_reads {
        g.replace_uses(r, total);
    }

    // The loop: the output now carries sum_t a_t.
    let scan_node = &mut g.nodes[scan.0];
    scan_node.inputs[init_pos] = sum_init;
    let Op::Scan(op) = &mut scan_node.op else {
        unreachable!()
    };
    op.outputs[j].keep = Some(1);
    op.outputs[j].label = format!("zeros for the sum of `{a_text}`");
    let step = &mut op.step;
    step.nodes[tap.0].ty = a_ty;
    let add = &mut step.nodes[sum.0];
    add.ty = a_ty;
    for input in &mut add.inputs {
        if *input != tap {
            *input = a;
        }
    }
    step.normalize();
    format!(
        "output {j} ({text}) sums `{a_text}` over the steps; one product after the loop \
         (only its last step is read)"
    )
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{apply, assert_same_results, mat, vec1, Value};
    use super::super::Pass;

    const READOUT: &str = "pub fn readout(x: ArrayView2<f64>, w: ArrayView2<f64>, acc0: ArrayView1<f64>) -> Result<Array1<f64>> {
        let acc = scan(|x_t, acc, w| acc + x_t.dot(w), sequences = x, outputs_info = acc0, non_sequences = w);
        Ok(acc[-1])
    }";

    #[test]
    fn an_accumulated_product_becomes_one_product_after_the_loop() {
        let (ir, fired) = apply(READOUT, Pass::PushOutDot);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].contains(
                "output 0 (`acc0`) sums `x_t` over the steps; one product after the loop"
            ),
            "{fired:?}"
        );
        // No product is left in the step.
        let step_lines = ir.lines().filter(|l| l.starts_with("    "));
        assert!(step_lines.clone().count() > 0, "{ir}");
        assert!(step_lines.clone().all(|l| !l.contains("dot(")), "{ir}");
        assert!(ir.contains("add(%2, %8)"), "acc0 + the product: {ir}");
        for t in [0, 1, 2, 7] {
            assert_same_results(
                READOUT,
                "readout",
                &[
                    mat(t, 3, 0.1),
                    mat(3, 4, 0.2),
                    vec1(&[1.0, -2.0, 0.5, 0.25]),
                ],
            );
        }
    }

    #[test]
    fn a_matrix_accumulator_and_the_product_first() {
        let src = "pub fn f(x: ArrayView3<f64>, w: ArrayView2<f64>, acc0: ArrayView2<f64>) -> Result<Array2<f64>> {
            let acc = scan(|x_t, acc, w| x_t.dot(w) + acc, sequences = x, outputs_info = acc0, non_sequences = w);
            Ok(acc[-1])
        }";
        let (_, fired) = apply(src, Pass::PushOutDot);
        assert_eq!(fired.len(), 1, "{fired:?}");
        let cube = |t: usize| {
            Value::from(ndarray::Array3::from_shape_fn((t, 2, 3), |(a, b, c)| {
                (a as f64 - b as f64 * 0.5 + c as f64 * 0.25).cos()
            }))
        };
        for t in [0, 1, 2, 5] {
            assert_same_results(src, "f", &[cube(t), mat(3, 4, 0.3), mat(2, 4, 0.4)]);
        }
    }

    #[test]
    fn not_when_more_than_the_last_step_is_read_or_the_sum_feeds_back() {
        let whole = READOUT
            .replace("Result<Array1<f64>>", "Result<Array2<f64>>")
            .replace("Ok(acc[-1])", "Ok(acc)");
        let two_rows = READOUT
            .replace("Result<Array1<f64>>", "Result<Array2<f64>>")
            .replace("Ok(acc[-1])", "Ok(acc[-2..])");
        // The product reads the accumulator: not a sum of independent terms.
        let feedback = READOUT.replace("acc + x_t.dot(w)", "acc + acc.dot(w)");
        // The tap is read elsewhere in the step.
        let scaled = READOUT.replace("acc + x_t.dot(w)", "acc * 0.5 + x_t.dot(w)");
        // A sequence on the right: the product is not of a non-sequence.
        let seq_right = "pub fn f(x: ArrayView1<f64>, w: ArrayView3<f64>, acc0: ArrayView1<f64>) -> Result<Array1<f64>> {
            let acc = scan(|w_t, acc, x| acc + x.dot(w_t), sequences = w, outputs_info = acc0, non_sequences = x);
            Ok(acc[-1])
        }";
        for src in [
            &whole,
            &two_rows,
            &feedback,
            &scaled,
            &seq_right.to_string(),
        ] {
            let (_, fired) = apply(src, Pass::PushOutDot);
            assert!(fired.is_empty(), "{src}: {fired:?}");
        }
    }

    #[test]
    fn integer_accumulators_agree_exactly() {
        let src = "pub fn f(x: ArrayView2<i64>, w: ArrayView2<i64>, acc0: ArrayView1<i64>) -> Result<Array1<i64>> {
            let acc = scan(|x_t, acc, w| acc + x_t.dot(w), sequences = x, outputs_info = acc0, non_sequences = w);
            Ok(acc[-1])
        }";
        let (_, fired) = apply(src, Pass::PushOutDot);
        assert_eq!(fired.len(), 1, "{fired:?}");
        let ints = |r: usize, c: usize| {
            Value::from(ndarray::Array2::from_shape_fn((r, c), |(i, j)| {
                (i as i64 * 7 - j as i64 * 3) * 1_000_000_007
            }))
        };
        let acc0 = Value::from(ndarray::Array1::from(vec![i64::MAX, -5, 3]));
        assert_same_results(src, "f", &[ints(6, 2), ints(2, 3), acc0]);
    }

    /// `(t, r, c)` f64 values, varied.
    fn cube(t: usize, r: usize, c: usize, seed: f64) -> Value {
        Value::from(ndarray::Array3::from_shape_fn((t, r, c), |(a, b, d)| {
            (a as f64 * 0.7 - b as f64 * 0.5 + d as f64 * 0.25 + seed).cos()
        }))
    }

    /// The gradient of a weight: x_t [B, I] rows of a sequence, d_t [B, H] computed in the
    /// step; acc [I, H].
    const GRADIENT: &str = "pub fn grad(x: ArrayView3<f64>, v: ArrayView2<f64>, acc0: ArrayView2<f64>) -> Result<Array2<f64>> {
        let acc = scan(|x_t, acc, v| acc + x_t.t().dot(tanh(x_t.dot(v))), sequences = x, outputs_info = acc0, non_sequences = v);
        Ok(acc[-1])
    }";

    fn gradient_args(t: usize) -> [Value; 3] {
        [cube(t, 2, 3, 0.1), mat(3, 4, 0.2), mat(3, 4, 0.3)]
    }

    #[test]
    fn a_product_of_two_step_values_becomes_one_product_after_the_loop() {
        let product_first = GRADIENT.replace(
            "acc + x_t.t().dot(tanh(x_t.dot(v)))",
            "x_t.t().dot(tanh(x_t.dot(v))) + acc",
        );
        for src in [GRADIENT.to_string(), product_first] {
            let (ir, fired) = apply(&src, Pass::PushOutDot);
            assert_eq!(fired.len(), 1, "{fired:?}");
            assert!(
                fired[0].contains(
                    "output 0 (`acc0`) accumulates `x_t.t().dot(tanh(x_t.dot(v)))` of two step \
                     values: one product of their stacks after the loop (`x_t` (transposed) \
                     from sequence `x`, `tanh(x_t.dot(v))` from a new map output; only its \
                     last step is read)"
                ),
                "{fired:?}"
            );
            // The accumulator is gone from the loop; the map output of d_t takes its place,
            // and the product is one node after it, reading the rows of x transposed.
            assert!(
                ir.contains("outputs=[tanh(x_t.dot(v)) Nitsot taps=[]]"),
                "{ir}"
            );
            assert!(ir.contains("= dot_sum(p.T)(%"), "{ir}");
            let step_lines = ir.lines().filter(|l| l.starts_with("    "));
            assert!(step_lines.clone().all(|l| !l.contains("add(")), "{ir}");
            for t in [0, 1, 2, 7] {
                assert_same_results(&src, "grad", &gradient_args(t));
            }
        }
    }

    #[test]
    fn going_backwards_the_rows_are_a_reversed_view_in_step_order() {
        // The sequence's rows in its own order would pair x[t] with d of x[T-1-t]: its
        // rows in step order are the sequence reversed, a view, as long as d's stack.
        let src = GRADIENT.replace(
            "non_sequences = v)",
            "non_sequences = v, go_backwards = true)",
        );
        let (ir, fired) = apply(&src, Pass::PushOutDot);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].contains("(`x_t` (transposed) from the rows of sequence `x` it read, `tanh(x_t.dot(v))` from a new map output;"),
            "{fired:?}"
        );
        assert_eq!(ir.matches("Nitsot").count(), 1, "{ir}");
        assert!(ir.contains("subtensor[Stepped"), "{ir}");
        for t in [0, 1, 2, 7] {
            assert_same_results(&src, "grad", &gradient_args(t));
        }
        // With several sequences, the steps are the shortest's: the rows of x it read.
        let two = "pub fn f(x: ArrayView3<f64>, y: ArrayView3<f64>, acc0: ArrayView2<f64>) -> Result<Array2<f64>> {
            let acc = scan(|x_t, y_t, acc| acc + x_t.t().dot(y_t * y_t), sequences = [x, y], outputs_info = acc0);
            Ok(acc[-1])
        }";
        for src in [
            two.to_string(),
            two.replace(
                "outputs_info = acc0",
                "outputs_info = acc0, go_backwards = true",
            ),
        ] {
            let (_, fired) = apply(&src, Pass::PushOutDot);
            assert!(
                fired[0].contains("(`x_t` (transposed) from the rows of sequence `x` it read"),
                "{fired:?}"
            );
            for (tx, ty) in [(5, 3), (3, 5), (0, 2), (4, 4)] {
                let args = [cube(tx, 2, 3, 0.1), cube(ty, 2, 3, 0.4), mat(3, 3, 0.5)];
                assert_same_results(&src, "f", &args);
            }
        }
    }

    #[test]
    fn the_rows_of_a_tap_are_those_it_read_with_n_steps_either_way() {
        // x read at taps -2 and 1 (a window of 4 rows), n_steps = k: tap -2 read rows
        // 0..k going forwards, the k rows before the last 3 going backwards (reversed).
        let src = "pub fn f(x: ArrayView3<f64>, y: ArrayView3<f64>, acc0: ArrayView2<f64>, k: usize) -> Result<Array2<f64>> {
            let acc = scan(|x_tm2, x_tp1, y_t, acc| acc + x_tm2.t().dot(y_t * x_tp1), sequences = [taps(x, [-2, 1]), y], outputs_info = acc0, n_steps = k);
            Ok(acc[-1])
        }";
        for src in [
            src.to_string(),
            src.replace("n_steps = k", "n_steps = k, go_backwards = true"),
        ] {
            let (_, fired) = apply(&src, Pass::PushOutDot);
            assert_eq!(fired.len(), 1, "{fired:?}");
            assert!(
                fired[0].contains("(`x_tm2` (transposed) from the rows of sequence `x` it read"),
                "{fired:?}"
            );
            for k in [0, 1, 3] {
                let args = [
                    cube(7, 2, 3, 0.1),
                    cube(5, 2, 3, 0.4),
                    mat(3, 3, 0.5),
                    Value::from(k as i64),
                ];
                assert_same_results(&src, "f", &args);
            }
            // More steps than x allows: the loop's error, before any product.
            let args = [
                cube(4, 2, 3, 0.1),
                cube(5, 2, 3, 0.4),
                mat(3, 3, 0.5),
                Value::from(2i64),
            ];
            assert_same_results(&src, "f", &args);
        }
        // Two sequence rows: the first is stacked by the loop, the second is as many of
        // its rows as that stack has.
        let both = "pub fn f(x: ArrayView3<f64>, y: ArrayView3<f64>, acc0: ArrayView2<f64>) -> Result<Array2<f64>> {
            let acc = scan(|x_t, y_t, acc| acc + x_t.t().dot(y_t), sequences = [x, y], outputs_info = acc0, go_backwards = true);
            Ok(acc[-1])
        }";
        let (_, fired) = apply(both, Pass::PushOutDot);
        assert!(
            fired[0].contains("(`x_t` (transposed) from a new map output, `y_t` from the rows of sequence `y` it read;"),
            "{fired:?}"
        );
        for (tx, ty) in [(5, 3), (3, 5), (0, 2)] {
            let args = [cube(tx, 2, 3, 0.1), cube(ty, 2, 3, 0.4), mat(3, 3, 0.5)];
            assert_same_results(both, "f", &args);
        }
    }

    #[test]
    fn both_operands_computed_in_the_step_become_map_outputs() {
        // p_t = tanh(x_t).t() [I, B] and q_t = x_t * y_t [B, I], with two sequences (so
        // even x's rows are stacked by the loop: the steps are the shorter sequence's).
        let src = "pub fn f(x: ArrayView3<f64>, y: ArrayView3<f64>, acc0: ArrayView2<f64>) -> Result<Array2<f64>> {
            let acc = scan(|x_t, y_t, acc| acc + tanh(x_t).t().dot(x_t * y_t), sequences = [x, y], outputs_info = acc0);
            Ok(acc[-1])
        }";
        let (ir, fired) = apply(src, Pass::PushOutDot);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].contains(
                "(`tanh(x_t)` (transposed) from a new map output, `x_t * y_t` from a new map \
                 output; only its last step is read)"
            ),
            "{fired:?}"
        );
        assert!(ir.contains("= dot_sum(p.T)(%"), "{ir}");
        for t in [0, 1, 2, 5] {
            assert_same_results(
                src,
                "f",
                &[cube(t, 2, 3, 0.1), cube(t + 1, 2, 3, 0.4), mat(3, 3, 0.5)],
            );
        }
        // The same value on both sides is stacked once.
        let square = src.replace(
            "acc + tanh(x_t).t().dot(x_t * y_t)",
            "{ let s = x_t * y_t; acc + s.t().dot(s) }",
        );
        let (ir, fired) = apply(&square, Pass::PushOutDot);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert_eq!(ir.matches("Nitsot").count(), 1, "{ir}");
        assert_same_results(
            &square,
            "f",
            &[cube(4, 2, 3, 0.1), cube(4, 2, 3, 0.4), mat(3, 3, 0.5)],
        );
    }

    #[test]
    fn an_rnn_weight_gradient_reads_the_trace_of_the_hidden_state() {
        // d_t is h_t, the step result of the recurrent output h (which reads its own tap):
        // its trace is the stack, no new output.
        let src = "pub fn f(x: ArrayView3<f64>, h0: ArrayView2<f64>, w: ArrayView2<f64>, g0: ArrayView2<f64>) -> Result<(Array2<f64>, Array2<f64>)> {
            let (h, g) = scan(
                |x_t, h, g, w| {
                    let h_t = tanh(h.dot(w) + x_t);
                    (h_t, g + x_t.t().dot(h_t))
                },
                sequences = x,
                outputs_info = [h0, g0],
                non_sequences = w,
            );
            Ok((h[-1], g[-1]))
        }";
        let (ir, fired) = apply(src, Pass::PushOutDot);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].contains(
                "(`x_t` (transposed) from sequence `x`, `tanh(h.dot(w) + x_t)` from the steps \
                 of output 0 (`h0`); only"
            ),
            "{fired:?}"
        );
        assert!(!ir.contains("Nitsot"), "{ir}");
        for t in [0, 1, 2, 7] {
            assert_same_results(
                src,
                "f",
                &[
                    cube(t, 2, 3, 0.1),
                    mat(2, 3, 0.2),
                    mat(3, 3, 0.3),
                    mat(3, 3, 0.4),
                ],
            );
        }
        // A gradient through the previous state: q_t = h_t * (1 - h²) reads h's tap, and
        // becomes a map output; with n_steps, x's rows are the first k, a view.
        let through = src
            .replace(
                "g + x_t.t().dot(h_t)",
                "g + x_t.t().dot(h_t * (1.0 - h * h))",
            )
            .replace("non_sequences = w,", "non_sequences = w, n_steps = k,")
            .replace("g0: ArrayView2<f64>)", "g0: ArrayView2<f64>, k: usize)");
        let (ir, fired) = apply(&through, Pass::PushOutDot);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert_eq!(ir.matches("Nitsot").count(), 1, "{ir}");
        for t in [0, 1, 2, 7] {
            let mut args = vec![
                cube(7, 2, 3, 0.1),
                mat(2, 3, 0.2),
                mat(3, 3, 0.3),
                mat(3, 3, 0.4),
            ];
            args.push(Value::from(t as i64));
            assert_same_results(&through, "f", &args);
        }
    }

    /// The gradient of a batched Elman RNN's weights: x_t [B, I], h [B, H].
    const ELMAN_GRAD: &str = "pub fn f(x: ArrayView3<f64>, h0: ArrayView2<f64>, w_x: ArrayView2<f64>, w_h: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(Array2<f64>, Array2<f64>)> {
        let h = scan(|x_t, h, w_x, w_h, b| tanh(x_t.dot(w_x) + h.dot(w_h) + b), sequences = x, outputs_info = h0, non_sequences = [w_x, w_h, b]);
        let (g_x, g_h) = grad(sum(h), [w_x, w_h]);
        Ok((g_x, g_h))
    }";

    #[test]
    fn two_weights_share_the_stack_of_the_adjoint_they_sum() {
        // The adjoint of `x_t.dot(w_x) + h.dot(w_h)` is summed to each product's shape,
        // which agree only at run time: one stack of it, summed after the loop (a view
        // when the shapes agree), serves both weights; x_t and h[t-1] are rows of
        // sequences of the backward loop. With and without the bias (an elementwise
        // adjoint then, whose lengths are broadcast from its operands').
        let no_bias = ELMAN_GRAD.replace(" + b)", ")");
        for src in [ELMAN_GRAD.to_string(), no_bias] {
            let (ir, fired) = apply(&src, Pass::PushOutDot);
            assert_eq!(fired.len(), 2, "{fired:?}");
            assert!(
                fired[0].contains("summed after the loop from")
                    && fired[0].contains("from a new map output"),
                "{fired:?}"
            );
            assert!(fired[1].contains("summed after the loop from"), "{fired:?}");
            assert!(fired[1].contains("from the steps of output"), "{fired:?}");
            for f in &fired {
                assert!(
                    f.contains("(transposed) from the rows of sequence"),
                    "{fired:?}"
                );
            }
            // One map output: the adjoint; no copy of x_t or h[t-1].
            assert_eq!(ir.matches("Nitsot").count(), 1, "{ir}");
            // Summed after the loop, once per product.
            let summed = ir.lines().filter(|l| {
                !l.starts_with("    ")
                    && l.contains("= sum_to_shape(")
                    && l.ends_with("rank-3 array of f64")
            });
            assert_eq!(summed.count(), 2, "{ir}");
            // (Zero steps: `rewrites_agree` cuts x to no row itself.)
            for t in [1, 2, 5] {
                let args = [
                    cube(t, 3, 2, 0.1),
                    mat(3, 4, 0.2),
                    mat(2, 4, 0.3),
                    mat(4, 4, 0.4),
                    vec1(&[0.1, -0.2, 0.3, 0.05]),
                ];
                assert_same_results(&src, "f", &args);
                // x broadcast over h's batch: x_t's adjoint is summed over it.
                let args = [
                    cube(t, 1, 2, 0.1),
                    mat(3, 4, 0.2),
                    mat(2, 4, 0.3),
                    mat(4, 4, 0.4),
                    vec1(&[0.1, -0.2, 0.3, 0.05]),
                ];
                assert_same_results(&src, "f", &args);
            }
        }
    }

    #[test]
    fn with_until_the_stacks_hold_the_steps_taken() {
        let src = "pub fn f(x: ArrayView3<f64>, h0: ArrayView2<f64>, g0: ArrayView2<f64>, l: f64) -> Result<(Array3<f64>, Array2<f64>)> {
            let (h, g) = scan(
                |x_t, h, g| {
                    let h_t = tanh(h + x_t);
                    (h_t, g + x_t.t().dot(h_t * h), until(sum(h_t) > l))
                },
                sequences = x,
                outputs_info = [h0, g0],
            );
            Ok((h, g[-1]))
        }";
        let (_, fired) = apply(src, Pass::PushOutDot);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].contains(
                "(`x_t` (transposed) from the rows of sequence `x` it read, `h_t * h` from a \
                 new map output;"
            ),
            "{fired:?}"
        );
        for l in [-10.0, 0.0, 0.5, 10.0] {
            for t in [0, 1, 2, 7] {
                let args = [
                    cube(t, 2, 3, 0.1),
                    mat(2, 3, 0.2),
                    mat(3, 3, 0.3),
                    Value::from(l),
                ];
                assert_same_results(src, "f", &args);
            }
        }
    }

    #[test]
    fn inside_an_enclosing_step() {
        // The inner accumulation is pushed out within the outer step; its `dot_sum` runs
        // once per outer step.
        let src = "pub fn f(xs: ArrayView4<f64>, v: ArrayView2<f64>, acc0: ArrayView2<f64>) -> Result<Array3<f64>> {
            let outer = scan(
                |x, v, acc0| {
                    let acc = scan(|x_t, acc, v| acc + x_t.t().dot(tanh(x_t.dot(v))), sequences = x, outputs_info = acc0, non_sequences = v);
                    acc[-1]
                },
                sequences = xs,
                non_sequences = [v, acc0],
            );
            Ok(outer)
        }";
        let (ir, fired) = apply(src, Pass::PushOutDot);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(ir.contains("    %") && ir.contains("dot_sum(p.T)"), "{ir}");
        let hyper = |n: usize, t: usize| {
            Value::from(ndarray::Array4::from_shape_fn(
                (n, t, 2, 3),
                |(a, b, c, d)| ((a * 5 + b * 3 + c * 2 + d) as f64 * 0.41).sin(),
            ))
        };
        for (n, t) in [(0, 2), (1, 0), (2, 1), (3, 4)] {
            assert_same_results(src, "f", &[hyper(n, t), mat(3, 4, 0.2), mat(3, 4, 0.3)]);
        }
    }

    #[test]
    fn not_when_the_two_step_values_cannot_be_summed_apart() {
        let cases = [
            // More than the last step read.
            GRADIENT
                .replace("Result<Array2<f64>>", "Result<Array3<f64>>")
                .replace("Ok(acc[-1])", "Ok(acc)"),
            GRADIENT
                .replace("Result<Array2<f64>>", "Result<Array3<f64>>")
                .replace("Ok(acc[-1])", "Ok(acc[-2..])"),
            // An operand reads the accumulator's tap.
            GRADIENT.replace("tanh(x_t.dot(v))", "tanh(acc)"),
            // The tap read elsewhere in the step.
            GRADIENT.replace("acc + x_t.t()", "acc * 0.5 + x_t.t()"),
            // The product read elsewhere: a second output.
            GRADIENT
                .replace("Result<Array2<f64>>", "Result<(Array2<f64>, Array3<f64>)>")
                .replace(
                    "|x_t, acc, v| acc + x_t.t().dot(tanh(x_t.dot(v)))",
                    "|x_t, acc, v| { let g = x_t.t().dot(tanh(x_t.dot(v))); (acc + g, g) }",
                )
                .replace("outputs_info = acc0", "outputs_info = [acc0, None]")
                .replace("let acc = scan", "let (acc, gs) = scan")
                .replace("Ok(acc[-1])", "Ok((acc[-1], gs))"),
            // The sum read elsewhere: another output computed from it.
            GRADIENT
                .replace("Result<Array2<f64>>", "Result<(Array2<f64>, Array3<f64>)>")
                .replace(
                    "|x_t, acc, v| acc + x_t.t().dot(tanh(x_t.dot(v)))",
                    "|x_t, acc, v| { let s = acc + x_t.t().dot(tanh(x_t.dot(v))); (s, s * 2.0) }",
                )
                .replace("outputs_info = acc0", "outputs_info = [acc0, None]")
                .replace("let acc = scan", "let (acc, twice) = scan")
                .replace("Ok(acc[-1])", "Ok((acc[-1], twice))"),
            // Vector operands: x_t [I] · d_t [I, H].
            "pub fn f(x: ArrayView2<f64>, d: ArrayView3<f64>, acc0: ArrayView1<f64>) -> Result<Array1<f64>> {
                let acc = scan(|x_t, d_t, acc| acc + x_t.dot(d_t), sequences = [x, d], outputs_info = acc0);
                Ok(acc[-1])
            }"
            .to_string(),
            // A non-sequence on the left: not a product of two step values.
            GRADIENT.replace("x_t.t().dot(tanh(x_t.dot(v)))", "v.dot(tanh(x_t.dot(v)).t())"),
        ];
        for src in &cases {
            let (_, fired) = apply(src, Pass::PushOutDot);
            assert!(fired.is_empty(), "{src}: {fired:?}");
        }
        // What the rewrite leaves must still compute the same.
        assert_same_results(&cases[5], "grad", &gradient_args(3));
    }

    #[test]
    fn not_when_the_sum_of_a_product_with_a_non_sequence_is_read_elsewhere() {
        // Found while extending the pass: the old form rewrote the addition in place, so
        // another output reading it would have read the sum of the rows instead.
        let src = "pub fn f(x: ArrayView2<f64>, w: ArrayView2<f64>, acc0: ArrayView1<f64>) -> Result<(Array1<f64>, Array2<f64>)> {
            let (acc, twice) = scan(|x_t, acc, w| { let s = acc + x_t.dot(w); (s, s * 2.0) }, sequences = x, outputs_info = [acc0, None], non_sequences = w);
            Ok((acc[-1], twice))
        }";
        let (_, fired) = apply(src, Pass::PushOutDot);
        assert!(fired.is_empty(), "{fired:?}");
        assert_same_results(
            src,
            "f",
            &[mat(4, 3, 0.1), mat(3, 3, 0.2), vec1(&[1.0, 2.0, 3.0])],
        );
    }

    #[test]
    fn integer_products_of_step_values_agree_exactly() {
        use ndarray::Dimension;
        let src = "pub fn f(x: ArrayView3<i64>, h0: ArrayView2<i64>, g0: ArrayView2<i64>) -> Result<Array2<i64>> {
            let (h, g) = scan(|x_t, h, g| (h * 3 + x_t, g + x_t.t().dot(h * 5 - x_t)), sequences = x, outputs_info = [h0, g0]);
            Ok(g[-1])
        }";
        let (_, fired) = apply(src, Pass::PushOutDot);
        assert_eq!(fired.len(), 1, "{fired:?}");
        let ints = |shape: &[usize]| {
            Value::from(ndarray::ArrayD::from_shape_fn(
                ndarray::IxDyn(shape),
                |ix| {
                    let v = ix.slice().iter().fold(7i64, |a, &i| a * 31 + i as i64);
                    (v % 13 - 6) * 1_000_000_007
                },
            ))
        };
        let mut g0 = ints(&[3, 3]);
        if let Value::I64(a) = &mut g0 {
            a[[0, 0]] = i64::MAX;
        }
        for t in [0, 1, 2, 6] {
            assert_same_results(src, "f", &[ints(&[t, 2, 3]), ints(&[2, 3]), g0.clone()]);
        }
    }

    #[test]
    fn the_product_with_a_non_sequence_keeps_the_old_route() {
        let (ir, fired) = apply(READOUT, Pass::PushOutDot);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(fired[0].contains("sums `x_t` over the steps"), "{fired:?}");
        assert!(!ir.contains("dot_sum"), "{ir}");
    }
}
