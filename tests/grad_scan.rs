//! Gradients through scan (issue 10, stage 2): the backward pass is a scan going the other
//! way over the forward steps (`grad/scan.rs`). Every gradient is checked three ways:
//! against central finite differences (`common::grad_check::check_gradient`), against the
//! reference evaluator's forward mode (`forward_mode_agrees`, independent of the reverse
//! mode), and by `second_opinion` (the evaluator agrees with the generated code, and the
//! rewrites leave the values alone); and against values known by hand where there are some.

mod common;

use common::grad_check::{check_gradient, forward_mode_agrees};
use common::{assert_floats, matrix, second_opinion, Value};
use scan_runtime::ndarray::{arr0, arr1, Array, Array3, ArrayD, Dimension, Ix1, Ix2};
use scan_runtime::prelude::*;

mod programs {
    scan_tests::program! {
        /// A**k elementwise by a scan, its last step summed.
        pub fn power(a: ArrayView1<f64>, k: usize) -> Result<(f64, Array1<f64>)> {
            let result = scan(
                |prior, a| prior * a,
                outputs_info = ones_like(a),
                non_sequences = a,
                n_steps = k,
            );
            let cost = sum(result[-1]);
            Ok((cost, grad(cost, a)))
        }

        /// The tutorial's polynomial over sequences of different lengths (the arange is
        /// cut to the coefficients'), PyTensor's test; and its second derivative.
        pub fn polynomial(c: ArrayView1<f64>, x: f64) -> Result<(f64, Array1<f64>, f64, f64)> {
            let components = scan(
                |coefficient, power, free_variable| coefficient * pow(free_variable, power),
                outputs_info = None,
                sequences = [c, arange(10000)],
                non_sequences = x,
            );
            let cost = sum(components);
            let (gc, gx) = grad(cost, [c, x]);
            Ok((cost, gc, gx, grad(gx, x)))
        }

        /// x^16 by four squarings in a scan.
        pub fn pow16(x: f64) -> Result<(f64, f64)> {
            let squares = scan(|a| a * a, outputs_info = x, n_steps = 4);
            let cost = squares[-1];
            Ok((cost, grad(cost, x)))
        }

        /// An Elman RNN, every hidden state summed.
        pub fn elman(x: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>, u: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>)> {
            let hs = scan(
                |x_t, h, w, u, b| tanh(dot(x_t, w) + dot(h, u) + b),
                sequences = x,
                outputs_info = h0,
                non_sequences = [w, u, b],
            );
            let cost = sum(hs);
            let (gx, gh0, gw, gu, gb) = grad(cost, [x, h0, w, u, b]);
            Ok((cost, gx, gh0, gw, gu, gb))
        }

        /// An LSTM of hidden size 2 (gates i, f, o, g side by side), its hidden states and
        /// final cell summed.
        pub fn lstm(x: ArrayView2<f64>, h0: ArrayView1<f64>, c0: ArrayView1<f64>, wx: ArrayView2<f64>, wh: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array1<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>)> {
            let (hs, cs) = scan(
                |x_t, h, c, wx, wh, b| {
                    let z = dot(x_t, wx) + dot(h, wh) + b;
                    let i = sigmoid(z[0..2]);
                    let f = sigmoid(z[2..4]);
                    let o = sigmoid(z[4..6]);
                    let g = tanh(z[6..8]);
                    let c_new = f * c + i * g;
                    (o * tanh(c_new), c_new)
                },
                sequences = x,
                outputs_info = [h0, c0],
                non_sequences = [wx, wh, b],
            );
            let cost = sum(hs) + sum(cs[-1]);
            let (gh0, gc0, gwx, gwh, gb) = grad(cost, [h0, c0, wx, wh, b]);
            Ok((cost, gh0, gc0, gwx, gwh, gb))
        }

        /// A batched LSTM as scan-bench's lstm_grad writes it (the four gates slices of one
        /// `[B, 4H]` pre-activation), its initial state given (its batch may broadcast
        /// against x's), its hidden states and final cell summed. The backward loop's
        /// weight gradients are products of its sequences' rows and one stack of the gates'
        /// adjoint, summed after the loop to each product's shape.
        #[allow(clippy::type_complexity)]
        pub fn lstm_batched(x: ArrayView3<f64>, h0: ArrayView2<f64>, c0: ArrayView2<f64>, wx: ArrayView2<f64>, wh: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array1<f64>)> {
            let (hs, cs) = scan(
                |x_t, h, c, wx, wh, b| {
                    let z = x_t.dot(wx) + h.dot(wh) + b;
                    let n = h.shape[1];
                    let i = sigmoid(z[(.., ..n)]);
                    let f = sigmoid(z[(.., n..2 * n)]);
                    let g = tanh(z[(.., 2 * n..3 * n)]);
                    let o = sigmoid(z[(.., 3 * n..)]);
                    let c_t = f * c + i * g;
                    (o * tanh(c_t), c_t)
                },
                sequences = x,
                outputs_info = [h0, c0],
                non_sequences = [wx, wh, b],
            );
            let cost = sum(hs) + sum(cs[-1]);
            let (gh0, gc0, gwx, gwh, gb) = grad(cost, [h0, c0, wx, wh, b]);
            Ok((cost, gh0, gc0, gwx, gwh, gb))
        }

        /// The same going backwards over x.
        #[allow(clippy::type_complexity)]
        pub fn lstm_batched_backwards(x: ArrayView3<f64>, h0: ArrayView2<f64>, c0: ArrayView2<f64>, wx: ArrayView2<f64>, wh: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array1<f64>)> {
            let (hs, cs) = scan(
                |x_t, h, c, wx, wh, b| {
                    let z = x_t.dot(wx) + h.dot(wh) + b;
                    let n = h.shape[1];
                    let i = sigmoid(z[(.., ..n)]);
                    let f = sigmoid(z[(.., n..2 * n)]);
                    let g = tanh(z[(.., 2 * n..3 * n)]);
                    let o = sigmoid(z[(.., 3 * n..)]);
                    let c_t = f * c + i * g;
                    (o * tanh(c_t), c_t)
                },
                sequences = x,
                outputs_info = [h0, c0],
                non_sequences = [wx, wh, b],
                go_backwards = true,
            );
            let cost = sum(hs) + sum(cs[-1]);
            let (gh0, gc0, gwx, gwh, gb) = grad(cost, [h0, c0, wx, wh, b]);
            Ok((cost, gh0, gc0, gwx, gwh, gb))
        }

        /// y[t] = y[t-2] + y[t-1] from y[-2] = init[0], y[-1] = init[1].
        pub fn fibonacci(init: ArrayView1<f64>, n: usize) -> Result<(f64, Array1<f64>)> {
            let ys = scan(|a, b| a + b, outputs_info = taps(init, [-2, -1]), n_steps = n);
            let cost = ys[-1];
            Ok((cost, grad(cost, init)))
        }

        /// The tutorial's RNN with taps: x_t = tanh(x_{t-1} W + u_t W_in_1 + u_{t-4} W_in_2
        /// + y_{t-1} W_feedback), y_t = x_{t-3} W_out.
        #[allow(clippy::too_many_arguments, clippy::type_complexity)]
        pub fn tutorial_rnn(u: ArrayView2<f64>, x0: ArrayView2<f64>, y0: ArrayView1<f64>, w: ArrayView2<f64>, w_in_1: ArrayView2<f64>, w_in_2: ArrayView2<f64>, w_feedback: ArrayView2<f64>, w_out: ArrayView2<f64>) -> Result<(f64, Array2<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>)> {
            let (x_vals, y_vals) = scan(
                |u_tm4, u_t, x_tm3, x_tm1, y_tm1, w, w_in_1, w_in_2, w_feedback, w_out| {
                    let x_t = tanh(
                        x_tm1.dot(w) + u_t.dot(w_in_1) + u_tm4.dot(w_in_2) + y_tm1.dot(w_feedback),
                    );
                    let y_t = x_tm3.dot(w_out);
                    (x_t, y_t)
                },
                sequences = [taps(u, [-4, 0])],
                outputs_info = [taps(x0, [-3, -1]), y0],
                non_sequences = [w, w_in_1, w_in_2, w_feedback, w_out],
                strict = true,
            );
            let cost = sum(x_vals) + sum(y_vals * y_vals);
            let (gu, gx0, gy0, gw, g1, g2, gf, go) = grad(cost, [u, x0, y0, w, w_in_1, w_in_2, w_feedback, w_out]);
            Ok((cost, gu, gx0, gy0, gw, g1, g2, gf, go))
        }

        /// An `until` loop: the backward pass runs over the steps taken.
        pub fn until_loop(x0: f64, s: f64) -> Result<(f64, f64, f64)> {
            let values = scan(
                |p, s| (p * s + 0.1, until(p * s > 4.0)),
                outputs_info = x0,
                non_sequences = s,
                n_steps = 100,
            );
            let cost = sum(values * values);
            let (g0, gs) = grad(cost, [x0, s]);
            Ok((cost, g0, gs))
        }

        /// A scan in a scan's step: each row folded by the inner scan from the outer state.
        pub fn nested(m: ArrayView2<f64>, h0: f64, w: f64) -> Result<(f64, Array2<f64>, f64, f64)> {
            let out = scan(
                |row, h, w| {
                    let inner = scan(|x, acc, w| tanh(acc * w + x), sequences = row, outputs_info = h, non_sequences = w);
                    inner[-1] * 0.5 + h
                },
                sequences = m,
                outputs_info = h0,
                non_sequences = w,
            );
            let cost = sum(out * out);
            let (gm, gh0, gw) = grad(cost, [m, h0, w]);
            Ok((cost, gm, gh0, gw))
        }

        /// A map (no recurrence) with a non-sequence.
        pub fn mapped(x: ArrayView1<f64>, w: f64) -> Result<(f64, Array1<f64>, f64)> {
            let ys = map(|x, w| sin(x * w) * x, sequences = x, non_sequences = w);
            let cost = sum(ys * ys);
            let (gx, gw) = grad(cost, [x, w]);
            Ok((cost, gx, gw))
        }

        /// go_backwards with a recurrence; the weights tell the rows apart.
        pub fn backwards(x: ArrayView1<f64>, a0: f64, weights: ArrayView1<f64>) -> Result<(f64, Array1<f64>, f64)> {
            let r = scan(|x, acc| acc * 0.9 + x * x, sequences = x, outputs_info = a0, go_backwards = true);
            let cost = sum(r * weights);
            let (gx, ga) = grad(cost, [x, a0]);
            Ok((cost, gx, ga))
        }

        /// The same with the direction a run-time flag, and sequence taps.
        pub fn backwards_flag(x: ArrayView1<f64>, a0: f64, weights: ArrayView1<f64>, back: bool) -> Result<(f64, Array1<f64>, f64)> {
            let r = scan(|p, x, acc| acc * 0.9 + x * x * p, sequences = taps(x, [-1, 0]), outputs_info = a0, go_backwards = back);
            let cost = sum(r * weights);
            let (gx, ga) = grad(cost, [x, a0]);
            Ok((cost, gx, ga))
        }

        /// Sequence taps past and future, a non-sequence in every step, fewer steps than
        /// the sequence allows; forwards and backwards.
        pub fn seq_taps(x: ArrayView1<f64>, a0: f64, w: f64, n: usize) -> Result<(f64, Array1<f64>, f64, f64)> {
            let r = scan(|a, b, c, acc, w| acc * w + a * b - sin(c) * w, sequences = taps(x, [-2, 0, 1]), outputs_info = a0, non_sequences = w, n_steps = n);
            let cost = sum(r * r);
            let (gx, ga, gw) = grad(cost, [x, a0, w]);
            Ok((cost, gx, ga, gw))
        }

        pub fn seq_taps_backwards(x: ArrayView1<f64>, a0: f64, w: f64, n: usize) -> Result<(f64, Array1<f64>, f64, f64)> {
            let r = scan(|a, b, c, acc, w| acc * w + a * b - sin(c) * w, sequences = taps(x, [-2, 0, 1]), outputs_info = a0, non_sequences = w, n_steps = n, go_backwards = true);
            let cost = sum(r * r);
            let (gx, ga, gw) = grad(cost, [x, a0, w]);
            Ok((cost, gx, ga, gw))
        }

        /// A cost reading two chosen steps only, beside an integer counter (no adjoint).
        pub fn chosen_steps(x0: f64, a: f64) -> Result<(f64, f64, f64)> {
            let (k, xs) = scan(
                |k, p, a| (k + 1, p * a + sin(p) + (k as f64) * 0.1),
                outputs_info = [0i64, x0],
                non_sequences = a,
                n_steps = 6,
            );
            let cost = xs[3] + xs[-1] + (k[-1] as f64);
            let (g0, ga) = grad(cost, [x0, a]);
            Ok((cost, g0, ga))
        }

        /// A key carried through the steps and noise drawn from it: the key (an integer)
        /// carries no adjoint, the draw is a constant of the gradient.
        pub fn noisy(key: i64, h0: ArrayView1<f64>, w: f64) -> Result<(f64, Array1<f64>, f64)> {
            let (_keys, hs) = scan(
                |key, h, w| {
                    let (key, z) = normal(key, 2);
                    (key, tanh(h * w + z * 0.5))
                },
                outputs_info = [key, h0],
                non_sequences = w,
                n_steps = 4,
            );
            let cost = sum(hs);
            let (gh0, gw) = grad(cost, [h0, w]);
            Ok((cost, gh0, gw))
        }

        /// PyTensor's test_grad_until_and_truncate: squares of arange(15) until x > 5,
        /// with the gradient truncated to the last 3 steps.
        pub fn truncated(x: ArrayView1<f64>, threshold: f64) -> Result<(Array1<f64>, Array1<f64>)> {
            let r = scan(|x, u| (x * x, until(x > u)), sequences = x, non_sequences = threshold, truncate_gradient = 3);
            Ok((r, grad(sum(r), x)))
        }
    }
}

/// A generated result as an array of any rank (a scalar as rank 0).
trait Dyn {
    fn d(self) -> ArrayD<f64>;
}

impl Dyn for f64 {
    fn d(self) -> ArrayD<f64> {
        arr0(self).into_dyn()
    }
}

impl<D: Dimension> Dyn for Array<f64, D> {
    fn d(self) -> ArrayD<f64> {
        self.into_dyn()
    }
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

/// A generated function run on its differentiated arguments, giving its results.
type Run<'a> = dyn Fn(&[ArrayD<f64>]) -> Vec<ArrayD<f64>> + 'a;

/// The three checks of a program returning `(cost, gradients..)`. `run` calls the
/// generated function on `inputs`, the differentiated arguments (the others fixed in
/// it), and returns its results; `args` are all its arguments for the evaluator, and
/// `at[k]` the position there of `inputs[k]`, whose gradient is result `k + 1`.
fn three_ways(
    function: &str,
    run: &Run,
    inputs: &[ArrayD<f64>],
    args: Vec<Value>,
    at: &[usize],
) -> Vec<ArrayD<f64>> {
    let results = run(inputs);
    check_gradient(&|p| s0(&run(p)[0]), inputs, &results[1..=inputs.len()]);
    let out: Vec<Value> = results.iter().map(Value::from).collect();
    let pairs: Vec<(usize, usize)> = at.iter().enumerate().map(|(k, &a)| (a, k + 1)).collect();
    forward_mode_agrees(programs::SOURCE, function, &args, &out, &pairs);
    second_opinion(programs::SOURCE, function, args, out);
    results
}

fn floats(a: &ArrayD<f64>) -> Vec<f64> {
    a.iter().copied().collect()
}

#[test]
fn power_by_a_scan() {
    let a = arr1(&[0.5, -1.25, 2.0]).into_dyn();
    let run = |p: &[ArrayD<f64>]| {
        let (c, g) = programs::power(v1(&p[0]), 4).unwrap();
        vec![c.d(), g.d()]
    };
    let args = vec![Value::from(&a), Value::from(4i64)];
    let r = three_ways("power", &run, std::slice::from_ref(&a), args, &[0]);
    // d/da sum(a^4) = 4 a^3.
    assert_floats(&floats(&r[1]), &floats(&a.mapv(|v| 4.0 * v.powi(3))), 1e-14);
}

#[test]
fn polynomial_matches_pytensor() {
    let c = arr1(&[1.0, 2.0, -3.0, 4.0]);
    let run = |p: &[ArrayD<f64>]| {
        let (y, gc, gx, h) = programs::polynomial(v1(&p[0]), s0(&p[1])).unwrap();
        vec![y.d(), gc.d(), gx.d(), h.d()]
    };
    let args = vec![Value::from(&c), Value::from(2.0)];
    let r = three_ways(
        "polynomial",
        &run,
        &[c.clone().into_dyn(), 2.0.d()],
        args.clone(),
        &[0, 1],
    );
    // PyTensor's: 38 at x = 2; d/dc_i = x^i.
    assert_eq!(s0(&r[0]), 25.0);
    assert_eq!(s0(&r[2]), 38.0);
    assert_eq!(floats(&r[1]), [1.0, 2.0, 4.0, 8.0]);
    // The second derivative, through the backward scan: 2 (-3) + 6 (4) x = 42; forward
    // mode differentiates the first derivative the evaluator computes.
    assert_eq!(s0(&r[3]), 42.0);
    let want =
        scan_codegen::eval::gradient_by_jvp(programs::SOURCE, "polynomial", args, 1, 2).unwrap();
    scan_codegen::eval::assert_close(&Value::from(&r[3]), &want).unwrap();
}

#[test]
fn sixteenth_power_by_squarings() {
    let x = 0.95f64;
    let run = |p: &[ArrayD<f64>]| {
        let (c, g) = programs::pow16(s0(&p[0])).unwrap();
        vec![c.d(), g.d()]
    };
    let r = three_ways("pow16", &run, &[x.d()], vec![Value::from(x)], &[0]);
    assert_floats(&[s0(&r[1])], &[16.0 * x.powi(15)], 1e-14);
}

#[test]
fn elman_rnn() {
    let inputs = [
        matrix(5, 3, 1).into_dyn(),
        matrix(1, 4, 2).row(0).to_owned().into_dyn(),
        matrix(3, 4, 3).into_dyn(),
        matrix(4, 4, 4).into_dyn(),
        matrix(1, 4, 5).row(0).to_owned().into_dyn(),
    ];
    let run = |p: &[ArrayD<f64>]| {
        let (c, a, b, w, u, bb) =
            programs::elman(v2(&p[0]), v1(&p[1]), v2(&p[2]), v2(&p[3]), v1(&p[4])).unwrap();
        vec![c.d(), a.d(), b.d(), w.d(), u.d(), bb.d()]
    };
    let args = inputs.iter().map(Value::from).collect();
    three_ways("elman", &run, &inputs, args, &[0, 1, 2, 3, 4]);
}

#[test]
fn lstm() {
    let x = matrix(6, 3, 11);
    let inputs = [
        (matrix(1, 2, 12).row(0).to_owned() * 2.0).into_dyn(),
        (matrix(1, 2, 13).row(0).to_owned() * 2.0).into_dyn(),
        (matrix(3, 8, 14) * 2.0).into_dyn(),
        (matrix(2, 8, 15) * 2.0).into_dyn(),
        matrix(1, 8, 16).row(0).to_owned().into_dyn(),
    ];
    let run = |p: &[ArrayD<f64>]| {
        let (c, a, b, wx, wh, bb) = programs::lstm(
            x.view(),
            v1(&p[0]),
            v1(&p[1]),
            v2(&p[2]),
            v2(&p[3]),
            v1(&p[4]),
        )
        .unwrap();
        vec![c.d(), a.d(), b.d(), wx.d(), wh.d(), bb.d()]
    };
    let mut args = vec![Value::from(&x)];
    args.extend(inputs.iter().map(Value::from));
    three_ways("lstm", &run, &inputs, args, &[1, 2, 3, 4, 5]);
}

#[test]
fn lstm_with_batched_gates() {
    // x's batch 2 like h0's, and 1 (broadcast against h0's: x_t's adjoint is then summed
    // over the batch after the loop); 1 and 4 steps (the evaluator's checks also cut x to
    // 0, 1 and 2); both directions.
    for (steps, x_batch) in [(4, 2), (4, 1), (1, 2)] {
        let x = Array3::from_shape_fn((steps, x_batch, 3), |(t, i, j)| {
            ((t * 5 + i * 3 + j) as f64 * 0.7).sin()
        });
        let inputs = [
            matrix(2, 2, 21).into_dyn(),
            matrix(2, 2, 22).into_dyn(),
            (matrix(3, 8, 23) * 2.0).into_dyn(),
            (matrix(2, 8, 24) * 2.0).into_dyn(),
            matrix(1, 8, 25).row(0).to_owned().into_dyn(),
        ];
        for (name, backwards) in [("lstm_batched", false), ("lstm_batched_backwards", true)] {
            let f = if backwards {
                programs::lstm_batched_backwards
            } else {
                programs::lstm_batched
            };
            let run = |p: &[ArrayD<f64>]| {
                let (c, a, b, wx, wh, bb) = f(
                    x.view(),
                    v2(&p[0]),
                    v2(&p[1]),
                    v2(&p[2]),
                    v2(&p[3]),
                    v1(&p[4]),
                )
                .unwrap();
                vec![c.d(), a.d(), b.d(), wx.d(), wh.d(), bb.d()]
            };
            let mut args = vec![Value::from(&x)];
            args.extend(inputs.iter().map(Value::from));
            three_ways(name, &run, &inputs, args, &[1, 2, 3, 4, 5]);
        }
    }
}

#[test]
fn fibonacci_like_recurrence() {
    let init = arr1(&[0.3, -0.7]).into_dyn();
    let run = |p: &[ArrayD<f64>]| {
        let (c, g) = programs::fibonacci(v1(&p[0]), 10).unwrap();
        vec![c.d(), g.d()]
    };
    let args = vec![Value::from(&init), Value::from(10i64)];
    let r = three_ways("fibonacci", &run, &[init], args, &[0]);
    // y[9] = F(10) y[-2] + F(11) y[-1].
    assert_eq!(floats(&r[1]), [55.0, 89.0]);
}

#[test]
fn tutorial_rnn_with_taps() {
    let inputs = [
        matrix(9, 2, 21).into_dyn(),
        matrix(3, 3, 22).into_dyn(),
        matrix(1, 2, 23).row(0).to_owned().into_dyn(),
        matrix(3, 3, 24).into_dyn(),
        matrix(2, 3, 25).into_dyn(),
        matrix(2, 3, 26).into_dyn(),
        matrix(2, 3, 27).into_dyn(),
        matrix(3, 2, 28).into_dyn(),
    ];
    let run = |p: &[ArrayD<f64>]| {
        let r = programs::tutorial_rnn(
            v2(&p[0]),
            v2(&p[1]),
            v1(&p[2]),
            v2(&p[3]),
            v2(&p[4]),
            v2(&p[5]),
            v2(&p[6]),
            v2(&p[7]),
        )
        .unwrap();
        vec![
            r.0.d(),
            r.1.d(),
            r.2.d(),
            r.3.d(),
            r.4.d(),
            r.5.d(),
            r.6.d(),
            r.7.d(),
            r.8.d(),
        ]
    };
    let args = inputs.iter().map(Value::from).collect();
    three_ways(
        "tutorial_rnn",
        &run,
        &inputs,
        args,
        &[0, 1, 2, 3, 4, 5, 6, 7],
    );
}

#[test]
fn until_loop_backpropagates_over_the_steps_taken() {
    let run = |p: &[ArrayD<f64>]| {
        let (c, a, b) = programs::until_loop(s0(&p[0]), s0(&p[1])).unwrap();
        vec![c.d(), a.d(), b.d()]
    };
    let args = vec![Value::from(1.0), Value::from(1.5)];
    let r = three_ways("until_loop", &run, &[1.0.d(), 1.5.d()], args, &[0, 1]);
    // Four steps: 1.6, 2.5, 3.85, 5.875; by hand, d/dx0 of sum(v_t^2) with v_t = s v_{t-1}
    // + 0.1 (v_{-1} = x0) is sum(2 v_t s^(t+1)).
    let (s, v) = (1.5f64, [1.6, 2.5, 3.85, 5.875]);
    let want: f64 = v
        .iter()
        .enumerate()
        .map(|(t, v)| 2.0 * v * s.powi(t as i32 + 1))
        .sum();
    assert_floats(&[s0(&r[1])], &[want], 1e-12);
}

#[test]
fn nested_scan() {
    let inputs = [matrix(4, 3, 31).into_dyn(), 0.3.d(), 0.8.d()];
    let run = |p: &[ArrayD<f64>]| {
        let (c, gm, gh, gw) = programs::nested(v2(&p[0]), s0(&p[1]), s0(&p[2])).unwrap();
        vec![c.d(), gm.d(), gh.d(), gw.d()]
    };
    let args = inputs.iter().map(Value::from).collect();
    three_ways("nested", &run, &inputs, args, &[0, 1, 2]);
}

#[test]
fn map_with_a_non_sequence() {
    let inputs = [arr1(&[0.2, -0.5, 1.1, 0.7]).into_dyn(), 1.3.d()];
    let run = |p: &[ArrayD<f64>]| {
        let (c, gx, gw) = programs::mapped(v1(&p[0]), s0(&p[1])).unwrap();
        vec![c.d(), gx.d(), gw.d()]
    };
    let args = inputs.iter().map(Value::from).collect();
    three_ways("mapped", &run, &inputs, args, &[0, 1]);
}

#[test]
fn go_backwards_scan() {
    let weights = arr1(&[1.0, -2.0, 3.0, 0.5]);
    let inputs = [arr1(&[0.2, -0.5, 1.1, 0.7]).into_dyn(), 0.4.d()];
    let run = |p: &[ArrayD<f64>]| {
        let (c, gx, ga) = programs::backwards(v1(&p[0]), s0(&p[1]), weights.view()).unwrap();
        vec![c.d(), gx.d(), ga.d()]
    };
    let mut args: Vec<Value> = inputs.iter().map(Value::from).collect();
    args.push(Value::from(&weights));
    let r = three_ways("backwards", &run, &inputs, args, &[0, 1]);
    // Row t of r reads x[3 - t]: r_t = 0.9 r_{t-1} + x[3-t]^2, so d cost / d x[3-t] =
    // 2 x[3-t] sum_{s >= t} w_s 0.9^(s-t).
    let x = [0.2, -0.5, 1.1, 0.7];
    let w = [1.0, -2.0, 3.0, 0.5];
    let want: Vec<f64> = (0..4)
        .map(|i| {
            let t = 3 - i;
            2.0 * x[i]
                * (t..4)
                    .map(|s| w[s] * 0.9f64.powi((s - t) as i32))
                    .sum::<f64>()
        })
        .collect();
    assert_floats(&floats(&r[1]), &want, 1e-12);
}

#[test]
fn go_backwards_as_a_run_time_flag() {
    let weights = arr1(&[1.0, -2.0, 3.0]);
    let inputs = [arr1(&[0.2, -0.5, 1.1, 0.7]).into_dyn(), 0.4.d()];
    for back in [true, false] {
        let run = |p: &[ArrayD<f64>]| {
            let (c, gx, ga) =
                programs::backwards_flag(v1(&p[0]), s0(&p[1]), weights.view(), back).unwrap();
            vec![c.d(), gx.d(), ga.d()]
        };
        let mut args: Vec<Value> = inputs.iter().map(Value::from).collect();
        args.push(Value::from(&weights));
        args.push(Value::from(back));
        three_ways("backwards_flag", &run, &inputs, args, &[0, 1]);
    }
}

#[test]
fn sequence_taps_past_and_future() {
    let x = arr1(&[0.2, -0.5, 1.1, 0.7, -0.3, 0.9, 0.4, -1.2]).into_dyn();
    for n in [5usize, 3] {
        for function in ["seq_taps", "seq_taps_backwards"] {
            let run = |p: &[ArrayD<f64>]| {
                let f = if function == "seq_taps" {
                    programs::seq_taps
                } else {
                    programs::seq_taps_backwards
                };
                let (c, gx, ga, gw) = f(v1(&p[0]), s0(&p[1]), s0(&p[2]), n).unwrap();
                vec![c.d(), gx.d(), ga.d(), gw.d()]
            };
            let inputs = [x.clone(), 0.4.d(), 0.8.d()];
            let mut args: Vec<Value> = inputs.iter().map(Value::from).collect();
            args.push(Value::from(n as i64));
            let r = three_ways(function, &run, &inputs, args, &[0, 1, 2]);
            // Rows no step read get no gradient: the last 8 - (n + 3) going forwards, the
            // first going backwards.
            let gx = floats(&r[1]);
            let unread = 8 - (n + 3);
            let zeros = if function == "seq_taps" {
                &gx[8 - unread..]
            } else {
                &gx[..unread]
            };
            assert!(
                zeros.iter().all(|&g| g == 0.0),
                "{function}, n = {n}: {gx:?}"
            );
        }
    }
}

#[test]
fn reduction_of_chosen_steps() {
    let run = |p: &[ArrayD<f64>]| {
        let (c, a, b) = programs::chosen_steps(s0(&p[0]), s0(&p[1])).unwrap();
        vec![c.d(), a.d(), b.d()]
    };
    let args = vec![Value::from(0.3), Value::from(0.9)];
    three_ways("chosen_steps", &run, &[0.3.d(), 0.9.d()], args, &[0, 1]);
}

#[test]
fn random_draws_in_the_step() {
    let inputs = [arr1(&[0.3, -0.2]).into_dyn(), 0.7.d()];
    let run = |p: &[ArrayD<f64>]| {
        let (c, gh, gw) = programs::noisy(42, v1(&p[0]), s0(&p[1])).unwrap();
        vec![c.d(), gh.d(), gw.d()]
    };
    let mut args = vec![Value::from(42i64)];
    args.extend(inputs.iter().map(Value::from));
    three_ways("noisy", &run, &inputs, args, &[1, 2]);
}

#[test]
fn truncate_gradient_keeps_the_last_steps() {
    let x = Array::from_iter((0..15).map(f64::from));
    let (r, g) = programs::truncated(x.view(), 5.0).unwrap();
    // Squares of 0..=6 (6 > 5 stops the loop after its step): 7 steps. The whole
    // gradient would be 2 x over them; truncated to the last 3 steps (x = 4, 5, 6) it is
    // 8, 10, 12 there and 0 elsewhere (PyTensor's test_grad_until_and_truncate).
    assert_eq!(r.to_vec(), [0.0, 1.0, 4.0, 9.0, 16.0, 25.0, 36.0]);
    let mut want = vec![0.0; 15];
    want[4..7].copy_from_slice(&[8.0, 10.0, 12.0]);
    assert_eq!(g.to_vec(), want);
    let args = vec![Value::from(&x), Value::from(5.0)];
    second_opinion(
        programs::SOURCE,
        "truncated",
        args,
        vec![Value::from(r), Value::from(g)],
    );
}

#[test]
fn zero_steps_give_zero_gradients() {
    // The carried adjoints are read as `concatenate([zeros[None], trace[-1..]])[-1]`, the
    // sequence's rows reshaped: no step, no error.
    let (x, h0, w, u, b) = (
        Array::zeros((0, 3)),
        arr1(&[0.1, 0.2]),
        matrix(3, 2, 1),
        matrix(2, 2, 2),
        arr1(&[0.3, 0.4]),
    );
    let r = programs::elman(x.view(), h0.view(), w.view(), u.view(), b.view()).unwrap();
    assert_eq!(r.0, 0.0);
    assert_eq!(r.1.shape(), [0, 3]);
    assert_eq!(r.2.to_vec(), [0.0, 0.0]);
    assert!(r.3.iter().chain(&r.4).chain(&r.5).all(|&g| g == 0.0));
    let args = [
        &x.into_dyn(),
        &h0.into_dyn(),
        &w.into_dyn(),
        &u.into_dyn(),
        &b.into_dyn(),
    ]
    .map(Value::from)
    .to_vec();
    let out = vec![
        Value::from(r.0),
        Value::from(r.1),
        Value::from(r.2),
        Value::from(r.3),
        Value::from(r.4),
        Value::from(r.5),
    ];
    // Not `second_opinion`: its variants cut h0 to no row, which a hoisted product then
    // rejects where the loop, running no step, did not read it.
    common::agree(out, common::evaluate(programs::SOURCE, "elman", args));
}
