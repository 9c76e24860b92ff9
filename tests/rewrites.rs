//! The rewrites in generated code: the same programs compiled with every pass, with none
//! (`#![rewrites(none)]`), with one alone and with all but one give the same numbers, at
//! 0, 1, 2 and an odd larger number of steps. (Each pass's own tests are beside it in
//! scan-codegen/src/rewrite/; every program of tests/ is also checked by the evaluator
//! with each pass alone, see `common::rewrites_agree`.)

mod common;

use common::{second_opinion, Value};
use scan_runtime::ndarray::{s, Array4};
use scan_runtime::prelude::*;

/// The same programs under several `#![rewrites(..)]` settings.
macro_rules! variants {
    ($($module:ident: [$($setting:tt)*];)*) => {$(
        mod $module {
            scan_tests::program! {
                #![rewrites($($setting)*)]

                pub fn power(a: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
                    let r = scan(|p, a| p * a, outputs_info = ones_like(a), non_sequences = a, n_steps = k);
                    Ok(r[-1])
                }

                /// Last three steps of a MITSOT output with an invariant factor in the step.
                pub fn tail(x0: ArrayView1<f64>, c: f64, k: usize) -> Result<(Array1<f64>, f64)> {
                    let x = scan(
                        |x_tm2, x_tm1, c| x_tm1 * exp(-c) + x_tm2 * 0.25,
                        outputs_info = taps(x0, [-2, -1]),
                        non_sequences = c,
                        n_steps = k,
                    );
                    Ok((x[-3..], x[-1]))
                }

                /// A carried value passed through unchanged beside one that changes (PyTensor's
                /// merge once got this wrong), and a map output nobody reads.
                pub fn carry(u: ArrayView1<f64>, h0: ArrayView1<f64>) -> Result<(Array1<f64>, Array2<f64>)> {
                    let (keep, acc, unused) = scan(
                        |u_t, keep, acc| (keep, acc + keep * u_t, u_t * 2.0),
                        sequences = u,
                        outputs_info = [h0, h0, None],
                    );
                    Ok((keep[-1], acc))
                }

                /// An RNN with an output projection: y moves after the loop as one product.
                pub fn projected(u: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>, w_out: ArrayView2<f64>) -> Result<(Array2<f64>, Array2<f64>)> {
                    let (h, y) = scan(
                        |u_t, h, w, w_out| {
                            let h_t = tanh(h.dot(w) + u_t);
                            (h_t, h_t.dot(w_out))
                        },
                        sequences = u,
                        outputs_info = [h0, None],
                        non_sequences = [w, w_out],
                    );
                    Ok((h, y))
                }

                /// A batched RNN whose input projection push_out_seq takes out of the step:
                /// computed by the loop a chunk of steps at a time (`kernels::project_chunk`),
                /// also when `n_steps` or `until` stops the loop before the sequence ends.
                pub fn chunked(x: ArrayView3<f64>, h0: ArrayView2<f64>, w_x: ArrayView2<f64>, w_h: ArrayView2<f64>, k: usize, stop: f64) -> Result<Array3<f64>> {
                    let h = scan(
                        |x_t, h, w_x, w_h| {
                            let h_t = tanh(x_t.dot(w_x) + h.dot(w_h));
                            (h_t, until(sum(x_t) > stop))
                        },
                        sequences = x,
                        outputs_info = h0,
                        non_sequences = [w_x, w_h],
                        n_steps = k,
                    );
                    Ok(h)
                }

                /// A product accumulated over the steps, only the last read (push_out_dot:
                /// the loop sums the rows of x, one product after it).
                pub fn readout(x: ArrayView3<f64>, w: ArrayView2<f64>, acc0: ArrayView2<f64>) -> Result<Array2<f64>> {
                    let acc = scan(|x_t, acc, w| acc + x_t.dot(w), sequences = x, outputs_info = acc0, non_sequences = w);
                    Ok(acc[-1])
                }

                /// The gradients of an RNN's weights, accumulated over the steps, only the last
                /// read (push_out_dot, two step values: one product of the stacked values after
                /// the loop). g reads the rows of x transposed and d_t, computed in the step from
                /// h's tap; k reads h's tap rows and h's own trace.
                pub fn weight_grads(
                    x: ArrayView3<f64>,
                    h0: ArrayView2<f64>,
                    w: ArrayView2<f64>,
                    u: ArrayView2<f64>,
                    g0: ArrayView2<f64>,
                    k0: ArrayView2<f64>,
                ) -> Result<(Array2<f64>, Array2<f64>, Array2<f64>)> {
                    let (h, g, k) = scan(
                        |x_t, h, g, k, w, u| {
                            let h_t = tanh(h.dot(w) + x_t.dot(u));
                            let d_t = h_t * (1.0 - h * h);
                            (h_t, g + x_t.t().dot(d_t), h.t().dot(h_t) + k)
                        },
                        sequences = x,
                        outputs_info = [h0, g0, k0],
                        non_sequences = [w, u],
                    );
                    Ok((h[-1], g[-1], k[-1]))
                }

                /// The brief form: only the gradient read, d_t = h_t the hidden state's step
                /// result (its trace is the stack).
                pub fn input_grad(x: ArrayView3<f64>, h0: ArrayView2<f64>, w: ArrayView2<f64>, g0: ArrayView2<f64>) -> Result<Array2<f64>> {
                    let (h, g) = scan(
                        |x_t, h, g, w| {
                            let h_t = tanh(h.dot(w) + x_t);
                            (h_t, g + x_t.t().dot(h_t))
                        },
                        sequences = x,
                        outputs_info = [h0, g0],
                        non_sequences = w,
                    );
                    Ok(g[-1])
                }

                /// The same gradient for each of several sequences: the push-out inside the
                /// step of an enclosing scan (its product once per outer step, its buffers
                /// reused), and the stacks not merging when the inner rows come from a
                /// reversed view.
                pub fn nested_grads(xs: ArrayView4<f64>, v: ArrayView2<f64>, g0: ArrayView2<f64>) -> Result<Array3<f64>> {
                    let gs = scan(
                        |x, v, g0| {
                            let g = scan(|x_t, g, v| g + x_t.t().dot(tanh(x_t.dot(v))), sequences = x, outputs_info = g0, non_sequences = v);
                            g[-1]
                        },
                        sequences = xs,
                        non_sequences = [v, g0],
                    );
                    Ok(gs)
                }

                /// A gradient of step values read through sequence taps, going backwards
                /// with n_steps: x_tm2's stack is the rows of x that tap read, a reversed
                /// view beside the loop's stack of the other operand.
                pub fn tap_grads(x: ArrayView3<f64>, y: ArrayView3<f64>, g0: ArrayView2<f64>, k: usize) -> Result<Array2<f64>> {
                    let g = scan(
                        |x_tm2, x_tp1, y_t, g| g + x_tm2.t().dot(tanh(y_t * x_tp1)),
                        sequences = [taps(x, [-2, 1]), y],
                        outputs_info = g0,
                        n_steps = k,
                        go_backwards = true,
                    );
                    Ok(g[-1])
                }

                /// A scalar state with until, only the last value read.
                pub fn newton(a: f64, k: usize) -> Result<f64> {
                    let y = scan(
                        |y, a| (0.5 * (y + a / y), until(abs(0.5 * (y + a / y) - y) < 1e-12)),
                        outputs_info = a,
                        non_sequences = a,
                        n_steps = k,
                    );
                    Ok(y[-1])
                }
            }
        }
    )*};
}

variants! {
    all: [all];
    none: [none];
    save_mem_only: [save_mem];
    push_out_only: [push_out_nonseq, push_out_dot, push_out_seq, push_out_output, dead];
    without_save_mem: [all_except(save_mem)];
    cse_dead_constants: [cse, dead, constants];
}

fn vec(v: &[f64]) -> Array1<f64> {
    Array1::from(v.to_vec())
}

#[test]
fn power_agrees_under_every_setting() {
    let a = vec(&[1.5, -0.5, 2.0, 0.999]);
    for k in [0usize, 1, 2, 7] {
        let results = [
            all::power(a.view(), k),
            none::power(a.view(), k),
            save_mem_only::power(a.view(), k),
            push_out_only::power(a.view(), k),
            without_save_mem::power(a.view(), k),
            cse_dead_constants::power(a.view(), k),
        ];
        if k == 0 {
            // result[-1] of zero steps is an index error, with every setting.
            assert!(results.iter().all(|r| r.is_err()), "{results:?}");
            continue;
        }
        let expected = a.mapv(|x| x.powi(k as i32));
        for r in &results {
            assert_eq!(r.as_ref().unwrap(), &expected, "k = {k}");
        }
    }
}

#[test]
fn tails_agree_under_every_setting() {
    let x0 = vec(&[1.0, 2.0]);
    for k in [0usize, 1, 2, 3, 7] {
        // Hand-written: x_t = x_{t-1} e^{-c} + x_{t-2} / 4.
        let c = 0.3f64;
        let mut h = vec![1.0, 2.0];
        for t in 0..k {
            h.push(h[t + 1] * (-c).exp() + h[t] * 0.25);
        }
        let steps = &h[2..];
        let last3 = &steps[steps.len().saturating_sub(3)..];
        let results = [
            all::tail(x0.view(), c, k),
            none::tail(x0.view(), c, k),
            save_mem_only::tail(x0.view(), c, k),
            push_out_only::tail(x0.view(), c, k),
            without_save_mem::tail(x0.view(), c, k),
            cse_dead_constants::tail(x0.view(), c, k),
        ];
        for r in results {
            match (k, r) {
                (0, r) => assert!(r.is_err(), "x[-1] of no step: {r:?}"),
                (_, Ok((tail, last))) => {
                    assert_eq!(tail.to_vec(), last3, "k = {k}");
                    assert_eq!(last, *steps.last().unwrap());
                }
                (_, Err(e)) => panic!("k = {k}: {e}"),
            }
        }
    }
    let got = all::tail(x0.view(), 0.3, 7).unwrap();
    second_opinion(
        all::SOURCE,
        "tail",
        vec![Value::from(x0.clone()), Value::from(0.3), Value::from(7i64)],
        vec![Value::from(got.0), Value::from(got.1)],
    );
}

#[test]
fn a_carry_passed_through_unchanged_stays_unchanged() {
    let h0 = vec(&[0.5, -1.0]);
    for n in [0usize, 1, 2, 5] {
        let u = Array1::from_shape_fn(n, |i| i as f64 + 1.0);
        let total: f64 = u.sum();
        let results = [
            all::carry(u.view(), h0.view()),
            none::carry(u.view(), h0.view()),
            save_mem_only::carry(u.view(), h0.view()),
            push_out_only::carry(u.view(), h0.view()),
            without_save_mem::carry(u.view(), h0.view()),
            cse_dead_constants::carry(u.view(), h0.view()),
        ];
        for r in results {
            if n == 0 {
                assert!(r.is_err(), "keep[-1] of no step: {r:?}");
                continue;
            }
            let (keep, acc) = r.unwrap();
            assert_eq!(keep, h0);
            assert_eq!(acc.dim(), (n, 2));
            assert_eq!(
                acc.row(n - 1).to_vec(),
                vec![0.5 + 0.5 * total, -1.0 - total]
            );
        }
    }
}

#[test]
fn a_scalar_state_with_until_agrees() {
    for k in [0usize, 1, 2, 9, 200] {
        let mut y = 2.0f64;
        let mut last = None;
        for _ in 0..k {
            let next = 0.5 * (y + 2.0 / y);
            let stop = (next - y).abs() < 1e-12;
            y = next;
            last = Some(y);
            if stop {
                break;
            }
        }
        let results = [
            all::newton(2.0, k),
            none::newton(2.0, k),
            save_mem_only::newton(2.0, k),
            push_out_only::newton(2.0, k),
            without_save_mem::newton(2.0, k),
            cse_dead_constants::newton(2.0, k),
        ];
        for r in results {
            match last {
                None => assert!(r.is_err()),
                Some(v) => assert_eq!(r.unwrap(), v, "k = {k}"),
            }
        }
    }
}

#[test]
fn an_output_projection_agrees_under_every_setting() {
    let h0 = vec(&[0.1, -0.2, 0.3]);
    let w = common::matrix(3, 3, 1);
    let w_out = common::matrix(3, 2, 2);
    for n in [0usize, 1, 2, 5] {
        let u = common::matrix(n, 3, 3);
        // By hand.
        let mut h = h0.clone();
        let mut hs = Vec::new();
        let mut ys = Vec::new();
        for t in 0..n {
            h = (h.dot(&w) + u.row(t)).mapv(f64::tanh);
            ys.push(h.dot(&w_out));
            hs.push(h.clone());
        }
        let results = [
            all::projected(u.view(), h0.view(), w.view(), w_out.view()),
            none::projected(u.view(), h0.view(), w.view(), w_out.view()),
            save_mem_only::projected(u.view(), h0.view(), w.view(), w_out.view()),
            push_out_only::projected(u.view(), h0.view(), w.view(), w_out.view()),
            without_save_mem::projected(u.view(), h0.view(), w.view(), w_out.view()),
            cse_dead_constants::projected(u.view(), h0.view(), w.view(), w_out.view()),
        ];
        for r in results {
            let (got_h, got_y) = r.unwrap();
            assert_eq!(got_h.nrows(), n);
            // No step: a map output has rows of shape zeros, as in PyTensor.
            let y_shape: &[usize] = if n == 0 { &[0, 0] } else { &[n, 2] };
            assert_eq!(got_y.shape(), y_shape);
            for t in 0..n {
                common::assert_allclose(&got_h.row(t).to_vec(), &hs[t].to_vec(), 1e-12);
                common::assert_allclose(&got_y.row(t).to_vec(), &ys[t].to_vec(), 1e-12);
            }
        }
        let got = all::projected(u.view(), h0.view(), w.view(), w_out.view()).unwrap();
        second_opinion(
            all::SOURCE,
            "projected",
            vec![
                Value::from(u.clone()),
                Value::from(h0.clone()),
                Value::from(w.clone()),
                Value::from(w_out.clone()),
            ],
            vec![Value::from(got.0), Value::from(got.1)],
        );
    }
}

#[test]
fn a_projection_computed_by_chunks_agrees_under_every_setting() {
    // Rows of 512 x 64 f64 (256 KB): `kernels::chunk_steps` gives chunks of 8 steps, so 21
    // steps are chunks of 8, 8 and 5.
    let (b, i, hd, len) = (512, 3, 64, 21);
    assert_eq!(scan_runtime::kernels::CHUNK_BYTES / (b * hd * 8), 8);

    let x = Array3::from_shape_fn((len, b, i), |(t, r, c)| {
        ((t * 7 + r * 3 + c) as f64 * 0.37).sin()
    });
    let h0 = Array2::from_shape_fn((b, hd), |(r, c)| ((r + 2 * c) as f64 * 0.11).cos() * 0.1);
    let w_x = common::matrix(i, hd, 4);
    let w_h = common::matrix(hd, hd, 5).mapv(|v| v * 0.05);
    // (With the matrixmultiply backend, which allocates on every product: one chunk.)
    let chunk = scan_runtime::kernels::chunk_steps(x.view(), w_x.view());
    let one_chunk = scan_runtime::kernels::dot::GEMM_BACKEND == "matrixmultiply";
    assert_eq!(chunk, if one_chunk { len } else { 8 });
    let all_steps = f64::INFINITY;
    // `until` stops at step 11, in the second chunk: the only step whose rows sum past 50.
    let mut x = x;
    x[[11, 0, 0]] += 100.0;
    assert!((0..len).all(|t| (x.index_axis(Axis(0), t).sum() > 50.0) == (t == 11)));
    let threshold = 50.0;
    // (n_steps, until threshold): every step; steps ending inside a chunk; no step; and a
    // stop by `until` in the second chunk.
    for (k, stop) in [
        (21usize, all_steps),
        (9, all_steps),
        (17, all_steps),
        (0, all_steps),
        (21, threshold),
    ] {
        // By hand.
        let mut h = h0.clone();
        let mut hs = Vec::new();
        for t in 0..k {
            h = (x.index_axis(Axis(0), t).dot(&w_x) + h.dot(&w_h)).mapv(f64::tanh);
            hs.push(h.clone());
            if x.index_axis(Axis(0), t).sum() > stop {
                break;
            }
        }
        let results = [
            all::chunked(x.view(), h0.view(), w_x.view(), w_h.view(), k, stop),
            none::chunked(x.view(), h0.view(), w_x.view(), w_h.view(), k, stop),
            save_mem_only::chunked(x.view(), h0.view(), w_x.view(), w_h.view(), k, stop),
            push_out_only::chunked(x.view(), h0.view(), w_x.view(), w_h.view(), k, stop),
            without_save_mem::chunked(x.view(), h0.view(), w_x.view(), w_h.view(), k, stop),
            cse_dead_constants::chunked(x.view(), h0.view(), w_x.view(), w_h.view(), k, stop),
        ];
        for r in results {
            let got = r.unwrap_or_else(|e| panic!("k = {k}: {e}"));
            assert_eq!(got.shape()[0], hs.len(), "k = {k}, stop = {stop}");
            for (t, want) in hs.iter().enumerate() {
                let row: Vec<f64> = got.index_axis(Axis(0), t).iter().copied().collect();
                let want: Vec<f64> = want.iter().copied().collect();
                common::assert_allclose(&row, &want, 1e-12);
            }
        }
    }
    // A projection of the wrong width: the product's error, word for word, with the
    // push-out, also when the loop runs no step (its shapes are checked before it).
    let w_bad = common::matrix(i + 1, hd, 6);
    for k in [0usize, 3] {
        let errors: Vec<String> = [
            all::chunked(x.view(), h0.view(), w_bad.view(), w_h.view(), k, all_steps),
            push_out_only::chunked(x.view(), h0.view(), w_bad.view(), w_h.view(), k, all_steps),
        ]
        .into_iter()
        .map(|r| r.expect_err("mismatched projection").to_string())
        .collect();
        assert!(errors[0].contains("x_t.dot(w_x)"), "{errors:?}");
        assert_eq!(errors[0], errors[1], "k = {k}");
    }
}

#[test]
fn an_accumulator_of_the_wrong_shape_fails_under_every_setting() {
    // acc0 has one column, the product four: each step's sum broadcasts to [2, 4], which
    // the loop rejects as a step result of another shape than its state. push_out_dot
    // builds its zeros from acc0 and w before the loop, and reports the mismatch there as
    // a product-size error named by the sum (docs/SEMANTICS.md).
    let w = common::matrix(3, 4, 1);
    let acc0 = common::matrix(2, 1, 2);
    let x = Array3::from_shape_fn((3, 2, 3), |(t, i, j)| (t + i + j) as f64);
    let in_the_loop = Error::StepResultShape {
        output: "`acc0`".into(),
        result: "acc + x_t.dot(w)".into(),
        expected: vec![2, 1],
        found: vec![2, 4],
    };
    let before_the_loop = Error::Dot {
        what: "acc + x_t.dot(w)".into(),
        left: vec![2, 1],
        right: vec![4, 3],
    };
    let (x, w, a) = (x.view(), w.view(), acc0.view());
    for r in [
        none::readout(x, w, a),
        save_mem_only::readout(x, w, a),
        cse_dead_constants::readout(x, w, a),
    ] {
        assert_eq!(r.unwrap_err(), in_the_loop);
    }
    for r in [
        all::readout(x, w, a),
        push_out_only::readout(x, w, a),
        without_save_mem::readout(x, w, a),
    ] {
        assert_eq!(r.unwrap_err(), before_the_loop);
    }
}

#[test]
fn an_accumulated_product_agrees_under_every_setting() {
    let w = common::matrix(3, 4, 1);
    let acc0 = common::matrix(2, 4, 2);
    for n in [0usize, 1, 2, 7] {
        let x = Array3::from_shape_fn((n, 2, 3), |(t, i, j)| {
            ((t * 6 + i * 3 + j) as f64 * 0.61).sin()
        });
        // By hand, in the loop's order.
        let mut acc = acc0.clone();
        for t in 0..n {
            acc = acc + x.index_axis(Axis(0), t).dot(&w);
        }
        let results = [
            all::readout(x.view(), w.view(), acc0.view()),
            none::readout(x.view(), w.view(), acc0.view()),
            save_mem_only::readout(x.view(), w.view(), acc0.view()),
            push_out_only::readout(x.view(), w.view(), acc0.view()),
            without_save_mem::readout(x.view(), w.view(), acc0.view()),
            cse_dead_constants::readout(x.view(), w.view(), acc0.view()),
        ];
        for r in results {
            match (n, r) {
                (0, r) => assert!(r.is_err(), "acc[-1] of no step: {r:?}"),
                (_, Ok(got)) => {
                    assert_eq!(got.shape(), &[2, 4]);
                    let got: Vec<f64> = got.iter().copied().collect();
                    let want: Vec<f64> = acc.iter().copied().collect();
                    common::assert_allclose(&got, &want, 1e-12);
                }
                (_, Err(e)) => panic!("n = {n}: {e}"),
            }
        }
        if n > 0 {
            let got = all::readout(x.view(), w.view(), acc0.view()).unwrap();
            second_opinion(
                all::SOURCE,
                "readout",
                vec![
                    Value::from(x.clone()),
                    Value::from(w.clone()),
                    Value::from(acc0.clone()),
                ],
                vec![Value::from(got)],
            );
        }
    }
}

/// The signature of `weight_grads`.
type WeightGrads = fn(
    ArrayView3<f64>,
    ArrayView2<f64>,
    ArrayView2<f64>,
    ArrayView2<f64>,
    ArrayView2<f64>,
    ArrayView2<f64>,
) -> Result<(Array2<f64>, Array2<f64>, Array2<f64>)>;

#[test]
fn rnn_weight_gradients_agree_under_every_setting() {
    // x [T, B, I], h [B, H]: g [I, H] accumulates x_tᵀ · d_t, k [H, H] h_{t-1}ᵀ · h_t.
    let (b, i, hd) = (3, 4, 5);
    let h0 = common::matrix(b, hd, 1);
    let w = common::matrix(hd, hd, 2);
    let u = common::matrix(i, hd, 3);
    let g0 = common::matrix(i, hd, 4);
    let k0 = common::matrix(hd, hd, 5);
    for n in [0usize, 1, 2, 7] {
        let x = Array3::from_shape_fn((n, b, i), |(t, r, c)| {
            ((t * 12 + r * 4 + c) as f64 * 0.53).sin()
        });
        // By hand, in the loop's order.
        let (mut h, mut g, mut k) = (h0.clone(), g0.clone(), k0.clone());
        for t in 0..n {
            let x_t = x.index_axis(Axis(0), t);
            let h_t = (h.dot(&w) + x_t.dot(&u)).mapv(f64::tanh);
            let d_t = &h_t * &h.mapv(|v| 1.0 - v * v);
            g = g + x_t.t().dot(&d_t);
            k = h.t().dot(&h_t) + k;
            h = h_t;
        }
        let run = |f: WeightGrads| {
            f(
                x.view(),
                h0.view(),
                w.view(),
                u.view(),
                g0.view(),
                k0.view(),
            )
        };
        let results = [
            run(all::weight_grads),
            run(none::weight_grads),
            run(save_mem_only::weight_grads),
            run(push_out_only::weight_grads),
            run(without_save_mem::weight_grads),
            run(cse_dead_constants::weight_grads),
        ];
        for r in results {
            match (n, r) {
                (0, r) => assert!(r.is_err(), "h[-1] of no step: {r:?}"),
                (_, Ok((got_h, got_g, got_k))) => {
                    for (got, want) in [(&got_h, &h), (&got_g, &g), (&got_k, &k)] {
                        assert_eq!(got.shape(), want.shape());
                        let got: Vec<f64> = got.iter().copied().collect();
                        let want: Vec<f64> = want.iter().copied().collect();
                        common::assert_allclose(&got, &want, 1e-12);
                    }
                }
                (_, Err(e)) => panic!("n = {n}: {e}"),
            }
        }
        if n > 0 {
            let (got_h, got_g, got_k) = run(all::weight_grads).unwrap();
            second_opinion(
                all::SOURCE,
                "weight_grads",
                vec![
                    Value::from(x.clone()),
                    Value::from(h0.clone()),
                    Value::from(w.clone()),
                    Value::from(u.clone()),
                    Value::from(g0.clone()),
                    Value::from(k0.clone()),
                ],
                vec![Value::from(got_h), Value::from(got_g), Value::from(got_k)],
            );
        }
    }
}

#[test]
fn an_input_weight_gradient_agrees_under_every_setting() {
    // x [T, B, H] (added to h), g [H, H] accumulates x_tᵀ · h_t.
    let (b, hd) = (3, 4);
    let h0 = common::matrix(b, hd, 6);
    let w = common::matrix(hd, hd, 7);
    let g0 = common::matrix(hd, hd, 8);
    for n in [0usize, 1, 2, 7] {
        let x = Array3::from_shape_fn((n, b, hd), |(t, r, c)| {
            ((t * 12 + r * 4 + c) as f64 * 0.29).cos()
        });
        let (mut h, mut g) = (h0.clone(), g0.clone());
        for t in 0..n {
            let x_t = x.index_axis(Axis(0), t);
            h = (h.dot(&w) + x_t).mapv(f64::tanh);
            g = g + x_t.t().dot(&h);
        }
        let results = [
            all::input_grad(x.view(), h0.view(), w.view(), g0.view()),
            none::input_grad(x.view(), h0.view(), w.view(), g0.view()),
            save_mem_only::input_grad(x.view(), h0.view(), w.view(), g0.view()),
            push_out_only::input_grad(x.view(), h0.view(), w.view(), g0.view()),
            without_save_mem::input_grad(x.view(), h0.view(), w.view(), g0.view()),
            cse_dead_constants::input_grad(x.view(), h0.view(), w.view(), g0.view()),
        ];
        if n == 0 {
            // g[-1] of no step: the loop's index error, word for word, with every setting.
            let errors: Vec<String> = results
                .iter()
                .map(|r| match r {
                    Ok(v) => panic!("g[-1] of no step: {v:?}"),
                    Err(e) => e.to_string(),
                })
                .collect();
            assert!(errors.iter().all(|e| *e == errors[1]), "{errors:?}");
            continue;
        }
        for r in results {
            let got = r.unwrap_or_else(|e| panic!("n = {n}: {e}"));
            assert_eq!(got.shape(), &[hd, hd]);
            let got: Vec<f64> = got.iter().copied().collect();
            let want: Vec<f64> = g.iter().copied().collect();
            common::assert_allclose(&got, &want, 1e-12);
        }
        let got = all::input_grad(x.view(), h0.view(), w.view(), g0.view()).unwrap();
        second_opinion(
            all::SOURCE,
            "input_grad",
            vec![
                Value::from(x.clone()),
                Value::from(h0.clone()),
                Value::from(w.clone()),
                Value::from(g0.clone()),
            ],
            vec![Value::from(got)],
        );
    }
}

#[test]
fn a_gradient_inside_an_enclosing_step_agrees_under_every_setting() {
    let (b, i, hd) = (2, 3, 4);
    let v = common::matrix(i, hd, 9);
    let g0 = common::matrix(i, hd, 10);
    for (outer, n) in [(0usize, 3usize), (3, 0), (1, 1), (2, 2), (3, 7)] {
        let xs = Array4::from_shape_fn((outer, n, b, i), |(o, t, r, c)| {
            ((o * 40 + t * 6 + r * 3 + c) as f64 * 0.37).sin()
        });
        // Contiguous, and with the inner steps reversed (a view whose steps do not merge
        // with its rows' axes in the generated product: copied a chunk of steps at a time).
        let reversed = xs.slice(s![.., ..;-1, .., ..]);
        for xs in [xs.view(), reversed] {
            let mut want = Vec::new();
            for o in 0..outer {
                let mut g = g0.clone();
                for t in 0..n {
                    let x_t = xs.slice(s![o, t, .., ..]);
                    g = g + x_t.t().dot(&x_t.dot(&v).mapv(f64::tanh));
                }
                want.push(g);
            }
            let results = [
                all::nested_grads(xs, v.view(), g0.view()),
                none::nested_grads(xs, v.view(), g0.view()),
                save_mem_only::nested_grads(xs, v.view(), g0.view()),
                push_out_only::nested_grads(xs, v.view(), g0.view()),
                without_save_mem::nested_grads(xs, v.view(), g0.view()),
                cse_dead_constants::nested_grads(xs, v.view(), g0.view()),
            ];
            for r in results {
                match (outer, n, r) {
                    // g[-1] of no inner step, in the first outer step.
                    (1.., 0, r) => assert!(r.is_err(), "g[-1] of no step: {r:?}"),
                    (_, _, Ok(got)) => {
                        let shape: &[usize] = if outer == 0 {
                            &[0, 0, 0]
                        } else {
                            &[outer, i, hd]
                        };
                        assert_eq!(got.shape(), shape);
                        for (o, want) in want.iter().enumerate() {
                            let got: Vec<f64> =
                                got.index_axis(Axis(0), o).iter().copied().collect();
                            let want: Vec<f64> = want.iter().copied().collect();
                            common::assert_allclose(&got, &want, 1e-12);
                        }
                    }
                    (_, _, Err(e)) => panic!("{outer} x {n}: {e}"),
                }
            }
        }
    }
}

#[test]
fn a_gradient_of_sequence_taps_going_backwards_agrees_under_every_setting() {
    // x read at taps -2 and 1 (a window of 3 rows past the steps), y at 0, going
    // backwards: step t reads x[A - 1 - t] and x[A + 2 - t] (A = len(x) - 3) and
    // y[len(y) - 1 - t].
    let (b, i) = (3, 4);
    let x = Array3::from_shape_fn((9, b, i), |(t, r, c)| {
        ((t * 12 + r * 4 + c) as f64 * 0.31).sin()
    });
    let y = Array3::from_shape_fn((7, b, i), |(t, r, c)| {
        ((t * 12 + r * 4 + c) as f64 * 0.23).cos()
    });
    let g0 = common::matrix(i, i, 11);
    for k in [0usize, 1, 2, 5] {
        let a = x.len_of(Axis(0)) - 3;
        let mut g = g0.clone();
        for t in 0..k {
            let (xa, xb) = (
                x.index_axis(Axis(0), a - 1 - t),
                x.index_axis(Axis(0), a + 2 - t),
            );
            let y_t = y.index_axis(Axis(0), y.len_of(Axis(0)) - 1 - t);
            g = g + xa.t().dot(&(&y_t * &xb).mapv(f64::tanh));
        }
        let (xv, yv, gv) = (x.view(), y.view(), g0.view());
        let results = [
            all::tap_grads(xv, yv, gv, k),
            none::tap_grads(xv, yv, gv, k),
            save_mem_only::tap_grads(xv, yv, gv, k),
            push_out_only::tap_grads(xv, yv, gv, k),
            without_save_mem::tap_grads(xv, yv, gv, k),
            cse_dead_constants::tap_grads(xv, yv, gv, k),
        ];
        for r in results {
            match (k, r) {
                (0, r) => assert!(r.is_err(), "g[-1] of no step: {r:?}"),
                (_, Ok(got)) => {
                    let got: Vec<f64> = got.iter().copied().collect();
                    let want: Vec<f64> = g.iter().copied().collect();
                    common::assert_allclose(&got, &want, 1e-12);
                }
                (_, Err(e)) => panic!("k = {k}: {e}"),
            }
        }
        if k > 0 {
            let got = all::tap_grads(xv, yv, gv, k).unwrap();
            second_opinion(
                all::SOURCE,
                "tap_grads",
                vec![
                    Value::from(x.clone()),
                    Value::from(y.clone()),
                    Value::from(g0.clone()),
                    Value::from(k as i64),
                ],
                vec![Value::from(got)],
            );
        }
    }
}
