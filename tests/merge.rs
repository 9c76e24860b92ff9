//! The merge rewrite in generated code: programs with several scans that run the same
//! steps, compiled with every pass (the scans become one loop) and with every pass but
//! `merge` (separate loops), give the numbers of hand-written loops and of the reference
//! evaluator at 0, 1, 2 and 7 steps. (The pass's own tests are in
//! scan-codegen/src/rewrite/merge.rs.)

mod common;

use common::{second_opinion, Value};
use scan_codegen::ir::Op;
use scan_codegen::rewrite::{Config, Pass};
use scan_runtime::__private::kernels::interchange::{set_policy, Policy};
use scan_runtime::prelude::*;

macro_rules! variants {
    ($($module:ident: [$($setting:tt)*];)*) => {$(
        mod $module {
            scan_tests::program! {
                #![rewrites($($setting)*)]

                /// Running sum and running product of one sequence: two recurrences over
                /// the same rows.
                pub fn sum_and_product(u: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
                    let s = scan(|u_t, s| s + u_t, sequences = u, outputs_info = 0.0);
                    let p = scan(|u_t, p| p * u_t, sequences = u, outputs_info = 1.0);
                    Ok((s, p))
                }

                /// Two elementwise recurrences with the same n_steps: the merged loop runs
                /// element chunks outer (loop interchange) when x0 and y0 have one shape.
                pub fn decays(x0: ArrayView1<f64>, a: f64, y0: ArrayView1<f64>, b: f64, k: usize) -> Result<(Array2<f64>, Array2<f64>)> {
                    let x = scan(|x, a| x * a, outputs_info = x0, non_sequences = a, n_steps = k);
                    let y = scan(|y, b| y * 0.5 + b, outputs_info = y0, non_sequences = b, n_steps = k);
                    Ok((x, y))
                }

                /// A carry passed through unchanged beside a changing one (PyTensor's merge
                /// once got this wrong), merged with a scan whose carry changes.
                pub fn carry(u: ArrayView1<f64>, h0: ArrayView1<f64>) -> Result<(Array2<f64>, Array2<f64>, Array2<f64>)> {
                    let (keep, acc) = scan(|u_t, keep, acc| (keep, acc + keep * u_t), sequences = u, outputs_info = [h0, h0]);
                    let y = scan(|u_t, y| y * u_t, sequences = u, outputs_info = h0);
                    Ok((keep, acc, y))
                }

                /// Three scans over two taps of one sequence; the first and the last compute
                /// the same values (shared after cse), the last only partly read.
                pub fn diffs(u: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
                    let d = scan(|u_tm1, u_t| u_t - u_tm1, sequences = taps(u, [-1, 0]));
                    let s = scan(|u_tm1, u_t, s| s + (u_t - u_tm1) * 0.5, sequences = taps(u, [-1, 0]), outputs_info = 0.0);
                    let e = scan(|u_tm1, u_t| u_t - u_tm1, sequences = taps(u, [-1, 0]));
                    Ok((d, s, e[-2..]))
                }
            }
        }
    )*};
}

variants! {
    merged: [all];
    separate: [all_except(merge)];
}

const STEPS: [usize; 4] = [0, 1, 2, 7];

fn seq(n: usize) -> Array1<f64> {
    Array1::from_shape_fn(n, |i| 0.5 + (i as f64 * 0.7).sin())
}

/// Loops in each function's own graph, with `config`.
fn loops(source: &str, config: &Config) -> Vec<(String, usize)> {
    let (functions, _) = scan_codegen::compile_with(source, config).unwrap();
    functions
        .iter()
        .map(|f| {
            let n = f
                .graph
                .nodes
                .iter()
                .filter(|n| matches!(n.op, Op::Scan(_)))
                .count();
            (f.name.clone(), n)
        })
        .collect()
}

#[test]
fn the_scans_of_each_program_become_one_loop() {
    let merged = loops(merged::SOURCE, &Config::all());
    assert!(merged.iter().all(|(_, n)| *n == 1), "{merged:?}");
    // The merged elementwise recurrences are interchanged.
    let (functions, _) = scan_codegen::compile_with(merged::SOURCE, &Config::all()).unwrap();
    let decays = functions.iter().find(|f| f.name == "decays").unwrap();
    assert!(decays
        .graph
        .nodes
        .iter()
        .any(|n| matches!(&n.op, Op::Scan(op) if op.interchange)));
    let separate = loops(separate::SOURCE, &Config::all_except(&[Pass::Merge]));
    let expected = [
        ("sum_and_product", 2),
        ("decays", 2),
        ("carry", 2),
        ("diffs", 3),
    ];
    for (name, n) in expected {
        assert!(
            separate.contains(&(name.to_string(), n)),
            "{name}: {separate:?}"
        );
    }
    let (_, fired) = scan_codegen::compile_with(merged::SOURCE, &Config::all()).unwrap();
    let fired: Vec<String> = fired.iter().map(|f| f.to_string()).collect();
    assert!(
        fired
            .iter()
            .any(|f| f.starts_with("merge: ") && f.contains("hold the same values: computed once")),
        "{fired:?}"
    );
}

#[test]
fn sum_and_product_agree() {
    for n in STEPS {
        let u = seq(n);
        let (mut s, mut p) = (0.0, 1.0);
        let (mut sums, mut products) = (vec![], vec![]);
        for &u_t in &u {
            s += u_t;
            p *= u_t;
            sums.push(s);
            products.push(p);
        }
        let got = merged::sum_and_product(u.view()).unwrap();
        assert_eq!(got.0.to_vec(), sums, "{n} steps");
        assert_eq!(got.1.to_vec(), products, "{n} steps");
        assert_eq!(separate::sum_and_product(u.view()).unwrap(), got);
        second_opinion(
            merged::SOURCE,
            "sum_and_product",
            vec![Value::from(u.clone())],
            vec![Value::from(got.0), Value::from(got.1)],
        );
    }
}

#[test]
fn decays_agree() {
    let x0 = Array1::from(vec![1.0, -0.5, 2.0]);
    let (a, b) = (0.9, 0.25);
    // The same shape as x0 (the interchanged loop can run), and another (it cannot); each
    // loop forced, and chosen as it pays.
    for policy in [Policy::Always, Policy::Never, Policy::Auto] {
        set_policy(policy);
        for y0 in [Array1::from(vec![3.0, 0.0, -1.0]), Array1::from(vec![3.0])] {
            for k in STEPS {
                decays_agree_at(&x0, a, &y0, b, k);
            }
        }
    }
}

fn decays_agree_at(x0: &Array1<f64>, a: f64, y0: &Array1<f64>, b: f64, k: usize) {
    let mut xs = Array2::zeros((k, x0.len()));
    let mut ys = Array2::zeros((k, y0.len()));
    let (mut x, mut y) = (x0.clone(), y0.clone());
    for t in 0..k {
        x = x.mapv(|v| v * a);
        y = y.mapv(|v| v * 0.5 + b);
        xs.row_mut(t).assign(&x);
        ys.row_mut(t).assign(&y);
    }
    let got = merged::decays(x0.view(), a, y0.view(), b, k).unwrap();
    assert_eq!(got.0, xs, "{k} steps");
    assert_eq!(got.1, ys, "{k} steps");
    assert_eq!(
        separate::decays(x0.view(), a, y0.view(), b, k).unwrap(),
        got
    );
    second_opinion(
        merged::SOURCE,
        "decays",
        vec![
            Value::from(x0.clone()),
            Value::from(a),
            Value::from(y0.clone()),
            Value::from(b),
            Value::from(k as i64),
        ],
        vec![Value::from(got.0), Value::from(got.1)],
    );
}

#[test]
fn a_carry_passed_through_unchanged_stays_unchanged_when_merged() {
    let h0 = Array1::from(vec![0.5, -1.0]);
    for n in STEPS {
        let u = seq(n);
        let mut keep = Array2::zeros((n, 2));
        let mut acc_rows = Array2::zeros((n, 2));
        let mut y_rows = Array2::zeros((n, 2));
        let (mut acc, mut y) = (h0.clone(), h0.clone());
        for (t, &u_t) in u.iter().enumerate() {
            acc = &acc + &h0.mapv(|k| k * u_t);
            y = y.mapv(|v| v * u_t);
            keep.row_mut(t).assign(&h0);
            acc_rows.row_mut(t).assign(&acc);
            y_rows.row_mut(t).assign(&y);
        }
        let got = merged::carry(u.view(), h0.view()).unwrap();
        assert_eq!(got.0, keep, "keep, {n} steps");
        assert_eq!(got.1, acc_rows, "acc, {n} steps");
        assert_eq!(got.2, y_rows, "y, {n} steps");
        assert_eq!(separate::carry(u.view(), h0.view()).unwrap(), got);
        second_opinion(
            merged::SOURCE,
            "carry",
            vec![Value::from(u.clone()), Value::from(h0.clone())],
            vec![Value::from(got.0), Value::from(got.1), Value::from(got.2)],
        );
    }
}

#[test]
fn shared_outputs_agree() {
    for steps in STEPS {
        // Taps [-1, 0]: one row more than steps.
        let u = seq(steps + 1);
        let d: Vec<f64> = (0..steps).map(|t| u[t + 1] - u[t]).collect();
        let mut s = 0.0;
        let sums: Vec<f64> = d
            .iter()
            .map(|d_t| {
                s += d_t * 0.5;
                s
            })
            .collect();
        let tail = d[d.len().saturating_sub(2)..].to_vec();
        let got = merged::diffs(u.view()).unwrap();
        assert_eq!(got.0.to_vec(), d, "{steps} steps");
        assert_eq!(got.1.to_vec(), sums, "{steps} steps");
        assert_eq!(got.2.to_vec(), tail, "{steps} steps");
        assert_eq!(separate::diffs(u.view()).unwrap(), got);
        second_opinion(
            merged::SOURCE,
            "diffs",
            vec![Value::from(u.clone())],
            vec![Value::from(got.0), Value::from(got.1), Value::from(got.2)],
        );
    }
}
