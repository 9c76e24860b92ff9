//! Lifting step work to whole sequences, shared by push-out of sequences (before the loop)
//! and push-out of outputs (after it). A step value that is computed from one per-step
//! row (a sequence tap, or an output's result) and from loop invariants, through
//! operations that have a whole-sequence form, equals at step t the row t of the same
//! operations applied to all rows at once (one more leading axis):
//! - elementwise operations and casts whose row-derived operands have the result's rank
//!   (so broadcasting against invariants still aligns trailing axes);
//! - `dot(row, invariant)` with the row of rank 1 or 2 (a rank-3 left operand is a stack
//!   of matrices, `kernels::dot_stack_m`).
//!
//! Anything else (indexing, reductions, transposes of a row, two different rows) is not.

use std::collections::HashMap;

use crate::ir::{Graph, Node, NodeId, Op};

/// Where a step value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Non-sequences and constants only.
    Invariant,
    /// One row (this leaf node), invariants, through operations with a whole form.
    Row(NodeId),
    /// Anything else.
    Variant,
}

/// The source of every node of `step`. `leaf(id)` classifies the nodes the analysis
/// must not look into (step inputs, and whichever computed nodes the caller treats as
/// rows); `None` means "computed: derive from the inputs".
pub fn sources(step: &Graph, leaf: impl Fn(NodeId) -> Option<Source>) -> Vec<Source> {
    let mut src = vec![Source::Variant; step.nodes.len()];
    for (i, node) in step.nodes.iter().enumerate() {
        if let Some(s) = leaf(NodeId(i)) {
            src[i] = s;
            continue;
        }
        let inputs: Vec<Source> = node.inputs.iter().map(|n| src[n.0]).collect();
        let all_invariant = inputs.iter().all(|s| *s == Source::Invariant);
        src[i] = match &node.op {
            Op::Input { .. } | Op::Scan(_) | Op::ScanOutput { .. } => Source::Variant,
            Op::Const(_) => Source::Invariant,
            _ if all_invariant => Source::Invariant,
            Op::Elemwise(_) | Op::Cast => {
                let rows: Vec<(NodeId, Source)> = node
                    .inputs
                    .iter()
                    .zip(&inputs)
                    .filter(|(_, s)| matches!(s, Source::Row(_)))
                    .map(|(n, s)| (*n, *s))
                    .collect();
                match rows.first() {
                    Some(&(_, first))
                        if inputs
                            .iter()
                            .all(|s| *s == Source::Invariant || *s == first)
                            && rows.iter().all(|(n, _)| step.ty(*n).rank == node.ty.rank) =>
                    {
                        first
                    }
                    _ => Source::Variant,
                }
            }
            Op::Dot => {
                let (a, b) = (node.inputs[0], node.inputs[1]);
                match (inputs[0], inputs[1]) {
                    (Source::Row(r), Source::Invariant)
                        if step.ty(a).rank <= 2 && step.ty(b).rank <= 2 =>
                    {
                        Source::Row(r)
                    }
                    _ => Source::Variant,
                }
            }
            _ => Source::Variant,
        };
    }
    src
}

/// Whether moving a node out of the loop saves work (views and constants cost nothing).
pub fn worth_moving(op: &Op) -> bool {
    matches!(op, Op::Elemwise(_) | Op::Cast | Op::Dot)
}

/// Copies step node `id` and what it reads into the outer graph `g`, row-derived nodes
/// with one more leading axis. `outer_leaf` gives the outer node of each leaf (a row's
/// whole sequence, an invariant input's outer value); constants are copied.
pub fn copy_whole(
    g: &mut Graph,
    step: &Graph,
    src: &[Source],
    id: NodeId,
    outer_leaf: &mut dyn FnMut(&mut Graph, NodeId) -> Option<NodeId>,
    copied: &mut HashMap<NodeId, NodeId>,
) -> NodeId {
    if let Some(&c) = copied.get(&id) {
        return c;
    }
    let outer = match outer_leaf(g, id) {
        Some(o) => o,
        None => {
            let node = step.node(id).clone();
            let inputs: Vec<NodeId> = node
                .inputs
                .iter()
                .map(|&n| copy_whole(g, step, src, n, outer_leaf, copied))
                .collect();
            let ty = match src[id.0] {
                Source::Row(_) => node.ty.with_rank(node.ty.rank + 1),
                _ => node.ty,
            };
            g.add(Node { inputs, ty, ..node })
        }
    };
    copied.insert(id, outer);
    outer
}
