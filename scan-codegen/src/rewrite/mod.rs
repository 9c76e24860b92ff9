//! Stage 4: rewrites of the scan graph, between lowering and emission. Each pass is one
//! file: what it does, when it applies and when it must not, with its tests beside it.
//!
//! The passes run in one fixed order ([`ORDER`]), each once per round, for at most
//! [`ROUNDS`] rounds (a round that changes nothing ends the run): no unbounded fixpoint.
//! Every change is logged with the pass that made it ([`Fired`]), so `explain` can show
//! what happened to a scan and a wrong result can be traced to a rewrite.
//!
//! A pass sees one graph at a time: [`for_each_graph`] hands it every step graph (inner
//! scans first) and then the function's outer graph. Passes leave graphs normalized
//! (`Graph::normalize`): topological order, no dead nodes.

mod constants;
mod cse;
mod dead;
pub(crate) mod edit;
mod fusion;
mod gemm;
mod group_projections;
mod join_slices;
mod last_row;
mod lift;
pub(crate) mod loop_interchange;
mod merge;
mod one_step;
mod push_out_dot;
mod push_out_nonseq;
mod push_out_output;
mod push_out_seq;
mod reuse_cholesky;
mod running_sum;
mod save_mem;
mod slice_operands;
mod stack_dots;
pub(crate) mod sum_lanes;

#[cfg(test)]
mod test_util;

use std::fmt;

use crate::ir::{Function, Graph, Node, NodeId, Op, ScanOp};

/// A rewrite pass, by the name users give it in `#![rewrites(...)]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    /// Constant non-sequences folded into the step; scalar arithmetic on constants folded.
    Constants,
    /// Duplicate nodes computed once; duplicate outer inputs of a scan passed once.
    Cse,
    /// `det` and `slogdet` of a matrix factored by `cholesky` read off the factor.
    ReuseCholesky,
    /// A scan of exactly one step (`n_steps` the constant 1) replaced by its step, its
    /// run-time checks kept.
    OneStep,
    /// Outputs nothing reads dropped, with the step nodes only they needed.
    Dead,
    /// Two scans that run the same steps become one loop; outputs holding the same values
    /// computed once.
    Merge,
    /// Step work that depends only on non-sequences and constants moved before the loop.
    PushOutNonSeq,
    /// A product accumulated over the steps, only the last read: the loop sums its left
    /// operand (a non-sequence on the right), or stacks both operands (two step values),
    /// one product after the loop. Reassociates float sums.
    PushOutDot,
    /// A map output of scalars read only through its sum becomes a running total.
    /// Reassociates float sums.
    RunningSum,
    /// Two or more products of one sequence's rows by invariant matrices in a step's sum,
    /// `u_t.dot(a) + u_tm4.dot(b)`, summed before the loop into one sequence (the sum
    /// regrouped around them). Reassociates float sums.
    GroupProjections,
    /// Step work on one sequence row moved before the loop, over all rows at once.
    PushOutSeq,
    /// Map outputs computed from a kept recurrent output moved after the loop.
    PushOutOutput,
    /// A sum of products of step values by invariant matrices, `dot(a, B) + dot(c, D)`,
    /// becomes one product `dot([a, c], [B; D])`, the matrices stacked before the loop
    /// (the sum as before when the shapes would broadcast). Reassociates float sums.
    StackDots,
    /// A chain of increments of zeros at slices of one axis that meet end to end (a
    /// gradient's slices of one value) writes each increment into its slice, with no
    /// zero-fill, when the slices tile the axis at run time (the increments as before
    /// otherwise).
    JoinSlices,
    /// Each output keeps only the last steps that are read.
    SaveMem,
    /// `concatenate([x[None], rows])[-1]` (grad's read of an accumulator's final value)
    /// read in place: a view of rows' last row, or of `x` when there is none.
    LastRow,
    /// An addition of a matrix product accumulated onto its addend by the GEMM.
    Gemm,
    /// A slice of an elementwise result read only through slices (an LSTM's gate block
    /// cut into its gates) computed from slices of its operands, so fusion takes it into
    /// the pass that reads the slice.
    SliceOperands,
    /// Chains of elementwise operations on arrays computed in one pass.
    Fusion,
    /// An elementwise recurrence runs element chunks outer, steps inner (state in cache).
    LoopInterchange,
    /// A scan whose outputs are all running totals runs several steps at once, one per
    /// SIMD lane. Reassociates float sums.
    SumLanes,
}

/// The order the passes run in, within each round.
pub const ORDER: [Pass; 21] = [
    Pass::Constants,
    Pass::Cse,
    // After cse, which makes two reads of one matrix one node.
    Pass::ReuseCholesky,
    // After constants (an `n_steps` passed into a nested step as a constant non-sequence
    // is a constant by then) and before every pass that works on loops: a loop of one step
    // gains nothing from them (push_out_seq would compute its sequence's work over every
    // row when one is read), and its step, inlined, is then open to the passes on the
    // enclosing graph (cse with the work around it, an enclosing scan's push-outs, fusion).
    Pass::OneStep,
    Pass::PushOutNonSeq,
    // Before push_out_seq, which would move the product out as a sequence of products.
    Pass::PushOutDot,
    Pass::RunningSum,
    // Before push_out_seq, which would move each product of a group out as a sequence of
    // its own.
    Pass::GroupProjections,
    Pass::PushOutSeq,
    Pass::PushOutOutput,
    // After the push-outs, so that only what stays in the loop is stacked (a product of
    // sequence rows is one product over every step before it); before dead, which drops
    // the non-sequences the stacked products no longer read; before gemm, which would take
    // one product of the sum into a `DotAdd`.
    Pass::StackDots,
    // After cse, which makes a bound two slices share (`2 * n` of `n..2 * n` and
    // `2 * n..3 * n`) one node; the pass also compares such expressions itself.
    Pass::JoinSlices,
    Pass::Dead,
    Pass::Merge,
    Pass::SaveMem,
    // After save_mem, which reads the rows' slice of a trace (`trace[-1..]`) as its only
    // read either way.
    Pass::LastRow,
    // Before fusion, which would take an addition of a product into a pass of its own.
    Pass::Gemm,
    // Before fusion, which then takes each slice's work into the pass that reads it.
    Pass::SliceOperands,
    Pass::Fusion,
    Pass::LoopInterchange,
    Pass::SumLanes,
];

/// At most this many rounds of [`ORDER`].
pub const ROUNDS: usize = 3;

impl Pass {
    pub fn name(self) -> &'static str {
        match self {
            Pass::Constants => "constants",
            Pass::Cse => "cse",
            Pass::ReuseCholesky => "reuse_cholesky",
            Pass::OneStep => "one_step",
            Pass::Dead => "dead",
            Pass::Merge => "merge",
            Pass::PushOutNonSeq => "push_out_nonseq",
            Pass::PushOutDot => "push_out_dot",
            Pass::RunningSum => "running_sum",
            Pass::GroupProjections => "group_projections",
            Pass::PushOutSeq => "push_out_seq",
            Pass::PushOutOutput => "push_out_output",
            Pass::StackDots => "stack_dots",
            Pass::JoinSlices => "join_slices",
            Pass::SaveMem => "save_mem",
            Pass::LoopInterchange => "loop_interchange",
            Pass::Gemm => "gemm",
            Pass::SliceOperands => "slice_operands",
            Pass::Fusion => "fusion",
            Pass::SumLanes => "sum_lanes",
            Pass::LastRow => "last_row",
        }
    }

    pub fn from_name(name: &str) -> Option<Pass> {
        ORDER.into_iter().find(|p| p.name() == name)
    }

    fn run(self, g: &mut Graph, log: &mut Log) {
        match self {
            Pass::Constants => constants::run(g, log),
            Pass::Cse => cse::run(g, log),
            Pass::ReuseCholesky => reuse_cholesky::run(g, log),
            Pass::OneStep => one_step::run(g, log),
            Pass::Dead => dead::run(g, log),
            Pass::Merge => merge::run(g, log),
            Pass::PushOutNonSeq => push_out_nonseq::run(g, log),
            Pass::PushOutDot => push_out_dot::run(g, log),
            Pass::RunningSum => running_sum::run(g, log),
            Pass::GroupProjections => group_projections::run(g, log),
            Pass::PushOutSeq => push_out_seq::run(g, log),
            Pass::PushOutOutput => push_out_output::run(g, log),
            Pass::StackDots => stack_dots::run(g, log),
            Pass::JoinSlices => join_slices::run(g, log),
            Pass::SaveMem => save_mem::run(g, log),
            Pass::LoopInterchange => loop_interchange::run(g, log),
            Pass::Gemm => gemm::run(g, log),
            Pass::SliceOperands => slice_operands::run(g, log),
            Pass::Fusion => fusion::run(g, log),
            Pass::SumLanes => sum_lanes::run(g, log),
            Pass::LastRow => last_row::run(g, log),
        }
    }
}

/// Which passes run. Default: all.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    enabled: Vec<Pass>,
}

impl Default for Config {
    fn default() -> Self {
        Config::all()
    }
}

impl Config {
    pub fn all() -> Config {
        Config {
            enabled: ORDER.to_vec(),
        }
    }

    pub fn none() -> Config {
        Config { enabled: vec![] }
    }

    pub fn only(passes: &[Pass]) -> Config {
        Config {
            enabled: passes.to_vec(),
        }
    }

    pub fn all_except(passes: &[Pass]) -> Config {
        Config {
            enabled: ORDER.into_iter().filter(|p| !passes.contains(p)).collect(),
        }
    }

    pub fn is_enabled(&self, pass: Pass) -> bool {
        self.enabled.contains(&pass)
    }
}

/// One change a pass made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fired {
    pub pass: &'static str,
    pub what: String,
}

impl fmt::Display for Fired {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}: {}", self.pass, self.what)
    }
}

/// Where passes record what they did.
pub struct Log {
    pass: Pass,
    fired: Vec<Fired>,
}

impl Log {
    pub fn fired(&mut self, what: impl Into<String>) {
        self.fired.push(Fired {
            pass: self.pass.name(),
            what: what.into(),
        });
    }
}

/// Runs the enabled passes over `f` in [`ORDER`], for at most [`ROUNDS`] rounds. Returns
/// what fired, in order.
pub fn run(f: &mut Function, config: &Config) -> Vec<Fired> {
    let mut log = Log {
        pass: Pass::Constants,
        fired: Vec::new(),
    };
    for _ in 0..ROUNDS {
        let before = log.fired.len();
        for pass in ORDER.into_iter().filter(|p| config.is_enabled(*p)) {
            log.pass = pass;
            for_each_graph(&mut f.graph, &mut |g| pass.run(g, &mut log));
        }
        if log.fired.len() == before {
            break;
        }
    }
    log.fired
}

/// Calls `pass` on every step graph inside `g` (innermost first), then on `g` itself.
pub fn for_each_graph(g: &mut Graph, pass: &mut dyn FnMut(&mut Graph)) {
    for node in &mut g.nodes {
        if let Op::Scan(op) = &mut node.op {
            for_each_graph(&mut op.step, pass);
        }
    }
    pass(g);
}

/// Calls `f` on every scan node of `g` with its outer inputs and its label for the log.
/// The node is taken out of the graph meanwhile (not cloned), so `f` may add outer nodes
/// and read the scan's inputs; `f` must not read the scan node itself.
pub fn each_scan(
    g: &mut Graph,
    mut f: impl FnMut(&mut Graph, &mut ScanOp, &mut Vec<NodeId>, &str),
) {
    for i in 0..g.nodes.len() {
        if !matches!(g.nodes[i].op, Op::Scan(_)) {
            continue;
        }
        let label = scan_label(&g.nodes[i]);
        let mut inputs = std::mem::take(&mut g.nodes[i].inputs);
        let Op::Scan(mut op) = std::mem::replace(&mut g.nodes[i].op, Op::Transpose) else {
            unreachable!()
        };
        f(g, &mut op, &mut inputs, &label);
        g.nodes[i].op = Op::Scan(op);
        g.nodes[i].inputs = inputs;
    }
}

/// How a log line names a scan: its `name = ".."`, else the text of its first result.
pub fn scan_label(node: &Node) -> String {
    let Op::Scan(op) = &node.op else {
        return format!("`{}`", node.label);
    };
    if let Some(name) = &op.name {
        return format!("scan `{name}`");
    }
    let more = if op.outputs.len() > 1 { ", .." } else { "" };
    match op.step.outputs.first() {
        Some(&first) => format!("scan of {}{more}", short(&op.step.node(first).label)),
        None => "scan".to_string(),
    }
}

/// How a log line names output `j` of a scan: its initial state, or its step result.
pub fn output_label(op: &crate::ir::ScanOp, j: usize) -> String {
    if op.outputs[j].is_recurrent() {
        short(&op.outputs[j].label)
    } else {
        short(&op.step.node(op.step.outputs[j]).label)
    }
}

/// User text in backticks, on one line, shortened.
fn short(text: &str) -> String {
    format!("`{}`", crate::ir::graph::short_label(text))
}
