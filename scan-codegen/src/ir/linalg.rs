//! Dense linear algebra ops (`Op::Linalg`): numpy's, scipy's and PyTensor's functions of
//! matrices, each one node. A function with several results (`slogdet`, `eigh`, `qr`, `svd`:
//! [`LinalgOp::parts`]) is one node computing all of them from one factorisation, with no
//! value of its own, read through `Op::Part { index }` nodes (as a scan is read through
//! `Op::ScanOutput`).

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

/// numpy's `qr` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QrMode {
    /// `(q, r)`, `q` `[m, k]` and `r` `[k, n]`, `k = min(m, n)`.
    Reduced,
    /// `(q, r)`, `q` `[m, m]` and `r` `[m, n]`.
    Complete,
    /// `r` alone, `[k, n]`.
    R,
}

impl QrMode {
    pub fn name(self) -> &'static str {
        match self {
            QrMode::Reduced => "reduced",
            QrMode::Complete => "complete",
            QrMode::R => "r",
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
    /// `[a]` -> scalar: numpy's `det`. `[a, l]` after reuse_cholesky: `l` is the Cholesky
    /// factor of `a`, read when `a` is symmetric to rounding.
    Det,
    /// `[a]` -> `(sign, logabsdet)`, two scalars: numpy's `slogdet`. `[a, l]` as `Det`.
    SlogDet,
    /// `[a]` -> `(w, v)`: numpy's `eigh`, the eigenvalues ascending (a vector) and the
    /// eigenvectors (the columns of a matrix) of the symmetric matrix read from a's
    /// `lower` (`UPLO = "L"`) or upper triangle; each eigenvector's component of largest
    /// magnitude (the first of those within `sqrt(eps)` of it) is positive.
    Eigh { lower: bool },
    /// `[a]` -> `(q, r)`, or `r` alone with `QrMode::R`: numpy's `qr`, Householder's
    /// signs as LAPACK's.
    Qr { mode: QrMode },
    /// `[a]` -> vector: the singular values, descending (numpy's `svd(a, compute_uv =
    /// False)`, `svdvals`).
    SvdVals,
    /// `[a]` -> `(u, s, vh)`, `a = u diag(s) vh`: numpy's `svd(a, full_matrices)`, the
    /// singular values descending; each column of `u` has its component of largest
    /// magnitude positive (`eigh`'s rule), the row of `vh` signed to match. With
    /// `full_matrices`, `u` is `[m, m]` and `vh` `[n, n]` (the columns beyond `min(m, n)`
    /// an orthonormal basis of the rest), else `[m, k]` and `[k, n]`.
    Svd { full_matrices: bool },
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
            LinalgOp::SlogDet => "slogdet",
            LinalgOp::Eigh { .. } => "eigh",
            LinalgOp::Qr { .. } => "qr",
            LinalgOp::SvdVals | LinalgOp::Svd { .. } => "svd",
        }
    }

    /// The ranks of the results of a function with several (one node, read through
    /// `Op::Part { index }`), or `None` for a function of one result (the node's value).
    pub fn parts(self) -> Option<&'static [usize]> {
        match self {
            LinalgOp::SlogDet => Some(&[0, 0]),
            LinalgOp::Eigh { .. } => Some(&[1, 2]),
            LinalgOp::Qr {
                mode: QrMode::Reduced | QrMode::Complete,
            } => Some(&[2, 2]),
            LinalgOp::Svd { .. } => Some(&[2, 1, 2]),
            _ => None,
        }
    }

    /// Whether a node of it may have `n` inputs: its arity, or for `det` and `slogdet` one
    /// more, the Cholesky factor of the same matrix (added by the reuse_cholesky rewrite).
    pub fn takes(self, n: usize) -> bool {
        n == self.arity() || (matches!(self, LinalgOp::Det | LinalgOp::SlogDet) && n == 2)
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
            LinalgOp::SlogDet => "slogdet".to_string(),
            LinalgOp::Eigh { lower } => format!("eigh(lower={lower})"),
            LinalgOp::Qr {
                mode: QrMode::Reduced,
            } => "qr".to_string(),
            LinalgOp::Qr { mode } => format!("qr(mode={})", mode.name()),
            LinalgOp::SvdVals => "svdvals".to_string(),
            LinalgOp::Svd { full_matrices } => format!("svd(full_matrices={full_matrices})"),
        }
    }
}
