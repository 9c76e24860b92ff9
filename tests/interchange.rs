//! Loop interchange in generated code: scans whose step is elementwise run "element
//! chunks outer, steps inner" (rewrite/loop_interchange.rs, emit/interchange.rs). The
//! same programs compiled with the rewrite (`on`, the default) and without it (`off`:
//! `all_except(loop_interchange)`) must give bit-identical results, equal to hand-written
//! loops doing the same operations in the same order, and agree with the reference
//! evaluator; at 0, 1, 2 and 7 steps, on rows of 1, 3, 257 and 1000 elements (not
//! multiples of the chunk), under each run-time policy (`Auto`: where it pays; `Always`:
//! whenever the rows allow it, so rows of 257 and 1000 elements with a sequence or a trace
//! also run interchanged; `Never`: the ordinary loop).

mod common;

use common::{second_opinion, Value};
use scan_runtime::__private::kernels::interchange::{set_policy, Policy};
use scan_runtime::prelude::*;

macro_rules! programs {
    ($($module:ident: [$($setting:tt)*];)*) => {$(
        mod $module {
            scan_tests::program! {
                #![rewrites($($setting)*)]

                /// keep 1: the state alone.
                pub fn power(a: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
                    let r = scan(|p, a| p * a, outputs_info = ones_like(a), non_sequences = a, n_steps = k);
                    Ok(r[-1])
                }

                /// MITSOT taps [-3, -1], a sequence, a scalar non-sequence and a map output;
                /// keep none: every step.
                pub fn mitsot_all(u: ArrayView2<f64>, x0: ArrayView2<f64>, c: f64) -> Result<(Array2<f64>, Array2<f64>)> {
                    let (x, y) = scan(
                        |u_t, x_tm3, x_tm1, c| (x_tm1 * c + x_tm3 * 0.5 + u_t, x_tm1 * 2.0 - u_t),
                        sequences = u,
                        outputs_info = [taps(x0, [-3, -1]), None],
                        non_sequences = c,
                    );
                    Ok((x, y))
                }

                /// The same, keep 1 (a ring of the taps' 3 rows; the map output's state).
                pub fn mitsot_last(u: ArrayView2<f64>, x0: ArrayView2<f64>, c: f64) -> Result<(Array1<f64>, Array1<f64>)> {
                    let (x, y) = scan(
                        |u_t, x_tm3, x_tm1, c| (x_tm1 * c + x_tm3 * 0.5 + u_t, x_tm1 * 2.0 - u_t),
                        sequences = u,
                        outputs_info = [taps(x0, [-3, -1]), None],
                        non_sequences = c,
                    );
                    Ok((x[-1], y[-1]))
                }

                /// The same, keep 3.
                pub fn mitsot_tail(u: ArrayView2<f64>, x0: ArrayView2<f64>, c: f64) -> Result<(Array2<f64>, Array2<f64>)> {
                    let (x, y) = scan(
                        |u_t, x_tm3, x_tm1, c| (x_tm1 * c + x_tm3 * 0.5 + u_t, x_tm1 * 2.0 - u_t),
                        sequences = u,
                        outputs_info = [taps(x0, [-3, -1]), None],
                        non_sequences = c,
                    );
                    Ok((x[-3..], y[-3..]))
                }

                /// Sequence taps [-1, 0] read backwards.
                pub fn backwards(u: ArrayView2<f64>, h0: ArrayView1<f64>) -> Result<Array2<f64>> {
                    let h = scan(
                        |u_prev, u_t, h| h * 0.5 + u_t - u_prev * 0.25,
                        sequences = taps(u, [-1, 0]),
                        outputs_info = h0,
                        go_backwards = true,
                    );
                    Ok(h)
                }

                /// Integers (wrapping) and a cast of the non-sequence.
                pub fn int_state(x0: ArrayView1<i64>, a: ArrayView1<i32>, k: usize) -> Result<Array2<i64>> {
                    let x = scan(|x, a| x * 3 + a, outputs_info = x0, non_sequences = a, n_steps = k);
                    Ok(x)
                }

                /// Rows that are matrices.
                pub fn matrix_rows(m0: ArrayView2<f64>, w: ArrayView2<f64>, k: usize) -> Result<Array2<f64>> {
                    let m = scan(|m, w| m * w + 1.0, outputs_info = m0, non_sequences = w, n_steps = k);
                    Ok(m[-1])
                }

                /// An initial state and a non-sequence whose shapes may disagree.
                pub fn scaled(x0: ArrayView1<f64>, a: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
                    let r = scan(|p, a| p * a, outputs_info = x0, non_sequences = a, n_steps = k);
                    Ok(r[-1])
                }

                /// A sequence whose rows may disagree with the state.
                pub fn driven(u: ArrayView2<f64>, x0: ArrayView1<f64>) -> Result<Array2<f64>> {
                    let x = scan(|u_t, x| x * 0.5 + u_t, sequences = u, outputs_info = x0);
                    Ok(x)
                }

                /// A state from `full_like` with a literal: the interchanged loop starts from
                /// the value and never reads a filled buffer; the ordinary one fills it.
                pub fn filled(a: ArrayView2<f64>, k: usize) -> Result<Array2<f64>> {
                    let r = scan(|p, a| p * a + 0.5, outputs_info = full_like(a, -2.0), non_sequences = a, n_steps = k);
                    Ok(r[-1])
                }

                /// The same with the state shaped like another argument than the factor.
                pub fn filled_like(b: ArrayView1<f64>, a: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
                    let r = scan(|p, a| p * a, outputs_info = ones_like(b), non_sequences = a, n_steps = k);
                    Ok(r[-1])
                }

                /// An interchanged scan inside an ordinary one.
                pub fn nested(m: ArrayView2<f64>, h0: ArrayView1<f64>) -> Result<Array2<f64>> {
                    let h = scan(
                        |m_t, h| scan(|g, w| g * w + 0.5, outputs_info = h, non_sequences = m_t, n_steps = 3)[-1],
                        sequences = m,
                        outputs_info = h0,
                    );
                    Ok(h)
                }
            }
        }
    )*};
}

programs! {
    on: [all];
    off: [all_except(loop_interchange)];
}

const POLICIES: [Policy; 3] = [Policy::Auto, Policy::Always, Policy::Never];
const STEPS: [usize; 4] = [0, 1, 2, 7];
const ELEMENTS: [usize; 5] = [0, 1, 3, 257, 1000];

/// Runs `f` under each policy, restoring `Auto` after.
fn under_each_policy(mut f: impl FnMut(Policy)) {
    for policy in POLICIES {
        set_policy(policy);
        f(policy);
    }
    set_policy(Policy::Auto);
}

/// Deterministic values in [0.5, 1.5), not all the same.
fn values(n: usize, seed: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 0.5 + ((i * 7919 + seed * 104729) % 1000) as f64 / 1000.0)
        .collect()
}

fn matrix(rows: usize, cols: usize, seed: usize) -> Array2<f64> {
    Array2::from_shape_vec((rows, cols), values(rows * cols, seed)).unwrap()
}

/// Exact equality, printing the first difference.
fn same<T: PartialEq + std::fmt::Debug>(got: &[T], expected: &[T], what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}: lengths");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != expected[i]) {
        panic!("{what}: element {i}: {:?} vs {:?}", got[i], expected[i]);
    }
}

#[test]
fn power_keeps_only_the_state() {
    for m in ELEMENTS {
        let a = Array1::from(values(m, 1));
        for k in STEPS {
            let expected: Vec<f64> = a
                .iter()
                .map(|&a| {
                    let mut p = 1.0;
                    for _ in 0..k {
                        p *= a;
                    }
                    p
                })
                .collect();
            under_each_policy(|policy| {
                let what = format!("power m = {m} k = {k} {policy:?}");
                let (got, reference) = (on::power(a.view(), k), off::power(a.view(), k));
                match k {
                    0 => assert!(
                        got.is_err() && reference.is_err(),
                        "{what}: r[-1] of no step"
                    ),
                    _ => {
                        let got = got.unwrap();
                        same(got.as_slice().unwrap(), &expected, &what);
                        same(
                            got.as_slice().unwrap(),
                            reference.unwrap().as_slice().unwrap(),
                            &what,
                        );
                    }
                }
            });
            if k > 0 && m < 300 {
                let got = on::power(a.view(), k).unwrap();
                second_opinion(
                    on::SOURCE,
                    "power",
                    vec![Value::from(a.clone()), Value::from(k as i64)],
                    vec![Value::from(got)],
                );
            }
        }
    }
}

/// The MITSOT program by hand: (x rows, y rows) of every step.
fn mitsot_by_hand(u: &Array2<f64>, x0: &Array2<f64>, c: f64) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let mut history: Vec<Vec<f64>> = x0.rows().into_iter().map(|r| r.to_vec()).collect();
    let mut ys = Vec::new();
    for (t, u_t) in u.rows().into_iter().enumerate() {
        let (x_tm3, x_tm1) = (&history[t], &history[t + 2]);
        let x: Vec<f64> = (0..u_t.len())
            .map(|e| x_tm1[e] * c + x_tm3[e] * 0.5 + u_t[e])
            .collect();
        let y: Vec<f64> = (0..u_t.len()).map(|e| x_tm1[e] * 2.0 - u_t[e]).collect();
        history.push(x);
        ys.push(y);
    }
    (history.split_off(3), ys)
}

fn rows(a: &Array2<f64>) -> Vec<Vec<f64>> {
    a.rows().into_iter().map(|r| r.to_vec()).collect()
}

#[test]
fn mitsot_with_a_sequence_a_scalar_and_a_map_output_under_every_keep() {
    let c = 0.75;
    for m in ELEMENTS {
        for n in STEPS {
            let u = matrix(n, m, 2);
            let x0 = matrix(3, m, 3);
            let (xs, ys) = mitsot_by_hand(&u, &x0, c);
            let tail = |v: &Vec<Vec<f64>>| v[v.len().saturating_sub(3)..].to_vec();
            under_each_policy(|policy| {
                let what = format!("m = {m} n = {n} {policy:?}");
                // keep none
                let (x, y) = on::mitsot_all(u.view(), x0.view(), c).unwrap();
                let (rx, ry) = off::mitsot_all(u.view(), x0.view(), c).unwrap();
                assert_eq!((x.dim(), y.dim()), (rx.dim(), ry.dim()), "{what}");
                if n > 0 {
                    assert_eq!(rows(&x), xs, "{what}: x");
                    assert_eq!(rows(&y), ys, "{what}: y");
                }
                assert_eq!((&x, &y), (&rx, &ry), "{what}");
                // keep 1
                match (
                    on::mitsot_last(u.view(), x0.view(), c),
                    off::mitsot_last(u.view(), x0.view(), c),
                ) {
                    (Ok((x, y)), Ok((rx, ry))) => {
                        assert_eq!(&x.to_vec(), xs.last().unwrap(), "{what}: x[-1]");
                        assert_eq!(&y.to_vec(), ys.last().unwrap(), "{what}: y[-1]");
                        assert_eq!((x, y), (rx, ry), "{what}");
                    }
                    (Err(e), Err(r)) => {
                        assert_eq!(n, 0, "{what}: {e}");
                        assert_eq!(e.to_string(), r.to_string());
                    }
                    other => panic!("{what}: {other:?}"),
                }
                // keep 3
                let (x, y) = on::mitsot_tail(u.view(), x0.view(), c).unwrap();
                let (rx, ry) = off::mitsot_tail(u.view(), x0.view(), c).unwrap();
                assert_eq!(x.nrows(), n.min(3), "{what}");
                if n > 0 {
                    assert_eq!(rows(&x), tail(&xs), "{what}: x[-3..]");
                    assert_eq!(rows(&y), tail(&ys), "{what}: y[-3..]");
                }
                assert_eq!((x, y), (rx, ry), "{what}");
            });
            if m < 300 {
                let args = vec![
                    Value::from(u.clone()),
                    Value::from(x0.clone()),
                    Value::from(c),
                ];
                let (x, y) = on::mitsot_all(u.view(), x0.view(), c).unwrap();
                second_opinion(
                    on::SOURCE,
                    "mitsot_all",
                    args.clone(),
                    vec![Value::from(x), Value::from(y)],
                );
                let (x, y) = on::mitsot_tail(u.view(), x0.view(), c).unwrap();
                second_opinion(
                    on::SOURCE,
                    "mitsot_tail",
                    args.clone(),
                    vec![Value::from(x), Value::from(y)],
                );
                if n > 0 {
                    let (x, y) = on::mitsot_last(u.view(), x0.view(), c).unwrap();
                    second_opinion(
                        on::SOURCE,
                        "mitsot_last",
                        args,
                        vec![Value::from(x), Value::from(y)],
                    );
                }
            }
        }
    }
}

#[test]
fn sequence_taps_read_backwards() {
    for m in ELEMENTS {
        for n in STEPS {
            // Taps [-1, 0] need one row more than the steps.
            let u = matrix(n + 1, m, 4);
            let h0 = Array1::from(values(m, 5));
            let mut h = h0.to_vec();
            let mut expected = Vec::new();
            for t in 0..n {
                let (prev, cur) = (u.row(n - 1 - t), u.row(n - t));
                h = (0..m)
                    .map(|e| h[e] * 0.5 + cur[e] - prev[e] * 0.25)
                    .collect();
                expected.push(h.clone());
            }
            under_each_policy(|policy| {
                let got = on::backwards(u.view(), h0.view()).unwrap();
                assert_eq!(
                    got,
                    off::backwards(u.view(), h0.view()).unwrap(),
                    "{policy:?}"
                );
                if n > 0 {
                    assert_eq!(rows(&got), expected, "m = {m} n = {n} {policy:?}");
                }
            });
            if m < 300 {
                let got = on::backwards(u.view(), h0.view()).unwrap();
                second_opinion(
                    on::SOURCE,
                    "backwards",
                    vec![Value::from(u.clone()), Value::from(h0.clone())],
                    vec![Value::from(got)],
                );
            }
        }
    }
}

#[test]
fn integer_states_wrap_alike() {
    for m in ELEMENTS {
        let x0 = Array1::from_shape_fn(m, |i| i as i64 * 1_000_000_007 - 5);
        let a = Array1::from_shape_fn(m, |i| (i % 13) as i32 - 6);
        for k in STEPS.into_iter().chain([50]) {
            let mut x = x0.to_vec();
            let mut expected = Vec::new();
            for _ in 0..k {
                x = (0..m)
                    .map(|e| x[e].wrapping_mul(3).wrapping_add(i64::from(a[e])))
                    .collect();
                expected.extend_from_slice(&x);
            }
            under_each_policy(|policy| {
                let got = on::int_state(x0.view(), a.view(), k).unwrap();
                assert_eq!(got, off::int_state(x0.view(), a.view(), k).unwrap());
                same(
                    &got.iter().copied().collect::<Vec<_>>(),
                    &expected,
                    &format!("{m} {k} {policy:?}"),
                );
            });
        }
    }
}

#[test]
fn matrix_rows_and_strided_views() {
    for (r, c) in [(1, 1), (3, 5), (17, 61)] {
        let m0 = matrix(r, c, 6);
        let w = matrix(r, c, 7);
        for k in [1usize, 2, 7] {
            let expected = {
                let mut m = m0.clone();
                for _ in 0..k {
                    m = &m * &w + 1.0;
                }
                m
            };
            under_each_policy(|policy| {
                let got = on::matrix_rows(m0.view(), w.view(), k).unwrap();
                assert_eq!(got, expected, "{r}x{c} k = {k} {policy:?}");
                // Transposed (not contiguous) arguments: the ordinary loop, same numbers.
                let got_t = on::matrix_rows(m0.t(), w.t(), k).unwrap();
                assert_eq!(
                    got_t,
                    off::matrix_rows(m0.t(), w.t(), k).unwrap(),
                    "{policy:?}"
                );
                assert_eq!(got_t, expected.t(), "{policy:?}");
            });
        }
        let got = on::matrix_rows(m0.view(), w.view(), 2).unwrap();
        second_opinion(
            on::SOURCE,
            "matrix_rows",
            vec![
                Value::from(m0.clone()),
                Value::from(w.clone()),
                Value::from(2i64),
            ],
            vec![Value::from(got)],
        );
    }
    // Every other element of a vector: not contiguous either.
    let a = Array1::from(values(2000, 8));
    under_each_policy(|policy| {
        let strided = a.slice(s![..;2]);
        let got = on::power(strided, 5).unwrap();
        assert_eq!(got, off::power(strided, 5).unwrap(), "{policy:?}");
        assert_eq!(got, strided.mapv(|x| x * x * x * x * x), "{policy:?}");
    });
}

#[test]
fn states_from_full_like_start_from_its_value() {
    for (r, c) in [(1, 1), (3, 5), (17, 61)] {
        let a = matrix(r, c, 13);
        for k in [1usize, 2, 7] {
            let expected = a.mapv(|a| {
                let mut p = -2.0;
                for _ in 0..k {
                    p = p * a + 0.5;
                }
                p
            });
            under_each_policy(|policy| {
                let what = format!("{r}x{c} k = {k} {policy:?}");
                let got = on::filled(a.view(), k).unwrap();
                assert_eq!(got, expected, "{what}");
                assert_eq!(got, off::filled(a.view(), k).unwrap(), "{what}");
                // Transposed: the ordinary loop, its state filled first.
                let got_t = on::filled(a.t(), k).unwrap();
                assert_eq!(got_t, expected.t(), "{what} transposed");
            });
        }
        assert!(on::filled(a.view(), 0).is_err(), "r[-1] of no step");
    }
    second_opinion(
        on::SOURCE,
        "filled",
        vec![Value::from(matrix(3, 5, 13)), Value::from(2i64)],
        vec![Value::from(on::filled(matrix(3, 5, 13).view(), 2).unwrap())],
    );
    // A state shaped like another argument: the same shape runs interchanged; a factor of
    // one element broadcasts (the ordinary loop); a state of one element against three
    // factors is the ordinary loop's error.
    let (b, a) = (
        Array1::from(values(1000, 14)),
        Array1::from(values(1000, 15)),
    );
    let one = Array1::from(vec![1.25]);
    under_each_policy(|policy| {
        assert_eq!(
            on::filled_like(b.view(), a.view(), 3).unwrap(),
            a.mapv(|a| a * a * a),
            "{policy:?}"
        );
        assert_eq!(
            on::filled_like(b.view(), one.view(), 2).unwrap(),
            Array1::from_elem(1000, 1.25 * 1.25),
            "{policy:?}"
        );
        let e = on::filled_like(one.view(), a.view(), 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            off::filled_like(one.view(), a.view(), 2)
                .unwrap_err()
                .to_string(),
            "{policy:?}"
        );
    });
}

#[test]
fn shape_mismatches_are_the_ordinary_loops_errors() {
    let x0 = Array1::from(values(3, 9));
    under_each_policy(|policy| {
        // A non-sequence of 4 elements against a state of 3: an error naming the
        // expression and both shapes, the same with and without the rewrite.
        let a = Array1::from(values(4, 10));
        let e = on::scaled(x0.view(), a.view(), 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            off::scaled(x0.view(), a.view(), 2).unwrap_err().to_string()
        );
        assert_eq!(
            e.to_string(),
            "cannot broadcast shapes [3] and [4] together in `p * a`",
            "{policy:?}"
        );
        // A sequence whose rows have 4 elements against a state of 3.
        let u = matrix(5, 4, 11);
        let e = on::driven(u.view(), x0.view()).unwrap_err();
        assert_eq!(
            e.to_string(),
            off::driven(u.view(), x0.view()).unwrap_err().to_string()
        );
        assert!(
            e.to_string().contains("[3]") && e.to_string().contains("[4]"),
            "{e}"
        );
        assert!(e.to_string().contains("x * 0.5 + u_t"), "{e}");
        // Shapes that broadcast (one element against three) still do: the ordinary loop
        // runs, as without the rewrite.
        let one = Array1::from(vec![1.5]);
        let got = on::scaled(x0.view(), one.view(), 3).unwrap();
        assert_eq!(got, off::scaled(x0.view(), one.view(), 3).unwrap());
        assert_eq!(got, x0.mapv(|x| x * 1.5 * 1.5 * 1.5));
        let u1 = matrix(4, 1, 12);
        assert_eq!(
            on::driven(u1.view(), x0.view()).unwrap(),
            off::driven(u1.view(), x0.view()).unwrap()
        );
        // No step, no check, as before.
        assert!(
            on::scaled(x0.view(), a.view(), 0).is_err(),
            "r[-1] of no step"
        );
        assert_eq!(
            on::driven(matrix(0, 4, 0).view(), x0.view()).unwrap().dim(),
            (0, 3)
        );
    });
    second_opinion(
        on::SOURCE,
        "scaled",
        vec![
            Value::from(x0.clone()),
            Value::from(Array1::from(vec![1.5])),
            Value::from(3i64),
        ],
        vec![Value::from(
            on::scaled(x0.view(), Array1::from(vec![1.5]).view(), 3).unwrap(),
        )],
    );
}

#[test]
fn an_interchanged_scan_inside_an_ordinary_one() {
    for m in [1usize, 3, 40] {
        let mm = matrix(5, m, 13);
        let h0 = Array1::from(values(m, 14));
        let mut h = h0.to_vec();
        let mut expected = Vec::new();
        for t in 0..5 {
            for _ in 0..3 {
                h = (0..m).map(|e| h[e] * mm[[t, e]] + 0.5).collect();
            }
            expected.push(h.clone());
        }
        under_each_policy(|policy| {
            let got = on::nested(mm.view(), h0.view()).unwrap();
            assert_eq!(rows(&got), expected, "{policy:?}");
            assert_eq!(got, off::nested(mm.view(), h0.view()).unwrap());
        });
        let got = on::nested(mm.view(), h0.view()).unwrap();
        second_opinion(
            on::SOURCE,
            "nested",
            vec![Value::from(mm.clone()), Value::from(h0.clone())],
            vec![Value::from(got)],
        );
    }
}

#[test]
fn the_rewrite_fires_where_expected() {
    let (_, fired) =
        scan_codegen::compile_with(on::SOURCE, &scan_codegen::rewrite::Config::all()).unwrap();
    let ours: Vec<String> = fired
        .iter()
        .filter(|f| f.pass == "loop_interchange")
        .map(|f| f.what.clone())
        .collect();
    // Every program above has one elementwise recurrence; `nested` has two scans, of
    // which only the inner one is elementwise.
    assert_eq!(ours.len(), 12, "{ours:#?}");
}
