//! The checks of a scan's loop, kept when the compiler inlines a scan of exactly one step
//! (the one-step rewrite): each takes the value it checks and hands it back unchanged, so
//! generated code reads `one_step::sequence_rows(u, ..)?` where it reads the sequence.
//! They call the loop's own checks (`kernels::steps`), so the `Err` is the loop's.

use ndarray::{ArrayBase, Dimension, RawData};

use crate::error::Result;
use crate::kernels::steps;

/// Rows on the leading axis (0 for a 0-d array, which has none).
fn rows<S: RawData, D: Dimension>(a: &ArrayBase<S, D>) -> usize {
    a.shape().first().copied().unwrap_or(0)
}

/// `a`, a sequence read with `taps`, if it has the rows of its tap window
/// (`steps::sequence_steps`).
pub fn sequence_window<S: RawData, D: Dimension>(
    a: ArrayBase<S, D>,
    sequence: &str,
    taps: &[i64],
) -> Result<ArrayBase<S, D>> {
    steps::sequence_steps(sequence, rows(&a), taps)?;
    Ok(a)
}

/// `a`, a sequence read with `taps`, if it has rows for `n_steps` steps
/// (`steps::check_steps_available`).
pub fn sequence_rows<S: RawData, D: Dimension>(
    a: ArrayBase<S, D>,
    sequence: &str,
    taps: &[i64],
    n_steps: usize,
) -> Result<ArrayBase<S, D>> {
    steps::check_steps_available(sequence, rows(&a), taps, n_steps)?;
    Ok(a)
}

/// `a`, the initial state of an output with several `taps`, if it has a row per past step
/// (`steps::check_initial_rows`).
pub fn initial_rows<S: RawData, D: Dimension>(
    a: ArrayBase<S, D>,
    output: &str,
    taps: &[i64],
) -> Result<ArrayBase<S, D>> {
    steps::check_initial_rows(output, rows(&a), taps)?;
    Ok(a)
}

/// `a`, the step result `result` of `output`, if it has the output's row shape `expected`
/// (`steps::check_step_shape`).
pub fn step_shape<S: RawData, D: Dimension>(
    a: ArrayBase<S, D>,
    output: &str,
    result: &str,
    expected: &[usize],
) -> Result<ArrayBase<S, D>> {
    steps::check_step_shape(output, result, expected, a.shape())?;
    Ok(a)
}

#[cfg(test)]
mod tests {
    use ndarray::{Array1, Array2};

    use super::*;
    use crate::error::Error;

    #[test]
    fn each_check_hands_the_value_back_or_gives_the_loops_error() {
        let u = Array2::<f64>::zeros((3, 2));
        assert_eq!(sequence_window(u.view(), "u", &[-1, 1]).unwrap(), u);
        assert_eq!(sequence_rows(u.view(), "u", &[-1, 1], 1).unwrap(), u);
        // A window of 3 rows fits in 3 rows; one step beyond it does not.
        assert!(sequence_window(u.view(), "u", &[-3, 0]).is_ok());
        assert_eq!(
            sequence_rows(u.view(), "u", &[-3, 0], 1).unwrap_err(),
            Error::SequenceTooShort {
                sequence: "u".into(),
                length: 3,
                required: 4,
                detail: "n_steps = 1 with taps [-3, 0]".into(),
            }
        );
        assert_eq!(
            sequence_window(u.view(), "u", &[-4, 0]).unwrap_err(),
            Error::SequenceTooShort {
                sequence: "u".into(),
                length: 3,
                required: 4,
                detail: "the window of taps [-4, 0]".into(),
            }
        );
        assert_eq!(initial_rows(u.view(), "x0", &[-3, -1]).unwrap(), u);
        assert_eq!(
            initial_rows(u.view(), "x0", &[-4, -1]).unwrap_err(),
            Error::InitialStateTooShort {
                output: "x0".into(),
                rows: 3,
                taps: vec![-4, -1],
                required: 4,
            }
        );
        let x = Array1::<f64>::zeros(2);
        assert_eq!(step_shape(x.view(), "`x0`", "x + 1", &[2]).unwrap(), x);
        assert_eq!(
            step_shape(x.view(), "`x0`", "x + v", &[3]).unwrap_err(),
            Error::StepResultShape {
                output: "`x0`".into(),
                result: "x + v".into(),
                expected: vec![3],
                found: vec![2],
            }
        );
        // Mutable views pass through too.
        let mut m = Array2::<f64>::zeros((2, 2));
        assert!(sequence_window(m.view_mut(), "m", &[0]).is_ok());
    }
}
