//! Helpers shared by the integration tests: running a program through the reference
//! evaluator and comparing its results with the generated code's.

#![allow(dead_code)]

pub mod grad_check;
pub mod tutorial_rnn;

pub use scan_codegen::eval::Value;
use scan_runtime::ndarray;

/// Runs `function` of `source` through the reference evaluator of the IR.
pub fn evaluate(source: &str, function: &str, args: Vec<Value>) -> Vec<Value> {
    scan_codegen::eval::run(source, function, args)
        .unwrap_or_else(|e| panic!("the evaluator failed on `{function}`: {e}"))
}

/// Runs `function` of `source` through the reference evaluator on inputs the generated
/// code rejects: it must fail too, for a run-time reason (not an IR error). Returns its
/// message.
pub fn evaluate_err(source: &str, function: &str, args: Vec<Value>) -> String {
    match scan_codegen::eval::run(source, function, args) {
        Ok(values) => panic!("the evaluator accepted `{function}`: {values:?}"),
        Err(e) if e.contains("IR error") => panic!("the evaluator failed on `{function}`: {e}"),
        Err(e) => e,
    }
}

/// The generated code's results agree with the evaluator's, value by value.
pub fn agree(generated: Vec<Value>, evaluated: Vec<Value>) {
    assert_eq!(generated.len(), evaluated.len(), "number of results");
    for (i, (g, e)) in generated.iter().zip(&evaluated).enumerate() {
        if let Err(msg) = scan_codegen::eval::assert_close(g, e) {
            panic!("result {i}: generated code and evaluator disagree: {msg}");
        }
    }
}

/// Runs the evaluator on the same program and arguments and checks it agrees with what
/// the generated code returned; then checks that the rewrites, each alone and all
/// together, leave what the program computes unchanged (see [`rewrites_agree`]).
pub fn second_opinion(source: &str, function: &str, args: Vec<Value>, generated: Vec<Value>) {
    agree(generated, evaluate(source, function, args.clone()));
    rewrites_agree(source, function, args);
}

/// The program evaluated after each rewrite pass alone, and after all of them, gives
/// bit-identical results to the program without rewrites (or an error in both cases).
pub fn rewrites_agree(source: &str, function: &str, args: Vec<Value>) {
    if let Err(e) = scan_codegen::eval::rewrites_agree(source, function, &args) {
        panic!("{e}");
    }
}

/// Float slices equal within `rtol` (relative, with 1 as the smallest scale); NaN equals
/// NaN and infinities must match exactly.
pub fn assert_floats(actual: &[f64], expected: &[f64], rtol: f64) {
    assert_eq!(
        actual.len(),
        expected.len(),
        "lengths differ: {actual:?} vs {expected:?}"
    );
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        let ok = if e.is_nan() {
            a.is_nan()
        } else if e.is_infinite() {
            a == e
        } else {
            (a - e).abs() <= rtol * e.abs().max(1.0)
        };
        assert!(
            ok,
            "element {i}: {a} vs expected {e}\n actual: {actual:?}\n expected: {expected:?}"
        );
    }
}

/// [`assert_floats`] for f32 values.
pub fn assert_floats32(actual: &[f32], expected: &[f32], rtol: f64) {
    let a: Vec<f64> = actual.iter().map(|&x| f64::from(x)).collect();
    let e: Vec<f64> = expected.iter().map(|&x| f64::from(x)).collect();
    assert_floats(&a, &e, rtol);
}

/// Approximate equality of float slices, for the oracle checks.
pub fn assert_allclose(actual: &[f64], expected: &[f64], tol: f64) {
    assert_eq!(
        actual.len(),
        expected.len(),
        "lengths differ: {actual:?} vs {expected:?}"
    );
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert!(
            (a - e).abs() <= tol * (1.0 + e.abs()),
            "element {i}: {a} vs expected {e} (all: {actual:?})"
        );
    }
}

/// A deterministic matrix with entries in [-0.5, 0.5), so tests need no random-number crate.
pub fn matrix(rows: usize, cols: usize, seed: u64) -> ndarray::Array2<f64> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ndarray::Array2::from_shape_fn((rows, cols), |_| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as f64 / (1u64 << 31) as f64) - 0.5
    })
}
