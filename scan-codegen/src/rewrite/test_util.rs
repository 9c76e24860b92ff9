//! Helpers for the passes' unit tests: run one pass on a program, and check that rewriting
//! did not change what the program computes (by the reference evaluator, when built).

use super::{Config, Pass};

/// The printed IR of `src`'s first function after `pass` alone, and what fired.
pub fn apply(src: &str, pass: Pass) -> (String, Vec<String>) {
    apply_passes(src, &[pass])
}

/// [`apply`] with several passes (in their usual order).
pub fn apply_passes(src: &str, passes: &[Pass]) -> (String, Vec<String>) {
    let (functions, fired) =
        crate::compile_with(src, &Config::only(passes)).unwrap_or_else(|e| panic!("{e}"));
    let ir = functions.iter().map(crate::ir::print::function).collect();
    (ir, fired.iter().map(|f| f.to_string()).collect())
}

#[cfg(feature = "evaluator")]
pub use evaluated::*;

#[cfg(feature = "evaluator")]
mod evaluated {
    pub use crate::eval::Value;

    /// The scan tutorial's polynomial, its map output only summed.
    pub const POLYNOMIAL: &str = "pub fn polynomial(c: ArrayView1<f64>, x: f64, n: usize) -> Result<f64> {
        let components = scan(|c_t, p, x| c_t * pow(x, p), sequences = [c, arange(n)], non_sequences = x);
        Ok(components.sum())
    }";

    /// `n` varied coefficients for [`POLYNOMIAL`].
    pub fn coefficients(n: usize) -> Value {
        Value::from(ndarray::Array1::from_shape_fn(n, |i| {
            (i as f64 * 0.7).sin()
        }))
    }

    pub fn vec1(v: &[f64]) -> Value {
        Value::from(ndarray::Array1::from(v.to_vec()))
    }

    /// A `rows x cols` f64 matrix of varied values (`seed` shifts them).
    pub fn mat(rows: usize, cols: usize, seed: f64) -> Value {
        Value::from(ndarray::Array2::from_shape_fn((rows, cols), |(i, j)| {
            ((i * cols + j) as f64 * 0.37 + seed).sin()
        }))
    }

    /// `function` of `src` evaluated on `args` gives bit-identical results (or an error in
    /// both cases) with no rewrite, each pass alone, and all passes.
    pub fn assert_same_results(src: &str, function: &str, args: &[Value]) {
        if let Err(e) = crate::eval::rewrites_agree(src, function, args) {
            panic!("{e}");
        }
    }
}

#[cfg(not(feature = "evaluator"))]
pub fn vec1(_: &[f64]) {}

#[cfg(not(feature = "evaluator"))]
pub fn assert_same_results(_: &str, _: &str, _: &[()]) {}

/// The step lines of a printed graph (a scan's step is indented by four).
pub fn step_lines(ir: &str) -> Vec<&str> {
    ir.lines().filter(|l| l.starts_with("    ")).collect()
}

/// The lines of the outer graph of a printed graph (indented by two).
pub fn outer_lines(ir: &str) -> Vec<&str> {
    ir.lines()
        .filter(|l| l.starts_with("  %") && !l.starts_with("    "))
        .collect()
}

/// The scan tutorial's RNN (scan-bench's seed_taps), which group_projections and
/// stack_dots both rewrite.
pub const TUTORIAL_RNN: &str = r#"
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
        );
        Ok((x_vals, y_vals))
    }
"#;
