//! The evaluator's linear algebra, textbook algorithms in f64 (an f32 operand is converted
//! exactly and the result rounded once), written independently of the runtime (which
//! calls faer): Cholesky-Banachiewicz, Gaussian elimination with partial pivoting (LU),
//! forward and back substitution. `solve(.., assume_a = "sym")` is Gaussian elimination
//! of the symmetric matrix read from one triangle (the runtime's Bunch-Kaufman gives the
//! same solution up to rounding).
//!
//! Failures have the runtime's messages without the step (the evaluator's scan loop adds
//! "step t" itself): an exactly zero pivot is singular, a non-positive (or NaN) Cholesky
//! pivot is not positive definite.

use ndarray::{Array2, Axis, Ix1, Ix2};

use super::value::Value;
use crate::ir::{Assume, DType, LinalgOp};

/// The value as an f64 matrix of `n` rows and one column per right-hand side (a vector
/// is one column).
fn as_matrix(v: &Value, label: &str) -> Result<Array2<f64>, String> {
    let Value::F64(a) = v.cast(DType::F64) else {
        return Err(format!("IR error: `{label}`: not castable to f64"));
    };
    match a.ndim() {
        1 => a
            .into_dimensionality::<Ix1>()
            .map(|v| v.insert_axis(Axis(1)))
            .map_err(|e| format!("IR error: `{label}`: {e}")),
        2 => a
            .into_dimensionality::<Ix2>()
            .map_err(|e| format!("IR error: `{label}`: {e}")),
        r => Err(format!("IR error: `{label}`: a rank-{r} operand")),
    }
}

fn square(a: &Array2<f64>, label: &str) -> Result<usize, String> {
    let (m, n) = a.dim();
    if m == n {
        Ok(n)
    } else {
        Err(format!(
            "`{label}` needs a square matrix, got shape [{m}, {n}]"
        ))
    }
}

fn singular(label: &str, pivot: usize) -> String {
    format!(
        "`{label}`: the matrix is singular (its factorisation has a zero pivot at index {pivot})"
    )
}

fn not_positive(label: &str, order: usize) -> String {
    format!("`{label}`: the matrix is not positive definite (its leading minor of order {order} is not positive)")
}

/// The symmetric matrix whose `lower` (or upper) triangle is a's.
fn symmetric(a: &Array2<f64>, lower: bool) -> Array2<f64> {
    Array2::from_shape_fn(a.dim(), |(i, j)| {
        let (r, c) = if (i >= j) == lower { (i, j) } else { (j, i) };
        a[[r, c]]
    })
}

/// Cholesky-Banachiewicz on the symmetric matrix `a`: `L` with `L L^T = a`, or the order
/// of the first leading minor that is not positive.
fn cholesky_lower(a: &Array2<f64>) -> Result<Array2<f64>, usize> {
    let n = a.nrows();
    let mut l = Array2::<f64>::zeros((n, n));
    for j in 0..n {
        let mut d = a[[j, j]];
        for k in 0..j {
            d -= l[[j, k]] * l[[j, k]];
        }
        // Not positive, or NaN (LAPACK's test).
        if d.is_nan() || d <= 0.0 {
            return Err(j + 1);
        }
        let d = d.sqrt();
        l[[j, j]] = d;
        for i in j + 1..n {
            let mut s = a[[i, j]];
            for k in 0..j {
                s -= l[[i, k]] * l[[j, k]];
            }
            l[[i, j]] = s / d;
        }
    }
    Ok(l)
}

/// Gaussian elimination with partial pivoting (the largest magnitude in the column, the
/// first of equals): `P a = L U` packed in one matrix (L's unit diagonal implied), the row
/// order, the number of row exchanges and the first exactly zero pivot.
struct Lu {
    lu: Array2<f64>,
    rows: Vec<usize>,
    swaps: usize,
    zero: Option<usize>,
}

fn lu(a: &Array2<f64>) -> Lu {
    let n = a.nrows();
    let mut lu = a.clone();
    let mut rows: Vec<usize> = (0..n).collect();
    let (mut swaps, mut zero) = (0, None);
    for j in 0..n {
        let mut p = j;
        for i in j + 1..n {
            if lu[[i, j]].abs() > lu[[p, j]].abs() {
                p = i;
            }
        }
        if p != j {
            for c in 0..n {
                lu.swap([p, c], [j, c]);
            }
            rows.swap(p, j);
            swaps += 1;
        }
        let pivot = lu[[j, j]];
        if pivot == 0.0 {
            zero.get_or_insert(j);
            continue;
        }
        for i in j + 1..n {
            let f = lu[[i, j]] / pivot;
            lu[[i, j]] = f;
            for c in j + 1..n {
                lu[[i, c]] -= f * lu[[j, c]];
            }
        }
    }
    Lu {
        lu,
        rows,
        swaps,
        zero,
    }
}

/// Solves `t x = b` for a triangular `t` (its `lower` or upper triangle read, its diagonal
/// ones when `unit`), column by column of `b`.
fn substitute(t: &Array2<f64>, b: &Array2<f64>, lower: bool, unit: bool) -> Array2<f64> {
    let n = t.nrows();
    let mut x = b.clone();
    for col in 0..b.ncols() {
        let order: Vec<usize> = if lower {
            (0..n).collect()
        } else {
            (0..n).rev().collect()
        };
        for &i in &order {
            let mut s = x[[i, col]];
            for &k in order.iter().take_while(|&&k| k != i) {
                s -= t[[i, k]] * x[[k, col]];
            }
            x[[i, col]] = if unit { s } else { s / t[[i, i]] };
        }
    }
    x
}

fn lu_solve(f: &Lu, b: &Array2<f64>) -> Array2<f64> {
    let permuted = b.select(Axis(0), &f.rows);
    let y = substitute(&f.lu, &permuted, true, true);
    substitute(&f.lu, &y, false, false)
}

fn cholesky_solve(l: &Array2<f64>, b: &Array2<f64>) -> Array2<f64> {
    let y = substitute(l, b, true, false);
    substitute(&l.t().to_owned(), &y, false, false)
}

/// The result `x` (n x k) given the shape of `b`, in `dtype`.
fn result(x: Array2<f64>, b: &Value, dtype: DType) -> Value {
    let x = if b.rank() == 1 {
        x.column(0).to_owned().into_dyn()
    } else {
        x.into_dyn()
    };
    Value::F64(x).cast(dtype)
}

fn check_rhs(n: usize, b: &Array2<f64>, bv: &Value, label: &str) -> Result<(), String> {
    if b.nrows() == n {
        Ok(())
    } else {
        Err(format!(
            "cannot solve `{label}`: the matrix has shape [{n}, {n}] but the right-hand side has shape {:?} (it needs {n} row{})",
            bv.shape(),
            if n == 1 { "" } else { "s" }
        ))
    }
}

pub fn linalg(op: LinalgOp, args: &[Value], dtype: DType, label: &str) -> Result<Value, String> {
    let a = as_matrix(&args[0], label)?;
    let n = square(&a, label)?;
    let scalar = |x: f64| Value::F64(ndarray::arr0(x).into_dyn()).cast(dtype);
    let matrix = |x: Array2<f64>| Value::F64(x.into_dyn()).cast(dtype);
    let rhs = || -> Result<Array2<f64>, String> {
        let bv = args
            .get(1)
            .ok_or_else(|| format!("IR error: `{label}` has no right-hand side"))?;
        let b = as_matrix(bv, label)?;
        check_rhs(n, &b, bv, label)?;
        Ok(b)
    };
    match op {
        LinalgOp::Cholesky {
            lower,
            nan_on_error,
        } => match cholesky_lower(&symmetric(&a, lower)) {
            Ok(l) => Ok(matrix(if lower { l } else { l.t().to_owned() })),
            Err(_) if nan_on_error => Ok(matrix(Array2::from_elem((n, n), f64::NAN))),
            Err(order) => Err(not_positive(label, order)),
        },
        LinalgOp::ChoSolve { lower } => {
            let b = rhs()?;
            // The factor's triangle alone; upper: U^T U, so L = U^T.
            let l = Array2::from_shape_fn((n, n), |(i, j)| match (lower, i >= j) {
                (true, true) => a[[i, j]],
                (false, true) => a[[j, i]],
                _ => 0.0,
            });
            Ok(result(cholesky_solve(&l, &b), &args[1], dtype))
        }
        LinalgOp::Solve { assume, lower } => {
            let b = rhs()?;
            let x = match assume {
                Assume::General => {
                    let f = lu(&a);
                    if let Some(p) = f.zero {
                        return Err(singular(label, p));
                    }
                    lu_solve(&f, &b)
                }
                Assume::Positive => {
                    let l = cholesky_lower(&symmetric(&a, lower))
                        .map_err(|order| not_positive(label, order))?;
                    cholesky_solve(&l, &b)
                }
                Assume::Symmetric => {
                    let f = lu(&symmetric(&a, lower));
                    if let Some(p) = f.zero {
                        return Err(singular(label, p));
                    }
                    lu_solve(&f, &b)
                }
            };
            Ok(result(x, &args[1], dtype))
        }
        LinalgOp::SolveTriangular {
            lower,
            trans,
            unit_diagonal,
        } => {
            let b = rhs()?;
            if !unit_diagonal {
                if let Some(p) = (0..n).find(|&i| a[[i, i]] == 0.0) {
                    return Err(singular(label, p));
                }
            }
            let t = if trans { a.t().to_owned() } else { a };
            let x = substitute(&t, &b, lower != trans, unit_diagonal);
            Ok(result(x, &args[1], dtype))
        }
        LinalgOp::Inv => {
            let f = lu(&a);
            if let Some(p) = f.zero {
                return Err(singular(label, p));
            }
            Ok(matrix(lu_solve(&f, &Array2::eye(n))))
        }
        LinalgOp::Det => {
            let f = lu(&a);
            let mut d = if f.swaps.is_multiple_of(2) { 1.0 } else { -1.0 };
            for i in 0..n {
                d *= f.lu[[i, i]];
            }
            Ok(scalar(d))
        }
        LinalgOp::SlogDet { logabs } => {
            let f = lu(&a);
            let (sign, log) = if f.zero.is_some() {
                (0.0, f64::NEG_INFINITY)
            } else {
                let mut sign = if f.swaps.is_multiple_of(2) { 1.0 } else { -1.0 };
                let mut log = 0.0;
                for i in 0..n {
                    let u = f.lu[[i, i]];
                    if u < 0.0 {
                        sign = -sign;
                    }
                    log += u.abs().ln();
                }
                (sign, log)
            };
            Ok(scalar(if logabs { log } else { sign }))
        }
    }
}
