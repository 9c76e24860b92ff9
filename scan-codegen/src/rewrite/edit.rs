//! Edits of a scan node that several passes share: adding and removing step inputs,
//! non-sequences and outputs while keeping the outer inputs, the step's inputs and the
//! `ScanOutput` indices consistent (see `ir::scan` for their order).

use proc_macro2::Span;

use crate::ir::{
    DType, ElemOp, Graph, Literal, Node, NodeId, NonSequence, Op, Output, ScanOp, Type,
};

/// Drops the step inputs at `positions` (their nodes must no longer be read) and
/// renumbers the others.
pub fn remove_step_inputs(step: &mut Graph, positions: &[usize]) {
    let mut kept = Vec::new();
    for (pos, &id) in step.inputs.iter().enumerate() {
        if !positions.contains(&pos) {
            kept.push(id);
        }
    }
    for (index, &id) in kept.iter().enumerate() {
        if let Op::Input { index: i, .. } = &mut step.nodes[id.0].op {
            *i = index;
        }
    }
    step.inputs = kept;
    step.normalize();
}

/// Inserts a step input at position `pos`, renumbering those after it.
pub fn insert_step_input(step: &mut Graph, pos: usize, name: &str, ty: Type, span: Span) -> NodeId {
    let id = step.add(Node {
        op: Op::Input {
            index: pos,
            name: name.to_string(),
        },
        inputs: vec![],
        ty,
        span,
        label: name.to_string(),
    });
    step.inputs.insert(pos, id);
    for (index, &input) in step.inputs.iter().enumerate() {
        if let Op::Input { index: i, .. } = &mut step.nodes[input.0].op {
            *i = index;
        }
    }
    id
}

/// Adds `value` (a node of the outer graph) as a new explicit non-sequence, last. Returns
/// the step input that reads it. The caller normalizes the step once its uses are in.
pub fn add_non_sequence(
    op: &mut ScanOp,
    scan_inputs: &mut Vec<NodeId>,
    value: NodeId,
    ty: Type,
    label: &str,
    span: Span,
) -> NodeId {
    let outer_pos = op.first_non_sequence_input() + op.non_sequences.len();
    scan_inputs.insert(outer_pos, value);
    let step_pos = op.first_non_sequence_step_input() + op.non_sequences.len();
    op.non_sequences.push(NonSequence {
        label: label.to_string(),
        implicit: false,
    });
    insert_step_input(&mut op.step, step_pos, label, ty, span)
}

/// Removes non-sequence `k` (its step input must no longer be read).
pub fn remove_non_sequence(op: &mut ScanOp, scan_inputs: &mut Vec<NodeId>, k: usize) {
    scan_inputs.remove(op.first_non_sequence_input() + k);
    let step_pos = op.first_non_sequence_step_input() + k;
    op.non_sequences.remove(k);
    remove_step_inputs(&mut op.step, &[step_pos]);
}

/// Removes output `j` of the scan node `scan` in `g`: its step result, its taps, its
/// initial state; `ScanOutput` nodes of later outputs are renumbered. The output's taps
/// must no longer be read in the step, nor the output in `g`.
pub fn remove_output(g: &mut Graph, scan: NodeId, j: usize) {
    let node = &mut g.nodes[scan.0];
    let Op::Scan(op) = &mut node.op else {
        panic!("remove_output on a node that is not a scan")
    };
    if let Some(init) = op.init_input(j) {
        node.inputs.remove(init);
    }
    let first = op.first_output_tap_input(j);
    let taps: Vec<usize> = (first..first + op.outputs[j].taps.len()).collect();
    op.outputs.remove(j);
    op.step.outputs.remove(j);
    if let Some(c) = &mut op.checkpoints {
        // Read by `grad/` only, which runs before the rewrites; kept consistent anyway.
        c.counter = match c.counter {
            Some(k) if k > j => Some(k - 1),
            Some(k) if k < j => Some(k),
            _ => None,
        };
    }
    remove_step_inputs(&mut op.step, &taps);
    for node in &mut g.nodes {
        if node.inputs.first() == Some(&scan) {
            if let Op::ScanOutput { index } = &mut node.op {
                assert!(*index != j, "remove_output: output {j} is still read");
                if *index > j {
                    *index -= 1;
                }
            }
        }
    }
}

/// Adds a map (NITSOT) output whose step result is step node `value`, after the others
/// (before the `until` condition). Returns its index; the outer graph reads it through a
/// new `ScanOutput` node.
pub fn add_map_output(op: &mut ScanOp, value: NodeId, label: &str, span: Span) -> usize {
    let j = op.outputs.len();
    op.outputs.push(Output {
        taps: vec![],
        keep: None,
        total: false,
        label: label.to_string(),
        span,
    });
    op.step.outputs.insert(j, value);
    j
}

/// Every use of output `j` of `scan` in `g` becomes a use of `to`; the `ScanOutput` nodes
/// that read it are detached from the scan (dead until the graph is normalized), so that
/// `remove_output` may follow.
pub fn redirect_output(g: &mut Graph, scan: NodeId, j: usize, to: NodeId) {
    let n_outputs = match &g.node(scan).op {
        Op::Scan(op) => op.outputs.len(),
        _ => return,
    };
    for read in scan_outputs(g, scan, n_outputs).swap_remove(j) {
        g.replace_uses(read, to);
        g.nodes[read.0].inputs.clear();
    }
}

/// The `ScanOutput` nodes of `scan` in `g`, by output index.
pub fn scan_outputs(g: &Graph, scan: NodeId, n_outputs: usize) -> Vec<Vec<NodeId>> {
    let mut by_index = vec![Vec::new(); n_outputs];
    for (i, node) in g.nodes.iter().enumerate() {
        if let Op::ScanOutput { index } = node.op {
            if node.inputs.first() == Some(&scan) && index < n_outputs {
                by_index[index].push(NodeId(i));
            }
        }
    }
    by_index
}

/// Whether step node `id` depends (transitively) on any step input in `inputs`.
pub fn depends_on(step: &Graph, id: NodeId, inputs: &[NodeId]) -> bool {
    let mut seen = vec![false; step.nodes.len()];
    let mut stack = vec![id];
    while let Some(n) = stack.pop() {
        if inputs.contains(&n) {
            return true;
        }
        if !seen[n.0] {
            seen[n.0] = true;
            stack.extend(step.node(n).inputs.iter().copied());
        }
    }
    false
}

/// Adds `value` (a node of the outer graph holding one row per step, like the sequence
/// it is computed from) as a new sequence read with `taps`, last. Returns its step
/// inputs, one per tap. The caller normalizes the step once its uses are in.
pub fn add_sequence(
    op: &mut ScanOp,
    scan_inputs: &mut Vec<NodeId>,
    value: NodeId,
    taps: &[i64],
    row: Type,
    label: &str,
    span: Span,
) -> Vec<NodeId> {
    scan_inputs.insert(op.sequences.len(), value);
    let first = op.first_output_tap_input(0);
    op.sequences.push(crate::ir::Sequence {
        taps: taps.to_vec(),
        arange: false,
        label: label.to_string(),
        span,
    });
    taps.iter()
        .enumerate()
        .map(|(i, _)| insert_step_input(&mut op.step, first + i, label, row, span))
        .collect()
}

/// Removes sequence `s` (its step inputs must no longer be read): its outer input and its
/// taps' step inputs.
pub fn remove_sequence(op: &mut ScanOp, scan_inputs: &mut Vec<NodeId>, s: usize) {
    scan_inputs.remove(s);
    let first = op.first_sequence_tap_input(s);
    let taps: Vec<usize> = (first..first + op.sequences[s].taps.len()).collect();
    op.sequences.remove(s);
    remove_step_inputs(&mut op.step, &taps);
}

/// The outer node of a step input: a sequence tap's whole sequence, a non-sequence's
/// outer value.
pub fn outer_input(op: &ScanOp, scan_inputs: &[NodeId], id: NodeId) -> Option<NodeId> {
    let Op::Input { index, .. } = op.step.node(id).op else {
        return None;
    };
    if index < op.first_output_tap_input(0) {
        let s = (0..op.sequences.len())
            .rev()
            .find(|&s| op.first_sequence_tap_input(s) <= index)?;
        Some(scan_inputs[s])
    } else {
        let k = index.checked_sub(op.first_non_sequence_step_input())?;
        Some(scan_inputs[op.first_non_sequence_input() + k])
    }
}

/// numpy's broadcast of lengths `a` and `b` (of operands that broadcast), added to `g`: a
/// length of 1 gives way to the other.
pub fn broadcast(g: &mut Graph, a: NodeId, b: NodeId, span: Span) -> NodeId {
    let one = int(g, 1, span);
    let unit = scalar(g, Op::Elemwise(ElemOp::Eq), vec![a, one], DType::Bool, span);
    scalar(
        g,
        Op::Elemwise(ElemOp::Where),
        vec![unit, b, a],
        DType::I64,
        span,
    )
}

/// numpy's broadcast of the shapes `operands` (each its lengths, of rank at most
/// `rank`), added to `g`: trailing axes aligned, a length of 1 giving way to the other.
/// `None` when an operand has more axes than `rank` or an axis gets no length.
pub fn broadcast_shapes(
    g: &mut Graph,
    rank: usize,
    operands: Vec<Vec<NodeId>>,
    span: Span,
) -> Option<Vec<NodeId>> {
    let mut lengths: Vec<Option<NodeId>> = vec![None; rank];
    for dims in operands {
        let first = rank.checked_sub(dims.len())?;
        for (at, d) in lengths[first..].iter_mut().zip(dims) {
            *at = Some(match *at {
                None => d,
                Some(a) => broadcast(g, a, d, span),
            });
        }
    }
    lengths.into_iter().collect()
}

/// `x.shape[axis]`, added to `g`.
pub fn length(g: &mut Graph, x: NodeId, axis: usize, span: Span) -> NodeId {
    scalar(g, Op::Shape { axis }, vec![x], DType::I64, span)
}

/// An i64 constant, added to `g`.
pub fn int(g: &mut Graph, v: i64, span: Span) -> NodeId {
    scalar(
        g,
        Op::Const(Literal::Int(v.into())),
        vec![],
        DType::I64,
        span,
    )
}

/// A scalar node of `g` (a constant, a length, an operation on scalars).
pub fn scalar(g: &mut Graph, op: Op, inputs: Vec<NodeId>, dtype: DType, span: Span) -> NodeId {
    g.add(Node {
        op,
        inputs,
        ty: Type::scalar(dtype),
        span,
        label: String::new(),
    })
}
