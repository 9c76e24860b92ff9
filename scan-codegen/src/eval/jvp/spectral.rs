//! Tangents of `qr`, `svd` and `svdvals`, in f64 from the primal factors (the results
//! are rounded to the op's dtype once).
//!
//! - `svdvals`, `svd`: with `dP = Uᵀ dA V` (`k x k`, the thin factors),
//!   `ds = diag(dP)`, `dU = U (F ∘ (dP S + S dPᵀ)) + (I - U Uᵀ) dA V S⁻¹`,
//!   `dV = V (F ∘ (S dP + dPᵀ S)) + (I - V Vᵀ) dAᵀ U S⁻¹`, `F_ij = 1 / (s_j² - s_i²)` off
//!   the diagonal, 0 on it (distinct, nonzero singular values, else an `Err`; `svdvals`
//!   is never one: at a repeated value it gives `diag(dP)`, one of the one-sided
//!   derivatives' candidates, as the reverse modes of PyTensor and JAX do).
//!   A full `u` or `vh` with columns past `min(m, n)` (an arbitrary basis) has no rule;
//!   `ds` reads their first `k` columns alone, so the values of a full `svd` have one.
//! - `qr` of `a = Q [R₁ R₂]` (`R₁` `k x k`, `k = min(m, n)`): with `X = dA₁ R₁⁻¹` and
//!   `M = Qᵀ X`, `Ω = tril(M, -1) - tril(M, -1)ᵀ` (Qᵀ dQ, skew), `dQ = Q Ω + X - Q M`,
//!   `dR = Qᵀ dA - Ω R` (from `dA = dQ R + Q dR` and `Qᵀ dQ = Ω`). `R₁` must be invertible;
//!   mode "complete" of a tall matrix (q's columns past n) has no rule.

use ndarray::{s, Array1, Array2, Axis, Ix1, Ix2};

use crate::eval::Value;
use crate::ir::DType;

fn matrix(v: &Value, label: &str) -> Result<Array2<f64>, String> {
    match v.cast(DType::F64) {
        Value::F64(x) => x
            .into_dimensionality::<Ix2>()
            .map_err(|e| format!("IR error: `{label}`: {e}")),
        _ => Err(format!("IR error: `{label}`: not castable to f64")),
    }
}

fn vector(v: &Value, label: &str) -> Result<Array1<f64>, String> {
    match v.cast(DType::F64) {
        Value::F64(x) => x
            .into_dimensionality::<Ix1>()
            .map_err(|e| format!("IR error: `{label}`: {e}")),
        _ => Err(format!("IR error: `{label}`: not castable to f64")),
    }
}

fn value<D: ndarray::Dimension>(x: ndarray::Array<f64, D>, dtype: DType) -> Value {
    Value::F64(x.into_dyn()).cast(dtype)
}

/// `(du, ds, dvh)` of `svd` from its results `u`, `s`, `vh` (thin, or full of a square
/// matrix) and `da`; `ds` alone when `values_only` (then `du`, `dvh` are `None`).
#[allow(clippy::type_complexity)]
pub fn svd(
    u: &Value,
    s: &Value,
    vh: &Value,
    da: &Value,
    values_only: bool,
    label: &str,
) -> Result<(Option<Value>, Value, Option<Value>), String> {
    let dtype = da.dtype();
    let (u, s, v, da) = (
        matrix(u, label)?,
        vector(s, label)?,
        matrix(vh, label)?.reversed_axes(),
        matrix(da, label)?,
    );
    let k = s.len();
    if k > u.ncols() || k > v.ncols() {
        return Err(format!("IR error: `{label}`: svd's factors of {k} values"));
    }
    // The values read the first k columns alone (also of full factors).
    let ds = u
        .slice(s![.., ..k])
        .t()
        .dot(&da)
        .dot(&v.slice(s![.., ..k]))
        .diag()
        .to_owned();
    if values_only {
        return Ok((None, value(ds, dtype), None));
    }
    if u.ncols() != k || v.ncols() != k {
        return Err(format!(
            "`{label}`: the forward mode has no derivative rule for svd's vectors past min(m, n) (full_matrices = true of a matrix that is not square)"
        ));
    }
    let dp = u.t().dot(&da).dot(&v);
    let f = Array2::from_shape_fn((k, k), |(i, j)| {
        if i == j {
            0.0
        } else {
            1.0 / (s[j] * s[j] - s[i] * s[i])
        }
    });
    if s.iter().any(|&x| x == 0.0) || f.iter().any(|x| !x.is_finite()) {
        return Err(format!(
            "`{label}`: svd's vectors have no derivative at a repeated or zero singular value (singular values {s})"
        ));
    }
    let sm = Array2::from_diag(&s);
    // (I - U Uᵀ) B S⁻¹: the part of B outside U's columns, each column j over s_j.
    let outside = |u: &Array2<f64>, b: Array2<f64>| -> Array2<f64> {
        let inside = u.dot(&u.t().dot(&b));
        (b - inside) / s.view().insert_axis(Axis(0))
    };
    let du = u.dot(&(&f * &(dp.dot(&sm) + sm.dot(&dp.t())))) + outside(&u, da.dot(&v));
    let dv = v.dot(&(&f * &(sm.dot(&dp) + dp.t().dot(&sm)))) + outside(&v, da.t().dot(&u));
    Ok((
        Some(value(du, dtype)),
        value(ds, dtype),
        Some(value(dv.reversed_axes(), dtype)),
    ))
}

/// `(dq, dr)` of `qr` from its reduced results `q` (`m x k`) and `r` (`k x n`); `dq` only
/// when `want_q` (mode "r" has no q).
pub fn qr(
    q: &Value,
    r: &Value,
    da: &Value,
    want_q: bool,
    label: &str,
) -> Result<(Option<Value>, Value), String> {
    let dtype = da.dtype();
    let (q, r, da) = (matrix(q, label)?, matrix(r, label)?, matrix(da, label)?);
    let k = r.nrows();
    if q.ncols() != k || k > r.ncols() {
        return Err(format!(
            "`{label}`: the forward mode has no derivative rule for qr's columns past n (mode \"complete\" of a tall matrix)"
        ));
    }
    let r1 = r.slice(s![.., ..k]);
    if let Some(j) = (0..k).find(|&j| r1[[j, j]] == 0.0) {
        return Err(format!(
            "`{label}`: qr has no derivative when r's diagonal has a zero (at index {j})"
        ));
    }
    // X = dA₁ R₁⁻¹, column by column (R₁ upper triangular).
    let da1 = da.slice(s![.., ..k]);
    let mut x = Array2::<f64>::zeros((q.nrows(), k));
    for j in 0..k {
        let mut col = da1.column(j).to_owned();
        for i in 0..j {
            col.scaled_add(-r1[[i, j]], &x.column(i));
        }
        x.column_mut(j).assign(&(col / r1[[j, j]]));
    }
    let m = q.t().dot(&x);
    let low = Array2::from_shape_fn((k, k), |(i, j)| if i > j { m[[i, j]] } else { 0.0 });
    let omega = &low - &low.t();
    let dq = q.dot(&omega) + &x - q.dot(&m);
    let dr = q.t().dot(&da) - omega.dot(&r);
    Ok((want_q.then(|| value(dq, dtype)), value(dr, dtype)))
}
