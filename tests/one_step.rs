//! One-step inlining (`rewrite/one_step.rs`): a scan with `n_steps = 1` becomes its step,
//! with no loop. The same programs compiled with every pass, with none, with one_step
//! alone and with all but one_step give the same numbers (checked by hand too) and the
//! same `Err`s: a sequence too short for its window or for one step, an initial state
//! with too few rows or of another shape than the step's result, in the loop's order
//! when several are wrong.

mod common;

use common::{second_opinion, Value};
use scan_codegen::rewrite::{Config, Pass};
use scan_runtime::prelude::*;

/// The same programs under several `#![rewrites(..)]` settings.
macro_rules! variants {
    ($($module:ident: [$($setting:tt)*];)*) => {$(
        mod $module {
            scan_tests::program! {
                #![rewrites($($setting)*)]

                /// SITSOT: the state once updated; the whole result and its last row.
                pub fn affine(x0: ArrayView1<f64>, a: ArrayView1<f64>) -> Result<(Array2<f64>, Array1<f64>)> {
                    let r = scan(|p, a| p * a + 1.0, outputs_info = x0, non_sequences = a, n_steps = 1);
                    Ok((r, r[-1]))
                }

                /// MITSOT with a map output beside it.
                pub fn fib(x0: ArrayView1<i64>) -> Result<(Array1<i64>, Array1<i64>)> {
                    let (x, d) = scan(|a, b| (a + b, b - a), outputs_info = [taps(x0, [-2, -1]), None], n_steps = 1);
                    Ok((x, d))
                }

                /// NITSOT over a sequence with a past and a future tap, both directions.
                pub fn window(u: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
                    let f = scan(|a, b, c| a * 100.0 + b * 10.0 + c, sequences = taps(u, [-2, 0, 1]), n_steps = 1);
                    let g = scan(|a, b, c| a * 100.0 + b * 10.0 + c, sequences = taps(u, [-2, 0, 1]), n_steps = 1, go_backwards = true);
                    Ok((f, g))
                }

                /// Two sequences, a MITSOT state and a matrix product: the loop's checks in
                /// its order.
                pub fn checked(u: ArrayView2<f64>, v: ArrayView1<f64>, x0: ArrayView2<f64>, w: ArrayView2<f64>) -> Result<Array2<f64>> {
                    let x = scan(
                        |u_p, u_t, v_t, a, b, w| tanh(a.dot(w) + b * v_t + u_t - u_p),
                        sequences = [taps(u, [-1, 0]), v],
                        outputs_info = taps(x0, [-2, -1]),
                        non_sequences = w,
                        n_steps = 1,
                    );
                    Ok(x)
                }

                /// until: the one step runs whatever the condition says.
                pub fn doubling(x0: f64, limit: f64) -> Result<Array1<f64>> {
                    let x = scan(|x, limit| (x * 2.0, until(x * 2.0 > limit)), outputs_info = x0, non_sequences = limit, n_steps = 1);
                    Ok(x)
                }

                /// A one-step scan inside the step of a loop over rows, and a loop inside the
                /// step of a one-step scan.
                pub fn nested(m: ArrayView2<f64>, k: usize) -> Result<(Array1<f64>, Array1<f64>)> {
                    let s = scan(|row, acc| {
                        let inner = scan(|a, b, t| t + a * b, sequences = taps(row, [-1, 0]), outputs_info = 0.0, n_steps = 1);
                        acc + inner[-1]
                    }, sequences = m, outputs_info = 0.0);
                    let p = scan(|row| {
                        let c = scan(|x, r| x * r + 1.0, outputs_info = 0.0, non_sequences = row.sum(), n_steps = k);
                        c[-1]
                    }, sequences = m, n_steps = 1);
                    Ok((s, p))
                }
            }
        }
    )*};
}

variants! {
    all: [all];
    none: [none];
    one_step_only: [one_step];
    all_but_one_step: [all_except(one_step)];
}

/// Calls `$f` of every variant with the same arguments: the results, in the order of
/// `variants!` (all, none, one_step alone, all but one_step).
macro_rules! each {
    ($f:ident($($arg:expr),*)) => {
        [
            all::$f($($arg),*),
            none::$f($($arg),*),
            one_step_only::$f($($arg),*),
            all_but_one_step::$f($($arg),*),
        ]
    };
}

/// Every setting gives the same numbers, bit for bit, or every setting an `Err`, the
/// same with one_step as without it (fusion may name another expression in a broadcast
/// error: the pairs compared differ only by one_step). Returns the result without
/// rewrites.
fn same<T: PartialEq + std::fmt::Debug + Clone>(results: [Result<T>; 4]) -> Result<T> {
    let [all, none, one_step, all_but_one_step] = results;
    assert_eq!(one_step, none, "one_step alone vs no rewrite");
    assert_eq!(all, all_but_one_step, "all vs all but one_step");
    assert_eq!(all.is_ok(), none.is_ok(), "all: {all:?}, none: {none:?}");
    if let (Ok(a), Ok(n)) = (&all, &none) {
        assert_eq!(a, n, "all vs no rewrite");
    }
    none
}

/// What one_step did to the programs with every pass on.
fn fired() -> Vec<String> {
    let (_, fired) = scan_codegen::compile_with(all::SOURCE, &Config::all()).unwrap();
    fired
        .iter()
        .filter(|f| f.pass == Pass::OneStep.name())
        .map(|f| f.to_string())
        .collect()
}

fn vec(v: &[f64]) -> Array1<f64> {
    Array1::from(v.to_vec())
}

#[test]
fn the_pass_fires_on_every_one_step_scan_and_only_those() {
    let fired = fired();
    // affine, fib, window (2), checked, doubling, nested (inner and outer): 8.
    assert_eq!(fired.len(), 8, "{fired:#?}");
    assert!(
        fired.iter().all(|f| f.starts_with("one_step: scan of `")
            && f.ends_with("runs one step: its step is inlined")),
        "{fired:#?}"
    );
}

#[test]
fn a_sitsot_state_updated_once() {
    let (x0, a) = (vec(&[1.0, -2.0, 0.5]), vec(&[3.0, 0.25, -4.0]));
    let (r, last) = same(each!(affine(x0.view(), a.view()))).unwrap();
    let expected = vec(&[4.0, 0.5, -1.0]);
    assert_eq!(r, expected.clone().insert_axis(Axis(0)));
    assert_eq!(last, expected);
    second_opinion(
        all::SOURCE,
        "affine",
        vec![Value::from(x0.clone()), Value::from(a.clone())],
        vec![Value::from(r), Value::from(last)],
    );
    // a broadcast to the state's shape is fine; a state that would grow is the loop's Err.
    let one = vec(&[2.0]);
    let (r, _) = same(each!(affine(x0.view(), one.view()))).unwrap();
    assert_eq!(r.row(0), vec(&[3.0, -3.0, 2.0]));
    let e = same(each!(affine(one.view(), a.view()))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the step result `p * a + 1.0` for output `x0` has shape [3] but the output's rows have shape [1]"
    );
    let e = same(each!(affine(x0.view(), vec(&[1.0, 2.0]).view()))).unwrap_err();
    assert!(e.to_string().starts_with("cannot broadcast shapes"), "{e}");
}

#[test]
fn a_mitsot_state_reads_its_initial_rows() {
    for (x0, sum, diff) in [(vec![5i64, 8], 13, 3), (vec![5, 8, 100], 13, 3)] {
        let x0 = Array1::from(x0);
        let (x, d) = same(each!(fib(x0.view()))).unwrap();
        assert_eq!((x.to_vec(), d.to_vec()), (vec![sum], vec![diff]));
        second_opinion(
            all::SOURCE,
            "fib",
            vec![Value::from(x0.clone())],
            vec![Value::from(x), Value::from(d)],
        );
    }
    let e = same(each!(fib(Array1::from(vec![5i64]).view()))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "initial state `x0` has 1 row but taps [-2, -1] need 2 (init[0] is output[t-2])"
    );
}

#[test]
fn sequence_taps_read_the_first_or_the_last_usable_rows() {
    for len in 4..8 {
        let u = Array1::from_shape_fn(len, |i| i as f64 + 1.0);
        let (f, g) = same(each!(window(u.view()))).unwrap();
        // Forwards: u[t - 2], u[t], u[t + 1] at t = 2. Backwards: the last window.
        assert_eq!(f.to_vec(), vec![u[0] * 100.0 + u[2] * 10.0 + u[3]]);
        assert_eq!(
            g.to_vec(),
            vec![u[len - 4] * 100.0 + u[len - 2] * 10.0 + u[len - 1]]
        );
        second_opinion(
            all::SOURCE,
            "window",
            vec![Value::from(u.clone())],
            vec![Value::from(f), Value::from(g)],
        );
    }
    // Three rows hold the window of taps [-2, 0, 1] but not one step; two not even that.
    let e = same(each!(window(vec(&[1.0, 2.0, 3.0]).view()))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sequence `u` has 3 rows but n_steps = 1 with taps [-2, 0, 1] needs 4"
    );
    let e = same(each!(window(vec(&[1.0, 2.0]).view()))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sequence `u` has 2 rows but the window of taps [-2, 0, 1] needs 3"
    );
}

#[test]
fn several_bad_arguments_give_the_loops_first_error() {
    let w = Array2::from_shape_fn((2, 2), |(i, j)| (i + 2 * j) as f64 * 0.25 - 0.3);
    let x0 = Array2::from_shape_fn((2, 2), |(i, j)| (i * 2 + j) as f64 * 0.1);
    let u = Array2::from_shape_fn((3, 2), |(i, j)| (i * 2 + j) as f64 * 0.2 - 0.5);
    let v = vec(&[0.5, 2.0]);
    let x = same(each!(checked(u.view(), v.view(), x0.view(), w.view()))).unwrap();
    // By hand: x_t = tanh(x_{t-2} . w + x_{t-1} * v_0 + u_1 - u_0).
    let a = x0.row(0).dot(&w);
    let expected: Vec<f64> = (0..2)
        .map(|j| (a[j] + x0[[1, j]] * v[0] + u[[1, j]] - u[[0, j]]).tanh())
        .collect();
    assert_eq!(x.row(0).to_vec(), expected);
    second_opinion(
        all::SOURCE,
        "checked",
        vec![
            Value::from(u.clone()),
            Value::from(v.clone()),
            Value::from(x0.clone()),
            Value::from(w.clone()),
        ],
        vec![Value::from(x)],
    );
    let row = |n: usize| u.slice(s![..n, ..]);
    let empty = vec(&[]);
    let short_x0 = x0.slice(s![..1, ..]);
    // u fits its window but not one step; v is empty (its window is empty): u's Err first.
    let e = same(each!(checked(row(1), empty.view(), x0.view(), w.view()))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sequence `u` has 1 row but n_steps = 1 with taps [-1, 0] needs 2"
    );
    // Every window is checked before any sequence's rows for the steps.
    let e = same(each!(checked(row(0), v.view(), x0.view(), w.view()))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sequence `u` has 0 rows but the window of taps [-1, 0] needs 1"
    );
    // Sequences before the initial state; the initial state before the step's own errors.
    let e = same(each!(checked(row(1), v.view(), short_x0, w.view()))).unwrap_err();
    assert!(e.to_string().starts_with("sequence `u` has 1 row"), "{e}");
    let e = same(each!(checked(
        u.view(),
        v.view(),
        short_x0,
        w.slice(s![..1, ..])
    )))
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "initial state `x0` has 1 row but taps [-2, -1] need 2 (init[0] is output[t-2])"
    );
    // The step's own error (a product of mismatched sizes), then the result's shape.
    let e = same(each!(checked(
        u.view(),
        v.view(),
        x0.view(),
        w.slice(s![..1, ..])
    )))
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("cannot compute the dot product `a.dot(w)`"),
        "{e}"
    );
    let wide = Array2::from_shape_fn((2, 3), |(i, j)| (i + j) as f64);
    let e = same(each!(checked(u.view(), v.view(), x0.view(), wide.view()))).unwrap_err();
    assert!(e.to_string().starts_with("cannot broadcast"), "{e}");
    let x1 = Array2::from_shape_fn((2, 1), |(i, _)| i as f64);
    let e = same(each!(checked(
        u.view(),
        v.view(),
        x1.view(),
        Array2::ones((1, 2)).view()
    )))
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "the step result `tanh(a.dot(w) + b * v_t + u_t -u_p)` for output `x0` has shape [2] but the output's rows have shape [1]"
    );
}

#[test]
fn until_with_one_step_keeps_the_step() {
    for limit in [-10.0, 1.0, 3.0, 100.0] {
        let x = same(each!(doubling(1.5, limit))).unwrap();
        assert_eq!(x.to_vec(), vec![3.0]);
        second_opinion(
            all::SOURCE,
            "doubling",
            vec![Value::from(1.5), Value::from(limit)],
            vec![Value::from(x)],
        );
    }
}

#[test]
fn nested_scans_of_one_step() {
    let m = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f64 * 0.5 - 1.0);
    for k in [1usize, 3] {
        let (s, p) = same(each!(nested(m.view(), k))).unwrap();
        // s: the running total of r[0] * r[1] over the rows (the inner scan's one step).
        let mut acc = 0.0;
        let totals: Vec<f64> = (0..3)
            .map(|i| {
                acc += m[[i, 0]] * m[[i, 1]];
                acc
            })
            .collect();
        assert_eq!(s.to_vec(), totals);
        // p: x <- x * sum(row 0) + 1, k times, from 0.
        let r: f64 = m.row(0).sum();
        let mut x = 0.0;
        for _ in 0..k {
            x = x * r + 1.0;
        }
        assert_eq!(p.to_vec(), vec![x]);
        second_opinion(
            all::SOURCE,
            "nested",
            vec![Value::from(m.clone()), Value::from(k as i64)],
            vec![Value::from(s), Value::from(p)],
        );
    }
    // c[-1] of no step; a row too short for the inner scan's window and one step.
    assert!(same(each!(nested(m.view(), 0))).is_err());
    let e = same(each!(nested(m.slice(s![.., ..1]), 1))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sequence `row` has 1 row but n_steps = 1 with taps [-1, 0] needs 2"
    );
}
