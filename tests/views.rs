//! The views of scan (map, reduce, foldl, foldr), go_backwards, n_steps, several outputs of
//! different kinds in one loop, and the `name` and `strict` keywords; checked against
//! hand-written loops or hand-computed numbers, and against the reference evaluator.

mod common;

use common::{assert_allclose, second_opinion, Value};
use scan_runtime::prelude::*;

// ---------------------------------------------------------------------------------------
// map, reduce, foldl, foldr
// ---------------------------------------------------------------------------------------

mod views {
    scan_tests::program! {
        pub fn squares(v: ArrayView1<f64>) -> Result<Array1<f64>> {
            let out = map(|x| x * x, sequences = v);
            Ok(out)
        }

        /// Two sequences of different lengths: the shortest decides the steps.
        pub fn weighted(a: ArrayView1<f64>, b: ArrayView1<i64>, k: f64) -> Result<Array1<f64>> {
            let out = map(|x, y, k| x * k + y, sequences = [a, b], non_sequences = k);
            Ok(out)
        }

        /// map over the rows of a matrix, one scalar per row.
        pub fn row_norms2(m: ArrayView2<f64>) -> Result<Array1<f64>> {
            Ok(map(|row| row.dot(row), sequences = m))
        }

        pub fn total(v: ArrayView1<f64>) -> Result<f64> {
            let s = reduce(|x, acc| acc + x, sequences = v, outputs_info = 0.0);
            Ok(s)
        }

        /// reduce over rows: the last step of a vector output is a vector.
        pub fn column_sums(m: ArrayView2<f64>) -> Result<Array1<f64>> {
            let s = reduce(|row, acc| acc + row, sequences = m, outputs_info = zeros_like(m[0]));
            Ok(s)
        }

        pub fn digits_left(v: ArrayView1<i64>) -> Result<i64> {
            let n = foldl(|x, acc| acc * 10 + x, sequences = v, outputs_info = 0i64);
            Ok(n)
        }

        pub fn digits_right(v: ArrayView1<i64>) -> Result<i64> {
            let n = foldr(|x, acc| acc * 10 + x, sequences = v, outputs_info = 0i64);
            Ok(n)
        }

        /// reduce with go_backwards is foldr.
        pub fn digits_reduce_backwards(v: ArrayView1<i64>) -> Result<i64> {
            Ok(reduce(|x, acc| acc * 10 + x, sequences = v, outputs_info = 0i64, go_backwards = true))
        }

        /// foldl with a non-sequence: Horner's rule for a polynomial at x.
        pub fn horner(coefficients: ArrayView1<f64>, x: f64) -> Result<f64> {
            Ok(foldl(|c, acc, x| acc * x + c, sequences = coefficients, outputs_info = 0.0, non_sequences = x))
        }
    }
}

#[test]
fn map_squares_a_vector() {
    let v = array![1.0, -2.0, 3.0, 0.5];
    let got = views::squares(v.view()).unwrap();
    assert_eq!(got.to_vec(), vec![1.0, 4.0, 9.0, 0.25]);
    second_opinion(
        views::SOURCE,
        "squares",
        vec![Value::from(v)],
        vec![Value::from(got)],
    );
}

#[test]
fn map_over_two_sequences_truncates_to_the_shortest() {
    let a = array![1.0, 2.0, 3.0, 4.0, 5.0];
    let b = array![10i64, 20, 30];
    let got = views::weighted(a.view(), b.view(), 0.5).unwrap();
    assert_eq!(got.to_vec(), vec![10.5, 21.0, 31.5]);
    second_opinion(
        views::SOURCE,
        "weighted",
        vec![Value::from(a.clone()), Value::from(b), Value::from(0.5f64)],
        vec![Value::from(got)],
    );
    // Now the first one is the shorter.
    let b = array![10i64, 20, 30, 40, 50, 60, 70];
    let a2 = array![1.0, 2.0];
    let got = views::weighted(a2.view(), b.view(), 2.0).unwrap();
    assert_eq!(got.to_vec(), vec![12.0, 24.0]);
    second_opinion(
        views::SOURCE,
        "weighted",
        vec![Value::from(a2), Value::from(b), Value::from(2.0f64)],
        vec![Value::from(got)],
    );
}

#[test]
fn map_over_rows() {
    let m = array![[1.0, 2.0], [3.0, 4.0], [0.0, -1.0]];
    let got = views::row_norms2(m.view()).unwrap();
    assert_eq!(got.to_vec(), vec![5.0, 25.0, 1.0]);
    second_opinion(
        views::SOURCE,
        "row_norms2",
        vec![Value::from(m)],
        vec![Value::from(got)],
    );
}

#[test]
fn reduce_returns_the_last_step() {
    let v = array![1.5, 2.5, -1.0, 10.0];
    let got = views::total(v.view()).unwrap();
    assert_eq!(got, 13.0);
    assert_eq!(got, v.iter().sum::<f64>());
    second_opinion(
        views::SOURCE,
        "total",
        vec![Value::from(v)],
        vec![Value::from(got)],
    );

    let m = array![[1.0, 2.0, 3.0], [10.0, 20.0, 30.0], [100.0, 200.0, 300.0]];
    let got = views::column_sums(m.view()).unwrap();
    assert_eq!(got.to_vec(), vec![111.0, 222.0, 333.0]);
    second_opinion(
        views::SOURCE,
        "column_sums",
        vec![Value::from(m)],
        vec![Value::from(got)],
    );
}

#[test]
fn foldl_and_foldr_go_opposite_ways() {
    let v = array![1i64, 2, 3];
    let left = views::digits_left(v.view()).unwrap();
    assert_eq!(left, 123);
    second_opinion(
        views::SOURCE,
        "digits_left",
        vec![Value::from(v.clone())],
        vec![Value::from(left)],
    );
    let right = views::digits_right(v.view()).unwrap();
    assert_eq!(right, 321);
    second_opinion(
        views::SOURCE,
        "digits_right",
        vec![Value::from(v.clone())],
        vec![Value::from(right)],
    );
    let backwards = views::digits_reduce_backwards(v.view()).unwrap();
    assert_eq!(backwards, 321);
    second_opinion(
        views::SOURCE,
        "digits_reduce_backwards",
        vec![Value::from(v)],
        vec![Value::from(backwards)],
    );

    let v = array![4i64, 0, 7, 1, 9];
    let left = views::digits_left(v.view()).unwrap();
    assert_eq!(left, 40719);
    second_opinion(
        views::SOURCE,
        "digits_left",
        vec![Value::from(v.clone())],
        vec![Value::from(left)],
    );
    let right = views::digits_right(v.view()).unwrap();
    assert_eq!(right, 91704);
    second_opinion(
        views::SOURCE,
        "digits_right",
        vec![Value::from(v)],
        vec![Value::from(right)],
    );
}

#[test]
fn foldl_with_a_non_sequence() {
    // 2 x^2 - 3 x + 5 at x = 4: coefficients from the highest power.
    let c = array![2.0, -3.0, 5.0];
    let got = views::horner(c.view(), 4.0).unwrap();
    assert_eq!(got, 2.0 * 16.0 - 12.0 + 5.0);
    second_opinion(
        views::SOURCE,
        "horner",
        vec![Value::from(c), Value::from(4.0f64)],
        vec![Value::from(got)],
    );
}

// ---------------------------------------------------------------------------------------
// go_backwards
// ---------------------------------------------------------------------------------------

mod backwards {
    scan_tests::program! {
        /// taps [-1, 0], backwards.
        pub fn pairs(seq: ArrayView1<i64>) -> Result<Array1<i64>> {
            let out = scan(
                |a, b| a * 10 + b,
                sequences = taps(seq, [-1, 0]),
                outputs_info = None,
                go_backwards = true,
            );
            Ok(out)
        }

        /// taps [-2, 1], backwards: a past and a future tap.
        pub fn past_and_future(seq: ArrayView1<i64>) -> Result<Array1<i64>> {
            let out = scan(
                |back, ahead| back * 100 + ahead,
                sequences = taps(seq, [-2, 1]),
                go_backwards = true,
            );
            Ok(out)
        }

        /// taps [1, 3] (future only), backwards, with a SITSOT output.
        pub fn future_sum(seq: ArrayView1<i64>) -> Result<Array1<i64>> {
            let out = scan(
                |a, b, acc| acc * 1000 + a * 10 + b,
                sequences = taps(seq, [1, 3]),
                outputs_info = 0i64,
                go_backwards = true,
            );
            Ok(out)
        }

        /// Two sequences of different lengths, backwards: each is reversed on its own, so
        /// both start from their own last row.
        pub fn backwards_pairs(a: ArrayView1<i64>, b: ArrayView1<i64>) -> Result<Array1<i64>> {
            Ok(map(|x, y| x * 100 + y, sequences = [a, b], go_backwards = true))
        }

        /// A MITSOT output fed by a tapped sequence read backwards.
        pub fn backwards_mitsot(u: ArrayView1<i64>, init: ArrayView1<i64>) -> Result<Array1<i64>> {
            Ok(scan(
                |u_t, u_tp1, x_tm2, x_tm1| x_tm2 + x_tm1 * 10 + u_t * 1000 + u_tp1 * 100000,
                sequences = taps(u, [0, 1]),
                outputs_info = taps(init, [-2, -1]),
                go_backwards = true,
            ))
        }

        /// A plain cumulative sum backwards: out[0] comes from the last element.
        pub fn reverse_cumsum(v: ArrayView1<f64>) -> Result<Array1<f64>> {
            Ok(scan(|x, acc| acc + x, sequences = v, outputs_info = 0.0, go_backwards = true))
        }
    }
}

/// PyTensor's rule for go_backwards: each tap's slice of the sequence is reversed, so at
/// step t tap k reads row (L - span - 1 - t) + k + past.
fn backwards_row(len: usize, taps: &[i64], t: usize, k: i64) -> usize {
    let past = -taps.iter().copied().min().unwrap().min(0);
    let span = past + taps.iter().copied().max().unwrap().max(0);
    (len as i64 - span - 1 - t as i64 + k + past) as usize
}

#[test]
fn go_backwards_with_taps_minus_one_zero() {
    let seq = Array1::from_iter(1i64..=6);
    let got = backwards::pairs(seq.view()).unwrap();
    // L = 6, past = 1, span = 1: 5 steps; step 0 reads seq[4] = 5 (tap -1), seq[5] = 6.
    assert_eq!(got.to_vec(), vec![56, 45, 34, 23, 12]);
    let taps = [-1i64, 0];
    let expected: Vec<i64> = (0..5)
        .map(|t| seq[backwards_row(6, &taps, t, -1)] * 10 + seq[backwards_row(6, &taps, t, 0)])
        .collect();
    assert_eq!(got.to_vec(), expected);
    second_opinion(
        backwards::SOURCE,
        "pairs",
        vec![Value::from(seq)],
        vec![Value::from(got)],
    );
}

#[test]
fn go_backwards_with_a_past_and_a_future_tap() {
    let seq = Array1::from_iter(1i64..=8);
    let got = backwards::past_and_future(seq.view()).unwrap();
    // L = 8, taps [-2, 1]: past 2, span 3, 5 steps. Step 0: tap -2 reads row 4 - 0 - 2 + 2
    // = 4 (value 5) and tap 1 reads row 7 (value 8).
    assert_eq!(got.to_vec(), vec![508, 407, 306, 205, 104]);
    let taps = [-2i64, 1];
    let expected: Vec<i64> = (0..5)
        .map(|t| seq[backwards_row(8, &taps, t, -2)] * 100 + seq[backwards_row(8, &taps, t, 1)])
        .collect();
    assert_eq!(got.to_vec(), expected);
    second_opinion(
        backwards::SOURCE,
        "past_and_future",
        vec![Value::from(seq)],
        vec![Value::from(got)],
    );
}

#[test]
fn go_backwards_with_future_taps_only_and_a_recurrence() {
    let seq = Array1::from_iter(1i64..=7);
    let got = backwards::future_sum(seq.view()).unwrap();
    // L = 7, taps [1, 3]: past 0, span 3, 4 steps. Step t: tap 1 reads row 4 - t, tap 3
    // reads row 6 - t. Pairs (5, 7), (4, 6), (3, 5), (2, 4).
    let taps = [1i64, 3];
    let mut acc = 0i64;
    let mut expected = Vec::new();
    for t in 0..4 {
        let a = seq[backwards_row(7, &taps, t, 1)];
        let b = seq[backwards_row(7, &taps, t, 3)];
        acc = acc * 1000 + a * 10 + b;
        expected.push(acc);
    }
    assert_eq!(expected, vec![57, 57046, 57046035, 57046035024]);
    assert_eq!(got.to_vec(), expected);
    second_opinion(
        backwards::SOURCE,
        "future_sum",
        vec![Value::from(seq)],
        vec![Value::from(got)],
    );
}

#[test]
fn go_backwards_reverses_each_sequence_from_its_own_end() {
    let a = array![1i64, 2, 3, 4, 5];
    let b = array![10i64, 20, 30];
    let got = backwards::backwards_pairs(a.view(), b.view()).unwrap();
    // a reversed: 5, 4, 3, 2, 1; b reversed: 30, 20, 10; 3 steps.
    assert_eq!(got.to_vec(), vec![530, 420, 310]);
    second_opinion(
        backwards::SOURCE,
        "backwards_pairs",
        vec![Value::from(a), Value::from(b)],
        vec![Value::from(got)],
    );
}

#[test]
fn go_backwards_with_a_mitsot_output() {
    let u = Array1::from_iter(1i64..=5);
    let init = array![1i64, 2];
    let got = backwards::backwards_mitsot(u.view(), init.view()).unwrap();
    // u: taps [0, 1], L = 5, span 1, 4 steps; step t reads u[3 - t] and u[4 - t].
    let taps = [0i64, 1];
    let mut x = vec![1i64, 2];
    for t in 0..4 {
        let u_t = u[backwards_row(5, &taps, t, 0)];
        let u_tp1 = u[backwards_row(5, &taps, t, 1)];
        let n = x.len();
        x.push(x[n - 2] + x[n - 1] * 10 + u_t * 1000 + u_tp1 * 100000);
    }
    // Step 0: 1 + 20 + 4000 + 500000.
    assert_eq!(x[2], 504021);
    assert_eq!(got.to_vec(), x[2..].to_vec());
    second_opinion(
        backwards::SOURCE,
        "backwards_mitsot",
        vec![Value::from(u), Value::from(init)],
        vec![Value::from(got)],
    );
}

#[test]
fn go_backwards_does_not_reverse_the_outputs() {
    let v = array![1.0, 2.0, 3.0, 4.0];
    let got = backwards::reverse_cumsum(v.view()).unwrap();
    assert_eq!(got.to_vec(), vec![4.0, 7.0, 9.0, 10.0]);
    second_opinion(
        backwards::SOURCE,
        "reverse_cumsum",
        vec![Value::from(v)],
        vec![Value::from(got)],
    );
}

// ---------------------------------------------------------------------------------------
// n_steps
// ---------------------------------------------------------------------------------------

mod steps {
    scan_tests::program! {
        pub fn first_sums(v: ArrayView1<f64>, n: usize) -> Result<Array1<f64>> {
            Ok(scan(|x, acc| acc + x, sequences = v, outputs_info = 0.0, n_steps = n))
        }

        pub fn last_sums(v: ArrayView1<f64>, n: usize) -> Result<Array1<f64>> {
            Ok(scan(|x, acc| acc + x, sequences = v, outputs_info = 0.0, n_steps = n, go_backwards = true))
        }

        /// n_steps with a tapped sequence, backwards: the last windows, reversed.
        pub fn last_pairs(seq: ArrayView1<i64>, n: usize) -> Result<Array1<i64>> {
            Ok(scan(
                |a, b| a * 10 + b,
                sequences = taps(seq, [-1, 0]),
                outputs_info = None,
                n_steps = n,
                go_backwards = true,
            ))
        }

        /// SITSOT, MITSOT and NITSOT outputs together, for any number of steps (0 too).
        pub fn three_kinds(
            v: ArrayView1<f64>,
            fib0: ArrayView1<i64>,
            n: usize,
        ) -> Result<(Array1<f64>, Array1<i64>, Array1<f64>)> {
            let (sums, fib, doubled) = scan(
                |x, acc, f_tm2, f_tm1| (acc + x, f_tm2 + f_tm1, x * 2.0),
                sequences = v,
                outputs_info = [0.0, taps(fib0, [-2, -1]), None],
                n_steps = n,
            );
            Ok((sums, fib, doubled))
        }

        /// A vector SITSOT and a vector MITSOT, for 0 steps.
        pub fn vector_states(
            h0: ArrayView1<f64>,
            g0: ArrayView2<f64>,
            n: usize,
        ) -> Result<(Array2<f64>, Array2<f64>)> {
            let (h, g) = scan(
                |h_tm1, g_tm2, g_tm1| (h_tm1 * 2.0, g_tm2 + g_tm1),
                outputs_info = [h0, taps(g0, [-2, -1])],
                n_steps = n,
            );
            Ok((h, g))
        }

        /// No sequences: n_steps alone decides, with a non-sequence.
        pub fn repeat(c: f64, n: usize) -> Result<Array1<f64>> {
            Ok(scan(|c| c * 3.0, outputs_info = None, non_sequences = c, n_steps = n))
        }

        /// Fibonacci with taps and a stopping condition: the step that meets it is kept.
        pub fn fib_until(init: ArrayView1<i64>, limit: i64) -> Result<Array1<i64>> {
            Ok(scan(
                |a, b| (a + b, until(a + b > limit)),
                outputs_info = taps(init, [-2, -1]),
                n_steps = 100,
            ))
        }

        /// No sequences, a SITSOT doubling.
        pub fn powers(n: i64) -> Result<Array1<i64>> {
            Ok(scan(|p| p * 2, outputs_info = 1i64, n_steps = n))
        }
    }
}

#[test]
fn n_steps_smaller_than_the_sequence_takes_the_first_rows() {
    let v = array![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let got = steps::first_sums(v.view(), 3).unwrap();
    assert_eq!(got.to_vec(), vec![1.0, 3.0, 6.0]);
    second_opinion(
        steps::SOURCE,
        "first_sums",
        vec![Value::from(v.clone()), Value::from(3i64)],
        vec![Value::from(got)],
    );
    let all = steps::first_sums(v.view(), 6).unwrap();
    assert_eq!(all.to_vec(), vec![1.0, 3.0, 6.0, 10.0, 15.0, 21.0]);
    second_opinion(
        steps::SOURCE,
        "first_sums",
        vec![Value::from(v), Value::from(6i64)],
        vec![Value::from(all)],
    );
}

#[test]
fn n_steps_with_go_backwards_takes_the_last_rows_reversed() {
    let v = array![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let got = steps::last_sums(v.view(), 3).unwrap();
    assert_eq!(got.to_vec(), vec![6.0, 11.0, 15.0]);
    second_opinion(
        steps::SOURCE,
        "last_sums",
        vec![Value::from(v), Value::from(3i64)],
        vec![Value::from(got)],
    );

    let seq = Array1::from_iter(1i64..=6);
    let got = steps::last_pairs(seq.view(), 2).unwrap();
    // The reversed windows are 56, 45, 34, 23, 12: the first two.
    assert_eq!(got.to_vec(), vec![56, 45]);
    let taps = [-1i64, 0];
    let expected: Vec<i64> = (0..2)
        .map(|t| seq[backwards_row(6, &taps, t, -1)] * 10 + seq[backwards_row(6, &taps, t, 0)])
        .collect();
    assert_eq!(got.to_vec(), expected);
    second_opinion(
        steps::SOURCE,
        "last_pairs",
        vec![Value::from(seq), Value::from(2i64)],
        vec![Value::from(got)],
    );
}

#[test]
fn sitsot_mitsot_and_nitsot_outputs_in_one_scan() {
    let v = array![1.0, 2.0, 3.0, 4.0, 5.0];
    let fib0 = array![0i64, 1];
    let (sums, fib, doubled) = steps::three_kinds(v.view(), fib0.view(), 5).unwrap();
    assert_eq!(sums.to_vec(), vec![1.0, 3.0, 6.0, 10.0, 15.0]);
    assert_eq!(fib.to_vec(), vec![1, 2, 3, 5, 8]);
    assert_eq!(doubled.to_vec(), vec![2.0, 4.0, 6.0, 8.0, 10.0]);
    second_opinion(
        steps::SOURCE,
        "three_kinds",
        vec![
            Value::from(v.clone()),
            Value::from(fib0.clone()),
            Value::from(5i64),
        ],
        vec![Value::from(sums), Value::from(fib), Value::from(doubled)],
    );

    // n_steps = 2 of 5 rows.
    let (sums, fib, doubled) = steps::three_kinds(v.view(), fib0.view(), 2).unwrap();
    assert_eq!(sums.to_vec(), vec![1.0, 3.0]);
    assert_eq!(fib.to_vec(), vec![1, 2]);
    assert_eq!(doubled.to_vec(), vec![2.0, 4.0]);
    second_opinion(
        steps::SOURCE,
        "three_kinds",
        vec![Value::from(v), Value::from(fib0), Value::from(2i64)],
        vec![Value::from(sums), Value::from(fib), Value::from(doubled)],
    );
}

#[test]
fn n_steps_zero_gives_zero_rows() {
    let v = array![1.0, 2.0, 3.0];
    let fib0 = array![0i64, 1];
    let (sums, fib, doubled) = steps::three_kinds(v.view(), fib0.view(), 0).unwrap();
    assert_eq!(sums.len(), 0);
    assert_eq!(fib.len(), 0);
    assert_eq!(doubled.len(), 0);
    second_opinion(
        steps::SOURCE,
        "three_kinds",
        vec![Value::from(v), Value::from(fib0), Value::from(0i64)],
        vec![Value::from(sums), Value::from(fib), Value::from(doubled)],
    );

    let h0 = array![1.0, 2.0, 3.0];
    let g0 = array![[1.0, 0.0], [0.0, 1.0]];
    let (h, g) = steps::vector_states(h0.view(), g0.view(), 0).unwrap();
    assert_eq!(h.dim(), (0, 3));
    assert_eq!(g.dim(), (0, 2));
    second_opinion(
        steps::SOURCE,
        "vector_states",
        vec![
            Value::from(h0.clone()),
            Value::from(g0.clone()),
            Value::from(0i64),
        ],
        vec![Value::from(h), Value::from(g)],
    );
    let (h, g) = steps::vector_states(h0.view(), g0.view(), 3).unwrap();
    assert_eq!(
        h,
        array![[2.0, 4.0, 6.0], [4.0, 8.0, 12.0], [8.0, 16.0, 24.0]]
    );
    assert_eq!(g, array![[1.0, 1.0], [1.0, 2.0], [2.0, 3.0]]);
    second_opinion(
        steps::SOURCE,
        "vector_states",
        vec![Value::from(h0), Value::from(g0), Value::from(3i64)],
        vec![Value::from(h), Value::from(g)],
    );

    let r = steps::repeat(1.5, 0).unwrap();
    assert_eq!(r.len(), 0);
    second_opinion(
        steps::SOURCE,
        "repeat",
        vec![Value::from(1.5f64), Value::from(0i64)],
        vec![Value::from(r)],
    );
    let p = steps::powers(0).unwrap();
    assert_eq!(p.len(), 0);
    second_opinion(
        steps::SOURCE,
        "powers",
        vec![Value::from(0i64)],
        vec![Value::from(p)],
    );
}

#[test]
fn n_steps_without_sequences() {
    let r = steps::repeat(1.5, 4).unwrap();
    assert_eq!(r.to_vec(), vec![4.5; 4]);
    second_opinion(
        steps::SOURCE,
        "repeat",
        vec![Value::from(1.5f64), Value::from(4i64)],
        vec![Value::from(r)],
    );
    let p = steps::powers(10).unwrap();
    let expected: Vec<i64> = (1..=10).map(|k| 1i64 << k).collect();
    assert_eq!(p.to_vec(), expected);
    second_opinion(
        steps::SOURCE,
        "powers",
        vec![Value::from(10i64)],
        vec![Value::from(p)],
    );
}

#[test]
fn n_steps_larger_than_a_sequence_is_an_error() {
    let v = array![1.0, 2.0];
    assert!(steps::first_sums(v.view(), 3).is_err());
    let evaluated = scan_codegen::eval::run(
        steps::SOURCE,
        "first_sums",
        vec![Value::from(v), Value::from(3i64)],
    );
    assert!(
        evaluated.is_err(),
        "the evaluator accepted n_steps = 3 for 2 rows"
    );
}

// ---------------------------------------------------------------------------------------
// name and strict
// ---------------------------------------------------------------------------------------

mod named {
    scan_tests::program! {
        /// A named scan, strict, with every outer value passed explicitly.
        pub fn leaky(u: ArrayView1<f64>, h0: f64, decay: f64, gain: f64) -> Result<Array1<f64>> {
            let h = scan(
                |u_t, h_tm1, decay, gain| decay * h_tm1 + gain * u_t,
                sequences = [u],
                outputs_info = [h0],
                non_sequences = [decay, gain],
                n_steps = 4,
                go_backwards = false,
                strict = true,
                name = "leaky_integrator",
            );
            Ok(h)
        }

        /// Positional arguments in PyTensor's order, named and strict.
        pub fn positional(u: ArrayView1<f64>, h0: f64, decay: f64) -> Result<Array1<f64>> {
            Ok(scan(|u_t, h_tm1, decay| decay * h_tm1 + u_t, u, h0, decay, strict = true, name = "positional"))
        }

        /// Strict, as PyTensor code is written: the step reads the weights by their outer
        /// names, which are listed in `non_sequences` (the step arguments that receive them
        /// have other names here).
        pub fn listed(u: ArrayView1<f64>, h0: f64, decay: f64, gain: f64) -> Result<Array1<f64>> {
            let h = scan(
                |u_t, h_tm1, _d, _g| decay * h_tm1 + gain * u_t,
                sequences = u,
                outputs_info = h0,
                non_sequences = [decay, gain],
                strict = true,
            );
            Ok(h)
        }
    }
}

#[test]
fn a_named_strict_scan() {
    let u = array![1.0, 0.0, 2.0, -1.0, 5.0];
    let got = named::leaky(u.view(), 10.0, 0.5, 2.0).unwrap();
    let mut h = 10.0;
    let expected: Vec<f64> = u
        .iter()
        .take(4)
        .map(|x| {
            h = 0.5 * h + 2.0 * x;
            h
        })
        .collect();
    assert_eq!(expected, vec![7.0, 3.5, 5.75, 0.875]);
    assert_allclose(got.as_slice().unwrap(), &expected, 1e-15);
    second_opinion(
        named::SOURCE,
        "leaky",
        vec![
            Value::from(u.clone()),
            Value::from(10.0f64),
            Value::from(0.5f64),
            Value::from(2.0f64),
        ],
        vec![Value::from(got)],
    );

    let got = named::listed(u.view(), 10.0, 0.5, 2.0).unwrap();
    assert_allclose(&got.as_slice().unwrap()[..4], &expected, 1e-15);
    assert_eq!(got.len(), 5);
    second_opinion(
        named::SOURCE,
        "listed",
        vec![
            Value::from(u.clone()),
            Value::from(10.0f64),
            Value::from(0.5f64),
            Value::from(2.0f64),
        ],
        vec![Value::from(got)],
    );

    let got = named::positional(u.view(), 1.0, 0.5).unwrap();
    assert_eq!(got.to_vec(), vec![1.5, 0.75, 2.375, 0.1875, 5.09375]);
    second_opinion(
        named::SOURCE,
        "positional",
        vec![Value::from(u), Value::from(1.0f64), Value::from(0.5f64)],
        vec![Value::from(got)],
    );
}

#[test]
fn until_with_a_mitsot_output() {
    let init = array![0i64, 1];
    let got = steps::fib_until(init.view(), 50).unwrap();
    assert_eq!(got.to_vec(), vec![1, 2, 3, 5, 8, 13, 21, 34, 55]);
    second_opinion(
        steps::SOURCE,
        "fib_until",
        vec![Value::from(init.clone()), Value::from(50i64)],
        vec![Value::from(got)],
    );
    // Never met: n_steps bounds the loop.
    let got = steps::fib_until(init.view(), i64::MAX).unwrap();
    // (the values wrap around past i64::MAX, numpy-style, so `> limit` stays false)
    assert_eq!(got.len(), 100);
    let mut fib = vec![0i64, 1];
    for t in 0..100 {
        fib.push(fib[t].wrapping_add(fib[t + 1]));
    }
    assert_eq!(got.to_vec(), fib[2..].to_vec());
    second_opinion(
        steps::SOURCE,
        "fib_until",
        vec![Value::from(init), Value::from(i64::MAX)],
        vec![Value::from(got)],
    );
}

mod returned_twice {
    scan_tests::program! {
        /// The same scan output returned several times, beside views of it: every result
        /// is its own array (the buffer is moved out only by its last use).
        pub fn twice(v: ArrayView1<f64>) -> Result<(Array2<f64>, Array1<f64>, Array2<f64>, f64)> {
            let rows = scan(|x, acc| acc + x, sequences = v, outputs_info = zeros_like(v));
            let doubled = rows * 2.0;
            Ok((rows, rows[-1], rows, doubled.sum()))
        }
    }
}

#[test]
fn a_result_returned_twice_beside_its_views() {
    let v = array![1.0, 2.0];
    let (a, last, b, total) = returned_twice::twice(v.view()).unwrap();
    // Each step adds the scalar x to every element of the running vector.
    let expected = array![[1.0, 1.0], [3.0, 3.0]];
    assert_eq!(a, expected);
    assert_eq!(b, expected);
    assert_eq!(last, array![3.0, 3.0]);
    assert_eq!(total, 16.0);
    second_opinion(
        returned_twice::SOURCE,
        "twice",
        vec![Value::from(v)],
        vec![
            Value::from(a),
            Value::from(last),
            Value::from(b),
            Value::from(total),
        ],
    );
}

mod annotated {
    scan_tests::program! {
        /// Step arguments may carry their types, as documentation the compiler checks.
        pub fn row_sums(m: ArrayView2<f64>) -> Result<Array1<f64>> {
            let out = scan(
                |row: ArrayView1<f64>, acc: f64| acc + row.sum(),
                sequences = m,
                outputs_info = 0.0,
            );
            Ok(out)
        }
    }
}

#[test]
fn step_arguments_may_be_annotated() {
    let m = array![[1.0, 2.0], [3.0, 4.0]];
    let got = annotated::row_sums(m.view()).unwrap();
    assert_eq!(got.to_vec(), vec![3.0, 10.0]);
    second_opinion(
        annotated::SOURCE,
        "row_sums",
        vec![Value::from(m)],
        vec![Value::from(got)],
    );
}
