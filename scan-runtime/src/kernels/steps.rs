//! Checks the scan loop runs before its first step, following PyTensor's rules, so a bad
//! argument fails with a message naming it instead of an out-of-bounds read mid-loop.

use crate::element::Element;
use crate::error::{Error, Result};

/// `(past, span)` of a tap list: the rows before step 0 the deepest past tap needs, and the
/// rows the tap window needs beyond the number of steps. PyTensor: with
/// `mn = min(min(taps), 0)` and `mx = max(max(taps), 0)`, `span = mx - mn`.
fn tap_span(taps: &[i64]) -> u64 {
    let mn = taps.iter().copied().min().unwrap_or(0).min(0);
    let mx = taps.iter().copied().max().unwrap_or(0).max(0);
    // mx >= 0 >= mn, so the difference is non-negative and fits in u64.
    (i128::from(mx) - i128::from(mn)) as u64
}

fn span_usize(taps: &[i64]) -> usize {
    usize::try_from(tap_span(taps)).unwrap_or(usize::MAX)
}

/// How many steps a sequence of `length` rows allows with `taps`: `length - span`.
/// `Err(SequenceTooShort)` (with `required = span`) when it is shorter than its tap window.
pub fn sequence_steps(sequence: &str, length: usize, taps: &[i64]) -> Result<usize> {
    let span = span_usize(taps);
    length
        .checked_sub(span)
        .ok_or_else(|| Error::SequenceTooShort {
            sequence: sequence.to_string(),
            length,
            required: span,
            detail: format!("the window of taps {taps:?}"),
        })
}

/// Converts a user's `n_steps` to a count. `Err(InvalidArgument)` naming `n_steps` when it is
/// negative.
pub fn check_n_steps(n_steps: i64) -> Result<usize> {
    usize::try_from(n_steps).map_err(|_| Error::InvalidArgument {
        what: "n_steps".to_string(),
        detail: format!("it must be >= 0, got {n_steps}"),
    })
}

/// Checks that a sequence of `length` rows covers `n_steps` steps with `taps`:
/// `length >= n_steps + span`. `Err(SequenceTooShort)` otherwise.
pub fn check_steps_available(
    sequence: &str,
    length: usize,
    taps: &[i64],
    n_steps: usize,
) -> Result<()> {
    let required = u128::from(tap_span(taps)) + n_steps as u128;
    if (length as u128) >= required {
        Ok(())
    } else {
        Err(Error::SequenceTooShort {
            sequence: sequence.to_string(),
            length,
            required: usize::try_from(required).unwrap_or(usize::MAX),
            detail: format!("n_steps = {n_steps} with taps {taps:?}"),
        })
    }
}

/// `Err(StepResultShape)` unless a step's result has its output's row shape.
#[inline]
pub fn check_step_shape(
    output: &str,
    result: &str,
    expected: &[usize],
    found: &[usize],
) -> Result<()> {
    if super::buffer::same_dims(expected, found) {
        Ok(())
    } else {
        Err(step_shape_error(output, result, expected, found))
    }
}

/// [`check_step_shape`]'s error, out of line.
#[cold]
#[inline(never)]
fn step_shape_error(output: &str, result: &str, expected: &[usize], found: &[usize]) -> Error {
    Error::StepResultShape {
        output: output.to_string(),
        result: result.to_string(),
        expected: expected.to_vec(),
        found: found.to_vec(),
    }
}

/// `Err(InitialStateTooShort)` unless a multi-tap initial state has a row per past step
/// (`max |tap|`). Extra rows are allowed; the first ones are used, as PyTensor does.
pub fn check_initial_rows(output: &str, rows: usize, taps: &[i64]) -> Result<usize> {
    let required = taps
        .iter()
        .map(|t| t.unsigned_abs() as usize)
        .max()
        .unwrap_or(0);
    if rows >= required {
        Ok(required)
    } else {
        Err(Error::InitialStateTooShort {
            output: output.to_string(),
            rows,
            taps: taps.to_vec(),
            required,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_steps_pytensor_rule() {
        assert_eq!(sequence_steps("u", 10, &[0]).unwrap(), 10);
        assert_eq!(sequence_steps("u", 10, &[]).unwrap(), 10);
        assert_eq!(sequence_steps("u", 10, &[-2, 0]).unwrap(), 8);
        assert_eq!(sequence_steps("u", 10, &[-3, 1]).unwrap(), 6);
        assert_eq!(sequence_steps("u", 10, &[1, 2]).unwrap(), 8);
        assert_eq!(sequence_steps("u", 10, &[-3, -1]).unwrap(), 7);
        assert_eq!(sequence_steps("u", 4, &[-4, 0]).unwrap(), 0);
        let e = sequence_steps("u", 3, &[-4, 0]).unwrap_err();
        assert_eq!(
            e,
            Error::SequenceTooShort {
                sequence: "u".into(),
                length: 3,
                required: 4,
                detail: "the window of taps [-4, 0]".into()
            }
        );
        assert_eq!(
            e.to_string(),
            "sequence `u` has 3 rows but the window of taps [-4, 0] needs 4"
        );
        // Extreme taps do not overflow.
        assert!(sequence_steps("u", 3, &[i64::MIN, i64::MAX]).is_err());
    }

    #[test]
    fn check_n_steps_values() {
        assert_eq!(check_n_steps(0).unwrap(), 0);
        assert_eq!(check_n_steps(5).unwrap(), 5);
        let e = check_n_steps(-2).unwrap_err();
        assert_eq!(
            e,
            Error::InvalidArgument {
                what: "n_steps".into(),
                detail: "it must be >= 0, got -2".into()
            }
        );
        assert_eq!(e.to_string(), "invalid `n_steps`: it must be >= 0, got -2");
    }

    #[test]
    fn check_steps_available_values() {
        check_steps_available("u", 9, &[-4, 0], 5).unwrap();
        check_steps_available("u", 5, &[0], 5).unwrap();
        check_steps_available("u", 0, &[0], 0).unwrap();
        let e = check_steps_available("u", 3, &[-4, 0], 5).unwrap_err();
        assert_eq!(
            e,
            Error::SequenceTooShort {
                sequence: "u".into(),
                length: 3,
                required: 9,
                detail: "n_steps = 5 with taps [-4, 0]".into()
            }
        );
        assert_eq!(
            e.to_string(),
            "sequence `u` has 3 rows but n_steps = 5 with taps [-4, 0] needs 9"
        );
        assert!(check_steps_available("u", 8, &[-4, 0], 5).is_err());
        assert!(check_steps_available("u", 10, &[i64::MIN, i64::MAX], usize::MAX).is_err());
    }
}

#[cfg(test)]
mod step_shape_tests {
    use super::*;

    #[test]
    fn step_shape_and_initial_rows() {
        assert!(check_step_shape("`x0`", "x + 1", &[3], &[3]).is_ok());
        assert_eq!(
            check_step_shape("`x0`", "x + v", &[1], &[3]),
            Err(Error::StepResultShape {
                output: "`x0`".into(),
                result: "x + v".into(),
                expected: vec![1],
                found: vec![3],
            })
        );
        assert_eq!(check_initial_rows("x0", 4, &[-2, -1]), Ok(2));
        assert_eq!(check_initial_rows("x0", 3, &[-3, -1]), Ok(3));
        assert_eq!(
            check_initial_rows("x0", 1, &[-1, -2]),
            Err(Error::InitialStateTooShort {
                output: "x0".into(),
                rows: 1,
                taps: vec![-1, -2],
                required: 2,
            })
        );
    }
}

/// The last `m` rows written to a ring of rows (`ring`'s leading axis), in step order, into
/// `out`: the rows written as absolute rows `end - m .. end`, absolute row `a` living in
/// slot `a % ring rows`. Used for an output that keeps only its last steps (save-mem).
pub fn ring_tail<T: Element, D: ndarray::Dimension + ndarray::RemoveAxis>(
    out: &mut ndarray::Array<T, D>,
    ring: ndarray::ArrayView<'_, T, D>,
    end: usize,
    m: usize,
) {
    let slots = ring.len_of(ndarray::Axis(0));
    let mut shape = ring.raw_dim();
    shape[0] = m.min(slots);
    super::ensure_shape(out, shape);
    for r in 0..m.min(slots) {
        let slot = (end.saturating_sub(m) + r) % slots;
        out.index_axis_mut(ndarray::Axis(0), r)
            .assign(&ring.index_axis(ndarray::Axis(0), slot));
    }
}

/// `x`, or with no row a view whose every axis is 0: the shape a scan gives a map output
/// when no step ran, for a map output computed after the loop from a kept trace.
pub fn zero_step_shape<T, D: ndarray::Dimension>(
    x: ndarray::ArrayView<'_, T, D>,
) -> ndarray::ArrayView<'_, T, D> {
    let mut x = x;
    if x.len_of(ndarray::Axis(0)) == 0 {
        x.slice_each_axis_inplace(|_| ndarray::Slice::from(0..0));
    }
    x
}

#[cfg(test)]
mod zero_step_tests {
    #[test]
    fn no_rows_means_every_axis_zero() {
        let a = ndarray::Array2::<f64>::zeros((0, 5));
        assert_eq!(super::zero_step_shape(a.view()).shape(), &[0, 0]);
        let b = ndarray::Array2::<f64>::ones((2, 5));
        assert_eq!(super::zero_step_shape(b.view()), b);
    }
}

#[cfg(test)]
mod ring_tests {
    use ndarray::{array, Array1, Array2};

    #[test]
    fn ring_tail_unrolls_the_ring_in_step_order() {
        // Absolute rows 0..7 written into 3 slots: slots hold rows 6, 4, 5 -> [3, 1, 2].
        let ring = array![[6.0, 60.0], [4.0, 40.0], [5.0, 50.0]];
        let mut out: Array2<f64> = Array2::default((0, 0));
        super::ring_tail(&mut out, ring.view(), 7, 3);
        assert_eq!(out, array![[4.0, 40.0], [5.0, 50.0], [6.0, 60.0]]);
        super::ring_tail(&mut out, ring.view(), 7, 1);
        assert_eq!(out, array![[6.0, 60.0]]);
        let mut v: Array1<i64> = Array1::default(0);
        super::ring_tail(&mut v, array![9i64, 7, 8].view(), 3, 2);
        assert_eq!(v, array![7, 8]);
        super::ring_tail(&mut v, array![9i64, 7, 8].view(), 0, 0);
        assert_eq!(v.len(), 0);
    }
}
