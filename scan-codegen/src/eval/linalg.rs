//! The evaluator's linear algebra, textbook algorithms in f64 (an f32 operand is converted
//! exactly and the result rounded once), written independently of the runtime (which
//! calls faer): Cholesky-Banachiewicz, Gaussian elimination with partial pivoting (LU),
//! forward and back substitution; cyclic Jacobi rotations for `eigh`, Householder
//! reflections (LAPACK's signs) for `qr`, one-sided Jacobi (Hestenes) for the singular
//! values and vectors. `solve(.., assume_a = "sym")` is Gaussian elimination of the symmetric matrix
//! read from one triangle (the runtime's Bunch-Kaufman gives the same solution up to
//! rounding).
//!
//! Failures have the runtime's messages without the step (the evaluator's scan loop adds
//! "step t" itself): an exactly zero pivot is singular, a non-positive (or NaN) Cholesky
//! pivot is not positive definite.

use ndarray::{Array2, Axis, Ix1, Ix2};

use super::value::Value;
use crate::ir::{Assume, DType, LinalgOp, QrMode};

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

/// `sqrt(eps)` of the dtype: eigenvector components this close (relative) to the largest
/// magnitude count as equally large (the runtime's `LinalgFloat::SQRT_EPS`).
fn sqrt_eps(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => f64::from(f32::EPSILON).sqrt(),
        _ => f64::EPSILON.sqrt(),
    }
}

/// Cyclic Jacobi on the symmetric `a`: its eigenvalues ascending and the eigenvectors
/// (columns), each with its component of largest magnitude positive (the first of those
/// within `tie` of it, relative). Rotations until every off-diagonal element is
/// negligible beside its diagonal pair, at most 100 sweeps.
fn jacobi_eigh(a: &Array2<f64>, tie: f64, label: &str) -> Result<(Vec<f64>, Array2<f64>), String> {
    let n = a.nrows();
    let mut a = a.clone();
    let mut v = Array2::<f64>::eye(n);
    let mut converged = false;
    for _ in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[[i, j]] * a[[i, j]])
            .sum();
        let diag: f64 = (0..n).map(|i| a[[i, i]] * a[[i, i]]).sum();
        if off <= f64::EPSILON * f64::EPSILON * diag * 1e-4 || off == 0.0 {
            converged = true;
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[[p, q]];
                if apq == 0.0 {
                    continue;
                }
                let theta = (a[[q, q]] - a[[p, p]]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let (akp, akq) = (a[[k, p]], a[[k, q]]);
                    a[[k, p]] = c * akp - s * akq;
                    a[[k, q]] = s * akp + c * akq;
                }
                for k in 0..n {
                    let (apk, aqk) = (a[[p, k]], a[[q, k]]);
                    a[[p, k]] = c * apk - s * aqk;
                    a[[q, k]] = s * apk + c * aqk;
                }
                a[[p, q]] = 0.0;
                a[[q, p]] = 0.0;
                for k in 0..n {
                    let (vkp, vkq) = (v[[k, p]], v[[k, q]]);
                    v[[k, p]] = c * vkp - s * vkq;
                    v[[k, q]] = s * vkp + c * vkq;
                }
            }
        }
    }
    if !converged {
        return Err(no_convergence(label));
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| a[[i, i]].total_cmp(&a[[j, j]]));
    let w = order.iter().map(|&i| a[[i, i]]).collect();
    let mut vs = v.select(Axis(1), &order);
    for mut col in vs.columns_mut() {
        if flip_sign(col.view(), tie) {
            col.mapv_inplace(|x| -x);
        }
    }
    Ok((w, vs))
}

/// Whether the vector's component of largest magnitude (the first within `tie` of it,
/// relative) is negative: `eigh`'s and `svd`'s sign rule flips such a vector.
fn flip_sign(col: ndarray::ArrayView1<'_, f64>, tie: f64) -> bool {
    let largest = col.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let bar = largest - largest * tie;
    col.iter()
        .find(|x| x.abs() >= bar)
        .is_some_and(|&x| x < 0.0)
}

/// Householder QR with LAPACK's reflections (`beta = -sign(alpha) |x|`; none for a
/// column already zero below its diagonal): the complete `q` `m x m` and `r` `m x n` (zero
/// below the diagonal); mode "reduced" is their first `min(m, n)` columns and rows.
fn householder_qr(a: &Array2<f64>) -> (Array2<f64>, Array2<f64>) {
    let (m, n) = a.dim();
    let k = m.min(n);
    let mut r = a.clone();
    let mut q = Array2::<f64>::eye(m);
    for j in 0..k {
        let alpha = r[[j, j]];
        let tail: f64 = (j + 1..m)
            .map(|i| r[[i, j]] * r[[i, j]])
            .sum::<f64>()
            .sqrt();
        if tail == 0.0 {
            continue;
        }
        let norm = alpha.hypot(tail);
        let beta = if alpha >= 0.0 { -norm } else { norm };
        let tau = (beta - alpha) / beta;
        // v = (1, x[1..] / (alpha - beta)); H = I - tau v v^T.
        let mut v = vec![0.0; m];
        v[j] = 1.0;
        for i in j + 1..m {
            v[i] = r[[i, j]] / (alpha - beta);
        }
        for c in j..n {
            let d: f64 = (j..m).map(|i| v[i] * r[[i, c]]).sum();
            for i in j..m {
                r[[i, c]] -= tau * v[i] * d;
            }
        }
        // q = q H.
        for row in 0..m {
            let d: f64 = (j..m).map(|i| q[[row, i]] * v[i]).sum();
            for i in j..m {
                q[[row, i]] -= tau * d * v[i];
            }
        }
    }
    let r = Array2::from_shape_fn((m, n), |(i, j)| if i <= j { r[[i, j]] } else { 0.0 });
    (q, r)
}

/// `count` columns completing the orthonormal columns of `basis` (`p x r`): the next
/// columns of the complete `q` of their Householder QR, each signed by `flip_sign`.
fn complement(basis: &Array2<f64>, count: usize, tie: f64) -> Array2<f64> {
    let r = basis.ncols();
    let (q, _) = householder_qr(basis);
    let mut c = q.slice(ndarray::s![.., r..r + count]).to_owned();
    for mut col in c.columns_mut() {
        if flip_sign(col.view(), tie) {
            col.mapv_inplace(|x| -x);
        }
    }
    c
}

/// `(u, s, v)`: `a = u diag(s) vᵀ`.
type Svd = (Array2<f64>, Vec<f64>, Array2<f64>);

/// The thin SVD by one-sided Jacobi: `(u, s, v)` with `a = u diag(s) v^T`, `u` `m x k`,
/// `v` `n x k`, `s` descending; each column of `u` signed by `flip_sign` and `v`'s column
/// with it. A zero singular value's column of `u` (of `v` for a wide matrix) is completed
/// by [`complement`].
fn jacobi_svd(a: &Array2<f64>, tie: f64, label: &str) -> Result<Svd, String> {
    let tall = a.nrows() >= a.ncols();
    let (w, v) = hestenes(a, label)?;
    let norms: Vec<f64> = w.columns().into_iter().map(|c| c.dot(&c).sqrt()).collect();
    let mut order: Vec<usize> = (0..norms.len()).collect();
    order.sort_by(|&i, &j| norms[j].total_cmp(&norms[i]));
    let s: Vec<f64> = order.iter().map(|&i| norms[i]).collect();
    // `w`'s columns normalised (the zero ones completed), `v` in the same order.
    let rank = s.iter().take_while(|&&x| x > 0.0).count();
    let mut left = Array2::<f64>::zeros((w.nrows(), s.len()));
    for (j, &i) in order.iter().enumerate().take(rank) {
        left.column_mut(j).assign(&(&w.column(i) / norms[i]));
    }
    if rank < s.len() {
        let rest = complement(
            &left.slice(ndarray::s![.., ..rank]).to_owned(),
            s.len() - rank,
            tie,
        );
        left.slice_mut(ndarray::s![.., rank..]).assign(&rest);
    }
    let right = v.select(Axis(1), &order);
    let (mut u, mut v) = if tall { (left, right) } else { (right, left) };
    for j in 0..s.len() {
        if flip_sign(u.column(j), tie) {
            u.column_mut(j).mapv_inplace(|x| -x);
            v.column_mut(j).mapv_inplace(|x| -x);
        }
    }
    Ok((u, s, v))
}

/// One-sided Jacobi (Hestenes): columns of `a` (or of `a^T`, whichever has fewer) rotated
/// pairwise until orthogonal; the singular values are their norms, descending.
fn singular_values(a: &Array2<f64>, label: &str) -> Result<Vec<f64>, String> {
    let (u, _) = hestenes(a, label)?;
    let mut s: Vec<f64> = u.columns().into_iter().map(|c| c.dot(&c).sqrt()).collect();
    s.sort_by(|x, y| y.total_cmp(x));
    Ok(s)
}

/// Hestenes's iteration on `a` (or `a^T`, whichever has fewer columns): the columns
/// rotated until orthogonal, and the product of the rotations (`a v` or `a^T v`).
fn hestenes(a: &Array2<f64>, label: &str) -> Result<(Array2<f64>, Array2<f64>), String> {
    let mut u = if a.nrows() >= a.ncols() {
        a.clone()
    } else {
        a.t().to_owned()
    };
    let n = u.ncols();
    let mut v = Array2::<f64>::eye(n);
    let mut converged = false;
    for _ in 0..100 {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let (cp, cq) = (u.column(p), u.column(q));
                let alpha = cp.dot(&cp);
                let beta = cq.dot(&cq);
                let gamma = cp.dot(&cq);
                if gamma == 0.0 || gamma.abs() <= f64::EPSILON * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                for i in 0..u.nrows() {
                    let (x, y) = (u[[i, p]], u[[i, q]]);
                    u[[i, p]] = c * x - s * y;
                    u[[i, q]] = s * x + c * y;
                }
                for i in 0..n {
                    let (x, y) = (v[[i, p]], v[[i, q]]);
                    v[[i, p]] = c * x - s * y;
                    v[[i, q]] = s * x + c * y;
                }
            }
        }
        if !rotated {
            converged = true;
            break;
        }
    }
    if !converged {
        return Err(no_convergence(label));
    }
    Ok((u, v))
}

fn no_convergence(label: &str) -> String {
    format!("`{label}`: the iteration did not converge (is the matrix finite?)")
}

/// The Cholesky factor given to `det`/`slogdet` by reuse_cholesky (`args[1]`), when `a`
/// is symmetric to rounding: each pair within `4 n eps max|a|` (the runtime's rule,
/// `kernels::linalg::symmetric_to_rounding`). `None`: the determinant by LU.
fn factor(
    a: &Array2<f64>,
    args: &[Value],
    dtype: DType,
    label: &str,
) -> Result<Option<Array2<f64>>, String> {
    let Some(l) = args.get(1) else {
        return Ok(None);
    };
    let l = as_matrix(l, label)?;
    let n = a.nrows();
    let eps = match dtype {
        DType::F32 => f64::from(f32::EPSILON),
        _ => f64::EPSILON,
    };
    let most = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let tolerance = 4.0 * n as f64 * eps * most;
    let symmetric = (0..n).all(|i| (0..i).all(|j| (a[[i, j]] - a[[j, i]]).abs() <= tolerance));
    Ok((symmetric && l.dim() == (n, n)).then_some(l))
}

/// The results of a function with several (`LinalgOp::parts`), in order.
pub fn several(
    op: LinalgOp,
    args: &[Value],
    dtype: DType,
    label: &str,
) -> Result<Vec<Value>, String> {
    let a = as_matrix(&args[0], label)?;
    let scalar = |x: f64| Value::F64(ndarray::arr0(x).into_dyn()).cast(dtype);
    let array = |x: ndarray::ArrayD<f64>| Value::F64(x).cast(dtype);
    match op {
        LinalgOp::Qr { mode } => {
            let (q, r) = householder_qr(&a);
            let (m, n) = a.dim();
            let k = if mode == QrMode::Complete {
                m
            } else {
                m.min(n)
            };
            Ok(vec![
                array(q.slice(ndarray::s![.., ..k]).to_owned().into_dyn()),
                array(r.slice(ndarray::s![..k, ..]).to_owned().into_dyn()),
            ])
        }
        LinalgOp::Svd { full_matrices } => {
            let (m, n) = a.dim();
            let k = m.min(n);
            let (u_cols, vh_rows) = if full_matrices { (m, n) } else { (k, k) };
            let vector = |s: Vec<f64>| array(ndarray::Array1::from(s).into_dyn());
            if k == 0 {
                // The runtime's rule: the full matrices are identities, else empty.
                return Ok(vec![
                    array(
                        Array2::eye(m)
                            .slice(ndarray::s![.., ..u_cols])
                            .to_owned()
                            .into_dyn(),
                    ),
                    vector(Vec::new()),
                    array(
                        Array2::eye(n)
                            .slice(ndarray::s![..vh_rows, ..])
                            .to_owned()
                            .into_dyn(),
                    ),
                ]);
            }
            if a.iter().any(|x| !x.is_finite()) {
                return Ok(vec![
                    array(Array2::from_elem((m, u_cols), f64::NAN).into_dyn()),
                    vector(vec![f64::NAN; k]),
                    array(Array2::from_elem((vh_rows, n), f64::NAN).into_dyn()),
                ]);
            }
            let tie = sqrt_eps(dtype);
            let (mut u, s, mut v) = jacobi_svd(&a, tie, label)?;
            if full_matrices {
                u = ndarray::concatenate![Axis(1), u, complement(&u, m - k, tie)];
                v = ndarray::concatenate![Axis(1), v, complement(&v, n - k, tie)];
            }
            Ok(vec![
                array(u.into_dyn()),
                vector(s),
                array(v.t().to_owned().into_dyn()),
            ])
        }
        LinalgOp::Eigh { lower } => {
            let n = square(&a, label)?;
            let sym = symmetric(&a, lower);
            if sym.iter().any(|x| !x.is_finite()) {
                // The runtime's rule: NaNs, not an iteration on them.
                return Ok(vec![
                    array(ndarray::Array1::from_elem(n, f64::NAN).into_dyn()),
                    array(Array2::from_elem((n, n), f64::NAN).into_dyn()),
                ]);
            }
            let (w, v) = jacobi_eigh(&sym, sqrt_eps(dtype), label)?;
            Ok(vec![
                array(ndarray::Array1::from(w).into_dyn()),
                array(v.into_dyn()),
            ])
        }
        LinalgOp::SlogDet => {
            let n = square(&a, label)?;
            if let Some(l) = factor(&a, args, dtype, label)? {
                let log: f64 = (0..n).map(|i| l[[i, i]].ln()).sum();
                return Ok(vec![scalar(1.0), scalar(2.0 * log)]);
            }
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
            Ok(vec![scalar(sign), scalar(log)])
        }
        _ => Err(format!("IR error: `{label}`: {} has one result", op.name())),
    }
}

pub fn linalg(op: LinalgOp, args: &[Value], dtype: DType, label: &str) -> Result<Value, String> {
    let a = as_matrix(&args[0], label)?;
    if let LinalgOp::Qr { .. } = op {
        // Mode "r": the reduced mode's r alone.
        let (_, r) = householder_qr(&a);
        let k = a.nrows().min(a.ncols());
        return Ok(Value::F64(r.slice(ndarray::s![..k, ..]).to_owned().into_dyn()).cast(dtype));
    }
    if op == LinalgOp::SvdVals {
        let k = a.nrows().min(a.ncols());
        let s = if a.iter().any(|x| !x.is_finite()) {
            vec![f64::NAN; k]
        } else {
            singular_values(&a, label)?
        };
        return Ok(Value::F64(ndarray::Array1::from(s).into_dyn()).cast(dtype));
    }
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
            if let Some(l) = factor(&a, args, dtype, label)? {
                return Ok(scalar((0..n).map(|i| l[[i, i]] * l[[i, i]]).product()));
            }
            let f = lu(&a);
            let mut d = if f.swaps.is_multiple_of(2) { 1.0 } else { -1.0 };
            for i in 0..n {
                d *= f.lu[[i, i]];
            }
            Ok(scalar(d))
        }
        LinalgOp::SlogDet
        | LinalgOp::Eigh { .. }
        | LinalgOp::Qr { .. }
        | LinalgOp::SvdVals
        | LinalgOp::Svd { .. } => Err(format!(
            "IR error: `{label}`: {} is not one value",
            op.name()
        )),
    }
}
