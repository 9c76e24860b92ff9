//! Gradients checked against central finite differences in f64, for any program: the
//! caller passes the cost as a function of its inputs (computed by the generated code,
//! forward only) and the gradients the generated code returned.
//!
//! Each partial derivative is estimated by Richardson's extrapolation of two central
//! differences, `(4 D(h/2) - D(h)) / 3` with `D(h) = (f(x + h e_i) - f(x - h e_i)) / 2h` and
//! `h = 1e-3 max(1, |x_i|)`: its error is O(h^4) plus rounding of order `1e-16 |f| / h`, far
//! below the tolerance. A gradient passes when `|g - fd| <= 1e-6 max(|fd|, 1e-3)`: relative
//! error at most 1e-6, with an absolute floor of 1e-9 for gradients near 0 (where a relative
//! error means nothing). Points must be away from kinks (ties of `max`, `abs` at 0): there
//! the derivative is a choice, checked by exact values instead.

use scan_runtime::ndarray::ArrayD;

/// Relative tolerance of [`check_gradient`].
pub const RTOL: f64 = 1e-6;
/// Below this size a gradient is compared absolutely (`RTOL * FLOOR`).
pub const FLOOR: f64 = 1e-3;

/// The central-difference estimate of the gradient of `cost` at `inputs`, input by input,
/// element by element (row-major).
pub fn finite_differences(
    cost: &dyn Fn(&[ArrayD<f64>]) -> f64,
    inputs: &[ArrayD<f64>],
) -> Vec<ArrayD<f64>> {
    let mut point: Vec<ArrayD<f64>> = inputs.to_vec();
    let mut out = Vec::new();
    for k in 0..inputs.len() {
        let mut grad = ArrayD::zeros(inputs[k].raw_dim());
        let n = inputs[k].len();
        for i in 0..n {
            let x = inputs[k].as_slice_memory_order().expect("standard layout")[i];
            let h = 1e-3 * x.abs().max(1.0);
            let mut at = |dx: f64| {
                point[k]
                    .as_slice_memory_order_mut()
                    .expect("standard layout")[i] = x + dx;
                let v = cost(&point);
                point[k]
                    .as_slice_memory_order_mut()
                    .expect("standard layout")[i] = x;
                v
            };
            let d = |at: &mut dyn FnMut(f64) -> f64, h: f64| (at(h) - at(-h)) / (2.0 * h);
            let (d1, d2) = (d(&mut at, h), d(&mut at, h / 2.0));
            grad.as_slice_memory_order_mut().expect("standard layout")[i] = (4.0 * d2 - d1) / 3.0;
        }
        out.push(grad);
    }
    out
}

/// Panics unless each of `grads` (one per input, its shape) matches the finite
/// differences of `cost` at `inputs` within `|g - fd| <= RTOL max(|fd|, FLOOR)`.
pub fn check_gradient(
    cost: &dyn Fn(&[ArrayD<f64>]) -> f64,
    inputs: &[ArrayD<f64>],
    grads: &[ArrayD<f64>],
) {
    assert_eq!(inputs.len(), grads.len(), "one gradient per input");
    let fd = finite_differences(cost, inputs);
    for (k, (g, e)) in grads.iter().zip(&fd).enumerate() {
        assert_eq!(g.shape(), e.shape(), "gradient {k}: shape");
        for (i, (a, b)) in g.iter().zip(e.iter()).enumerate() {
            let tol = RTOL * b.abs().max(FLOOR);
            assert!(
                (a - b).abs() <= tol,
                "gradient {k}, element {i}: {a} vs finite differences {b} (|diff| {} > {tol})\n grad: {g}\n fd: {e}",
                (a - b).abs()
            );
        }
    }
}

/// The generated gradients agree (within `eval::assert_close`) with the reference
/// evaluator's own differentiation: forward mode, one tangent per element
/// (`scan_codegen::eval::gradient_by_jvp`), independent of the compiler's reverse mode.
/// Result 0 of `function` is the cost; each `(arg, result)` pairs an argument with the
/// result that holds its gradient.
pub fn forward_mode_agrees(
    source: &str,
    function: &str,
    args: &[super::Value],
    results: &[super::Value],
    pairs: &[(usize, usize)],
) {
    for &(arg, result) in pairs {
        let want = scan_codegen::eval::gradient_by_jvp(source, function, args.to_vec(), arg, 0)
            .unwrap_or_else(|e| panic!("`{function}`: forward mode failed: {e}"));
        if let Err(e) = scan_codegen::eval::assert_close(&results[result], &want) {
            panic!(
                "`{function}`: gradient {result} (argument {arg}) disagrees with forward mode: {e}"
            );
        }
    }
}
