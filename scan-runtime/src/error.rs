//! The one error type of generated code. Every size problem found at run time becomes an
//! `Error` value (never a panic), and its message names the user's argument or expression
//! together with the sizes involved, so it can be read without looking at generated code.

use std::fmt;

/// A run-time failure of a `scan!` function. Messages are one sentence each.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A sequence has fewer rows than the loop needs.
    ///
    /// `detail` says what needs the rows, for example "n_steps = 5 with taps [-4, 0]".
    SequenceTooShort {
        sequence: String,
        length: usize,
        required: usize,
        detail: String,
    },
    /// A value (an initial state, an argument) has a shape other than the expected one.
    ShapeMismatch {
        what: String,
        expected: Vec<usize>,
        found: Vec<usize>,
    },
    /// A step returned a value whose shape differs from its output's rows (the initial
    /// state's shape, or the first step's for an output without one).
    StepResultShape {
        /// How to name the output: "`x0`" (its initial state) or "0" (its position).
        output: String,
        /// The step's expression for the result.
        result: String,
        expected: Vec<usize>,
        found: Vec<usize>,
    },
    /// A multi-tap initial state with fewer rows than its deepest tap needs.
    InitialStateTooShort {
        output: String,
        rows: usize,
        taps: Vec<i64>,
        required: usize,
    },
    /// Operand shapes that numpy broadcasting cannot reconcile.
    Broadcast {
        what: String,
        shapes: Vec<Vec<usize>>,
    },
    /// A dot product whose inner sizes differ.
    Dot {
        what: String,
        left: Vec<usize>,
        right: Vec<usize>,
    },
    /// An index outside `-length..length`.
    IndexOutOfBounds {
        what: String,
        index: i64,
        length: usize,
    },
    /// An operation that needs at least one element (or row) got none.
    Empty { what: String },
    /// Any other bad argument (a negative `n_steps`, an axis the array lacks, ...).
    InvalidArgument { what: String, detail: String },
    /// A linear-algebra function given a matrix that is not square.
    NotSquare { what: String, shape: Vec<usize> },
    /// A solve whose right-hand side has another number of rows than the matrix.
    RightHandSide {
        what: String,
        matrix: Vec<usize>,
        rhs: Vec<usize>,
    },
    /// A Cholesky factorisation of a matrix that is not positive definite: its leading
    /// minor of this `order` is not positive. `step`: the loop's step, inside a loop.
    NotPositiveDefinite {
        what: String,
        step: Option<usize>,
        order: usize,
    },
    /// A solve or inverse of a singular matrix: its factorisation has an exactly zero
    /// pivot at `pivot` (from 0). `step`: the loop's step, inside a loop.
    Singular {
        what: String,
        step: Option<usize>,
        pivot: usize,
    },
    /// An eigendecomposition or SVD whose iteration did not converge (LAPACK's
    /// `info > 0`, numpy's `LinAlgError`). `step`: the loop's step, inside a loop.
    NoConvergence { what: String, step: Option<usize> },
}

/// ` at step 3`, or nothing outside a loop.
struct AtStep(Option<usize>);

impl fmt::Display for AtStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(t) => write!(f, " at step {t}"),
            None => Ok(()),
        }
    }
}

/// `Result` with [`Error`] as the default error, so `Result<T>` reads well in signatures
/// and the two-parameter form still works when this alias shadows std's.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Writes a shape the way numpy prints it in messages: `[2, 3]`, `[]` for a scalar.
struct Shape<'a>(&'a [usize]);

impl fmt::Display for Shape<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::SequenceTooShort {
                sequence,
                length,
                required,
                detail,
            } => write!(
                f,
                "sequence `{sequence}` has {} but {detail} needs {required}",
                plural(*length, "row", "rows")
            ),
            Error::ShapeMismatch {
                what,
                expected,
                found,
            } => write!(
                f,
                "`{what}` has shape {} but shape {} was expected",
                Shape(found),
                Shape(expected)
            ),
            Error::StepResultShape {
                output,
                result,
                expected,
                found,
            } => write!(
                f,
                "the step result `{result}` for output {output} has shape {} but the output's rows have shape {}",
                Shape(found),
                Shape(expected)
            ),
            Error::InitialStateTooShort {
                output,
                rows,
                taps,
                required,
            } => write!(
                f,
                "initial state `{output}` has {} but taps {taps:?} need {required} (init[0] is output[t-{required}])",
                plural(*rows, "row", "rows")
            ),
            Error::Broadcast { what, shapes } => {
                write!(f, "cannot broadcast shapes ")?;
                for (i, s) in shapes.iter().enumerate() {
                    match i {
                        0 => {}
                        _ if i + 1 == shapes.len() => write!(f, " and ")?,
                        _ => write!(f, ", ")?,
                    }
                    write!(f, "{}", Shape(s))?;
                }
                write!(f, " together in `{what}`")
            }
            Error::Dot { what, left, right } => {
                // The inner sizes are the last axis of the left operand and the one before
                // the last of the right one (its only axis for a vector; a stack of
                // matrices' rows).
                let inner_left = left.last().copied().unwrap_or(1);
                let inner_right = match right.len() {
                    0 => 1,
                    1 => right[0],
                    r => right[r - 2],
                };
                if inner_left == inner_right && left.len() == 3 && right.len() == 3 {
                    // Two stacks of matrices (`matmul`) whose batch sizes do not broadcast.
                    return write!(
                        f,
                        "cannot compute the matrix product `{what}` of shapes {} and {}: \
                         batch sizes {} and {} differ and neither is 1",
                        Shape(left),
                        Shape(right),
                        left[0],
                        right[0]
                    );
                }
                write!(
                    f,
                    "cannot compute the dot product `{what}` of shapes {} and {}: \
                     inner sizes {inner_left} and {inner_right} differ",
                    Shape(left),
                    Shape(right)
                )
            }
            Error::IndexOutOfBounds {
                what,
                index,
                length,
            } => write!(
                f,
                "index {index} is out of bounds for `{what}` with length {length}"
            ),
            Error::Empty { what } => write!(
                f,
                "`{what}` got an empty array, which has no element or row to take"
            ),
            Error::InvalidArgument { what, detail } => write!(f, "invalid `{what}`: {detail}"),
            Error::NotSquare { what, shape } => {
                write!(f, "`{what}` needs a square matrix, got shape {}", Shape(shape))
            }
            Error::RightHandSide { what, matrix, rhs } => write!(
                f,
                "cannot solve `{what}`: the matrix has shape {} but the right-hand side has shape {} (it needs {})",
                Shape(matrix),
                Shape(rhs),
                plural(matrix.first().copied().unwrap_or(0), "row", "rows")
            ),
            Error::NotPositiveDefinite { what, step, order } => write!(
                f,
                "`{what}`{}: the matrix is not positive definite (its leading minor of order {order} is not positive)",
                AtStep(*step)
            ),
            Error::Singular { what, step, pivot } => write!(
                f,
                "`{what}`{}: the matrix is singular (its factorisation has a zero pivot at index {pivot})",
                AtStep(*step)
            ),
            Error::NoConvergence { what, step } => write!(
                f,
                "`{what}`{}: the iteration did not converge (is the matrix finite?)",
                AtStep(*step)
            ),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_too_short_message() {
        let e = Error::SequenceTooShort {
            sequence: "u".into(),
            length: 3,
            required: 9,
            detail: "n_steps = 5 with taps [-4, 0]".into(),
        };
        assert_eq!(
            e.to_string(),
            "sequence `u` has 3 rows but n_steps = 5 with taps [-4, 0] needs 9"
        );
        let one = Error::SequenceTooShort {
            sequence: "u".into(),
            length: 1,
            required: 2,
            detail: "n_steps = 2 with taps [0]".into(),
        };
        assert_eq!(
            one.to_string(),
            "sequence `u` has 1 row but n_steps = 2 with taps [0] needs 2"
        );
    }

    #[test]
    fn shape_mismatch_message() {
        let e = Error::ShapeMismatch {
            what: "h0".into(),
            expected: vec![4],
            found: vec![3, 2],
        };
        assert_eq!(
            e.to_string(),
            "`h0` has shape [3, 2] but shape [4] was expected"
        );
    }

    #[test]
    fn step_result_shape_message() {
        let e = Error::StepResultShape {
            output: "`x0`".into(),
            result: "x_tm1 + v".into(),
            expected: vec![1],
            found: vec![3],
        };
        assert_eq!(
            e.to_string(),
            "the step result `x_tm1 + v` for output `x0` has shape [3] but the output's rows have shape [1]"
        );
    }

    #[test]
    fn initial_state_too_short_message() {
        let e = Error::InitialStateTooShort {
            output: "x0".into(),
            rows: 1,
            taps: vec![-2, -1],
            required: 2,
        };
        assert_eq!(
            e.to_string(),
            "initial state `x0` has 1 row but taps [-2, -1] need 2 (init[0] is output[t-2])"
        );
    }

    #[test]
    fn broadcast_message() {
        let two = Error::Broadcast {
            what: "a + b".into(),
            shapes: vec![vec![2, 3], vec![4]],
        };
        assert_eq!(
            two.to_string(),
            "cannot broadcast shapes [2, 3] and [4] together in `a + b`"
        );
        let three = Error::Broadcast {
            what: "where(c, a, b)".into(),
            shapes: vec![vec![2], vec![], vec![3]],
        };
        assert_eq!(
            three.to_string(),
            "cannot broadcast shapes [2], [] and [3] together in `where(c, a, b)`"
        );
    }

    #[test]
    fn dot_message() {
        let e = Error::Dot {
            what: "x.dot(w)".into(),
            left: vec![3],
            right: vec![4, 5],
        };
        assert_eq!(
            e.to_string(),
            "cannot compute the dot product `x.dot(w)` of shapes [3] and [4, 5]: \
             inner sizes 3 and 4 differ"
        );
    }

    #[test]
    fn index_message() {
        let e = Error::IndexOutOfBounds {
            what: "xs".into(),
            index: -4,
            length: 3,
        };
        assert_eq!(
            e.to_string(),
            "index -4 is out of bounds for `xs` with length 3"
        );
    }

    #[test]
    fn empty_message() {
        let e = Error::Empty {
            what: "max(x)".into(),
        };
        assert_eq!(
            e.to_string(),
            "`max(x)` got an empty array, which has no element or row to take"
        );
    }

    #[test]
    fn invalid_argument_message() {
        let e = Error::InvalidArgument {
            what: "n_steps".into(),
            detail: "it must be >= 0, got -2".into(),
        };
        assert_eq!(e.to_string(), "invalid `n_steps`: it must be >= 0, got -2");
        // The type works with `?` into boxed errors.
        let boxed: Box<dyn std::error::Error> = Box::new(e.clone());
        assert_eq!(boxed.to_string(), e.to_string());
    }
}
