//! The forward mode against central finite differences and known derivatives.
//!
//! Finite differences: `D(h) = (f(x + h d) - f(x - h d)) / 2h` with one Richardson step,
//! `(4 D(h/2) - D(h)) / 3`, h = 1e-3 (truncation O(h⁴), rounding about 1e-12 |f|), in
//! f64. A JVP element `a` agrees with its difference `e` when `|a - e| <= 1e-6 |e| + 1e-8`
//! (relative error at most 1e-6; the absolute floor 1e-8 for derivatives near zero).

use ndarray::{Array1, Array2, ArrayD, IxDyn};

use super::{gradient_by_jvp, jvp, jvp_function};
use crate::eval::{compile_function, eval_function, Value};
use crate::ir::{DType, Function};

/// Deterministic values in [lo, hi).
fn uniform(seed: u64, n: usize, lo: f64, hi: f64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

fn vector(xs: &[f64]) -> Value {
    Value::from(Array1::from(xs.to_vec()))
}

fn matrix(rows: usize, cols: usize, xs: &[f64]) -> Value {
    Value::from(Array2::from_shape_vec((rows, cols), xs.to_vec()).unwrap())
}

fn array(shape: &[usize], xs: &[f64]) -> Value {
    Value::F64(ArrayD::from_shape_vec(IxDyn(shape), xs.to_vec()).unwrap())
}

fn random(shape: &[usize], seed: u64, lo: f64, hi: f64) -> Value {
    let n = shape.iter().product();
    array(shape, &uniform(seed, n, lo, hi))
}

fn elems(v: &Value) -> Vec<f64> {
    v.cast(DType::F64)
        .array::<f64>()
        .unwrap()
        .iter()
        .copied()
        .collect()
}

fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() <= 1e-6 * expected.abs() + 1e-8
}

/// The results of `f` at `args + s * dir`.
fn shifted(f: &Function, args: &[Value], dir: &[Option<Value>], s: f64) -> Vec<Value> {
    let moved = args
        .iter()
        .zip(dir)
        .map(|(a, d)| match d {
            Some(d) => {
                let sum: Vec<f64> = elems(a)
                    .iter()
                    .zip(elems(d))
                    .map(|(a, d)| a + s * d)
                    .collect();
                array(a.shape(), &sum).cast(a.dtype())
            }
            None => a.clone(),
        })
        .collect();
    eval_function(f, moved).unwrap()
}

/// The derivative of every element of every result of `f` in direction `dir`.
fn finite_differences(f: &Function, args: &[Value], dir: &[Option<Value>]) -> Vec<Vec<f64>> {
    let central = |h: f64| -> Vec<Vec<f64>> {
        let plus = shifted(f, args, dir, h);
        let minus = shifted(f, args, dir, -h);
        plus.iter()
            .zip(&minus)
            .map(|(p, m)| {
                elems(p)
                    .iter()
                    .zip(elems(m))
                    .map(|(p, m)| (p - m) / (2.0 * h))
                    .collect()
            })
            .collect()
    };
    let (wide, narrow) = (central(1e-3), central(0.5e-3));
    wide.iter()
        .zip(&narrow)
        .map(|(w, n)| w.iter().zip(n).map(|(w, n)| (4.0 * n - w) / 3.0).collect())
        .collect()
}

fn assert_agree(what: &str, got: &[f64], expected: &[f64]) {
    assert_eq!(got.len(), expected.len(), "{what}: lengths");
    for (i, (&g, &e)) in got.iter().zip(expected).enumerate() {
        assert!(
            close(g, e),
            "{what}: element {i}: jvp {g}, finite differences {e}"
        );
    }
}

/// The JVP of every result of `name` in a direction with random elements on every float
/// argument, checked against finite differences; returns the results' tangents.
fn check(source: &str, name: &str, args: Vec<Value>) -> Vec<Option<Value>> {
    let f = compile_function(source, name).unwrap_or_else(|e| panic!("{name}: {e}"));
    let dir: Vec<Option<Value>> = args
        .iter()
        .enumerate()
        .map(|(i, a)| {
            a.dtype()
                .is_float()
                .then(|| random(a.shape(), 100 + i as u64, -1.0, 1.0).cast(a.dtype()))
        })
        .collect();
    let (values, dots) =
        jvp_function(&f, args.clone(), dir.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        values,
        eval_function(&f, args.clone()).unwrap(),
        "{name}: primal values"
    );
    let fd = finite_differences(&f, &args, &dir);
    for (k, ((value, dot), fd)) in values.iter().zip(&dots).zip(fd).enumerate() {
        if !value.dtype().is_float() {
            assert!(
                dot.is_none(),
                "{name}: result {k} is not a float but has a tangent"
            );
            continue;
        }
        let got = dot.as_ref().map_or(vec![0.0; fd.len()], elems);
        assert_agree(&format!("{name}: result {k} of {source}"), &got, &fd);
    }
    dots
}

/// The gradient by JVPs, checked element by element against finite differences.
fn check_gradient(
    source: &str,
    name: &str,
    args: Vec<Value>,
    wrt: usize,
    output: usize,
) -> Vec<f64> {
    let grad = gradient_by_jvp(source, name, args.clone(), wrt, output)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(grad.shape(), args[wrt].shape());
    let f = compile_function(source, name).unwrap();
    let n = elems(&args[wrt]).len();
    let fd: Vec<f64> = (0..n)
        .map(|i| {
            let mut basis = vec![0.0; n];
            basis[i] = 1.0;
            let mut dir = vec![None; args.len()];
            dir[wrt] = Some(array(args[wrt].shape(), &basis));
            finite_differences(&f, &args, &dir)[output][0]
        })
        .collect();
    let got = elems(&grad);
    assert_agree(&format!("{name}: gradient wrt argument {wrt}"), &got, &fd);
    got
}

fn assert_exact(what: &str, got: &[f64], expected: &[f64]) {
    assert_eq!(got.len(), expected.len(), "{what}");
    for (g, e) in got.iter().zip(expected) {
        assert!(
            (g - e).abs() <= 1e-12 * e.abs().max(1.0),
            "{what}: got {got:?}, expected {expected:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Rule families

#[test]
fn elementwise_functions_of_one_operand() {
    let x = vector(&[0.23, 0.41, 0.67, 0.88]);
    for expr in [
        "exp(x)",
        "log(x)",
        "tanh(x)",
        "sigmoid(x)",
        "sqrt(x)",
        "sin(x)",
        "cos(x)",
        "tan(x)",
        "arcsin(x)",
        "arccos(x)",
        "arctan(x)",
        "sinh(x)",
        "cosh(x)",
        "arcsinh(x)",
        "arccosh(x + 1.5)",
        "arctanh(x)",
        "log1p(x)",
        "expm1(x)",
        "log2(x)",
        "log10(x)",
        "exp2(x)",
        "square(x)",
        "reciprocal(x)",
        "softplus(x)",
        "log_sigmoid(x)",
        "erf(x)",
        "erfc(x)",
        "erfcx(x)",
        "erfinv(x - 0.5)",
        "log1mexp(-x)",
        "gammaln(x * 3.0)",
        "digamma(x * 3.0 - 2.4)",
        "digamma(x * 30.0)",
        "abs(x - 0.5)",
        "x.powi(3)",
        "x.powi(-2)",
        "x.powi(0)",
        "-x",
        "relu(x - 0.5)",
        "floor(x * 10.0)",
        "round(x * 10.0)",
        "sign(x - 0.5)",
    ] {
        let source = format!("fn f(x: ArrayView1<f64>) -> Result<Array1<f64>> {{ Ok({expr}) }}");
        check(&source, "f", vec![x.clone()]);
    }
}

#[test]
fn elementwise_functions_of_several_operands_and_broadcasting() {
    let x = vector(&[0.23, 0.41, 0.67, 0.88]);
    let y = vector(&[0.6, 0.35, 0.9, 0.15]);
    for expr in [
        "x + y",
        "x - y",
        "x * y",
        "x / y",
        "pow(x, y)",
        "pow(x, 2.5)",
        "maximum(x, y)",
        "minimum(x, y)",
        "arctan2(x, y - 0.5)",
        "logaddexp(x, y)",
        "x % y",
        "floor_div(x, y)",
        "where_(x > y, x * y, y / x)",
        "clip(x * 3.0, y - 1.0, y + 0.5)",
        "x * 2.0 + sum(y)",
        "x.powi(3) + x.powi(-2) * y",
    ] {
        let source = format!(
            "fn f(x: ArrayView1<f64>, y: ArrayView1<f64>) -> Result<Array1<f64>> {{ Ok({expr}) }}"
        );
        check(&source, "f", vec![x.clone(), y.clone()]);
    }
    let outer = "fn f(x: ArrayView1<f64>, y: ArrayView1<f64>) -> Result<Array2<f64>> {
        Ok(x[(.., None)] * y + x[(.., None)])
    }";
    check(outer, "f", vec![x, y]);
}

#[test]
fn ties_and_kinks_follow_pytensor() {
    let source = "fn f(x: f64, y: f64, v: ArrayView1<f64>) -> Result<(f64, f64, f64, f64, f64, f64, f64)> {
        Ok((maximum(x, y), minimum(x, y), abs(x - y), clip(x, y, y + 1.0), clip(x, y - 1.0, y), max(v), relu(x - y)))
    }";
    let args = || vec![Value::from(2.0), Value::from(2.0), vector(&[1.0, 3.0, 3.0])];
    let tangents = |tx: f64, ty: f64| {
        vec![
            Some(Value::from(tx)),
            Some(Value::from(ty)),
            Some(vector(&[10.0, 200.0, 3000.0])),
        ]
    };
    let (_, dots) = jvp(source, "f", args(), tangents(1.0, 0.0)).unwrap();
    let got: Vec<f64> = dots.iter().map(|d| elems(d.as_ref().unwrap())[0]).collect();
    // maximum and minimum pass x's tangent at a tie; abs'(0) = 0; clip passes x's at
    // either bound; max passes the sum of the tangents of the elements equal to it;
    // relu'(0) = 1 (maximum(x, 0) at a tie).
    assert_eq!(got, vec![1.0, 1.0, 0.0, 1.0, 1.0, 3200.0, 1.0]);
    let (_, dots) = jvp(source, "f", args(), tangents(0.0, 1.0)).unwrap();
    let got: Vec<f64> = dots.iter().map(|d| elems(d.as_ref().unwrap())[0]).collect();
    assert_eq!(got, vec![0.0, 0.0, 0.0, 0.0, 0.0, 3200.0, -1.0]);
}

#[test]
fn casts_keep_float_tangents_and_drop_integer_ones() {
    let source = "fn f(x: f32, k: i64) -> Result<(f64, f32, i64, f64)> {
        let y = x as f64;
        Ok((y * y, x * x, (x * 3.0) as i64 + k, k as f64 * y))
    }";
    let (_, dots) = jvp(
        source,
        "f",
        vec![Value::from(3.0f32), Value::from(2i64)],
        vec![Some(Value::from(1.0f32)), None],
    )
    .unwrap();
    assert_eq!(dots[0], Some(Value::from(6.0)));
    assert_eq!(dots[1], Some(Value::from(6.0f32)));
    assert_eq!(dots[2], None);
    assert_eq!(dots[3], Some(Value::from(2.0)));
}

#[test]
fn products() {
    let source = "fn f(a: ArrayView2<f64>, b: ArrayView2<f64>, v: ArrayView1<f64>, w: ArrayView1<f64>, s: ArrayView3<f64>)
        -> Result<(Array2<f64>, Array1<f64>, Array1<f64>, f64, Array3<f64>)> {
        Ok((a.dot(b), a.dot(v), w.dot(a), v.dot(v), matmul(a, s)))
    }";
    let args = vec![
        random(&[3, 2], 1, -1.0, 1.0),
        random(&[2, 4], 2, -1.0, 1.0),
        random(&[2], 3, -1.0, 1.0),
        random(&[3], 4, -1.0, 1.0),
        random(&[4, 2, 5], 5, -1.0, 1.0),
    ];
    check(source, "f", args);
}

#[test]
fn reductions_and_running_sums_and_products() {
    let source = "fn f(m: ArrayView2<f64>)
        -> Result<(f64, Array1<f64>, f64, Array1<f64>, f64, Array1<f64>, f64, Array1<f64>, f64, f64, Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>)> {
        Ok((sum(m), sum(m, 0), mean(m), prod(m, 1), max(m), min(m, 0), var(m), std(m, 1),
            logsumexp(m), prod(m), logsumexp(m, 1), cumsum(m, 0), cumprod(m, 1), cumprod(m)))
    }";
    check(source, "f", vec![random(&[3, 4], 7, 0.5, 1.5)]);
    // A zero factor: the product rule, not a division by the product.
    let source =
        "fn f(v: ArrayView1<f64>) -> Result<(f64, Array1<f64>)> { Ok((prod(v), cumprod(v))) }";
    let (_, dots) = jvp(
        source,
        "f",
        vec![vector(&[2.0, 0.0, 3.0])],
        vec![Some(vector(&[1.0, 1.0, 1.0]))],
    )
    .unwrap();
    assert_eq!(elems(dots[0].as_ref().unwrap()), vec![6.0]);
    assert_eq!(elems(dots[1].as_ref().unwrap()), vec![1.0, 2.0, 6.0]);
}

#[test]
fn indexing_joins_and_views() {
    let source = "fn f(x: ArrayView2<f64>, v: ArrayView1<f64>, idx: ArrayView1<i64>)
        -> Result<(Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>, Array2<f64>)> {
        Ok((x[1..3], x[(.., 0)], x.t(), reshape(x, -1), concatenate([x, x * 2.0]), stack([v, v * v]),
            squeeze(x[(.., 0..1)], 1), broadcast_to(v, (2, 3)), diag(x), tril(x), take(v, idx), x[idx],
            v[v > 0.5], transpose(x[idx])))
    }";
    let x = random(&[4, 3], 11, -1.0, 1.0);
    let v = vector(&[0.3, 0.9, 0.7]);
    let idx = Value::from(Array1::from(vec![2i64, 0]));
    check(source, "f", vec![x.clone(), v.clone(), idx.clone()]);
    let source = "fn f(x: ArrayView2<f64>, v: ArrayView1<f64>, idx: ArrayView1<i64>)
        -> Result<(Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>)> {
        Ok((set_subtensor(x[1], v), inc_subtensor(x[0], v * v), set_subtensor(x[idx], x[..2] * 3.0),
            inc_subtensor(x[idx], x[..2] * v), set_subtensor(x[x < 0.25], 0.0), inc_subtensor(x[x < 0.25], 2.0 * v[0]),
            full((2, 2), v[1]), inc_subtensor(v[..2], v[1..])[(.., None)] * v))
    }";
    let x = matrix(
        4,
        3,
        &[
            0.1, 0.5, 0.9, -0.3, 0.7, 0.2, 0.4, -0.6, 0.8, 0.6, 0.3, -0.2,
        ],
    );
    check(source, "f", vec![x, v, idx]);
}

#[test]
fn linear_algebra() {
    let spd = matrix(3, 3, &[4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0]);
    let general = matrix(3, 3, &[2.0, -1.0, 0.5, 0.3, 1.5, -0.7, 1.1, 0.4, 3.0]);
    let lower = matrix(3, 3, &[2.0, 0.0, 0.0, 0.5, 1.5, 0.0, -0.3, 0.8, 1.2]);
    let b = vector(&[1.0, -2.0, 0.5]);
    let bm = random(&[3, 2], 21, -1.0, 1.0);
    let source = r#"fn f(a: ArrayView2<f64>, g: ArrayView2<f64>, m: ArrayView2<f64>, b: ArrayView1<f64>, bm: ArrayView2<f64>)
        -> Result<(Array2<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>, Array1<f64>, Array2<f64>, Array1<f64>, Array2<f64>, f64, f64, f64, Array1<f64>, Array2<f64>)> {
        let l = cholesky(a);
        let u = cholesky(a, lower = false);
        let (sign, logdet) = slogdet(g);
        let (w, v) = eigh(a);
        Ok((l, u, cho_solve((l, true), b), cho_solve((u, false), bm), solve(g, b), solve(g, bm),
            solve(a, bm, assume_a = "pos"), solve(a, b, assume_a = "sym"),
            solve_triangular(m, b, lower = true), solve_triangular(m, bm, trans = "T", lower = true),
            solve_triangular(m, b, 0, true, true), inv(g), det(g), sign, logdet, w, v))
    }"#;
    let dots = check(source, "f", vec![spd, general, lower, b, bm]);
    assert_eq!(dots[13], None, "slogdet's sign has no tangent");
}

#[test]
fn qr_and_svd_of_square_tall_and_wide_matrices() {
    // Pseudo-random entries: distinct nonzero singular values, an invertible r.
    let g = random(&[3, 3], 31, -1.0, 1.0);
    let t = random(&[5, 3], 32, -1.0, 1.0);
    let w = random(&[2, 4], 33, -1.0, 1.0);
    let source = r#"fn f(g: ArrayView2<f64>, t: ArrayView2<f64>, w: ArrayView2<f64>)
        -> Result<(Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>)> {
        let (qg, rg) = qr(g);
        let (qt, rt) = qr(t, mode = "reduced");
        let (qw, rw) = qr(w, mode = "complete");
        let (qc, _) = qr(g, mode = "complete");
        Ok((qg, rg, qt, rt, qw, rw, qr(t, mode = "r"), qr(w, mode = "r"), qc))
    }"#;
    check(source, "f", vec![g.clone(), t.clone(), w.clone()]);
    let source = r#"fn f(g: ArrayView2<f64>, t: ArrayView2<f64>, w: ArrayView2<f64>)
        -> Result<(Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>, Array1<f64>, Array2<f64>)> {
        let (ug, sg, vhg) = svd(g);
        let (ut, st, vht) = svd(t, full_matrices = false);
        let (uw, sw, vhw) = svd(w, full_matrices = false);
        let (u2, _, _) = svd(t, false);
        Ok((ug, sg, vhg, ut, st, vht, uw, sw, vhw, svdvals(t), svd(w, compute_uv = false), u2 * 2.0))
    }"#;
    let dots = check(source, "f", vec![g, t.clone(), w]);
    // svdvals' tangent is svd's.
    assert_eq!(dots[4], dots[9]);
    // ds_i = u_iᵀ dA v_i: with dA = a, ds = s (the singular values scale with a).
    let (values, dots) = jvp(
        "fn f(t: ArrayView2<f64>) -> Result<Array1<f64>> { Ok(svdvals(t)) }",
        "f",
        vec![t.clone()],
        vec![Some(t)],
    )
    .unwrap();
    assert_exact(
        "svdvals",
        &elems(dots[0].as_ref().unwrap()),
        &elems(&values[0]),
    );
}

#[test]
fn ops_without_a_rule_and_bad_tangents_are_errors() {
    // The columns of a full svd or a complete qr past min(m, n) are an arbitrary basis.
    let a = random(&[3, 2], 34, -1.0, 1.0);
    let qr = "fn f(a: ArrayView2<f64>) -> Result<Array2<f64>> { let (q, r) = qr(a, mode = \"complete\"); Ok(q) }";
    let err = jvp(qr, "f", vec![a.clone()], vec![Some(a.clone())]).unwrap_err();
    assert!(
        err.contains("`qr(a, mode = \"complete\")`") && err.contains("past n"),
        "{err}"
    );
    // Without a tangent reaching it, an op needs no rule.
    assert!(jvp(qr, "f", vec![a.clone()], vec![None]).unwrap().1[0].is_none());
    let svd = "fn f(a: ArrayView2<f64>) -> Result<Array2<f64>> { let (u, s, vh) = svd(a); Ok(u) }";
    let err = jvp(svd, "f", vec![a.clone()], vec![Some(a.clone())]).unwrap_err();
    assert!(
        err.contains("`svd(a)`") && err.contains("past min(m, n)"),
        "{err}"
    );
    // Repeated singular values (the identity's) have no unique vectors, a zero pivot of r
    // no derivative.
    let eye = matrix(2, 2, &[1.0, 0.0, 0.0, 1.0]);
    let da = matrix(2, 2, &[0.5, 0.25, -1.0, 2.0]);
    let err = jvp(svd, "f", vec![eye], vec![Some(da)]).unwrap_err();
    assert!(err.contains("repeated or zero singular value"), "{err}");
    let singular = matrix(2, 2, &[0.0, 1.0, 0.0, 2.0]);
    let qr = "fn f(a: ArrayView2<f64>) -> Result<Array2<f64>> { Ok(qr(a, mode = \"r\")) }";
    let err = jvp(qr, "f", vec![singular.clone()], vec![Some(singular)]).unwrap_err();
    assert!(err.contains("zero (at index 0)"), "{err}");
    let gamma = "fn f(key: i64, a: f64) -> Result<f64> { let (k, g) = gamma(key, a); Ok(g) }";
    let err = jvp(
        gamma,
        "f",
        vec![Value::from(1i64), Value::from(2.0)],
        vec![None, Some(Value::from(1.0))],
    )
    .unwrap_err();
    assert!(err.contains("gamma"), "{err}");
    let source = "fn f(x: ArrayView1<f64>, k: i64) -> Result<f64> { Ok(sum(x) * k as f64) }";
    let x = vector(&[1.0, 2.0]);
    let err = jvp(
        source,
        "f",
        vec![x.clone(), Value::from(2i64)],
        vec![None, Some(Value::from(1i64))],
    )
    .unwrap_err();
    assert!(err.contains("`k`") && err.contains("no tangent"), "{err}");
    let err = jvp(
        source,
        "f",
        vec![x.clone(), Value::from(2i64)],
        vec![Some(vector(&[1.0])), None],
    )
    .unwrap_err();
    assert!(err.contains("tangent of argument `x`"), "{err}");
    let err = jvp(source, "f", vec![x.clone(), Value::from(2i64)], vec![None]).unwrap_err();
    assert!(err.contains("tangents"), "{err}");
    let err = gradient_by_jvp(source, "f", vec![x.clone(), Value::from(2i64)], 1, 0).unwrap_err();
    assert!(err.contains("only a float argument"), "{err}");
    let err = gradient_by_jvp(source, "f", vec![x, Value::from(2i64)], 0, 1).unwrap_err();
    assert!(err.contains("no result 1"), "{err}");
}

// ---------------------------------------------------------------------------------------
// Scans

const POLYNOMIAL: &str =
    "fn polynomial(coefficients: ArrayView1<f64>, x: f64, n: usize) -> Result<f64> {
    let components = scan(
        |coefficient, power, free_variable| coefficient * pow(free_variable, power),
        outputs_info = None,
        sequences = [coefficients, arange(n)],
        non_sequences = x,
    );
    Ok(components.sum())
}";

#[test]
fn polynomial_derivative_is_38_over_sequences_of_any_length() {
    // PyTensor's test: coefficients [1, 2, -3, 4] at x = 2: 2 - 12 + 48.
    let c = vector(&[1.0, 2.0, -3.0, 4.0]);
    for n in [4i64, 10, 1000] {
        let args = vec![c.clone(), Value::from(2.0), Value::from(n)];
        let dx = check_gradient(POLYNOMIAL, "polynomial", args.clone(), 1, 0);
        assert_exact("d/dx", &dx, &[38.0]);
        let dc = check_gradient(POLYNOMIAL, "polynomial", args, 0, 0);
        assert_exact("d/dc", &dc, &[1.0, 2.0, 4.0, 8.0]);
    }
}

#[test]
fn x_to_the_16_by_four_squarings() {
    let source = "fn pow16(x: f64) -> Result<f64> {
        let r = scan(|p| p * p, outputs_info = x, n_steps = 4);
        Ok(r[-1])
    }";
    let g = check_gradient(source, "pow16", vec![Value::from(0.95)], 0, 0);
    assert_exact("16 x^15", &g, &[16.0 * 0.95f64.powi(15)]);
}

#[test]
fn a_to_the_k() {
    let source = "fn power(a: ArrayView1<f64>, k: usize) -> Result<f64> {
        let result = scan(|prior, a| prior * a, outputs_info = ones_like(a), non_sequences = a, n_steps = k);
        Ok(sum(result[-1]))
    }";
    let a = vector(&[0.5, 1.5, -2.0]);
    let g = check_gradient(source, "power", vec![a, Value::from(5i64)], 0, 0);
    assert_exact(
        "5 a^4",
        &g,
        &[5.0 * 0.5f64.powi(4), 5.0 * 1.5f64.powi(4), 5.0 * 16.0],
    );
}

const ELMAN: &str = "fn elman(x: ArrayView2<f64>, w: ArrayView2<f64>, u: ArrayView2<f64>, h0: ArrayView1<f64>) -> Result<f64> {
    let h = scan(|x_t, h, w, u| tanh(x_t.dot(w) + h.dot(u)), sequences = x, outputs_info = h0, non_sequences = [w, u]);
    Ok(sum(h))
}";

#[test]
fn elman_rnn_with_respect_to_its_weights_and_initial_state() {
    let args = vec![
        random(&[5, 3], 31, -1.0, 1.0),
        random(&[3, 4], 32, -0.5, 0.5),
        random(&[4, 4], 33, -0.5, 0.5),
        random(&[4], 34, -1.0, 1.0),
    ];
    check(ELMAN, "elman", args.clone());
    for wrt in 0..4 {
        check_gradient(ELMAN, "elman", args.clone(), wrt, 0);
    }
}

#[test]
fn lstm() {
    let source = "fn lstm(x: ArrayView3<f64>, w_x: ArrayView2<f64>, w_h: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<f64> {
        let zero = zeros((x.shape[1], w_h.shape[0]));
        let (h, c) = scan(
            |x_t, h_tm1, c_tm1, w_x, w_h, b| {
                let z = x_t.dot(w_x) + h_tm1.dot(w_h) + b;
                let n = h_tm1.shape[1];
                let i = sigmoid(z[(.., ..n)]);
                let f = sigmoid(z[(.., n..2 * n)]);
                let g = tanh(z[(.., 2 * n..3 * n)]);
                let o = sigmoid(z[(.., 3 * n..)]);
                let c_new = f * c_tm1 + i * g;
                (o * tanh(c_new), c_new)
            },
            sequences = x,
            outputs_info = [zero, zero],
            non_sequences = [w_x, w_h, b],
        );
        Ok(sum(h))
    }";
    let args = vec![
        random(&[4, 2, 3], 41, -1.0, 1.0),
        random(&[3, 8], 42, -0.5, 0.5),
        random(&[2, 8], 43, -0.5, 0.5),
        random(&[8], 44, -0.5, 0.5),
    ];
    check(source, "lstm", args.clone());
    check_gradient(source, "lstm", args.clone(), 2, 0);
    check_gradient(source, "lstm", args, 3, 0);
}

#[test]
fn mitsot_fibonacci_gradient_is_fibonacci_numbers() {
    let source = "fn fib(init: ArrayView1<f64>, n: usize) -> Result<f64> {
        let r = scan(|a, b| a + b, outputs_info = [taps(init, [-2, -1])], n_steps = n);
        Ok(r[-1])
    }";
    // r_k = F(k+1) a0 + F(k+2) a1: the tenth step gives 55 a0 + 89 a1.
    let g = check_gradient(
        source,
        "fib",
        vec![vector(&[0.3, 0.7]), Value::from(10i64)],
        0,
        0,
    );
    assert_exact("Fibonacci", &g, &[55.0, 89.0]);
}

#[test]
fn tutorial_rnn_with_sequence_and_output_taps() {
    let source = "fn rnn(u: ArrayView2<f64>, x0: ArrayView2<f64>, y0: ArrayView1<f64>, w: ArrayView2<f64>,
        w_in_1: ArrayView2<f64>, w_in_2: ArrayView2<f64>, w_feedback: ArrayView2<f64>, w_out: ArrayView2<f64>)
        -> Result<(Array2<f64>, Array2<f64>)> {
        let (x_vals, y_vals) = scan(
            |u_tm4, u_t, x_tm3, x_tm1, y_tm1, w, w_in_1, w_in_2, w_feedback, w_out| {
                let x_t = tanh(x_tm1.dot(w) + u_t.dot(w_in_1) + u_tm4.dot(w_in_2) + y_tm1.dot(w_feedback));
                let y_t = x_tm3.dot(w_out);
                (x_t, y_t)
            },
            sequences = [taps(u, [-4, 0])],
            outputs_info = [taps(x0, [-3, -1]), y0],
            non_sequences = [w, w_in_1, w_in_2, w_feedback, w_out],
        );
        Ok((x_vals, y_vals))
    }";
    let args = vec![
        random(&[9, 2], 51, -1.0, 1.0),
        random(&[3, 3], 52, -1.0, 1.0),
        random(&[2], 53, -1.0, 1.0),
        random(&[3, 3], 54, -0.5, 0.5),
        random(&[2, 3], 55, -0.5, 0.5),
        random(&[2, 3], 56, -0.5, 0.5),
        random(&[2, 3], 57, -0.5, 0.5),
        random(&[3, 2], 58, -0.5, 0.5),
    ];
    check(source, "rnn", args);
}

#[test]
fn until_differentiates_the_steps_taken() {
    let source = "fn grow(x: f64, limit: f64) -> Result<f64> {
        let v = scan(|p, limit| (p * 1.5, until(p * 1.5 > limit)), outputs_info = x, non_sequences = limit, n_steps = 100);
        Ok(v[-1] + v.sum())
    }";
    // Six steps from 1 to 1.5^6 > 10.
    let args = vec![Value::from(1.0), Value::from(10.0)];
    let g = check_gradient(source, "grow", args.clone(), 0, 0);
    let expected = 1.5f64.powi(6) + (1..=6).map(|k| 1.5f64.powi(k)).sum::<f64>();
    assert_exact("steps taken", &g, &[expected]);
    assert_exact(
        "the limit",
        &check_gradient(source, "grow", args, 1, 0),
        &[0.0],
    );
}

#[test]
fn nested_scans_with_listed_and_captured_non_sequences() {
    let source = "fn nested(m: ArrayView2<f64>, w: f64, c: f64) -> Result<f64> {
        let r = scan(
            |row, acc, w| {
                let inner = scan(|x, s, w| s * w + x * x * c, sequences = row, outputs_info = 0.0, non_sequences = w);
                acc * 0.5 + inner[-1]
            },
            sequences = m,
            outputs_info = 0.0,
            non_sequences = w,
        );
        Ok(r[-1])
    }";
    let args = vec![
        random(&[3, 4], 61, -1.0, 1.0),
        Value::from(0.8),
        Value::from(1.3),
    ];
    check(source, "nested", args.clone());
    for wrt in 0..3 {
        check_gradient(source, "nested", args.clone(), wrt, 0);
    }
}

#[test]
fn go_backwards_literal_and_run_time_flag() {
    let source = "fn back(x: ArrayView1<f64>, a: f64, flag: bool) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
        let r = scan(|x_t, h, a| h * a + x_t * x_t, sequences = x, outputs_info = 0.0, non_sequences = a, go_backwards = true);
        let s = scan(|x_t, h, a| h * a + x_t * x_t, sequences = x, outputs_info = 0.0, non_sequences = a, go_backwards = flag);
        let t = scan(|x_tm1, x_t, x_tp2, a| x_tm1 * a + x_t * x_tp2, sequences = taps(x, [-1, 0, 2]), non_sequences = a, go_backwards = flag);
        Ok((r, s, t))
    }";
    let x = random(&[6], 71, -1.0, 1.0);
    for flag in [true, false] {
        check(
            source,
            "back",
            vec![x.clone(), Value::from(0.7), Value::from(flag)],
        );
    }
    // Backwards, the last row is read first: d r[0] / d x = 2 x[-1] e_last.
    let (_, dots) = jvp(
        source,
        "back",
        vec![
            vector(&[1.0, 2.0, 3.0]),
            Value::from(0.5),
            Value::from(true),
        ],
        vec![Some(vector(&[0.0, 0.0, 1.0])), None, None],
    )
    .unwrap();
    assert_eq!(elems(dots[0].as_ref().unwrap()), vec![6.0, 3.0, 1.5]);
    assert_eq!(dots[0], dots[1]);
}

#[test]
fn map_and_non_sequence_used_at_every_step() {
    let source = "fn mapped(x: ArrayView2<f64>, w: ArrayView1<f64>) -> Result<f64> {
        let p = map(|row, w| sigmoid(row.dot(w)), sequences = x, non_sequences = w);
        Ok(sum(log(p)))
    }";
    let args = vec![random(&[5, 3], 81, -1.0, 1.0), random(&[3], 82, -1.0, 1.0)];
    check(source, "mapped", args.clone());
    check_gradient(source, "mapped", args.clone(), 1, 0);
    check_gradient(source, "mapped", args, 0, 0);
}

#[test]
fn outputs_read_at_chosen_steps_only() {
    let source = "fn chosen(x: ArrayView1<f64>, h0: f64) -> Result<f64> {
        let h = scan(|x_t, h| tanh(h * 0.9 + x_t), sequences = x, outputs_info = h0);
        Ok(h[3] + h[-1])
    }";
    let args = vec![random(&[7], 91, -1.0, 1.0), Value::from(0.2)];
    let g = check_gradient(source, "chosen", args.clone(), 0, 0);
    // Steps after 3 reach only h[-1]; x[4..6] reach nothing else.
    assert!(g.iter().all(|d| *d != 0.0));
    check_gradient(source, "chosen", args, 1, 0);
}

#[test]
fn integer_outputs_of_a_scan_have_no_tangent() {
    let source = "fn count(h0: f64) -> Result<(Array1<f64>, Array1<i64>, Array1<f64>)> {
        let (h, k, z) = scan(|h, k| (h * 2.0, k + 1, k as f64), outputs_info = [h0, 0i64, None], n_steps = 3);
        Ok((h, k, z))
    }";
    let (_, dots) = jvp(
        source,
        "count",
        vec![Value::from(1.0)],
        vec![Some(Value::from(1.0))],
    )
    .unwrap();
    assert_eq!(elems(dots[0].as_ref().unwrap()), vec![2.0, 4.0, 8.0]);
    assert_eq!(dots[1], None);
    assert_eq!(dots[2], None, "a float output computed from integers alone");
    // Zero steps: empty tangents of the outputs' shapes.
    let source = "fn none(x: ArrayView1<f64>, n: usize) -> Result<Array2<f64>> {
        Ok(scan(|h| h * 2.0, outputs_info = x, n_steps = n))
    }";
    let (values, dots) = jvp(
        source,
        "none",
        vec![vector(&[1.0, 2.0]), Value::from(0i64)],
        vec![Some(vector(&[1.0, 1.0])), None],
    )
    .unwrap();
    assert_eq!(values[0].shape(), &[0, 2]);
    assert_eq!(dots[0].as_ref().unwrap().shape(), &[0, 2]);
}

#[test]
fn trigamma_known_values() {
    use super::trigamma;
    let pi2 = std::f64::consts::PI * std::f64::consts::PI;
    assert!((trigamma(1.0f64) - pi2 / 6.0).abs() < 1e-14);
    assert!((trigamma(0.5f64) - pi2 / 2.0).abs() < 1e-13);
    // ψ'(-0.5) = π²/2 + 4 (reflection and recurrence)
    assert!((trigamma(-0.5f64) - (pi2 / 2.0 + 4.0)).abs() < 1e-12);
    assert!(trigamma(-2.0f64).is_infinite());
    assert!((trigamma(1.0f32) - (pi2 / 6.0) as f32).abs() < 1e-6);
}

#[test]
fn gradients_through_solves_with_one_operand_moving_at_a_time() {
    let source = r#"fn f(a: ArrayView2<f64>, g: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<f64> {
        let l = cholesky(a);
        let x = cho_solve((l, true), b) + solve(g, b) + solve_triangular(l, b, lower = true);
        Ok(sum(x * x) + det(g) + sum(concatenate([b, zeros_like(b)])))
    }"#;
    let args = vec![
        matrix(3, 3, &[4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0]),
        matrix(3, 3, &[2.0, -1.0, 0.5, 0.3, 1.5, -0.7, 1.1, 0.4, 3.0]),
        vector(&[1.0, -2.0, 0.5]),
    ];
    for wrt in 0..3 {
        check_gradient(source, "f", args.clone(), wrt, 0);
    }
}
