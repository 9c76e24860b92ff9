//! The grouping of input projections (group_projections) in generated code: the products of
//! one sequence's rows by invariant matrices in a step's sum, `u_t.dot(w_in_1) +
//! u_tm4.dot(w_in_2)`, summed before the loop into one sequence (one product, the other
//! accumulated onto it in the same buffer), give what the program gives without rewrites
//! and what a hand-written loop gives, within 1e-12: at 0, 1, 2 and more steps, with a
//! product that broadcasts, with a sequence shorter than its window (the loop's error), and
//! going backwards with taps after the step.

mod common;

use common::tutorial_rnn::{rows_close, Rnn};
use common::{assert_allclose, matrix, second_opinion, Value};
use scan_runtime::prelude::*;

macro_rules! variants {
    ($($module:ident: [$($setting:tt)*];)*) => {$(
        #[allow(dead_code)]
        mod $module {
            scan_tests::program! {
                #![rewrites($($setting)*)]

                /// The scan tutorial's RNN (scan-bench's seed_taps).
                #[allow(clippy::too_many_arguments)]
                pub fn rnn(u: ArrayView2<f64>, x0: ArrayView2<f64>, y0: ArrayView1<f64>, w: ArrayView2<f64>,
                           w_in_1: ArrayView2<f64>, w_in_2: ArrayView2<f64>, w_feedback: ArrayView2<f64>,
                           w_out: ArrayView2<f64>) -> Result<(Array2<f64>, Array2<f64>)> {
                    let (x_vals, y_vals) = scan(
                        |u_tm4, u_t, x_tm3, x_tm1, y_tm1, w, w_in_1, w_in_2, w_feedback, w_out| {
                            let x_t = tanh(x_tm1.dot(w) + u_t.dot(w_in_1) + u_tm4.dot(w_in_2) + y_tm1.dot(w_feedback));
                            (x_t, x_tm3.dot(w_out))
                        },
                        sequences = [taps(u, [-4, 0])],
                        outputs_info = [taps(x0, [-3, -1]), y0],
                        non_sequences = [w, w_in_1, w_in_2, w_feedback, w_out],
                        strict = true,
                    );
                    Ok((x_vals, y_vals))
                }

                /// Taps before and after the step, read backwards for `n` steps; three
                /// projections, one of an elementwise function of its row.
                #[allow(clippy::too_many_arguments)]
                pub fn backwards(u: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>, a: ArrayView2<f64>,
                                 b: ArrayView2<f64>, c: ArrayView2<f64>, n: usize) -> Result<Array2<f64>> {
                    let h = scan(
                        |u_tm2, u_tp1, u_tp3, h, w, a, b, c| {
                            tanh(u_tp1.dot(a) + h.dot(w) + (u_tm2 * 0.5).dot(b) + u_tp3.dot(c))
                        },
                        sequences = [taps(u, [-2, 1, 3])],
                        outputs_info = h0,
                        non_sequences = [w, a, b, c],
                        n_steps = n,
                        go_backwards = true,
                    );
                    Ok(h)
                }
            }
        }
    )*};
}

variants! {
    all: [all];
    none: [none];
    alone: [group_projections];
    without: [all_except(group_projections)];
}

#[test]
fn the_tutorial_rnn_agrees_with_its_hand_written_loop() {
    // (n_x, columns of w_in_2): grouped; grouped with the recurrent stack packed (160 x
    // 160); the past input's product of one column, broadcast in the group's sum.
    for (n_x, in_2_columns) in [(4, 4), (160, 160), (4, 1)] {
        for steps in [0usize, 1, 2, 7] {
            let r = Rnn::new(steps + 4, n_x, 2, in_2_columns, n_x);
            let (want_x, want_y) = r.by_hand();
            for (name, got) in [
                ("all", r.run(all::rnn)),
                ("none", r.run(none::rnn)),
                ("alone", r.run(alone::rnn)),
                ("without", r.run(without::rnn)),
            ] {
                let (x, y) = got.unwrap_or_else(|e| panic!("{name}, {steps} steps: {e}"));
                assert_eq!(x.shape(), &[steps, n_x], "{name}");
                assert_eq!(y.shape(), &[steps, 2], "{name}");
                rows_close(&x, &want_x);
                rows_close(&y, &want_y);
            }
            if steps == 7 && n_x < 100 {
                let (x, y) = r.run(all::rnn).unwrap();
                second_opinion(all::SOURCE, "rnn", r.args(), vec![x.into(), y.into()]);
            }
        }
    }
}

#[test]
fn the_grouped_rnn_equals_the_program_without_rewrites() {
    for in_2_columns in [6, 1] {
        let r = Rnn::new(13, 6, 2, in_2_columns, 6);
        let (x, y) = r.run(all::rnn).unwrap();
        let (x0, y0) = r.run(none::rnn).unwrap();
        for (a, b) in [(x, x0), (y, y0)] {
            assert_eq!(a.shape(), b.shape());
            assert_allclose(
                &a.iter().copied().collect::<Vec<_>>(),
                &b.iter().copied().collect::<Vec<_>>(),
                1e-12,
            );
        }
    }
}

#[test]
fn no_step_gives_empty_results_and_a_short_sequence_the_loops_error() {
    // 4 rows: the window exactly, no step: each tap's rows are cut to none before the
    // loop (`u[4..]`, `u[..-4]`), whose products are empty, not an error.
    let r = Rnn::new(4, 5, 2, 5, 5);
    for (name, got) in [
        ("all", r.run(all::rnn)),
        ("none", r.run(none::rnn)),
        ("alone", r.run(alone::rnn)),
    ] {
        let (x, y) = got.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((x.shape(), y.shape()), (&[0, 5][..], &[0, 2][..]), "{name}");
    }
    // Fewer rows than the window: the slices are empty (numpy's clamping, no error of
    // theirs), and the loop reports the short sequence as without rewrites.
    for rows in 0..4 {
        let r = Rnn::new(rows, 5, 2, 5, 5);
        let want = r.run(none::rnn).unwrap_err().to_string();
        assert!(
            want.starts_with(&format!("sequence `u` has {rows} row")),
            "{want}"
        );
        for (name, got) in [("all", r.run(all::rnn)), ("alone", r.run(alone::rnn))] {
            assert_eq!(got.unwrap_err().to_string(), want, "{name}, {rows} rows");
        }
    }
}

#[test]
fn a_projection_of_the_wrong_size_fails_under_every_setting() {
    // w_in_2 with 4 rows for u's 3 columns: the product's error (before the loop when
    // grouped, at the first step without rewrites), naming the product.
    let mut r = Rnn::new(7, 4, 2, 4, 4);
    r.w_in_2 = matrix(4, 4, 6);
    for (name, got) in [
        ("all", r.run(all::rnn)),
        ("none", r.run(none::rnn)),
        ("alone", r.run(alone::rnn)),
        ("without", r.run(without::rnn)),
    ] {
        let e = got.unwrap_err().to_string();
        assert!(
            e.contains("u_tm4.dot(w_in_2)") && e.contains("inner sizes 3 and 4 differ"),
            "{name}: {e}"
        );
    }
}

/// `backwards` by hand, `n` steps: u allows `L - 5` (taps -2 to 3); going backwards step t
/// is the allowed step `s = L - 6 - t` (the last first), whose tap k reads row `s + k + 2`.
fn backwards_by_hand(
    u: &Array2<f64>,
    h0: &Array1<f64>,
    [w, a, b, c]: [&Array2<f64>; 4],
    n: usize,
) -> Vec<Array1<f64>> {
    let allowed = u.nrows() - 5;
    let mut h = h0.clone();
    let mut hs = Vec::new();
    for t in 0..n {
        let s = allowed - 1 - t;
        let row = |k: i64| u.row((s as i64 + k + 2) as usize);
        let pre = row(1).dot(a) + h.dot(w) + row(-2).mapv(|v| v * 0.5).dot(b) + row(3).dot(c);
        h = pre.mapv(f64::tanh);
        hs.push(h.clone());
    }
    hs
}

#[test]
fn taps_after_the_step_going_backwards_are_aligned() {
    let h0 = matrix(1, 2, 1).row(0).to_owned();
    let (w, a, b, c) = (
        matrix(2, 2, 2),
        matrix(3, 2, 3),
        matrix(3, 2, 4),
        matrix(3, 2, 5),
    );
    // (rows of u, n_steps): no step from exactly the window; every step allowed; fewer.
    for (rows, n) in [(5usize, 0usize), (6, 1), (9, 4), (12, 3)] {
        let u = matrix(rows, 3, 6);
        let want = backwards_by_hand(&u, &h0, [&w, &a, &b, &c], n);
        for (name, got) in [
            (
                "all",
                all::backwards(
                    u.view(),
                    h0.view(),
                    w.view(),
                    a.view(),
                    b.view(),
                    c.view(),
                    n,
                ),
            ),
            (
                "none",
                none::backwards(
                    u.view(),
                    h0.view(),
                    w.view(),
                    a.view(),
                    b.view(),
                    c.view(),
                    n,
                ),
            ),
            (
                "alone",
                alone::backwards(
                    u.view(),
                    h0.view(),
                    w.view(),
                    a.view(),
                    b.view(),
                    c.view(),
                    n,
                ),
            ),
        ] {
            let h = got.unwrap_or_else(|e| panic!("{name}, {rows} rows, {n} steps: {e}"));
            assert_eq!(h.shape(), &[n, 2], "{name}");
            rows_close(&h, &want);
        }
        let h = all::backwards(
            u.view(),
            h0.view(),
            w.view(),
            a.view(),
            b.view(),
            c.view(),
            n,
        )
        .unwrap();
        let mut args: Vec<Value> = vec![u.into(), h0.clone().into()];
        args.extend([w.clone(), a.clone(), b.clone(), c.clone()].map(Value::from));
        args.push(Value::from(n as i64));
        second_opinion(all::SOURCE, "backwards", args, vec![h.into()]);
    }
    // Too many steps for the sequence: the loop's error, with and without the group.
    let u = matrix(7, 3, 6);
    let want = none::backwards(
        u.view(),
        h0.view(),
        w.view(),
        a.view(),
        b.view(),
        c.view(),
        3,
    )
    .unwrap_err()
    .to_string();
    let got = all::backwards(
        u.view(),
        h0.view(),
        w.view(),
        a.view(),
        b.view(),
        c.view(),
        3,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(got, want);
}
