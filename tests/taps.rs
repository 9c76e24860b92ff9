//! Taps: MITSOT outputs (several past steps of an output, fed from a multi-row initial
//! state) and sequence taps (past, present and future rows of a sequence), checked against
//! hand-written loops and against the reference evaluator.
//!
//! PyTensor's rules (shared/tutorial/api_scan.txt):
//! - an output with taps [-5, -2, -1] needs an initial state of 5 rows, `init[0]` being
//!   `output[-5]` and `init[4]` being `output[-1]`; the result holds only the new steps;
//! - a sequence with taps `ks` is read at step t as `seq[t + past + k]` for each k, with
//!   `past = -min(min(ks), 0)`, and runs `len - span` steps, with
//!   `span = past + max(max(ks), 0)`.

mod common;

use common::{assert_allclose, second_opinion, Value};
use scan_runtime::prelude::*;

// ---------------------------------------------------------------------------------------
// Fibonacci: an output with taps [-2, -1].
// ---------------------------------------------------------------------------------------

mod fibonacci {
    scan_tests::program! {
        /// fib[t] = fib[t-2] + fib[t-1], starting from `init` = [fib[-2], fib[-1]].
        pub fn fib_i64(init: ArrayView1<i64>, n: usize) -> Result<Array1<i64>> {
            let fib = scan(
                |f_tm2, f_tm1| f_tm2 + f_tm1,
                outputs_info = taps(init, [-2, -1]),
                n_steps = n,
            );
            Ok(fib)
        }

        pub fn fib_f64(init: ArrayView1<f64>, n: usize) -> Result<Array1<f64>> {
            let fib = scan(
                |f_tm2, f_tm1| f_tm2 + f_tm1,
                outputs_info = [taps(init, [-2, -1])],
                n_steps = n,
            );
            Ok(fib)
        }
    }
}

/// The hand-written loop: the n values after the two initial ones.
fn fibonacci_loop(a: i64, b: i64, n: usize) -> Vec<i64> {
    let mut history = vec![a, b];
    for t in 0..n {
        let next = history[t] + history[t + 1];
        history.push(next);
    }
    history[2..].to_vec()
}

#[test]
fn fibonacci_i64_with_taps_minus_two_minus_one() {
    let init = array![0i64, 1];
    let got = fibonacci::fib_i64(init.view(), 10).unwrap();
    assert_eq!(got.to_vec(), vec![1, 2, 3, 5, 8, 13, 21, 34, 55, 89]);
    assert_eq!(got.to_vec(), fibonacci_loop(0, 1, 10));
    second_opinion(
        fibonacci::SOURCE,
        "fib_i64",
        vec![Value::from(init.clone()), Value::from(10i64)],
        vec![Value::from(got)],
    );

    // A longer run, and another start: the order of the two initial rows matters.
    let got = fibonacci::fib_i64(init.view(), 60).unwrap();
    assert_eq!(got.to_vec(), fibonacci_loop(0, 1, 60));
    assert_eq!(got[59], 2_504_730_781_961);
    let swapped = array![1i64, 0];
    let got = fibonacci::fib_i64(swapped.view(), 6).unwrap();
    // [1, 0] -> 1, 1, 2, 3, 5, 8
    assert_eq!(got.to_vec(), vec![1, 1, 2, 3, 5, 8]);
    assert_eq!(got.to_vec(), fibonacci_loop(1, 0, 6));
    second_opinion(
        fibonacci::SOURCE,
        "fib_i64",
        vec![Value::from(swapped), Value::from(6i64)],
        vec![Value::from(got)],
    );
}

#[test]
fn fibonacci_f64_with_taps_minus_two_minus_one() {
    let init = array![0.0f64, 1.0];
    let got = fibonacci::fib_f64(init.view(), 12).unwrap();
    assert_eq!(
        got.to_vec(),
        vec![1., 2., 3., 5., 8., 13., 21., 34., 55., 89., 144., 233.]
    );
    let expected: Vec<f64> = fibonacci_loop(0, 1, 12).iter().map(|&v| v as f64).collect();
    assert_eq!(got.to_vec(), expected);
    second_opinion(
        fibonacci::SOURCE,
        "fib_f64",
        vec![Value::from(init.clone()), Value::from(12i64)],
        vec![Value::from(got)],
    );

    // Non-integer start values.
    let init = array![0.5f64, -0.25];
    let got = fibonacci::fib_f64(init.view(), 5).unwrap();
    // 0.25, 0.0, 0.25, 0.25, 0.5
    assert_eq!(got.to_vec(), vec![0.25, 0.0, 0.25, 0.25, 0.5]);
    second_opinion(
        fibonacci::SOURCE,
        "fib_f64",
        vec![Value::from(init), Value::from(5i64)],
        vec![Value::from(got)],
    );
}

// ---------------------------------------------------------------------------------------
// Taps [-5, -2, -1]: the ordering of the initial state's rows.
// ---------------------------------------------------------------------------------------

mod deep_taps {
    scan_tests::program! {
        /// x[t] = x[t-5] + 10 x[t-2] + 100 x[t-1]; init[0] is x[-5], init[4] is x[-1].
        pub fn deep(init: ArrayView1<i64>, n: usize) -> Result<Array1<i64>> {
            let x = scan(
                |x_tm5, x_tm2, x_tm1| x_tm5 + x_tm2 * 10 + x_tm1 * 100,
                outputs_info = taps(init, [-5, -2, -1]),
                n_steps = n,
            );
            Ok(x)
        }

        /// The same taps listed in another order: the step's arguments follow the list.
        pub fn deep_reordered(init: ArrayView1<i64>, n: usize) -> Result<Array1<i64>> {
            let x = scan(
                |x_tm1, x_tm5, x_tm2| x_tm5 + x_tm2 * 10 + x_tm1 * 100,
                outputs_info = taps(init, [-1, -5, -2]),
                n_steps = n,
            );
            Ok(x)
        }

        /// Fibonacci-like with an initial state longer than the taps need.
        pub fn two_back(init: ArrayView1<i64>, n: usize) -> Result<Array1<i64>> {
            let x = scan(
                |x_tm2, x_tm1| x_tm2 * 10 + x_tm1,
                outputs_info = taps(init, [-2, -1]),
                n_steps = n,
            );
            Ok(x)
        }

        /// A step that returns one of its own taps: x[t] = x[t-2], vector rows.
        pub fn period_two(init: ArrayView2<f64>, n: usize) -> Result<Array2<f64>> {
            Ok(scan(|x_tm2, _x_tm1| x_tm2, outputs_info = taps(init, [-2, -1]), n_steps = n))
        }

        /// Vector rows: init is 5 x d, each step a vector of d.
        pub fn deep_rows(init: ArrayView2<f64>, n: usize) -> Result<Array2<f64>> {
            let x = scan(
                |x_tm5, x_tm2, x_tm1| x_tm5 + x_tm2 * 0.5 - x_tm1 * 0.25,
                outputs_info = taps(init, [-5, -2, -1]),
                n_steps = n,
            );
            Ok(x)
        }
    }
}

/// A hand-written loop over a history that starts with the initial rows.
fn deep_loop(init: &[i64], n: usize) -> Vec<i64> {
    let mut history = init.to_vec();
    for _ in 0..n {
        let len = history.len();
        let next = history[len - 5] + history[len - 2] * 10 + history[len - 1] * 100;
        history.push(next);
    }
    history[init.len()..].to_vec()
}

#[test]
fn taps_minus_five_two_one_read_the_initial_rows_in_order() {
    let init = array![1i64, 2, 3, 4, 5];
    let got = deep_taps::deep(init.view(), 6).unwrap();
    // Step 0: x[-5] = 1, x[-2] = 4, x[-1] = 5 -> 1 + 40 + 500.
    assert_eq!(got[0], 541);
    // Step 1: x[-4] = 2, x[-1] = 5, x[0] = 541 -> 2 + 50 + 54100.
    assert_eq!(got[1], 54152);
    // Step 2: x[-3] = 3, x[0] = 541, x[1] = 54152 -> 3 + 5410 + 5415200.
    assert_eq!(got[2], 5420613);
    assert_eq!(got.to_vec(), deep_loop(&[1, 2, 3, 4, 5], 6));
    second_opinion(
        deep_taps::SOURCE,
        "deep",
        vec![Value::from(init.clone()), Value::from(6i64)],
        vec![Value::from(got.clone())],
    );

    let reordered = deep_taps::deep_reordered(init.view(), 6).unwrap();
    assert_eq!(reordered, got);
    second_opinion(
        deep_taps::SOURCE,
        "deep_reordered",
        vec![Value::from(init), Value::from(6i64)],
        vec![Value::from(reordered)],
    );

    // Only init[0] is non-zero: it must come back through the -5 tap at step 0 and
    // nowhere else, which a reversed initial state would break.
    let init = array![7i64, 0, 0, 0, 0];
    let got = deep_taps::deep(init.view(), 7).unwrap();
    // x[0] = x[-5] + 0 + 0 = 7; x[1] = x[-4] + 10 x[-1] + 100 x[0] = 700.
    assert_eq!(got.to_vec(), deep_loop(&[7, 0, 0, 0, 0], 7));
    assert_eq!(got[0], 7);
    assert_eq!(got[1], 700);
    second_opinion(
        deep_taps::SOURCE,
        "deep",
        vec![Value::from(init), Value::from(7i64)],
        vec![Value::from(got)],
    );
}

#[test]
fn taps_minus_five_two_one_on_vector_rows() {
    let init = Array2::from_shape_fn((5, 3), |(i, j)| (i * 3 + j) as f64 + 1.0);
    let got = deep_taps::deep_rows(init.view(), 8).unwrap();
    assert_eq!(got.dim(), (8, 3));
    let mut history: Vec<Array1<f64>> = init.outer_iter().map(|r| r.to_owned()).collect();
    for _ in 0..8 {
        let len = history.len();
        let next = &history[len - 5] + &(&history[len - 2] * 0.5) - &(&history[len - 1] * 0.25);
        history.push(next);
    }
    // Step 0 by hand: init[0] + 0.5 init[3] - 0.25 init[4] = [1,2,3] + [5,5.5,6] - [3.25,3.5,3.75]
    assert_allclose(got.row(0).as_slice().unwrap(), &[2.75, 4.0, 5.25], 1e-12);
    for t in 0..8 {
        assert_allclose(
            got.row(t).as_slice().unwrap(),
            history[t + 5].as_slice().unwrap(),
            1e-12,
        );
    }
    second_opinion(
        deep_taps::SOURCE,
        "deep_rows",
        vec![Value::from(init), Value::from(8i64)],
        vec![Value::from(got)],
    );
}

// ---------------------------------------------------------------------------------------
// Sequence taps, including future ones.
// ---------------------------------------------------------------------------------------

mod sequence_taps {
    scan_tests::program! {
        /// taps [-1, 0, 1]: step t reads seq[t], seq[t+1], seq[t+2]; len - 2 steps.
        pub fn window(seq: ArrayView1<f64>) -> Result<Array1<f64>> {
            let out = scan(
                |a, b, c| a - 10.0 * b + 100.0 * c,
                sequences = taps(seq, [-1, 0, 1]),
                outputs_info = None,
            );
            Ok(out)
        }

        /// A future tap alone: step t reads seq[t+2]; len - 2 steps.
        pub fn ahead(seq: ArrayView1<i64>) -> Result<Array1<i64>> {
            let out = scan(|c| c * 3, sequences = [taps(seq, [2])], outputs_info = None);
            Ok(out)
        }

        /// Taps listed out of order, past and future: [1, -2].
        pub fn unordered(seq: ArrayView1<i64>) -> Result<Array1<i64>> {
            let out = scan(|next, back2| next * 100 + back2, sequences = taps(seq, [1, -2]));
            Ok(out)
        }

        /// Rows of a matrix with taps [-2, 1]: step t reads m[t] and m[t+3]; len - 3 steps.
        pub fn rows(m: ArrayView2<f64>) -> Result<(Array2<f64>, Array1<f64>)> {
            let (diff, dots) = scan(
                |back, ahead| (back - ahead * 10.0, back.dot(ahead)),
                sequences = taps(m, [-2, 1]),
                outputs_info = [None, None],
            );
            Ok((diff, dots))
        }

        /// A tapped sequence next to a plain one: the shortest decides the steps.
        pub fn mixed(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Result<Array1<f64>> {
            let out = scan(|a0, a2, b0| a0 + a2 * 10.0 + b0 * 100.0, sequences = [taps(a, [0, 2]), b]);
            Ok(out)
        }
    }
}

#[test]
fn sequence_taps_minus_one_zero_one() {
    let seq = array![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let got = sequence_taps::window(seq.view()).unwrap();
    // 6 rows, span 2: 4 steps.
    // t = 0: 1 - 20 + 300 = 281; t = 1: 2 - 30 + 400 = 372; ...
    assert_eq!(got.to_vec(), vec![281.0, 372.0, 463.0, 554.0]);
    let expected: Vec<f64> = (0..seq.len() - 2)
        .map(|t| seq[t] - 10.0 * seq[t + 1] + 100.0 * seq[t + 2])
        .collect();
    assert_eq!(got.to_vec(), expected);
    second_opinion(
        sequence_taps::SOURCE,
        "window",
        vec![Value::from(seq)],
        vec![Value::from(got)],
    );

    // Exactly the window: one step.
    let seq = array![7.0, -1.0, 0.5];
    let got = sequence_taps::window(seq.view()).unwrap();
    assert_eq!(got.to_vec(), vec![7.0 + 10.0 + 50.0]);
    second_opinion(
        sequence_taps::SOURCE,
        "window",
        vec![Value::from(seq)],
        vec![Value::from(got)],
    );
}

#[test]
fn a_future_tap_alone() {
    let seq = array![1i64, 2, 3, 4, 5, 6, 7];
    let got = sequence_taps::ahead(seq.view()).unwrap();
    assert_eq!(got.to_vec(), vec![9, 12, 15, 18, 21]);
    let expected: Vec<i64> = (0..seq.len() - 2).map(|t| seq[t + 2] * 3).collect();
    assert_eq!(got.to_vec(), expected);
    second_opinion(
        sequence_taps::SOURCE,
        "ahead",
        vec![Value::from(seq)],
        vec![Value::from(got)],
    );
}

#[test]
fn taps_listed_out_of_order() {
    // taps [1, -2]: past 2, span 3; step t reads seq[t + 3] (tap 1) then seq[t] (tap -2).
    let seq = array![1i64, 2, 3, 4, 5, 6];
    let got = sequence_taps::unordered(seq.view()).unwrap();
    assert_eq!(got.to_vec(), vec![401, 502, 603]);
    let expected: Vec<i64> = (0..seq.len() - 3)
        .map(|t| seq[t + 3] * 100 + seq[t])
        .collect();
    assert_eq!(got.to_vec(), expected);
    second_opinion(
        sequence_taps::SOURCE,
        "unordered",
        vec![Value::from(seq)],
        vec![Value::from(got)],
    );
}

#[test]
fn taps_on_the_rows_of_a_matrix() {
    let m = Array2::from_shape_fn((6, 3), |(i, j)| (i * 3 + j) as f64);
    let (diff, dots) = sequence_taps::rows(m.view()).unwrap();
    assert_eq!(diff.dim(), (3, 3));
    assert_eq!(dots.len(), 3);
    // t = 0: back = m[0] = [0,1,2], ahead = m[3] = [9,10,11].
    assert_eq!(diff.row(0).to_vec(), vec![-90.0, -99.0, -108.0]);
    assert_eq!(dots[0], 10.0 + 22.0);
    for t in 0..3 {
        let back = m.row(t);
        let ahead = m.row(t + 3);
        let expected: Vec<f64> = back
            .iter()
            .zip(ahead.iter())
            .map(|(b, a)| b - a * 10.0)
            .collect();
        assert_eq!(diff.row(t).to_vec(), expected);
        assert_eq!(dots[t], back.dot(&ahead));
    }
    second_opinion(
        sequence_taps::SOURCE,
        "rows",
        vec![Value::from(m)],
        vec![Value::from(diff), Value::from(dots)],
    );
}

#[test]
fn a_tapped_sequence_beside_a_plain_one() {
    // a: 6 rows with taps [0, 2] allows 4 steps; b: 3 rows allows 3. 3 steps.
    let a = array![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let b = array![0.5, 0.25, 0.125];
    let got = sequence_taps::mixed(a.view(), b.view()).unwrap();
    assert_eq!(
        got.to_vec(),
        vec![1.0 + 30.0 + 50.0, 2.0 + 40.0 + 25.0, 3.0 + 50.0 + 12.5]
    );
    second_opinion(
        sequence_taps::SOURCE,
        "mixed",
        vec![Value::from(a.clone()), Value::from(b)],
        vec![Value::from(got)],
    );
    // Now a is the shorter one: 5 rows -> 3 steps, b of 10 rows.
    let a = array![1.0, 2.0, 3.0, 4.0, 5.0];
    let b = Array1::from_iter((0..10).map(|v| v as f64));
    let got = sequence_taps::mixed(a.view(), b.view()).unwrap();
    let expected: Vec<f64> = (0..3)
        .map(|t| a[t] + a[t + 2] * 10.0 + b[t] * 100.0)
        .collect();
    assert_eq!(got.to_vec(), expected);
    second_opinion(
        sequence_taps::SOURCE,
        "mixed",
        vec![Value::from(a), Value::from(b)],
        vec![Value::from(got)],
    );
}

// ---------------------------------------------------------------------------------------
// Sequence taps with a MITSOT output: a tiny scalar RNN.
// ---------------------------------------------------------------------------------------

mod tiny_rnn {
    scan_tests::program! {
        /// h[t] = tanh(w h[t-1] + v h[t-2] + u[t] - 0.5 u[t-1] + 0.25 u[t+1])
        pub fn tiny_rnn(u: ArrayView1<f64>, h0: ArrayView1<f64>, w: f64, v: f64) -> Result<Array1<f64>> {
            let h = scan(
                |u_tm1, u_t, u_tp1, h_tm2, h_tm1, w, v| {
                    let pre = w * h_tm1 + v * h_tm2 + u_t - 0.5 * u_tm1 + 0.25 * u_tp1;
                    tanh(pre)
                },
                sequences = [taps(u, [-1, 0, 1])],
                outputs_info = [taps(h0, [-2, -1])],
                non_sequences = [w, v],
            );
            Ok(h)
        }

        /// Two outputs: a MITSOT state and a NITSOT readout of it, with a plain sequence.
        pub fn with_readout(u: ArrayView1<f64>, h0: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
            let (h, y) = scan(
                |u_tm2, u_t, h_tm3, h_tm1| {
                    let h_t = 0.5 * h_tm1 - 0.25 * h_tm3 + u_t * u_tm2;
                    (h_t, h_tm1 * 2.0)
                },
                sequences = taps(u, [-2, 0]),
                outputs_info = [taps(h0, [-3, -1]), None],
            );
            Ok((h, y))
        }
    }
}

#[test]
fn tiny_rnn_matches_a_hand_written_loop() {
    let u = array![0.1, -0.4, 0.7, 0.2, -0.9, 0.3, 0.5, -0.1];
    let h0 = array![0.05, -0.2];
    let (w, v) = (0.8, -0.3);
    let got = tiny_rnn::tiny_rnn(u.view(), h0.view(), w, v).unwrap();
    // u has 8 rows, taps [-1, 0, 1]: past 1, span 2, 6 steps; step t reads u[t..t+3].
    assert_eq!(got.len(), 6);
    let mut h = vec![h0[0], h0[1]];
    for t in 0..6 {
        let (u_tm1, u_t, u_tp1) = (u[t], u[t + 1], u[t + 2]);
        let (h_tm2, h_tm1) = (h[h.len() - 2], h[h.len() - 1]);
        let pre = w * h_tm1 + v * h_tm2 + u_t - 0.5 * u_tm1 + 0.25 * u_tp1;
        h.push(pre.tanh());
    }
    assert_allclose(got.as_slice().unwrap(), &h[2..], 1e-12);
    // The first step by hand: tanh(0.8 * -0.2 - 0.3 * 0.05 - 0.4 - 0.05 + 0.175).
    assert!((got[0] - (-0.45f64).tanh()).abs() < 1e-12);
    second_opinion(
        tiny_rnn::SOURCE,
        "tiny_rnn",
        vec![
            Value::from(u),
            Value::from(h0),
            Value::from(w),
            Value::from(v),
        ],
        vec![Value::from(got)],
    );
}

#[test]
fn mitsot_state_with_a_nitsot_readout() {
    let u = array![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let h0 = array![1.0, 10.0, 100.0];
    let (h, y) = tiny_rnn::with_readout(u.view(), h0.view()).unwrap();
    // u: taps [-2, 0] -> past 2, 4 steps reading u[t] and u[t+2].
    // h: taps [-3, -1] with init [h[-3], h[-2], h[-1]] = [1, 10, 100].
    let mut hist = vec![1.0, 10.0, 100.0];
    let mut ys = Vec::new();
    for t in 0..4 {
        let (u_tm2, u_t) = (u[t], u[t + 2]);
        let (h_tm3, h_tm1) = (hist[hist.len() - 3], hist[hist.len() - 1]);
        hist.push(0.5 * h_tm1 - 0.25 * h_tm3 + u_t * u_tm2);
        ys.push(h_tm1 * 2.0);
    }
    // Step 0 by hand: 0.5 * 100 - 0.25 * 1 + 3 * 1 = 52.75; readout 200.
    assert_eq!(h[0], 52.75);
    assert_eq!(y[0], 200.0);
    assert_eq!(h.to_vec(), hist[3..].to_vec());
    assert_eq!(y.to_vec(), ys);
    second_opinion(
        tiny_rnn::SOURCE,
        "with_readout",
        vec![Value::from(u), Value::from(h0)],
        vec![Value::from(h), Value::from(y)],
    );
}

#[test]
fn an_initial_state_longer_than_the_taps_uses_its_first_rows() {
    // PyTensor takes init[:max|tap|] and reads tap k at step 0 from init[k + max|tap|]:
    // with taps [-2, -1] and 4 rows, x[-2] = init[0] and x[-1] = init[1]; init[2..] unused.
    let init = array![1i64, 2, 3, 4];
    let got = deep_taps::two_back(init.view(), 3).unwrap();
    // x0 = 1 * 10 + 2 = 12; x1 = 2 * 10 + 12 = 32; x2 = 12 * 10 + 32 = 152.
    assert_eq!(got.to_vec(), vec![12, 32, 152]);
    second_opinion(
        deep_taps::SOURCE,
        "two_back",
        vec![Value::from(init), Value::from(3i64)],
        vec![Value::from(got)],
    );
}

#[test]
fn a_step_returning_its_own_tap() {
    let init = array![[1.0, 2.0], [3.0, 4.0]];
    let got = deep_taps::period_two(init.view(), 5).unwrap();
    assert_eq!(
        got,
        array![[1.0, 2.0], [3.0, 4.0], [1.0, 2.0], [3.0, 4.0], [1.0, 2.0]]
    );
    second_opinion(
        deep_taps::SOURCE,
        "period_two",
        vec![Value::from(init), Value::from(5i64)],
        vec![Value::from(got)],
    );
}
