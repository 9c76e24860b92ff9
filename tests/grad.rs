//! Reverse-mode gradients (`grad(cost, wrt)`) of programs without scans through the cost
//! (issue 10, stage 1): each checked against central finite differences
//! (`common::grad_check`) and against values derived by hand, and run through the reference
//! evaluator (which also checks that the rewrites leave the adjoint graph's values alone).

mod common;

use common::grad_check::{check_gradient, forward_mode_agrees};
use common::{assert_floats, matrix, second_opinion, Value};
use scan_runtime::ndarray::{arr1, arr2, Array1, Array2, Array3, ArrayD, Ix1, Ix2, Ix3};
use scan_runtime::prelude::*;

mod programs {
    scan_tests::program! {
        /// PyTensor's test: the polynomial sum(c_i x^i).
        pub fn poly(c: ArrayView1<f64>, x: f64) -> Result<(f64, f64)> {
            let p = arange(c.len()) as f64;
            let y = sum(c * pow(x, p));
            Ok((y, grad(y, x)))
        }

        /// x^16 by four squarings.
        pub fn pow16(x: f64) -> Result<(f64, f64)> {
            let a = x * x;
            let b = a * a;
            let c = b * b;
            let d = c * c;
            Ok((d, grad(d, x)))
        }

        /// One layer of an MLP over a batch: the bias broadcast over the rows.
        pub fn mlp(x: ArrayView2<f64>, w: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array1<f64>)> {
            let cost = sum(tanh(dot(x, w) + b));
            let (gw, gb) = grad(cost, [w, b]);
            Ok((cost, gw, gb))
        }

        /// Softmax cross-entropy of a linear model, mean over the batch.
        pub fn xent(x: ArrayView2<f64>, w: ArrayView2<f64>, t: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let z = dot(x, w);
            let loss = -sum(t * log_softmax(z, 1)) / (x.nrows() as f64);
            Ok((loss, grad(loss, w)))
        }

        /// A vector added to every row, a column (length 1 at run time) to every column,
        /// a scalar times a matrix.
        pub fn broadcasts(v: ArrayView1<f64>, c: ArrayView2<f64>, m: ArrayView2<f64>, s: f64) -> Result<(f64, Array1<f64>, Array2<f64>, Array2<f64>, f64)> {
            let y = sum(sin(v + m + c)) + sum(s * m * m);
            let (gv, gc, gm, gs) = grad(y, [v, c, m, s]);
            Ok((y, gv, gc, gm, gs))
        }

        /// Slices, an index, set_subtensor and a gather with a repeated index.
        pub fn indexing(x: ArrayView1<f64>, y: ArrayView1<f64>, idx: ArrayView1<i64>, w: ArrayView1<f64>) -> Result<(f64, Array1<f64>, Array1<f64>)> {
            let z = set_subtensor(x[1..3], y * y);
            let cost = sum(z * w) + x[0] * 3.0 + sum(x[2..4] * x[2..4]) + sum(take(x, idx) * w[0..3]);
            let (gx, gy) = grad(cost, [x, y]);
            Ok((cost, gx, gy))
        }

        /// max with ties: every element equal to the max gets the gradient (PyTensor's).
        pub fn max_ties(x: ArrayView1<f64>, m: ArrayView2<f64>) -> Result<(Array1<f64>, Array2<f64>)> {
            let a = grad(max(x), x);
            let b = grad(sum(max(m, 1)), m);
            Ok((a, b))
        }

        /// where_, and maximum/abs/relu at their kinks.
        pub fn kinks(x: ArrayView1<f64>) -> Result<(f64, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            let y = sum(where_(x > 0.0, x * x, -x));
            let a = grad(sum(abs(x)), x);
            let m = grad(sum(maximum(x, 0.0)), x);
            let r = grad(sum(relu(x)), x);
            Ok((y, grad(y, x), a, m, r))
        }

        /// A cost reaching x only through a comparison: a zero gradient.
        pub fn through_a_comparison(x: ArrayView1<f64>) -> Result<Array1<f64>> {
            Ok(grad(sum(where_(x > 0.0, 1.0, 2.0)), x))
        }

        /// f32 all the way.
        pub fn single(x: ArrayView1<f32>) -> Result<Array1<f32>> {
            Ok(grad(sum(x * x * 3.0), x))
        }

        /// Most elementwise functions and the reductions, each with its own weight.
        pub fn functions(x: ArrayView1<f64>, y: ArrayView1<f64>) -> Result<(f64, Array1<f64>, Array1<f64>)> {
            let a = sum(sin(x) * cos(y) + tan(x) + arctan(y) + sinh(x) * cosh(y) + arcsinh(x) + tanh(y));
            let b = sum(sigmoid(x) + softplus(y) + log_sigmoid(x) + log1p(y) + expm1(x) + log2(y) + log10(x) + exp2(y));
            let c = sum(sqrt(x) + square(y) + reciprocal(x) + erf(y) + erfc(x) + erfcx(y) + erfinv(x * 0.5) + gammaln(y + 1.0));
            let d = sum(arctan2(x, y) + logaddexp(x, y) + pow(x, y) + clip(x, 0.2, 0.7) + minimum(x, y) * 2.0 + maximum(x, y) * 3.0);
            let e = sum(arcsin(x) + arccos(y) + arctanh(x * 0.5) + arccosh(y + 1.5) + log1mexp(-x) + exp(x) * log(y) + x / y + powi(x, 3) - abs(x - 1.0));
            let f = mean(x * y) + var(x) + std(y) * 2.0 + prod(x + 1.0) + logsumexp(x) + min(y) + max(x * y) + sum(cumsum(x) * y) + sum(cumprod(x) * y);
            let cost = a + b + c + d + e + f;
            let (gx, gy) = grad(cost, [x, y]);
            Ok((cost, gx, gy))
        }

        /// Arrays reshaped, joined, transposed, and products of every rank pair.
        pub fn arrays(m: ArrayView2<f64>, v: ArrayView1<f64>, s: ArrayView3<f64>, t: ArrayView3<f64>) -> Result<(f64, Array2<f64>, Array1<f64>, Array3<f64>, Array3<f64>)> {
            let r = reshape(m, (3, 2));
            let j = concatenate([m, m * 2.0], 0);
            let st = stack([v, v * v], 1);
            let e = expand_dims(v, 0) * m;
            let bt = broadcast_to(v, (2, 3));
            let sq = squeeze(expand_dims(v, 1), 1);
            let a = sum(sin(r) * cos(r)) + sum(transpose(m) * m.t() * 0.5) + sum(exp(j * 0.1)) + sum(st * st * 0.3) + sum(e * e) + sum(bt * m) + sum(sq * sq * sq);
            let b = sum(flip(m, 1) * m) + sum(tril(dot(transpose(m), m), 0) * 0.7) + sum(matmul(m, transpose(m)) * 0.2) + sum(outer(v, v) * 0.1) + sum(sin(diag(v, 1))) + sum(cumsum(m, 1) * m);
            let c = sum(tanh(dot(s, v))) + sum(tanh(dot(s, transpose(m)))) + sum(tanh(dot(v, t))) + sum(tanh(dot(m, t))) + sum(tanh(matmul(s, t)));
            let d = sum(sin(v[1..]) * v[0]) + sum(m[1] * m[1]) * sum(m[(.., 2)] * m[(.., 0)]) + sum(tanh(dot(m, v)) * 1.5) + tanh(dot(v, v)) + sum(tanh(dot(v, transpose(m))));
            let cost = a + b + c + d;
            let (gm, gv, gs, gt) = grad(cost, [m, v, s, t]);
            Ok((cost, gm, gv, gs, gt))
        }

        /// Boolean masks, index arrays of rank 2 and on axis 1, set_subtensor through an
        /// index array, prod.
        pub fn gathers(x: ArrayView1<f64>, m: ArrayView2<f64>, mask: ArrayView1<bool>, idx2: ArrayView2<i64>, idx: ArrayView1<i64>, v: ArrayView1<f64>) -> Result<(f64, Array1<f64>, Array2<f64>, Array1<f64>)> {
            let a = sum(sin(x[mask])) + sum(tanh(set_subtensor(x[mask], v[0] * 2.0)) * 1.5);
            let b = sum(cos(x[idx2])) + sum(sin(take(m, idx, 1))) + sum(exp(set_subtensor(x[idx2[0]], v[0..2] * v[0..2])));
            let c = prod(x) + sum(prod(m, 1) * 0.5) + sum(var(m, 0)) + sum(cumprod(m, 1));
            let cost = a + b + c;
            let (gx, gm, gv) = grad(cost, [x, m, v]);
            Ok((cost, gx, gm, gv))
        }

        /// prod with zeros: PyTensor's rule.
        pub fn prod_zeros(x: ArrayView1<f64>) -> Result<Array1<f64>> {
            Ok(grad(prod(x), x))
        }

        /// A Hamiltonian Monte Carlo leapfrog integrator whose step differentiates the
        /// potential 0.5 x' A x ...
        pub fn leapfrog(x0: ArrayView1<f64>, p0: ArrayView1<f64>, a: ArrayView2<f64>, eps: f64, n: usize) -> Result<(Array2<f64>, Array2<f64>)> {
            let (xs, ps) = scan(
                |x, p| {
                    let u = 0.5 * dot(x, dot(a, x));
                    let p_half = p - 0.5 * eps * grad(u, x);
                    let x_new = x + eps * p_half;
                    let u_new = 0.5 * dot(x_new, dot(a, x_new));
                    (x_new, p_half - 0.5 * eps * grad(u_new, x_new))
                },
                outputs_info = [x0, p0],
                n_steps = n,
            );
            Ok((xs, ps))
        }

        /// ... and the same with the gradient written out, A x for a symmetric A.
        pub fn leapfrog_by_hand(x0: ArrayView1<f64>, p0: ArrayView1<f64>, a: ArrayView2<f64>, eps: f64, n: usize) -> Result<(Array2<f64>, Array2<f64>)> {
            let (xs, ps) = scan(
                |x, p| {
                    let p_half = p - 0.5 * eps * dot(a, x);
                    let x_new = x + eps * p_half;
                    (x_new, p_half - 0.5 * eps * dot(a, x_new))
                },
                outputs_info = [x0, p0],
                n_steps = n,
            );
            Ok((xs, ps))
        }
    }
}

fn d1(a: &Array1<f64>) -> ArrayD<f64> {
    a.clone().into_dyn()
}

fn d2(a: &Array2<f64>) -> ArrayD<f64> {
    a.clone().into_dyn()
}

fn v1(a: &ArrayD<f64>) -> ArrayView1<'_, f64> {
    a.view().into_dimensionality::<Ix1>().unwrap()
}

fn v2(a: &ArrayD<f64>) -> ArrayView2<'_, f64> {
    a.view().into_dimensionality::<Ix2>().unwrap()
}

fn s0(a: &ArrayD<f64>) -> f64 {
    a.iter().copied().next().unwrap()
}

fn scalar(x: f64) -> ArrayD<f64> {
    scan_runtime::ndarray::arr0(x).into_dyn()
}

#[test]
fn polynomial_matches_pytensor() {
    let c = arr1(&[1.0, 2.0, -3.0, 4.0]);
    let (y, g) = programs::poly(c.view(), 2.0).unwrap();
    assert_eq!(y, 25.0);
    assert_eq!(g, 38.0);
    check_gradient(
        &|p| programs::poly(c.view(), s0(&p[0])).unwrap().0,
        &[scalar(2.0)],
        &[scalar(g)],
    );
    let args = vec![Value::from(c.clone()), Value::from(2.0)];
    let out = vec![Value::from(y), Value::from(g)];
    forward_mode_agrees(programs::SOURCE, "poly", &args, &out, &[(1, 1)]);
    second_opinion(programs::SOURCE, "poly", args, out);
}

fn v3(a: &ArrayD<f64>) -> ArrayView3<'_, f64> {
    a.view().into_dimensionality::<Ix3>().unwrap()
}

/// Deterministic values in (lo, hi).
fn within(n: usize, seed: u64, lo: f64, hi: f64) -> Array1<f64> {
    matrix(1, n, seed)
        .row(0)
        .mapv(|u| lo + (u + 0.5) * (hi - lo))
}

#[test]
fn sixteenth_power_by_squarings() {
    let x = 0.95f64;
    let (d, g) = programs::pow16(x).unwrap();
    assert_floats(&[d, g], &[x.powi(16), 16.0 * x.powi(15)], 1e-14);
    check_gradient(
        &|p| programs::pow16(s0(&p[0])).unwrap().0,
        &[scalar(x)],
        &[scalar(g)],
    );
    let (args, out) = (vec![Value::from(x)], vec![Value::from(d), Value::from(g)]);
    forward_mode_agrees(programs::SOURCE, "pow16", &args, &out, &[(0, 1)]);
    second_opinion(programs::SOURCE, "pow16", args, out);
}

#[test]
fn mlp_layer() {
    let (x, w, b) = (
        matrix(4, 3, 1),
        matrix(3, 5, 2),
        matrix(1, 5, 3).row(0).to_owned(),
    );
    let (cost, gw, gb) = programs::mlp(x.view(), w.view(), b.view()).unwrap();
    // By hand: h = tanh(x w + b), d cost / d (x w + b) = 1 - h^2.
    let h = (x.dot(&w) + &b).mapv(f64::tanh);
    let dz = h.mapv(|h| 1.0 - h * h);
    assert_floats(&[cost], &[h.sum()], 1e-12);
    assert_floats(
        gw.as_slice().unwrap(),
        x.t().dot(&dz).as_standard_layout().as_slice().unwrap(),
        1e-12,
    );
    assert_floats(
        gb.as_slice().unwrap(),
        dz.sum_axis(scan_runtime::ndarray::Axis(0))
            .as_slice()
            .unwrap(),
        1e-12,
    );
    check_gradient(
        &|p| programs::mlp(x.view(), v2(&p[0]), v1(&p[1])).unwrap().0,
        &[d2(&w), d1(&b)],
        &[d2(&gw), d1(&gb)],
    );
    let args = vec![
        Value::from(x.clone()),
        Value::from(w.clone()),
        Value::from(b.clone()),
    ];
    let out = vec![Value::from(cost), Value::from(gw), Value::from(gb)];
    forward_mode_agrees(programs::SOURCE, "mlp", &args, &out, &[(1, 1), (2, 2)]);
    second_opinion(programs::SOURCE, "mlp", args, out);
}

#[test]
fn softmax_cross_entropy() {
    let (x, w) = (matrix(4, 3, 4) * 4.0, matrix(3, 5, 5) * 4.0);
    let t = Array2::from_shape_fn(
        (4, 5),
        |(i, j)| if j == (2 * i + 1) % 5 { 1.0 } else { 0.0 },
    );
    let (loss, gw) = programs::xent(x.view(), w.view(), t.view()).unwrap();
    // By hand: x' (softmax(x w) - t) / n.
    let z = x.dot(&w);
    let mut p = z.mapv(f64::exp);
    for mut row in p.rows_mut() {
        let total = row.sum();
        row /= total;
    }
    let want = x.t().dot(&(&p - &t)) / 4.0;
    assert_floats(
        gw.as_slice().unwrap(),
        want.as_standard_layout().as_slice().unwrap(),
        1e-12,
    );
    check_gradient(
        &|q| programs::xent(x.view(), v2(&q[0]), t.view()).unwrap().0,
        &[d2(&w)],
        &[d2(&gw)],
    );
    let args = vec![
        Value::from(x.clone()),
        Value::from(w.clone()),
        Value::from(t.clone()),
    ];
    let out = vec![Value::from(loss), Value::from(gw)];
    forward_mode_agrees(programs::SOURCE, "xent", &args, &out, &[(1, 1)]);
    second_opinion(programs::SOURCE, "xent", args, out);
}

#[test]
fn broadcast_operands_get_their_gradients_summed_back() {
    let (v, c, m, s) = (
        within(3, 6, -1.0, 1.0),
        matrix(2, 1, 7),
        matrix(2, 3, 8),
        0.7,
    );
    let (y, gv, gc, gm, gs) = programs::broadcasts(v.view(), c.view(), m.view(), s).unwrap();
    let z = Array2::from_shape_fn((2, 3), |(i, j)| (v[j] + m[[i, j]] + c[[i, 0]]).cos());
    assert_floats(
        gv.as_slice().unwrap(),
        z.sum_axis(scan_runtime::ndarray::Axis(0))
            .as_slice()
            .unwrap(),
        1e-12,
    );
    assert_floats(
        gc.as_slice().unwrap(),
        z.sum_axis(scan_runtime::ndarray::Axis(1))
            .as_slice()
            .unwrap(),
        1e-12,
    );
    assert_floats(
        gm.as_slice().unwrap(),
        (&z + &(&m * (2.0 * s))).as_slice().unwrap(),
        1e-12,
    );
    assert_floats(&[gs], &[m.mapv(|x| x * x).sum()], 1e-12);
    check_gradient(
        &|p| {
            programs::broadcasts(v1(&p[0]), v2(&p[1]), v2(&p[2]), s0(&p[3]))
                .unwrap()
                .0
        },
        &[d1(&v), d2(&c), d2(&m), scalar(s)],
        &[d1(&gv), d2(&gc), d2(&gm), scalar(gs)],
    );
    let args = vec![
        Value::from(v.clone()),
        Value::from(c.clone()),
        Value::from(m.clone()),
        Value::from(s),
    ];
    let out = vec![
        Value::from(y),
        Value::from(gv),
        Value::from(gc),
        Value::from(gm),
        Value::from(gs),
    ];
    forward_mode_agrees(
        programs::SOURCE,
        "broadcasts",
        &args,
        &out,
        &[(0, 1), (1, 2), (2, 3), (3, 4)],
    );
    second_opinion(programs::SOURCE, "broadcasts", args, out);
}

#[test]
fn indexing_set_subtensor_and_take() {
    let x = arr1(&[0.5, -1.0, 2.0, 0.3, 1.5]);
    let y = arr1(&[0.7, -0.2]);
    let idx = arr1(&[0i64, 2, 2]);
    let w = arr1(&[1.0, 2.0, 3.0, 4.0, 5.0]);
    let (cost, gx, gy) = programs::indexing(x.view(), y.view(), idx.view(), w.view()).unwrap();
    // set rows 1..3 hide x there; 3 x0; x2^2 + x3^2; the gather adds w0 at 0 and w1 + w2 at 2.
    let want_x = [
        1.0 + 3.0 + 1.0,
        0.0,
        2.0 * 2.0 + 2.0 + 3.0,
        4.0 + 2.0 * 0.3,
        5.0,
    ];
    assert_floats(gx.as_slice().unwrap(), &want_x, 1e-12);
    assert_floats(
        gy.as_slice().unwrap(),
        &[2.0 * 2.0 * 0.7, 3.0 * 2.0 * -0.2],
        1e-12,
    );
    check_gradient(
        &|p| {
            programs::indexing(v1(&p[0]), v1(&p[1]), idx.view(), w.view())
                .unwrap()
                .0
        },
        &[d1(&x), d1(&y)],
        &[d1(&gx), d1(&gy)],
    );
    let args = vec![
        Value::from(x.clone()),
        Value::from(y.clone()),
        Value::from(idx.clone()),
        Value::from(w.clone()),
    ];
    let out = vec![Value::from(cost), Value::from(gx), Value::from(gy)];
    forward_mode_agrees(programs::SOURCE, "indexing", &args, &out, &[(0, 1), (1, 2)]);
    second_opinion(programs::SOURCE, "indexing", args, out);
}

#[test]
fn max_gives_every_tie_the_gradient() {
    let x = arr1(&[1.0, 3.0, 3.0, 2.0]);
    let m = arr2(&[[1.0, 2.0, 2.0], [5.0, 4.0, 5.0]]);
    let (a, b) = programs::max_ties(x.view(), m.view()).unwrap();
    assert_eq!(a, arr1(&[0.0, 1.0, 1.0, 0.0]));
    assert_eq!(b, arr2(&[[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]]));
    // Away from ties, the finite differences agree.
    let (x2, m2) = (
        arr1(&[1.0, 3.0, 2.5, 2.0]),
        arr2(&[[1.0, 2.0, 2.5], [5.0, 4.0, 4.5]]),
    );
    let (a2, b2) = programs::max_ties(x2.view(), m2.view()).unwrap();
    assert_eq!(a2, arr1(&[0.0, 1.0, 0.0, 0.0]));
    assert_eq!(b2, arr2(&[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]));
    second_opinion(
        programs::SOURCE,
        "max_ties",
        vec![Value::from(x), Value::from(m)],
        vec![Value::from(a), Value::from(b)],
    );
}

#[test]
fn where_and_kinks_follow_pytensor() {
    let x = arr1(&[-1.0, 0.0, 2.0]);
    let (y, gy, ga, gm, gr) = programs::kinks(x.view()).unwrap();
    assert_eq!(y, 5.0);
    assert_eq!(gy, arr1(&[-1.0, -1.0, 4.0]));
    assert_eq!(ga, arr1(&[-1.0, 0.0, 1.0]));
    // maximum(x, 0) and relu at 0: the tie goes to x (PyTensor's maximum).
    assert_eq!(gm, arr1(&[0.0, 1.0, 1.0]));
    assert_eq!(gr, arr1(&[0.0, 1.0, 1.0]));
    let away = arr1(&[-1.0, 0.5, 2.0]);
    let g = programs::kinks(away.view()).unwrap().1;
    check_gradient(
        &|p| programs::kinks(v1(&p[0])).unwrap().0,
        &[d1(&away)],
        &[d1(&g)],
    );
    let out = vec![
        Value::from(y),
        Value::from(gy),
        Value::from(ga),
        Value::from(gm),
        Value::from(gr),
    ];
    let args = vec![Value::from(x)];
    forward_mode_agrees(programs::SOURCE, "kinks", &args, &out, &[(0, 1)]);
    second_opinion(programs::SOURCE, "kinks", args, out);
}

#[test]
fn a_cost_reaching_x_only_through_a_comparison_gives_zeros() {
    let x = arr1(&[-1.0, 0.5]);
    let g = programs::through_a_comparison(x.view()).unwrap();
    assert_eq!(g, arr1(&[0.0, 0.0]));
    second_opinion(
        programs::SOURCE,
        "through_a_comparison",
        vec![Value::from(x)],
        vec![Value::from(g)],
    );
}

#[test]
fn f32_gradients_stay_f32() {
    let x = arr1(&[1.0f32, -2.0, 0.5]);
    let g = programs::single(x.view()).unwrap();
    assert_eq!(g, arr1(&[6.0f32, -12.0, 3.0]));
    second_opinion(
        programs::SOURCE,
        "single",
        vec![Value::from(x)],
        vec![Value::from(g)],
    );
}

#[test]
fn elementwise_functions_and_reductions() {
    let (x, y) = (within(5, 9, 0.1, 0.9), within(5, 10, 0.1, 0.9));
    let (cost, gx, gy) = programs::functions(x.view(), y.view()).unwrap();
    check_gradient(
        &|p| programs::functions(v1(&p[0]), v1(&p[1])).unwrap().0,
        &[d1(&x), d1(&y)],
        &[d1(&gx), d1(&gy)],
    );
    let args = vec![Value::from(x.clone()), Value::from(y.clone())];
    let out = vec![Value::from(cost), Value::from(gx), Value::from(gy)];
    forward_mode_agrees(
        programs::SOURCE,
        "functions",
        &args,
        &out,
        &[(0, 1), (1, 2)],
    );
    second_opinion(programs::SOURCE, "functions", args, out);
}

#[test]
fn arrays_joins_views_and_products() {
    let (m, v) = (matrix(2, 3, 11), within(3, 12, -1.0, 1.0));
    let s =
        Array3::from_shape_vec((2, 2, 3), matrix(1, 12, 13).into_raw_vec_and_offset().0).unwrap();
    let t =
        Array3::from_shape_vec((2, 3, 2), matrix(1, 12, 14).into_raw_vec_and_offset().0).unwrap();
    let (cost, gm, gv, gs, gt) = programs::arrays(m.view(), v.view(), s.view(), t.view()).unwrap();
    check_gradient(
        &|p| {
            programs::arrays(v2(&p[0]), v1(&p[1]), v3(&p[2]), v3(&p[3]))
                .unwrap()
                .0
        },
        &[d2(&m), d1(&v), s.clone().into_dyn(), t.clone().into_dyn()],
        &[
            d2(&gm),
            d1(&gv),
            gs.clone().into_dyn(),
            gt.clone().into_dyn(),
        ],
    );
    let args = vec![
        Value::from(m.clone()),
        Value::from(v.clone()),
        Value::from(s.clone()),
        Value::from(t.clone()),
    ];
    let out = vec![
        Value::from(cost),
        Value::from(gm),
        Value::from(gv),
        Value::from(gs),
        Value::from(gt),
    ];
    forward_mode_agrees(
        programs::SOURCE,
        "arrays",
        &args,
        &out,
        &[(0, 1), (1, 2), (2, 3), (3, 4)],
    );
    second_opinion(programs::SOURCE, "arrays", args, out);
}

#[test]
fn hamiltonian_leapfrog_with_grad_in_the_step() {
    let n = 4;
    let b = matrix(n, n, 15);
    let a = b.t().dot(&b) + Array2::<f64>::eye(n); // symmetric positive definite
    let (x0, p0) = (within(n, 16, -1.0, 1.0), within(n, 17, -1.0, 1.0));
    let (xs, ps) = programs::leapfrog(x0.view(), p0.view(), a.view(), 0.1, 10).unwrap();
    let (hx, hp) = programs::leapfrog_by_hand(x0.view(), p0.view(), a.view(), 0.1, 10).unwrap();
    assert_eq!(xs.shape(), &[10, n]);
    // dot(x, A) against dot(A, x): the same sums in another order.
    assert_floats(xs.as_slice().unwrap(), hx.as_slice().unwrap(), 1e-12);
    assert_floats(ps.as_slice().unwrap(), hp.as_slice().unwrap(), 1e-12);
    let args = vec![
        Value::from(x0),
        Value::from(p0),
        Value::from(a),
        Value::from(0.1),
        Value::from(10usize as i64),
    ];
    second_opinion(
        programs::SOURCE,
        "leapfrog",
        args,
        vec![Value::from(xs), Value::from(ps)],
    );
}

#[test]
fn masks_index_arrays_and_products() {
    let x = within(5, 18, 0.2, 1.2);
    let m = matrix(2, 3, 19) + 1.0;
    let mask = arr1(&[true, false, true, true, false]);
    let idx2 = arr2(&[[0i64, 4], [4, 1]]);
    let idx = arr1(&[2i64, 0, 2]);
    let v = arr1(&[0.3, -0.4, 0.9]);
    let (cost, gx, gm, gv) = programs::gathers(
        x.view(),
        m.view(),
        mask.view(),
        idx2.view(),
        idx.view(),
        v.view(),
    )
    .unwrap();
    check_gradient(
        &|p| {
            programs::gathers(
                v1(&p[0]),
                v2(&p[1]),
                mask.view(),
                idx2.view(),
                idx.view(),
                v1(&p[2]),
            )
            .unwrap()
            .0
        },
        &[d1(&x), d2(&m), d1(&v)],
        &[d1(&gx), d2(&gm), d1(&gv)],
    );
    let args = vec![
        Value::from(x.clone()),
        Value::from(m.clone()),
        Value::from(mask.clone()),
        Value::from(idx2.clone()),
        Value::from(idx.clone()),
        Value::from(v.clone()),
    ];
    let out = vec![
        Value::from(cost),
        Value::from(gx),
        Value::from(gm),
        Value::from(gv),
    ];
    forward_mode_agrees(
        programs::SOURCE,
        "gathers",
        &args,
        &out,
        &[(0, 1), (1, 2), (5, 3)],
    );
    second_opinion(programs::SOURCE, "gathers", args, out);
}

#[test]
fn prod_with_zeros_follows_pytensor() {
    let g = programs::prod_zeros(arr1(&[2.0, 3.0, 4.0]).view()).unwrap();
    assert_eq!(g, arr1(&[12.0, 8.0, 6.0]));
    // One zero: the product of the others at the zero, 0 elsewhere.
    let g = programs::prod_zeros(arr1(&[2.0, 0.0, 4.0]).view()).unwrap();
    assert_eq!(g, arr1(&[0.0, 8.0, 0.0]));
    let g = programs::prod_zeros(arr1(&[0.0, 0.0, 4.0]).view()).unwrap();
    assert_eq!(g, arr1(&[0.0, 0.0, 0.0]));
    let x = arr1(&[2.0, 0.0, 4.0]);
    second_opinion(
        programs::SOURCE,
        "prod_zeros",
        vec![Value::from(x)],
        vec![Value::from(arr1(&[0.0, 8.0, 0.0]))],
    );
}
