//! Dense linear algebra ops (`Op::Linalg`): numpy's, scipy's and PyTensor's functions of
//! matrices, each one node. A function with several results (`slogdet`) is several nodes,
//! one per result, on the same inputs: each reads its part of the same factorisation (the
//! factorisation is computed once per node; `cse` merges two calls of one function with
//! one part).

/// How `solve` factorises (scipy's `assume_a`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Assume {
    /// "gen": LU with partial pivoting.
    General,
    /// "pos": Cholesky.
    Positive,
    /// "sym": Bunch-Kaufman (LBLT).
    Symmetric,
}

impl Assume {
    pub fn name(self) -> &'static str {
        match self {
            Assume::General => "gen",
            Assume::Positive => "pos",
            Assume::Symmetric => "sym",
        }
    }
}

/// One linear-algebra function. Inputs: `[a]`, or `[a, b]` for the solves (`b` a vector
/// or a matrix of right-hand sides, the result of b's shape); all of one float dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinalgOp {
    /// `[a]` -> matrix: the Cholesky factor (lower: `L L^T = a`, else `U^T U = a`); a
    /// matrix that is not positive definite is an `Err` naming the step, or NaNs with
    /// `nan_on_error`.
    Cholesky { lower: bool, nan_on_error: bool },
    /// `[c, b]`: scipy's `cho_solve((c, lower), b)`.
    ChoSolve { lower: bool },
    /// `[a, b]`: scipy's `solve(a, b, assume_a, lower)`.
    Solve { assume: Assume, lower: bool },
    /// `[a, b]`: scipy's `solve_triangular(a, b, trans, lower, unit_diagonal)`.
    SolveTriangular {
        lower: bool,
        trans: bool,
        unit_diagonal: bool,
    },
    /// `[a]` -> matrix: numpy's `inv`.
    Inv,
    /// `[a]` -> scalar: numpy's `det`.
    Det,
    /// `[a]` -> scalar: numpy's `slogdet`, its sign (`logabs: false`) or the log of the
    /// determinant's absolute value.
    SlogDet { logabs: bool },
}

impl LinalgOp {
    /// The function's name in the step language.
    pub fn name(self) -> &'static str {
        match self {
            LinalgOp::Cholesky { .. } => "cholesky",
            LinalgOp::ChoSolve { .. } => "cho_solve",
            LinalgOp::Solve { .. } => "solve",
            LinalgOp::SolveTriangular { .. } => "solve_triangular",
            LinalgOp::Inv => "inv",
            LinalgOp::Det => "det",
            LinalgOp::SlogDet { .. } => "slogdet",
        }
    }

    /// How many inputs it takes.
    pub fn arity(self) -> usize {
        match self {
            LinalgOp::ChoSolve { .. }
            | LinalgOp::Solve { .. }
            | LinalgOp::SolveTriangular { .. } => 2,
            _ => 1,
        }
    }

    /// Printed in graphs (`explain`).
    pub fn describe(self) -> String {
        match self {
            LinalgOp::Cholesky {
                lower,
                nan_on_error,
            } => format!(
                "cholesky(lower={lower}{})",
                if nan_on_error { ", on_error=nan" } else { "" }
            ),
            LinalgOp::ChoSolve { lower } => format!("cho_solve(lower={lower})"),
            LinalgOp::Solve { assume, lower } => {
                format!("solve(assume_a={}, lower={lower})", assume.name())
            }
            LinalgOp::SolveTriangular {
                lower,
                trans,
                unit_diagonal,
            } => format!(
                "solve_triangular(lower={lower}, trans={trans}, unit_diagonal={unit_diagonal})"
            ),
            LinalgOp::Inv => "inv".to_string(),
            LinalgOp::Det => "det".to_string(),
            LinalgOp::SlogDet { logabs: false } => "slogdet.sign".to_string(),
            LinalgOp::SlogDet { logabs: true } => "slogdet.logabsdet".to_string(),
        }
    }
}
