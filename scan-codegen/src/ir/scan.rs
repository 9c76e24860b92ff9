//! The scan node: PyTensor's Scan op. It keeps the loop's specification (taps of every
//! sequence and output, direction, stopping condition) and the step as an inner graph.
//!
//! Outer inputs of a scan node, in order: the sequences, the initial states of the
//! recurrent outputs (SITSOT and MITSOT, in output order), the non-sequences (explicit,
//! then implicit captures), `n_steps` when given, and the run-time `go_backwards` flag last
//! when there is one.
//!
//! Inner graph inputs, in the step's argument order: every tap of every sequence, every tap
//! of every recurrent output, then the non-sequences. Inner graph outputs: one value per
//! output, then the `until` condition when there is one.

use proc_macro2::Span;

use super::graph::Graph;

#[derive(Clone, Debug)]
pub struct Sequence {
    /// Read at step t: `sequence[t + tap]` (PyTensor's offsets, see `first_row`).
    pub taps: Vec<i64>,
    /// The sequence is `arange(n)` and its outer input is `n` (an i64 scalar): a tap
    /// reads its row index itself, and no array is made (set by push-out seq).
    pub arange: bool,
    /// The user's text for the sequence, for error messages.
    pub label: String,
    pub span: Span,
}

impl Sequence {
    /// How many leading rows the deepest past tap needs (`-min(taps, 0)`).
    pub fn past(&self) -> i64 {
        -self.taps.iter().copied().min().unwrap_or(0).min(0)
    }

    /// Rows the sequence needs beyond the number of steps: the tap window.
    pub fn span(&self) -> i64 {
        self.taps.iter().copied().max().unwrap_or(0).max(0) + self.past()
    }
}

/// The kind of an output, in PyTensor's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// No feedback (`None` in outputs_info): a map output.
    Nitsot,
    /// One tap, -1: the initial state has the shape of a step's result.
    Sitsot,
    /// Several taps, or one other than -1: the initial state has one more leading axis of
    /// length max|tap|, `init[0]` being `output[t - max|tap|]`.
    Mitsot,
}

#[derive(Clone, Debug)]
pub struct Output {
    /// Negative, distinct; empty for a NITSOT output.
    pub taps: Vec<i64>,
    /// How many of the last steps the outer graph reads (`None`: all of them). Set by the
    /// save-mem rewrite; the output's result then holds only the last `min(k, steps done)`
    /// steps, and the loop keeps no more rows than that and its taps need.
    pub keep: Option<usize>,
    /// A running total standing in for `sum` of a map output (set by running-sum): its
    /// additions may run in any order, as `sum`'s may (the lane loop relies on it).
    pub total: bool,
    pub label: String,
    pub span: Span,
}

impl Output {
    pub fn kind(&self) -> OutputKind {
        match self.taps.as_slice() {
            [] => OutputKind::Nitsot,
            [-1] => OutputKind::Sitsot,
            _ => OutputKind::Mitsot,
        }
    }

    pub fn is_recurrent(&self) -> bool {
        !self.taps.is_empty()
    }

    /// Rows of history the output keeps before step 0: max |tap|.
    pub fn depth(&self) -> i64 {
        self.taps.iter().map(|t| -t).max().unwrap_or(0)
    }
}

#[derive(Clone, Debug)]
pub struct NonSequence {
    pub label: String,
    /// Captured from the enclosing scope rather than listed in `non_sequences`.
    pub implicit: bool,
}

#[derive(Clone, Debug)]
pub struct ScanOp {
    pub name: Option<String>,
    pub sequences: Vec<Sequence>,
    pub outputs: Vec<Output>,
    pub non_sequences: Vec<NonSequence>,
    pub has_n_steps: bool,
    pub go_backwards: bool,
    /// The direction is a run-time bool (`go_backwards = flag`), the scan's last outer
    /// input, read before the loop (`go_backwards` is then false). A rewrite that depends on
    /// the direction handles both or leaves such a scan alone.
    pub backwards_flag: bool,
    pub has_until: bool,
    /// Run "element chunks outer, steps inner": set by the loop-interchange rewrite on a
    /// recurrence whose step is elementwise (see `rewrite/loop_interchange.rs`). It does
    /// not change what the scan computes, only the loop the emitter writes.
    pub interchange: bool,
    /// Run `kernels::lanes::LANES` steps at once, one per lane, each output a running
    /// total kept as partial sums per lane: set by the sum-lanes rewrite (see
    /// `rewrite/sum_lanes.rs`). Changes only the order of the totals' additions.
    pub lanes: bool,
    /// `unroll = k`: the emitted loop runs k steps per trip (the step copied k times), then
    /// the remaining steps one by one. 1 by default. Changes no value.
    pub unroll: usize,
    /// The loop runs at most this many steps: the outer graph reads only the first ones
    /// (set by save-mem). Counts and sequence lengths are checked as before the cap.
    pub max_steps: Option<usize>,
    /// `truncate_gradient = k` (PyTensor's truncated BPTT): a gradient through the scan
    /// backpropagates through its last k steps only. Read by `grad/` alone.
    pub truncate_gradient: Option<usize>,
    /// `checkpoints = n`: a gradient through the scan stores every n-th state and
    /// recomputes the steps between them (`grad/checkpoints.rs`). Read by `grad/` alone.
    pub checkpoints: Option<Checkpoints>,
    pub step: Graph,
}

/// `checkpoints = n` on a scan (PyTensor's `scan_checkpoints(.., save_every_N = n)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoints {
    /// The steps of a segment: the gradient stores the state before every n-th step.
    pub every: usize,
    /// With `until`, the output (an i64 SITSOT counting from 0, added by lowering and
    /// hidden from the user) whose last row is the number of steps taken: the gradient
    /// reads it instead of a trace's length, so that no trace is kept for its length.
    pub counter: Option<usize>,
}

impl ScanOp {
    pub fn recurrent_outputs(&self) -> impl Iterator<Item = (usize, &Output)> {
        self.outputs
            .iter()
            .enumerate()
            .filter(|(_, o)| o.is_recurrent())
    }

    /// Position among the outer inputs of the initial state of output `index`.
    pub fn init_input(&self, index: usize) -> Option<usize> {
        if !self.outputs[index].is_recurrent() {
            return None;
        }
        let before = self.outputs[..index]
            .iter()
            .filter(|o| o.is_recurrent())
            .count();
        Some(self.sequences.len() + before)
    }

    pub fn first_non_sequence_input(&self) -> usize {
        self.sequences.len() + self.recurrent_outputs().count()
    }

    pub fn n_steps_input(&self) -> Option<usize> {
        self.has_n_steps
            .then(|| self.first_non_sequence_input() + self.non_sequences.len())
    }

    /// Position among the outer inputs of the run-time direction flag, when there is one.
    pub fn backwards_flag_input(&self) -> Option<usize> {
        self.backwards_flag.then(|| {
            self.first_non_sequence_input() + self.non_sequences.len() + self.has_n_steps as usize
        })
    }

    pub fn n_outer_inputs(&self) -> usize {
        self.first_non_sequence_input()
            + self.non_sequences.len()
            + self.has_n_steps as usize
            + self.backwards_flag as usize
    }

    /// Position among the step's inputs of the first tap of sequence `index`.
    pub fn first_sequence_tap_input(&self, index: usize) -> usize {
        self.sequences[..index].iter().map(|s| s.taps.len()).sum()
    }

    /// Position among the step's inputs of the first tap of output `index`.
    pub fn first_output_tap_input(&self, index: usize) -> usize {
        let seq_taps: usize = self.sequences.iter().map(|s| s.taps.len()).sum();
        seq_taps
            + self.outputs[..index]
                .iter()
                .map(|o| o.taps.len())
                .sum::<usize>()
    }

    /// Position among the step's inputs of the first non-sequence.
    pub fn first_non_sequence_step_input(&self) -> usize {
        self.first_output_tap_input(self.outputs.len())
    }
}
