//! The rewrites in generated code: the same programs compiled with every pass, with none
//! (`#![rewrites(none)]`), with one alone and with all but one give the same numbers, at
//! 0, 1, 2 and an odd larger number of steps. (Each pass's own tests are beside it in
//! scan-codegen/src/rewrite/; every program of tests/ is also checked by the evaluator
//! with each pass alone, see `common::rewrites_agree`.)

mod common;

use common::{second_opinion, Value};
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

                /// A product accumulated over the steps, only the last read (push_out_dot:
                /// the loop sums the rows of x, one product after it).
                pub fn readout(x: ArrayView3<f64>, w: ArrayView2<f64>, acc0: ArrayView2<f64>) -> Result<Array2<f64>> {
                    let acc = scan(|x_t, acc, w| acc + x_t.dot(w), sequences = x, outputs_info = acc0, non_sequences = w);
                    Ok(acc[-1])
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
