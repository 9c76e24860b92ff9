//! Gradients through scans with `checkpoints = N` (issue 10: PyTensor's
//! `scan_checkpoints(.., save_every_N = N)`, `grad/checkpoints.rs`): the forward pass of
//! the gradient stores the window before every N-th step and the backward pass recomputes
//! each segment from it. Each program is compiled twice, with and without checkpoints, and
//! the two must give the same cost and gradients within 1e-12 (the recomputed steps run
//! the same operations on the same values; only the order in which the contributions of
//! the segments are summed differs), at several step counts around N (0, 1, fewer than
//! N, a multiple of N, one more). Some are also checked against finite differences and the
//! evaluator's forward mode, and every one by `second_opinion` (the evaluator agrees with
//! the generated code; the rewrites, each alone and all together, leave it alone).

mod common;

use common::grad_check::{check_gradient, forward_mode_agrees};
use common::{matrix, second_opinion, Value};
use scan_runtime::ndarray::{arr0, arr1, Array, ArrayD, Dimension, Ix1, Ix2};
use scan_runtime::prelude::*;

mod programs {
    scan_tests::program! {
        /// An Elman RNN, every hidden state summed: a SITSOT of vectors, a sequence, three
        /// non-sequences; with checkpoints every 3 steps, every step, every 16 steps.
        #[allow(clippy::type_complexity)]
        pub fn elman(x: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>, u: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>)> {
            let hs = scan(|x_t, h, w, u, b| tanh(dot(x_t, w) + dot(h, u) + b), sequences = x, outputs_info = h0, non_sequences = [w, u, b]);
            let cost = sum(hs);
            let (gx, gh0, gw, gu, gb) = grad(cost, [x, h0, w, u, b]);
            Ok((cost, gx, gh0, gw, gu, gb))
        }

        #[allow(clippy::type_complexity)]
        pub fn elman_ck3(x: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>, u: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>)> {
            let hs = scan(|x_t, h, w, u, b| tanh(dot(x_t, w) + dot(h, u) + b), sequences = x, outputs_info = h0, non_sequences = [w, u, b], checkpoints = 3);
            let cost = sum(hs);
            let (gx, gh0, gw, gu, gb) = grad(cost, [x, h0, w, u, b]);
            Ok((cost, gx, gh0, gw, gu, gb))
        }

        #[allow(clippy::type_complexity)]
        pub fn elman_ck1(x: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>, u: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>)> {
            let hs = scan(|x_t, h, w, u, b| tanh(dot(x_t, w) + dot(h, u) + b), sequences = x, outputs_info = h0, non_sequences = [w, u, b], checkpoints = 1);
            let cost = sum(hs);
            let (gx, gh0, gw, gu, gb) = grad(cost, [x, h0, w, u, b]);
            Ok((cost, gx, gh0, gw, gu, gb))
        }

        #[allow(clippy::type_complexity)]
        pub fn elman_ck16(x: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>, u: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>)> {
            let hs = scan(|x_t, h, w, u, b| tanh(dot(x_t, w) + dot(h, u) + b), sequences = x, outputs_info = h0, non_sequences = [w, u, b], checkpoints = 16);
            let cost = sum(hs);
            let (gx, gh0, gw, gu, gb) = grad(cost, [x, h0, w, u, b]);
            Ok((cost, gx, gh0, gw, gu, gb))
        }

        /// A MITSOT of vectors, y_t = tanh(y_{t-3} a + 0.5 y_{t-1}) + 0.1: a checkpoint
        /// holds three states; segments of 2 steps (shorter than the window) and of 4.
        pub fn mitsot(init: ArrayView2<f64>, a: ArrayView1<f64>, n: usize) -> Result<(f64, Array2<f64>, Array1<f64>)> {
            let ys = scan(|y3, y1, a| tanh(y3 * a + y1 * 0.5) + 0.1, outputs_info = taps(init, [-3, -1]), non_sequences = a, n_steps = n);
            let cost = sum(ys * ys);
            let (gi, ga) = grad(cost, [init, a]);
            Ok((cost, gi, ga))
        }

        pub fn mitsot_ck2(init: ArrayView2<f64>, a: ArrayView1<f64>, n: usize) -> Result<(f64, Array2<f64>, Array1<f64>)> {
            let ys = scan(|y3, y1, a| tanh(y3 * a + y1 * 0.5) + 0.1, outputs_info = taps(init, [-3, -1]), non_sequences = a, n_steps = n, checkpoints = 2);
            let cost = sum(ys * ys);
            let (gi, ga) = grad(cost, [init, a]);
            Ok((cost, gi, ga))
        }

        pub fn mitsot_ck4(init: ArrayView2<f64>, a: ArrayView1<f64>, n: usize) -> Result<(f64, Array2<f64>, Array1<f64>)> {
            let ys = scan(|y3, y1, a| tanh(y3 * a + y1 * 0.5) + 0.1, outputs_info = taps(init, [-3, -1]), non_sequences = a, n_steps = n, checkpoints = 4);
            let cost = sum(ys * ys);
            let (gi, ga) = grad(cost, [init, a]);
            Ok((cost, gi, ga))
        }

        /// Sequence taps past and future, a non-sequence, fewer steps than the sequence
        /// allows; forwards and backwards.
        pub fn seq_taps(x: ArrayView1<f64>, a0: f64, w: f64, n: usize) -> Result<(f64, Array1<f64>, f64, f64)> {
            let r = scan(|a, b, c, acc, w| acc * w + a * b - sin(c) * w, sequences = taps(x, [-2, 0, 1]), outputs_info = a0, non_sequences = w, n_steps = n);
            let cost = sum(r * r);
            let (gx, ga, gw) = grad(cost, [x, a0, w]);
            Ok((cost, gx, ga, gw))
        }

        pub fn seq_taps_ck2(x: ArrayView1<f64>, a0: f64, w: f64, n: usize) -> Result<(f64, Array1<f64>, f64, f64)> {
            let r = scan(|a, b, c, acc, w| acc * w + a * b - sin(c) * w, sequences = taps(x, [-2, 0, 1]), outputs_info = a0, non_sequences = w, n_steps = n, checkpoints = 2);
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

        pub fn seq_taps_backwards_ck2(x: ArrayView1<f64>, a0: f64, w: f64, n: usize) -> Result<(f64, Array1<f64>, f64, f64)> {
            let r = scan(|a, b, c, acc, w| acc * w + a * b - sin(c) * w, sequences = taps(x, [-2, 0, 1]), outputs_info = a0, non_sequences = w, n_steps = n, go_backwards = true, checkpoints = 2);
            let cost = sum(r * r);
            let (gx, ga, gw) = grad(cost, [x, a0, w]);
            Ok((cost, gx, ga, gw))
        }

        /// The direction a run-time flag, sequence taps, no n_steps.
        pub fn flagged(x: ArrayView1<f64>, a0: f64, back: bool) -> Result<(f64, Array1<f64>, f64)> {
            let r = scan(|p, x, acc| acc * 0.9 + x * x * p, sequences = taps(x, [-1, 0]), outputs_info = a0, go_backwards = back);
            let cost = sum(r * r) + r[0];
            let (gx, ga) = grad(cost, [x, a0]);
            Ok((cost, gx, ga))
        }

        pub fn flagged_ck3(x: ArrayView1<f64>, a0: f64, back: bool) -> Result<(f64, Array1<f64>, f64)> {
            let r = scan(|p, x, acc| acc * 0.9 + x * x * p, sequences = taps(x, [-1, 0]), outputs_info = a0, go_backwards = back, checkpoints = 3);
            let cost = sum(r * r) + r[0];
            let (gx, ga) = grad(cost, [x, a0]);
            Ok((cost, gx, ga))
        }

        /// An `until` loop: the steps taken are known when the backward pass starts.
        pub fn until_loop(x0: f64, s: f64, limit: f64) -> Result<(f64, f64, f64)> {
            let values = scan(|p, s, limit| (p * s + 0.1, until(p * s > limit)), outputs_info = x0, non_sequences = [s, limit], n_steps = 12);
            let cost = sum(values * values);
            let (g0, gs) = grad(cost, [x0, s]);
            Ok((cost, g0, gs))
        }

        pub fn until_loop_ck2(x0: f64, s: f64, limit: f64) -> Result<(f64, f64, f64)> {
            let values = scan(|p, s, limit| (p * s + 0.1, until(p * s > limit)), outputs_info = x0, non_sequences = [s, limit], n_steps = 12, checkpoints = 2);
            let cost = sum(values * values);
            let (g0, gs) = grad(cost, [x0, s]);
            Ok((cost, g0, gs))
        }

        /// The tutorial's RNN: sequence taps [-4, 0], a MITSOT (taps [-3, -1]) and a SITSOT.
        #[allow(clippy::too_many_arguments, clippy::type_complexity)]
        pub fn tutorial_rnn(u: ArrayView2<f64>, x0: ArrayView2<f64>, y0: ArrayView1<f64>, w: ArrayView2<f64>, w_in_1: ArrayView2<f64>, w_in_2: ArrayView2<f64>, w_feedback: ArrayView2<f64>, w_out: ArrayView2<f64>) -> Result<(f64, Array2<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>)> {
            let (x_vals, y_vals) = scan(
                |u_tm4, u_t, x_tm3, x_tm1, y_tm1, w, w_in_1, w_in_2, w_feedback, w_out| {
                    let x_t = tanh(x_tm1.dot(w) + u_t.dot(w_in_1) + u_tm4.dot(w_in_2) + y_tm1.dot(w_feedback));
                    (x_t, x_tm3.dot(w_out))
                },
                sequences = [taps(u, [-4, 0])],
                outputs_info = [taps(x0, [-3, -1]), y0],
                non_sequences = [w, w_in_1, w_in_2, w_feedback, w_out],
            );
            let cost = sum(x_vals) + sum(y_vals * y_vals);
            let (gu, gx0, gy0, gw, g1, g2, gf, go) = grad(cost, [u, x0, y0, w, w_in_1, w_in_2, w_feedback, w_out]);
            Ok((cost, gu, gx0, gy0, gw, g1, g2, gf, go))
        }

        #[allow(clippy::too_many_arguments, clippy::type_complexity)]
        pub fn tutorial_rnn_ck2(u: ArrayView2<f64>, x0: ArrayView2<f64>, y0: ArrayView1<f64>, w: ArrayView2<f64>, w_in_1: ArrayView2<f64>, w_in_2: ArrayView2<f64>, w_feedback: ArrayView2<f64>, w_out: ArrayView2<f64>) -> Result<(f64, Array2<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>)> {
            let (x_vals, y_vals) = scan(
                |u_tm4, u_t, x_tm3, x_tm1, y_tm1, w, w_in_1, w_in_2, w_feedback, w_out| {
                    let x_t = tanh(x_tm1.dot(w) + u_t.dot(w_in_1) + u_tm4.dot(w_in_2) + y_tm1.dot(w_feedback));
                    (x_t, x_tm3.dot(w_out))
                },
                sequences = [taps(u, [-4, 0])],
                outputs_info = [taps(x0, [-3, -1]), y0],
                non_sequences = [w, w_in_1, w_in_2, w_feedback, w_out],
                checkpoints = 2,
            );
            let cost = sum(x_vals) + sum(y_vals * y_vals);
            let (gu, gx0, gy0, gw, g1, g2, gf, go) = grad(cost, [u, x0, y0, w, w_in_1, w_in_2, w_feedback, w_out]);
            Ok((cost, gu, gx0, gy0, gw, g1, g2, gf, go))
        }

        /// An LSTM of hidden size 2: two SITSOT outputs, one read only at its last step.
        pub fn lstm(x: ArrayView2<f64>, h0: ArrayView1<f64>, c0: ArrayView1<f64>, wx: ArrayView2<f64>, wh: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array1<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>)> {
            let (hs, cs) = scan(
                |x_t, h, c, wx, wh, b| {
                    let z = dot(x_t, wx) + dot(h, wh) + b;
                    let c_new = sigmoid(z[2..4]) * c + sigmoid(z[0..2]) * tanh(z[6..8]);
                    (sigmoid(z[4..6]) * tanh(c_new), c_new)
                },
                sequences = x,
                outputs_info = [h0, c0],
                non_sequences = [wx, wh, b],
            );
            let cost = sum(hs) + sum(cs[-1]);
            let (gh0, gc0, gwx, gwh, gb) = grad(cost, [h0, c0, wx, wh, b]);
            Ok((cost, gh0, gc0, gwx, gwh, gb))
        }

        pub fn lstm_ck4(x: ArrayView2<f64>, h0: ArrayView1<f64>, c0: ArrayView1<f64>, wx: ArrayView2<f64>, wh: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array1<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>)> {
            let (hs, cs) = scan(
                |x_t, h, c, wx, wh, b| {
                    let z = dot(x_t, wx) + dot(h, wh) + b;
                    let c_new = sigmoid(z[2..4]) * c + sigmoid(z[0..2]) * tanh(z[6..8]);
                    (sigmoid(z[4..6]) * tanh(c_new), c_new)
                },
                sequences = x,
                outputs_info = [h0, c0],
                non_sequences = [wx, wh, b],
                checkpoints = 4,
            );
            let cost = sum(hs) + sum(cs[-1]);
            let (gh0, gc0, gwx, gwh, gb) = grad(cost, [h0, c0, wx, wh, b]);
            Ok((cost, gh0, gc0, gwx, gwh, gb))
        }

        /// A map (no state to store) with a non-sequence.
        pub fn mapped(x: ArrayView1<f64>, w: f64) -> Result<(f64, Array1<f64>, f64)> {
            let ys = map(|x, w| sin(x * w) * x, sequences = x, non_sequences = w);
            let cost = sum(ys * ys);
            let (gx, gw) = grad(cost, [x, w]);
            Ok((cost, gx, gw))
        }

        pub fn mapped_ck2(x: ArrayView1<f64>, w: f64) -> Result<(f64, Array1<f64>, f64)> {
            let ys = map(|x, w| sin(x * w) * x, sequences = x, non_sequences = w, checkpoints = 2);
            let cost = sum(ys * ys);
            let (gx, gw) = grad(cost, [x, w]);
            Ok((cost, gx, gw))
        }

        /// An integer counter beside a float state (a checkpoint holds both), a cost
        /// reading two chosen steps.
        pub fn chosen_steps(x0: f64, a: f64, n: usize) -> Result<(f64, f64, f64)> {
            let (k, xs) = scan(|k, p, a| (k + 1, p * a + sin(p) + (k as f64) * 0.1), outputs_info = [0i64, x0], non_sequences = a, n_steps = n);
            let cost = xs[1] + xs[-1] + (k[-1] as f64);
            let (g0, ga) = grad(cost, [x0, a]);
            Ok((cost, g0, ga))
        }

        pub fn chosen_steps_ck4(x0: f64, a: f64, n: usize) -> Result<(f64, f64, f64)> {
            let (k, xs) = scan(|k, p, a| (k + 1, p * a + sin(p) + (k as f64) * 0.1), outputs_info = [0i64, x0], non_sequences = a, n_steps = n, checkpoints = 4);
            let cost = xs[1] + xs[-1] + (k[-1] as f64);
            let (g0, ga) = grad(cost, [x0, a]);
            Ok((cost, g0, ga))
        }

        /// A scan in the step of a checkpointed one.
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

        pub fn nested_ck2(m: ArrayView2<f64>, h0: f64, w: f64) -> Result<(f64, Array2<f64>, f64, f64)> {
            let out = scan(
                |row, h, w| {
                    let inner = scan(|x, acc, w| tanh(acc * w + x), sequences = row, outputs_info = h, non_sequences = w);
                    inner[-1] * 0.5 + h
                },
                sequences = m,
                outputs_info = h0,
                non_sequences = w,
                checkpoints = 2,
            );
            let cost = sum(out * out);
            let (gm, gh0, gw) = grad(cost, [m, h0, w]);
            Ok((cost, gm, gh0, gw))
        }

        /// Checkpoints on the scan inside the step: its adjoint is built in the outer
        /// backward step.
        pub fn nested_inner_ck2(m: ArrayView2<f64>, h0: f64, w: f64) -> Result<(f64, Array2<f64>, f64, f64)> {
            let out = scan(
                |row, h, w| {
                    let inner = scan(|x, acc, w| tanh(acc * w + x), sequences = row, outputs_info = h, non_sequences = w, checkpoints = 2);
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

        /// `reduce`: only the last state is read (an encoder), PyTensor's own case.
        pub fn reduced(x: ArrayView1<f64>, a0: f64, w: f64) -> Result<(f64, Array1<f64>, f64, f64)> {
            let last = reduce(|x_t, acc, w| tanh(acc * w + x_t), sequences = x, outputs_info = a0, non_sequences = w);
            let cost = last * last;
            let (gx, ga, gw) = grad(cost, [x, a0, w]);
            Ok((cost, gx, ga, gw))
        }

        pub fn reduced_ck3(x: ArrayView1<f64>, a0: f64, w: f64) -> Result<(f64, Array1<f64>, f64, f64)> {
            let last = reduce(|x_t, acc, w| tanh(acc * w + x_t), sequences = x, outputs_info = a0, non_sequences = w, checkpoints = 3);
            let cost = last * last;
            let (gx, ga, gw) = grad(cost, [x, a0, w]);
            Ok((cost, gx, ga, gw))
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

/// Results equal within 1e-12, relative to 1 or the value's size.
fn same(what: &str, plain: &[ArrayD<f64>], checkpointed: &[ArrayD<f64>]) {
    assert_eq!(plain.len(), checkpointed.len(), "{what}: number of results");
    for (k, (p, c)) in plain.iter().zip(checkpointed).enumerate() {
        assert_eq!(p.shape(), c.shape(), "{what}: result {k}: shape");
        for (i, (a, b)) in p.iter().zip(c.iter()).enumerate() {
            assert!(
                (a - b).abs() <= 1e-12 * a.abs().max(1.0),
                "{what}: result {k}, element {i}: {a} without checkpoints, {b} with\n {p}\n {c}"
            );
        }
    }
}

/// Runs both functions of a pair on the same arguments, checks they agree within 1e-12 and
/// that the evaluator agrees with the checkpointed one (and the rewrites leave it alone;
/// with no step, only the evaluator: `second_opinion`'s variants cut a weight to no row,
/// which a product hoisted before the loop rejects where the loop, running no step, did
/// not read it).
fn pair(
    what: &str,
    function: &str,
    plain: Vec<ArrayD<f64>>,
    checkpointed: Vec<ArrayD<f64>>,
    args: Vec<Value>,
    steps: usize,
) {
    same(what, &plain, &checkpointed);
    let out: Vec<Value> = checkpointed.iter().map(Value::from).collect();
    if steps == 0 {
        common::agree(out, common::evaluate(programs::SOURCE, function, args));
    } else {
        second_opinion(programs::SOURCE, function, args, out);
    }
}

type Elman = fn(
    ArrayView2<f64>,
    ArrayView1<f64>,
    ArrayView2<f64>,
    ArrayView2<f64>,
    ArrayView1<f64>,
) -> Result<(
    f64,
    Array2<f64>,
    Array1<f64>,
    Array2<f64>,
    Array2<f64>,
    Array1<f64>,
)>;

fn elman_inputs(t: usize) -> [ArrayD<f64>; 5] {
    [
        matrix(t, 3, 1).into_dyn(),
        matrix(1, 4, 2).row(0).to_owned().into_dyn(),
        matrix(3, 4, 3).into_dyn(),
        matrix(4, 4, 4).into_dyn(),
        matrix(1, 4, 5).row(0).to_owned().into_dyn(),
    ]
}

fn run_elman(f: Elman, p: &[ArrayD<f64>]) -> Vec<ArrayD<f64>> {
    let (c, a, b, w, u, bb) = f(v2(&p[0]), v1(&p[1]), v2(&p[2]), v2(&p[3]), v1(&p[4])).unwrap();
    vec![c.d(), a.d(), b.d(), w.d(), u.d(), bb.d()]
}

#[test]
fn elman_with_checkpoints_every_3_steps() {
    // 0 steps, fewer than N, a multiple of N, and 1 or 2 beyond one.
    for t in [0usize, 1, 2, 3, 4, 5, 6, 7, 10] {
        let p = elman_inputs(t);
        let args: Vec<Value> = p.iter().map(Value::from).collect();
        pair(
            &format!("elman, checkpoints = 3, T = {t}"),
            "elman_ck3",
            run_elman(programs::elman, &p),
            run_elman(programs::elman_ck3, &p),
            args,
            t,
        );
    }
}

#[test]
fn elman_with_a_checkpoint_every_step_or_fewer_steps_than_a_segment() {
    for t in [0usize, 1, 5, 15, 16, 17] {
        let p = elman_inputs(t);
        let plain = run_elman(programs::elman, &p);
        for (function, f) in [
            ("elman_ck1", programs::elman_ck1 as Elman),
            ("elman_ck16", programs::elman_ck16),
        ] {
            let args: Vec<Value> = p.iter().map(Value::from).collect();
            let what = format!("{function}, T = {t}");
            pair(&what, function, plain.clone(), run_elman(f, &p), args, t);
        }
    }
}

#[test]
fn elman_against_finite_differences_and_forward_mode() {
    let inputs = elman_inputs(7);
    let run = |p: &[ArrayD<f64>]| run_elman(programs::elman_ck3, p);
    let results = run(&inputs);
    check_gradient(&|p| s0(&run(p)[0]), &inputs, &results[1..]);
    let args: Vec<Value> = inputs.iter().map(Value::from).collect();
    let out: Vec<Value> = results.iter().map(Value::from).collect();
    let pairs = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)];
    forward_mode_agrees(programs::SOURCE, "elman_ck3", &args, &out, &pairs);
}

type Mitsot =
    fn(ArrayView2<f64>, ArrayView1<f64>, usize) -> Result<(f64, Array2<f64>, Array1<f64>)>;

#[test]
fn a_mitsot_checkpoint_holds_the_tap_window() {
    let init = matrix(3, 2, 7) * 2.0;
    let a = arr1(&[0.7, -1.1]);
    for n in [0usize, 1, 2, 3, 4, 5, 8, 9] {
        let run = |f: Mitsot| {
            let (c, gi, ga) = f(init.view(), a.view(), n).unwrap();
            vec![c.d(), gi.d(), ga.d()]
        };
        let plain = run(programs::mitsot);
        for (function, f) in [
            ("mitsot_ck2", programs::mitsot_ck2 as Mitsot),
            ("mitsot_ck4", programs::mitsot_ck4),
        ] {
            let args = vec![Value::from(&init), Value::from(&a), Value::from(n as i64)];
            let what = format!("{function}, n = {n}");
            pair(&what, function, plain.clone(), run(f), args, n);
        }
    }
    // Finite differences and forward mode, 7 steps: three segments of 2 and a tail.
    let inputs = [init.clone().into_dyn(), a.clone().into_dyn()];
    let run = |p: &[ArrayD<f64>]| {
        let (c, gi, ga) = programs::mitsot_ck2(v2(&p[0]), v1(&p[1]), 7).unwrap();
        vec![c.d(), gi.d(), ga.d()]
    };
    let results = run(&inputs);
    check_gradient(&|p| s0(&run(p)[0]), &inputs, &results[1..]);
    let args = vec![Value::from(&init), Value::from(&a), Value::from(7i64)];
    let out: Vec<Value> = results.iter().map(Value::from).collect();
    forward_mode_agrees(
        programs::SOURCE,
        "mitsot_ck2",
        &args,
        &out,
        &[(0, 1), (1, 2)],
    );
}

type SeqTaps = fn(ArrayView1<f64>, f64, f64, usize) -> Result<(f64, Array1<f64>, f64, f64)>;

#[test]
fn sequence_taps_past_and_future_both_ways() {
    let x = arr1(&[0.2, -0.5, 1.1, 0.7, -0.3, 0.9, 0.4, -1.2, 0.6, 0.1]);
    // The sequence allows 10 - 3 = 7 steps; fewer are taken.
    for n in [0usize, 1, 2, 3, 4, 5, 7] {
        for (plain, checkpointed, function) in [
            (
                programs::seq_taps as SeqTaps,
                programs::seq_taps_ck2 as SeqTaps,
                "seq_taps_ck2",
            ),
            (
                programs::seq_taps_backwards,
                programs::seq_taps_backwards_ck2,
                "seq_taps_backwards_ck2",
            ),
        ] {
            let run = |f: SeqTaps| {
                let (c, gx, ga, gw) = f(x.view(), 0.4, 0.8, n).unwrap();
                vec![c.d(), gx.d(), ga.d(), gw.d()]
            };
            let args = vec![
                Value::from(&x),
                Value::from(0.4),
                Value::from(0.8),
                Value::from(n as i64),
            ];
            let what = format!("{function}, n = {n}");
            pair(&what, function, run(plain), run(checkpointed), args, n);
        }
    }
    // Finite differences going backwards, 5 steps.
    let inputs = [x.clone().into_dyn(), 0.4.d(), 0.8.d()];
    let run = |p: &[ArrayD<f64>]| {
        let (c, gx, ga, gw) =
            programs::seq_taps_backwards_ck2(v1(&p[0]), s0(&p[1]), s0(&p[2]), 5).unwrap();
        vec![c.d(), gx.d(), ga.d(), gw.d()]
    };
    let results = run(&inputs);
    check_gradient(&|p| s0(&run(p)[0]), &inputs, &results[1..]);
}

#[test]
fn go_backwards_as_a_run_time_flag() {
    for len in [2usize, 3, 4, 5, 8] {
        let x = Array::from_iter((0..len).map(|i| (i as f64 * 0.7).sin()));
        for back in [false, true] {
            let run = |f: Flagged| {
                let (c, gx, ga) = f(x.view(), 0.4, back).unwrap();
                vec![c.d(), gx.d(), ga.d()]
            };
            let args = vec![Value::from(&x), Value::from(0.4), Value::from(back)];
            pair(
                &format!("flagged_ck3, {len} rows, back = {back}"),
                "flagged_ck3",
                run(programs::flagged),
                run(programs::flagged_ck3),
                args,
                len - 1,
            );
        }
    }
}

#[test]
fn until_backpropagates_over_the_steps_taken() {
    // From x0 = 1 with s = 1.5: 1.6, 2.5, 3.85, 5.875, 8.9125, ... The limit stops the
    // loop after 1 to 5 steps; 1e9 lets it run its 12 steps.
    for limit in [1.0, 2.0, 3.0, 5.0, 8.0, 1e9] {
        let run = |f: Until| {
            let (c, g0, gs) = f(1.0, 1.5, limit).unwrap();
            vec![c.d(), g0.d(), gs.d()]
        };
        let args = vec![Value::from(1.0), Value::from(1.5), Value::from(limit)];
        pair(
            &format!("until_loop_ck2, limit {limit}"),
            "until_loop_ck2",
            run(programs::until_loop),
            run(programs::until_loop_ck2),
            args,
            1,
        );
    }
    let run = |p: &[ArrayD<f64>]| {
        let (c, g0, gs) = programs::until_loop_ck2(s0(&p[0]), s0(&p[1]), 5.0).unwrap();
        vec![c.d(), g0.d(), gs.d()]
    };
    let inputs = [1.0.d(), 1.5.d()];
    let results = run(&inputs);
    check_gradient(&|p| s0(&run(p)[0]), &inputs, &results[1..]);
}

#[test]
fn tutorial_rnn_with_sequence_and_output_taps() {
    for rows in [4usize, 5, 6, 7, 9, 12] {
        let inputs = [
            matrix(rows, 2, 21).into_dyn(),
            matrix(3, 3, 22).into_dyn(),
            matrix(1, 2, 23).row(0).to_owned().into_dyn(),
            matrix(3, 3, 24).into_dyn(),
            matrix(2, 3, 25).into_dyn(),
            matrix(2, 3, 26).into_dyn(),
            matrix(2, 3, 27).into_dyn(),
            matrix(3, 2, 28).into_dyn(),
        ];
        type Rnn = fn(
            ArrayView2<f64>,
            ArrayView2<f64>,
            ArrayView1<f64>,
            ArrayView2<f64>,
            ArrayView2<f64>,
            ArrayView2<f64>,
            ArrayView2<f64>,
            ArrayView2<f64>,
        ) -> Result<(
            f64,
            Array2<f64>,
            Array2<f64>,
            Array1<f64>,
            Array2<f64>,
            Array2<f64>,
            Array2<f64>,
            Array2<f64>,
            Array2<f64>,
        )>;
        let run = |f: Rnn, p: &[ArrayD<f64>]| {
            let r = f(
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
        let args: Vec<Value> = inputs.iter().map(Value::from).collect();
        let checkpointed = run(programs::tutorial_rnn_ck2, &inputs);
        pair(
            &format!("tutorial_rnn_ck2, {rows} rows"),
            "tutorial_rnn_ck2",
            run(programs::tutorial_rnn, &inputs),
            checkpointed.clone(),
            args.clone(),
            rows - 4,
        );
        if rows == 9 {
            check_gradient(
                &|p| s0(&run(programs::tutorial_rnn_ck2, p)[0]),
                &inputs,
                &checkpointed[1..],
            );
            let out: Vec<Value> = checkpointed.iter().map(Value::from).collect();
            let pairs: Vec<(usize, usize)> = (0..8).map(|k| (k, k + 1)).collect();
            forward_mode_agrees(programs::SOURCE, "tutorial_rnn_ck2", &args, &out, &pairs);
        }
    }
}

#[test]
fn lstm_with_a_state_read_at_its_last_step() {
    for t in [1usize, 4, 6, 9] {
        let x = matrix(t, 3, 11);
        let p = [
            (matrix(1, 2, 12).row(0).to_owned() * 2.0).into_dyn(),
            (matrix(1, 2, 13).row(0).to_owned() * 2.0).into_dyn(),
            (matrix(3, 8, 14) * 2.0).into_dyn(),
            (matrix(2, 8, 15) * 2.0).into_dyn(),
            matrix(1, 8, 16).row(0).to_owned().into_dyn(),
        ];
        type Lstm = fn(
            ArrayView2<f64>,
            ArrayView1<f64>,
            ArrayView1<f64>,
            ArrayView2<f64>,
            ArrayView2<f64>,
            ArrayView1<f64>,
        ) -> Result<(
            f64,
            Array1<f64>,
            Array1<f64>,
            Array2<f64>,
            Array2<f64>,
            Array1<f64>,
        )>;
        let run = |f: Lstm| {
            let (c, a, b, wx, wh, bb) = f(
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
        args.extend(p.iter().map(Value::from));
        let what = format!("lstm_ck4, T = {t}");
        pair(
            &what,
            "lstm_ck4",
            run(programs::lstm),
            run(programs::lstm_ck4),
            args,
            t,
        );
    }
}

#[test]
fn a_map_an_integer_state_a_nested_scan_and_reduce() {
    for len in [0usize, 1, 3, 4, 5] {
        let x = Array::from_iter((0..len).map(|i| 0.3 + (i as f64 * 1.3).cos()));
        let run = |f: Mapped| {
            let (c, gx, gw) = f(x.view(), 1.3).unwrap();
            vec![c.d(), gx.d(), gw.d()]
        };
        let args = vec![Value::from(&x), Value::from(1.3)];
        let what = format!("mapped_ck2, {len} rows");
        pair(
            &what,
            "mapped_ck2",
            run(programs::mapped),
            run(programs::mapped_ck2),
            args,
            len,
        );
        if len > 0 {
            let run = |f: SeqTaps3| {
                let (c, gx, ga, gw) = f(x.view(), 0.2, 0.9).unwrap();
                vec![c.d(), gx.d(), ga.d(), gw.d()]
            };
            let args = vec![Value::from(&x), Value::from(0.2), Value::from(0.9)];
            let what = format!("reduced_ck3, {len} rows");
            let (plain, ck) = (run(programs::reduced), run(programs::reduced_ck3));
            pair(&what, "reduced_ck3", plain, ck, args, len);
        }
    }
    for n in [2usize, 4, 6, 7] {
        let run = |f: Chosen| {
            let (c, g0, ga) = f(0.3, 0.9, n).unwrap();
            vec![c.d(), g0.d(), ga.d()]
        };
        let args = vec![Value::from(0.3), Value::from(0.9), Value::from(n as i64)];
        let what = format!("chosen_steps_ck4, n = {n}");
        let (plain, ck) = (run(programs::chosen_steps), run(programs::chosen_steps_ck4));
        pair(&what, "chosen_steps_ck4", plain, ck, args, n);
    }
    for rows in [1usize, 2, 3, 5] {
        let m = matrix(rows, 3, 31);
        let run = |f: Nested| {
            let (c, gm, gh, gw) = f(m.view(), 0.3, 0.8).unwrap();
            vec![c.d(), gm.d(), gh.d(), gw.d()]
        };
        let args = vec![Value::from(&m), Value::from(0.3), Value::from(0.8)];
        let what = format!("nested_ck2, {rows} rows");
        let plain = run(programs::nested);
        pair(
            &what,
            "nested_ck2",
            plain.clone(),
            run(programs::nested_ck2),
            args.clone(),
            rows,
        );
        let what = format!("nested_inner_ck2, {rows} rows");
        pair(
            &what,
            "nested_inner_ck2",
            plain,
            run(programs::nested_inner_ck2),
            args,
            rows,
        );
    }
}

type SeqTaps3 = fn(ArrayView1<f64>, f64, f64) -> Result<(f64, Array1<f64>, f64, f64)>;
type Flagged = fn(ArrayView1<f64>, f64, bool) -> Result<(f64, Array1<f64>, f64)>;
type Until = fn(f64, f64, f64) -> Result<(f64, f64, f64)>;
type Mapped = fn(ArrayView1<f64>, f64) -> Result<(f64, Array1<f64>, f64)>;
type Chosen = fn(f64, f64, usize) -> Result<(f64, f64, f64)>;
type Nested = fn(ArrayView2<f64>, f64, f64) -> Result<(f64, Array2<f64>, f64, f64)>;

fn s0(a: &ArrayD<f64>) -> f64 {
    a.iter().copied().next().unwrap()
}
