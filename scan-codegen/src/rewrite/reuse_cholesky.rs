//! Reuse a Cholesky factor: where a graph factors `x` by `cholesky(x)`, `det(x)` and
//! `slogdet(x)` get the factor as a second input and read the determinant off its
//! diagonal (`prod(diag(L))^2`, `(1, 2 sum(log(diag(L))))`) instead of a second
//! factorisation, an LU with pivoting, of the same matrix. A Kalman filter's step factors
//! its innovation covariance `S` for the gain and takes `log det S` for the likelihood:
//! one factorisation instead of two.
//!
//! PyTensor's `local_det_chol` rewrites `det` so, trusting that a matrix one factors by
//! Cholesky is symmetric. The factorisation reads one triangle only, so for a matrix that
//! is not symmetric (a broadcast row added to a covariance) the factor's determinant is
//! another matrix's: the kernels (`kernels::linalg::slogdet_factored`, `det_factored`,
//! and the evaluator) read the factor only when `x` is symmetric to rounding (each pair
//! within `4 n eps max|x|`, the size of the LU's own rounding), and factor by LU
//! otherwise. The factorisation must stop the program when it fails (`on_error =
//! "raise"`, the default): with `on_error = "nan"` there may be no factor, and the pass
//! leaves the graph alone. Rounding differs from the LU's: `eval::rewrites_agree` compares
//! within its tolerance.

use super::{short, Log};
use crate::ir::{Graph, LinalgOp, NodeId, Op};

pub fn run(g: &mut Graph, log: &mut Log) {
    g.normalize();
    let mut found = Vec::new();
    for (i, node) in g.nodes.iter().enumerate() {
        let (Op::Linalg(LinalgOp::Det | LinalgOp::SlogDet), [x]) = (&node.op, &node.inputs[..])
        else {
            continue;
        };
        let factor = g.nodes.iter().position(|c| {
            matches!(
                c.op,
                Op::Linalg(LinalgOp::Cholesky {
                    nan_on_error: false,
                    ..
                })
            ) && c.inputs == [*x]
        });
        if let Some(c) = factor {
            found.push((i, NodeId(c)));
        }
    }
    for (i, factor) in found {
        g.nodes[i].inputs.push(factor);
        log.fired(format!(
            "{}: read off the Cholesky factor of the same matrix",
            short(&g.nodes[i].label)
        ));
    }
    g.normalize();
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::Pass;

    const FILTER: &str = r#"
        fn f(a: ArrayView2<f64>) -> Result<(Array2<f64>, f64, f64, f64)> {
            let s = dot(a, a.t()) + eye(a.shape[0]) as f64;
            let l = cholesky(s);
            let (sign, logdet) = slogdet(s);
            Ok((l, sign, logdet, det(s)))
        }
    "#;

    #[test]
    fn slogdet_and_det_read_the_factor() {
        let (ir, fired) = apply(FILTER, Pass::ReuseCholesky);
        assert_eq!(fired.len(), 2, "{fired:?}");
        assert!(ir.contains("slogdet(%") && ir.contains("det(%"), "{ir}");
        assert_eq!(ir.matches("cholesky").count(), 1, "{ir}");
        assert_same_results(FILTER, "f", &[mat(4, 4, 0.3)]);
        // Not positive definite: the factorisation's error either way.
        assert_same_results(
            FILTER.replace("+ eye", "- 9.0 * eye").as_str(),
            "f",
            &[mat(4, 4, 0.3)],
        );
    }

    #[test]
    fn leaves_a_factor_that_gives_nan_and_other_matrices() {
        let src = r#"
            fn f(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<(Array2<f64>, f64, f64)> {
                let l = cholesky(a, on_error = "nan");
                let (_, d) = slogdet(a);
                Ok((l, d, det(b)))
            }
        "#;
        assert!(apply(src, Pass::ReuseCholesky).1.is_empty());
    }
}
