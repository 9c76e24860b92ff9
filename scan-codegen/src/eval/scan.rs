//! The scan loop, step by step: PyTensor's Scan semantics (sequence taps, recurrent
//! outputs with their initial states, non-sequences, n_steps, go_backwards, until).

use ndarray::{ArrayD, IxDyn};

use super::value::{with_dtype, Element, Value};
use crate::ir::{DType, OutputKind, ScanOp};

/// What the loop knows about one sequence.
struct SequenceInfo {
    /// Rows of the sequence.
    len: usize,
    /// Rows before step 0's row kept for negative taps: `-min(taps, 0)`.
    past: usize,
    /// `past + max(taps, 0)`: rows needed beyond the number of steps.
    span: usize,
}

/// The history of one output during the loop.
struct OutputState {
    /// Rows of initial state kept before step 0 (0 for NITSOT, 1 for SITSOT).
    depth: usize,
    /// The initial rows (`output[-depth..-1]`) followed by every step's value.
    history: Vec<Value>,
    /// The shape every step's value must have; for NITSOT, set by the first step.
    row_shape: Option<Vec<usize>>,
}

/// Runs the scan `op` on its outer inputs (see [`ScanOp`]'s documentation for their
/// order). Returns one value per output: all steps stacked on a new leading axis.
pub fn eval_scan(op: &ScanOp, inputs: &[Value], label: &str) -> Result<Vec<Value>, String> {
    run_scan(op, inputs, label, |args: &[Value]| {
        super::eval_graph(&op.step, args)
    })
}

/// The loop of [`eval_scan`], each step's results computed by `step` from the step's
/// arguments rather than by the step graph, which gives only the types of the results
/// (for zero steps). The forward mode (`jvp.rs`) runs a scan whose sequences, outputs and
/// non-sequences are followed by their tangents through it, so that one loop, with its
/// checks, serves both.
pub(crate) fn run_scan(
    op: &ScanOp,
    inputs: &[Value],
    label: &str,
    mut step: impl FnMut(&[Value]) -> Result<Vec<Value>, String>,
) -> Result<Vec<Value>, String> {
    let who = match &op.name {
        Some(name) => format!("scan `{name}`"),
        None => format!("`{label}`"),
    };
    if inputs.len() != op.n_outer_inputs() {
        return Err(format!(
            "IR error: {who} takes {} outer inputs, got {}",
            op.n_outer_inputs(),
            inputs.len()
        ));
    }

    // The direction: a literal, or a run-time flag (the last outer input).
    let backwards = match op.backwards_flag_input() {
        Some(k) => inputs[k].scalar_bool().ok_or_else(|| {
            format!(
                "IR error: {who}: the go_backwards flag is {}",
                inputs[k].describe()
            )
        })?,
        None => op.go_backwards,
    };

    // The sequences and the number of steps. A sequence read as the loop index is
    // `arange(n)` given by its `n`: made here, as the reference does not optimize.
    let sequences: Vec<Value> = op
        .sequences
        .iter()
        .zip(inputs)
        .map(|(seq, value)| {
            if seq.arange {
                super::ops::arange(value, &seq.label)
            } else {
                Ok(value.clone())
            }
        })
        .collect::<Result<_, String>>()?;
    let sequences = sequences.as_slice();
    let mut infos = Vec::new();
    for (seq, value) in op.sequences.iter().zip(sequences) {
        let Some(&len) = value.shape().first() else {
            return Err(format!(
                "IR error: {who}: sequence `{}` is a scalar",
                seq.label
            ));
        };
        infos.push(SequenceInfo {
            len,
            past: seq.past() as usize,
            span: seq.span() as usize,
        });
    }
    let n_steps = match op.n_steps_input() {
        Some(index) => {
            let n = inputs[index].scalar_int().ok_or_else(|| {
                format!("IR error: {who}: n_steps is {}", inputs[index].describe())
            })?;
            if n < 0 {
                return Err(format!("{who}: n_steps is {n}, it must not be negative"));
            }
            let n = n as usize;
            for (seq, info) in op.sequences.iter().zip(&infos) {
                if info.len < n + info.span {
                    return Err(format!(
                        "{who}: sequence `{}` has {} rows but n_steps = {n} with taps {:?} \
                         needs {} rows",
                        seq.label,
                        info.len,
                        seq.taps,
                        n + info.span
                    ));
                }
            }
            n
        }
        None => {
            for (seq, info) in op.sequences.iter().zip(&infos) {
                if info.len < info.span {
                    return Err(format!(
                        "{who}: sequence `{}` has {} rows but its taps {:?} need at least {}",
                        seq.label, info.len, seq.taps, info.span
                    ));
                }
            }
            infos
                .iter()
                .map(|info| info.len - info.span)
                .min()
                .ok_or_else(|| format!("IR error: {who} has neither sequences nor n_steps"))?
        }
    };

    // Only the first steps are read (save-mem's cap), after the checks above.
    let n_steps = op.max_steps.map_or(n_steps, |m| n_steps.min(m));

    // The outputs' initial states.
    let mut states = Vec::new();
    for (index, output) in op.outputs.iter().enumerate() {
        if output.taps.iter().any(|&k| k >= 0) {
            return Err(format!(
                "IR error: {who}: output `{}` has taps {:?} (they must be negative)",
                output.label, output.taps
            ));
        }
        let init = || -> Result<&Value, String> {
            op.init_input(index)
                .map(|i| &inputs[i])
                .ok_or_else(|| format!("IR error: {who}: no initial state for `{}`", output.label))
        };
        let state = match output.kind() {
            OutputKind::Nitsot => OutputState {
                depth: 0,
                history: Vec::new(),
                row_shape: None,
            },
            OutputKind::Sitsot => {
                let init = init()?;
                OutputState {
                    depth: 1,
                    history: vec![init.clone()],
                    row_shape: Some(init.shape().to_vec()),
                }
            }
            OutputKind::Mitsot => {
                let init = init()?;
                let depth = output.depth() as usize;
                let Some(&rows) = init.shape().first() else {
                    return Err(format!(
                        "IR error: {who}: the initial state of output `{}` is a scalar but its \
                         taps {:?} need rows",
                        output.label, output.taps
                    ));
                };
                if rows < depth {
                    return Err(format!(
                        "{who}: the initial state of output `{}` has {rows} rows but its taps \
                         {:?} need {depth}",
                        output.label, output.taps
                    ));
                }
                OutputState {
                    depth,
                    history: (0..depth).map(|r| init.row(r)).collect(),
                    row_shape: Some(init.shape()[1..].to_vec()),
                }
            }
        };
        states.push(state);
    }
    // Room for every step up front: a count too large to hold is an error, as in the
    // generated code, rather than a loop that runs until memory is exhausted.
    for (state, output) in states.iter_mut().zip(&op.outputs) {
        if output.keep.is_some() {
            continue; // only the last rows are kept (see the results below)
        }
        state.history.try_reserve_exact(n_steps).map_err(|_| {
            format!(
                "{who}: n_steps = {n_steps} is too many steps to hold output `{}`",
                output.label
            )
        })?;
    }

    let first_non_sequence = op.first_non_sequence_input();
    let non_sequences = &inputs[first_non_sequence..first_non_sequence + op.non_sequences.len()];
    let n_outputs = op.outputs.len();
    let expected_results = n_outputs + op.has_until as usize;

    // The loop.
    for t in 0..n_steps {
        let mut args = Vec::with_capacity(op.step.inputs.len());
        for ((seq, info), value) in op.sequences.iter().zip(&infos).zip(sequences) {
            // go_backwards reverses each tap's window: step t reads from the end.
            let base = if backwards {
                info.len - info.span - 1 - t
            } else {
                t
            };
            for &k in &seq.taps {
                let row = base as i64 + info.past as i64 + k;
                args.push(value.row(row as usize));
            }
        }
        for (output, state) in op.outputs.iter().zip(&states) {
            for &k in &output.taps {
                // output[t + k], where output[-depth] is history[0].
                let at = state.depth as i64 + t as i64 + k;
                args.push(state.history[at as usize].clone());
            }
        }
        args.extend(non_sequences.iter().cloned());

        let results = step(&args).map_err(|e| format!("{who}, step {t}: {e}"))?;
        if results.len() != expected_results {
            return Err(format!(
                "IR error: {who}: the step returns {} values, expected {expected_results}",
                results.len()
            ));
        }
        for ((output, state), value) in op.outputs.iter().zip(&mut states).zip(&results) {
            match &state.row_shape {
                Some(shape) if shape.as_slice() != value.shape() => {
                    let what = if output.is_recurrent() {
                        "its initial state gives rows of shape"
                    } else {
                        "earlier steps had shape"
                    };
                    return Err(format!(
                        "{who}: output `{}` has shape {:?} at step {t} but {what} {shape:?}",
                        output.label,
                        value.shape()
                    ));
                }
                Some(_) => {}
                None => state.row_shape = Some(value.shape().to_vec()),
            }
            state.history.push(value.clone());
        }
        if op.has_until {
            let stop = results[n_outputs].scalar_bool().ok_or_else(|| {
                format!(
                    "IR error: {who}: the until condition is {}",
                    results[n_outputs].describe()
                )
            })?;
            if stop {
                break;
            }
        }
    }

    // The results: every step's value (not the initial rows) stacked; for an output that
    // keeps k rows (save-mem), only the last k steps.
    let mut results = Vec::new();
    for (index, state) in states.iter().enumerate() {
        let steps = &state.history[state.depth..];
        let kept = match op.outputs[index].keep {
            Some(k) => &steps[steps.len().saturating_sub(k)..],
            None => steps,
        };
        let step_type = op.step.ty(op.step.outputs[index]);
        let row_shape = state
            .row_shape
            .clone()
            .unwrap_or_else(|| vec![0; step_type.rank]);
        results.push(stack(step_type.dtype, kept, &row_shape)?);
    }
    Ok(results)
}

/// `rows` (each of shape `row_shape` and dtype `dtype`) stacked on a new leading axis.
fn stack(dtype: DType, rows: &[Value], row_shape: &[usize]) -> Result<Value, String> {
    fn go<T: Element>(rows: &[Value], row_shape: &[usize]) -> Result<ArrayD<T>, String> {
        let mut data = Vec::new();
        for row in rows {
            let a = T::array(row).ok_or_else(|| {
                format!(
                    "IR error: a step value is a {} where {} was expected",
                    row.describe(),
                    T::DTYPE
                )
            })?;
            data.extend(a.iter().copied());
        }
        let mut shape = vec![rows.len()];
        shape.extend_from_slice(row_shape);
        ArrayD::from_shape_vec(IxDyn(&shape), data).map_err(|e| format!("internal error: {e}"))
    }
    with_dtype!(dtype, T => go::<T>(rows, row_shape).map(T::into_value))
}
