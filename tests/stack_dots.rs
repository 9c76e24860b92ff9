//! The stacking rewrite (stack_dots) in generated code: a sum of products by loop-invariant
//! matrices, `dot(a, B) + dot(c, D)`, computed as one product `dot([a, c], [B; D])`, gives
//! what the program gives without rewrites (`#![rewrites(none)]`) and what a hand-written
//! loop gives, within 1e-12: also where numpy's broadcasting makes the sum legal and the
//! stacked product is not (the step's guard then adds the products), at 0, 1, 2 and more
//! steps, and with a stack large enough to be packed before the loop.

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

                /// The scan tutorial's RNN (scan-bench's seed_taps): x_{t-1} W and
                /// y_{t-1} W_feedback are one product.
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

                /// A batch of states and a second one of the same width: h's sum is its
                /// step result as it is (written into h's row); g's reads h's first row,
                /// which numpy broadcasts over the batch.
                pub fn batch(h0: ArrayView2<f64>, g0: ArrayView2<f64>, w: ArrayView2<f64>, v: ArrayView2<f64>,
                             n: usize) -> Result<(Array3<f64>, Array3<f64>)> {
                    let (h, g) = scan(
                        |h, g, w, v| (h.dot(w) + g.dot(v), tanh(g.dot(w) + h[..1].dot(v))),
                        outputs_info = [h0, g0],
                        non_sequences = [w, v],
                        n_steps = n,
                    );
                    Ok((h, g))
                }

                /// In f32.
                pub fn rnn32(h0: ArrayView1<f32>, y0: ArrayView1<f32>, w: ArrayView2<f32>, v: ArrayView2<f32>,
                             w_y: ArrayView2<f32>, n: usize) -> Result<(Array2<f32>, Array2<f32>)> {
                    let (h, y) = scan(
                        |h, y, w, v, w_y| {
                            let h_t = tanh(h.dot(w) + y.dot(v));
                            (h_t, h.dot(w_y))
                        },
                        outputs_info = [h0, y0],
                        non_sequences = [w, v, w_y],
                        n_steps = n,
                    );
                    Ok((h, y))
                }

                /// Three products in a sum written out of order, one by a matrix made from
                /// non-sequences (hoisted, then stacked), in a loop inside another.
                pub fn nested(x0: ArrayView2<f64>, y0: ArrayView1<f64>, a: ArrayView2<f64>, b: ArrayView2<f64>,
                              c: ArrayView2<f64>, k: usize, n: usize) -> Result<Array2<f64>> {
                    let xs = scan(
                        |i, x0, y0, a, b, c| {
                            let (x, y) = scan(
                                |x_tm2, x_tm1, y_tm1, a, b, c| {
                                    let s = x_tm1.dot(b) + (0.1 + (y_tm1.dot(c * 0.5) + x_tm2.dot(a)));
                                    (tanh(s), sin(y_tm1 + i))
                                },
                                outputs_info = [taps(x0, [-2, -1]), y0],
                                non_sequences = [a, b, c],
                                n_steps = n,
                            );
                            x[-1]
                        },
                        sequences = arange(k),
                        non_sequences = [x0, y0, a, b, c],
                    );
                    Ok(xs)
                }
            }
        }
    )*};
}

variants! {
    all: [all];
    none: [none];
    alone: [stack_dots];
    without: [all_except(stack_dots)];
}

#[test]
fn the_tutorial_rnn_agrees_with_its_hand_written_loop() {
    // (n_x, n_y, feedback columns): stacked; stacked and packed (208 x 160 is past
    // `PackedMatrix`'s threshold); the feedback product of one element, broadcast, which
    // the guard adds as before.
    for (n_x, n_y, feedback_columns) in [(4, 2, 4), (160, 48, 160), (4, 2, 1)] {
        for steps in [0usize, 1, 2, 7] {
            let r = Rnn::new(steps + 4, n_x, n_y, n_x, feedback_columns);
            let (want_x, want_y) = r.by_hand();
            for (name, got) in [
                ("all", r.run(all::rnn)),
                ("none", r.run(none::rnn)),
                ("alone", r.run(alone::rnn)),
                ("without", r.run(without::rnn)),
            ] {
                let (x, y) = got.unwrap_or_else(|e| panic!("{name}, {steps} steps: {e}"));
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
fn the_stacked_rnn_equals_the_program_without_rewrites() {
    for feedback_columns in [6, 1] {
        let r = Rnn::new(13, 6, 3, 6, feedback_columns);
        let (x, y) = r.run(all::rnn).unwrap();
        let (x0, y0) = r.run(none::rnn).unwrap();
        for (a, b) in [(x, x0), (y, y0)] {
            assert_allclose(
                &a.iter().copied().collect::<Vec<_>>(),
                &b.iter().copied().collect::<Vec<_>>(),
                1e-12,
            );
        }
    }
}

#[test]
fn a_wrong_size_is_the_same_error_with_and_without_stacking() {
    // w_feedback with 3 rows for y's 2: the feedback product's `Dot` error, named by it.
    let mut r = Rnn::new(7, 4, 2, 4, 4);
    r.w_feedback = matrix(3, 4, 7);
    let with = r.run(all::rnn).unwrap_err().to_string();
    let without = r.run(none::rnn).unwrap_err().to_string();
    assert_eq!(with, without);
    assert!(with.contains("y_tm1.dot(w_feedback)"), "{with}");
}

#[test]
fn a_batch_agrees_stacked_and_broadcast() {
    // A batch of 1: both sums stacked; of 3: g's sum adds h's row broadcast.
    let (w, v) = (matrix(3, 3, 3), matrix(3, 3, 4));
    for batch in [1, 3] {
        for steps in [0usize, 1, 5] {
            let (h0, g0) = (matrix(batch, 3, 1), matrix(batch, 3, 2));
            let (mut h, mut g) = (h0.clone(), g0.clone());
            let (mut hs, mut gs) = (Vec::new(), Vec::new());
            for _ in 0..steps {
                let h_t = h.dot(&w) + g.dot(&v);
                let g_t = (g.dot(&w) + h.slice(s![..1, ..]).dot(&v)).mapv(f64::tanh);
                (h, g) = (h_t, g_t);
                hs.push(h.clone());
                gs.push(g.clone());
            }
            let flat = |m: &[Array2<f64>]| m.iter().flatten().copied().collect::<Vec<f64>>();
            for (name, got) in [
                (
                    "all",
                    all::batch(h0.view(), g0.view(), w.view(), v.view(), steps),
                ),
                (
                    "none",
                    none::batch(h0.view(), g0.view(), w.view(), v.view(), steps),
                ),
                (
                    "alone",
                    alone::batch(h0.view(), g0.view(), w.view(), v.view(), steps),
                ),
            ] {
                let (h, g) = got.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(h.shape(), &[steps, batch, 3], "{name}");
                assert_allclose(&h.iter().copied().collect::<Vec<_>>(), &flat(&hs), 1e-12);
                assert_allclose(&g.iter().copied().collect::<Vec<_>>(), &flat(&gs), 1e-12);
            }
            let (h, g) = all::batch(h0.view(), g0.view(), w.view(), v.view(), steps).unwrap();
            let args = [h0.clone(), g0.clone(), w.clone(), v.clone()].map(Value::from);
            let mut args = args.to_vec();
            args.push(Value::from(steps as i64));
            second_opinion(all::SOURCE, "batch", args, vec![h.into(), g.into()]);
        }
    }
}

#[test]
fn a_stack_in_a_nested_loop_agrees() {
    let (x0, y0) = (matrix(2, 3, 1), matrix(1, 2, 2).row(0).to_owned());
    let (a, b, c) = (matrix(3, 3, 3), matrix(3, 3, 4), matrix(2, 3, 5));
    let (k, n) = (3, 4);
    let mut want = Vec::new();
    for i in 0..k {
        let mut xs: Vec<Array1<f64>> = x0.rows().into_iter().map(|r| r.to_owned()).collect();
        let mut y = y0.clone();
        for t in 0..n {
            let s = xs[t + 1].dot(&b) + (y.dot(&(&c * 0.5)) + xs[t].dot(&a)).mapv(|v| 0.1 + v);
            xs.push(s.mapv(f64::tanh));
            y = y.mapv(|v| (v + i as f64).sin());
        }
        want.push(xs[n + 1].clone());
    }
    for (name, got) in [
        (
            "all",
            all::nested(x0.view(), y0.view(), a.view(), b.view(), c.view(), k, n),
        ),
        (
            "none",
            none::nested(x0.view(), y0.view(), a.view(), b.view(), c.view(), k, n),
        ),
    ] {
        rows_close(&got.unwrap_or_else(|e| panic!("{name}: {e}")), &want);
    }
    let got = all::nested(x0.view(), y0.view(), a.view(), b.view(), c.view(), k, n).unwrap();
    let mut args: Vec<Value> = vec![x0.into(), y0.into(), a.into(), b.into(), c.into()];
    args.extend([Value::from(k as i64), Value::from(n as i64)]);
    second_opinion(all::SOURCE, "nested", args, vec![got.into()]);
}

#[test]
fn an_f32_rnn_agrees() {
    let f32s = |m: Array2<f64>| m.mapv(|v| v as f32);
    let (h0, y0) = (
        f32s(matrix(1, 4, 1)).row(0).to_owned(),
        f32s(matrix(1, 2, 2)).row(0).to_owned(),
    );
    let (w, v, w_y) = (
        f32s(matrix(4, 4, 3)),
        f32s(matrix(2, 4, 4)),
        f32s(matrix(4, 2, 5)),
    );
    let (mut h, mut y) = (h0.clone(), y0.clone());
    let mut want = Vec::new();
    for _ in 0..6 {
        (h, y) = ((h.dot(&w) + y.dot(&v)).mapv(f32::tanh), h.dot(&w_y));
        want.push(h.clone());
    }
    let (got, _) = all::rnn32(h0.view(), y0.view(), w.view(), v.view(), w_y.view(), 6).unwrap();
    for (row, want) in got.rows().into_iter().zip(&want) {
        common::assert_floats32(&row.to_vec(), &want.to_vec(), 1e-5);
    }
    let (none_h, _) = none::rnn32(h0.view(), y0.view(), w.view(), v.view(), w_y.view(), 6).unwrap();
    common::assert_floats32(
        &got.iter().copied().collect::<Vec<_>>(),
        &none_h.iter().copied().collect::<Vec<_>>(),
        1e-5,
    );
}
