//! Functions of a `scan!` block calling each other: a `fn` called from a step or from
//! another `fn` is inlined where it is called (its parameters bound to the arguments, its
//! types checked at the call), and is still a Rust function of its own; and a step
//! function bound once with `let step = |..| ..;` passed to several scans. Checked against
//! hand-written loops and the reference evaluator.

mod common;

use common::{assert_floats, matrix, second_opinion, Value};
use scan_runtime::prelude::*;

mod programs {
    scan_tests::program! {
        /// One Elman cell.
        pub fn cell(x_t: ArrayView1<f64>, h: ArrayView1<f64>, w: ArrayView2<f64>) -> Result<Array1<f64>> {
            Ok(tanh(x_t + h.dot(w)))
        }

        /// The RNN whose step is that cell.
        pub fn rnn(x: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>) -> Result<Array2<f64>> {
            let hs = scan(
                |x_t, h_tm1, w| cell(x_t, h_tm1, w),
                sequences = x,
                outputs_info = h0,
                non_sequences = w,
            );
            Ok(hs)
        }

        /// Two results, and a function calling another.
        pub fn moments(x: ArrayView1<f64>) -> Result<(f64, f64)> {
            Ok((mean(x), var(x)))
        }

        pub fn standardized(x: ArrayView1<f64>, scale: f64) -> Result<Array1<f64>> {
            let (m, v) = moments(x);
            Ok(scaled(x - m, scale) / sqrt(v))
        }

        pub fn scaled(x: ArrayView1<f64>, by: f64) -> Result<Array1<f64>> {
            Ok(x * by)
        }

        /// An untyped literal argument takes the parameter's dtype; names of the callee
        /// (`y`) and the caller (`y` too) do not mix.
        pub fn halves(x: ArrayView1<f32>) -> Result<Array1<f32>> {
            let y = x + 1.0;
            Ok(scaled32(y, 0.5) + y)
        }

        pub fn scaled32(x: ArrayView1<f32>, by: f32) -> Result<Array1<f32>> {
            let y = x * by;
            Ok(y)
        }

        /// One step function bound once and passed to two scans (a bidirectional RNN's
        /// two directions), and to a map.
        pub fn both_ways(x: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>) -> Result<(Array2<f64>, Array2<f64>, Array2<f64>)> {
            let step = |x_t, h_tm1, w| tanh(x_t + h_tm1.dot(w));
            let forward = scan(step, sequences = x, outputs_info = h0, non_sequences = w);
            let backward = scan(step, sequences = x, outputs_info = h0, non_sequences = w, go_backwards = true);
            let double = |v| v * 2.0;
            Ok((forward, backward, map(double, sequences = forward)))
        }
    }
}

#[test]
fn a_step_calls_a_function_of_the_block() {
    let (t_len, n) = (7, 5);
    let x = matrix(t_len, n, 1);
    let h0 = matrix(1, n, 2).row(0).to_owned();
    let w = matrix(n, n, 3);
    let hs = programs::rnn(x.view(), h0.view(), w.view()).unwrap();
    let mut h = h0.to_vec();
    let mut want = Vec::new();
    for t in 0..t_len {
        h = (0..n)
            .map(|j| (x[[t, j]] + (0..n).map(|i| h[i] * w[[i, j]]).sum::<f64>()).tanh())
            .collect();
        want.extend(h.iter().copied());
    }
    assert_floats(hs.as_slice().unwrap(), &want, 1e-15);
    // The cell is still a function of its own.
    let one = programs::cell(x.row(0), h0.view(), w.view()).unwrap();
    assert_floats(one.as_slice().unwrap(), &want[..n], 1e-15);
    second_opinion(
        programs::SOURCE,
        "rnn",
        vec![Value::from(x), Value::from(h0), Value::from(w)],
        vec![Value::from(hs)],
    );
}

#[test]
fn a_step_function_bound_once_serves_several_scans() {
    let (t_len, n) = (6, 4);
    let x = matrix(t_len, n, 4);
    let h0 = matrix(1, n, 5).row(0).to_owned();
    let w = matrix(n, n, 6);
    let (fwd, bwd, double) = programs::both_ways(x.view(), h0.view(), w.view()).unwrap();
    let run = |order: Vec<usize>| {
        let mut h = h0.to_vec();
        let mut out = Vec::new();
        for t in order {
            h = (0..n)
                .map(|j| (x[[t, j]] + (0..n).map(|i| h[i] * w[[i, j]]).sum::<f64>()).tanh())
                .collect();
            out.extend(h.iter().copied());
        }
        out
    };
    let want_fwd = run((0..t_len).collect());
    assert_floats(fwd.as_slice().unwrap(), &want_fwd, 1e-15);
    assert_floats(
        bwd.as_slice().unwrap(),
        &run((0..t_len).rev().collect()),
        1e-15,
    );
    let want_double: Vec<f64> = want_fwd.iter().map(|v| v * 2.0).collect();
    assert_floats(double.as_slice().unwrap(), &want_double, 1e-15);
    second_opinion(
        programs::SOURCE,
        "both_ways",
        vec![Value::from(x), Value::from(h0), Value::from(w)],
        vec![Value::from(fwd), Value::from(bwd), Value::from(double)],
    );
}

#[test]
fn functions_call_functions_with_tuples_and_literals() {
    let x = array![1.0, 2.0, 4.0, 9.0];
    let got = programs::standardized(x.view(), 3.0).unwrap();
    let m = 4.0;
    let v = (9.0 + 4.0 + 0.0 + 25.0) / 4.0;
    let want: Vec<f64> = x.iter().map(|&a| (a - m) * 3.0 / f64::sqrt(v)).collect();
    assert_floats(got.as_slice().unwrap(), &want, 1e-15);
    second_opinion(
        programs::SOURCE,
        "standardized",
        vec![Value::from(x), Value::from(3.0f64)],
        vec![Value::from(got)],
    );

    let x32 = array![1.0f32, 3.0, -2.0];
    let got = programs::halves(x32.view()).unwrap();
    assert_eq!(got.to_vec(), vec![3.0f32, 6.0, -1.5]);
    second_opinion(
        programs::SOURCE,
        "halves",
        vec![Value::from(x32)],
        vec![Value::from(got)],
    );
}
