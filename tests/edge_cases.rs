//! Edge cases of the step language against numpy (docs/SEMANTICS.md, "Edge cases"):
//! reductions over empty axes, NaN propagation in the extremes, signed zeros, integer
//! overflow at every integer dtype, division by zero and by -1, negative indices and
//! negative steps, clip with lo > hi, pow at 0. The expected numbers are numpy 2.4.6's
//! (scipy 1.17.1's for logsumexp and softmax), printed by tools/edge_cases.py; where numpy
//! raises, the program returns an `Err` naming the expression. Every program also runs
//! through the reference evaluator, which must agree (bit for bit where a zero's sign is
//! the point).

mod common;

use common::{evaluate, evaluate_err, second_opinion, Value};
use scan_runtime::prelude::*;

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

/// Bit-identical floats (a zero's sign counts), any NaN matching any NaN.
fn assert_bits(actual: &[f64], expected: &[f64]) {
    assert_bits_of("", actual, expected);
}

/// [`assert_bits`] saying which result is compared.
fn assert_bits_of(what: &str, actual: &[f64], expected: &[f64]) {
    assert_eq!(
        actual.len(),
        expected.len(),
        "{what}: {actual:?} vs {expected:?}"
    );
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        let same = (a.is_nan() && e.is_nan()) || a.to_bits() == e.to_bits();
        assert!(
            same,
            "{what} element {i}: {a:?} vs expected {e:?}\n actual: {actual:?}\n expected: {expected:?}"
        );
    }
}

/// The evaluator's f64 results, flattened, for bit-exact checks (`second_opinion`'s
/// comparison does not see a zero's sign).
fn evaluated_f64s(source: &str, function: &str, args: Vec<Value>) -> Vec<Vec<f64>> {
    evaluate(source, function, args)
        .into_iter()
        .map(|v| match v {
            Value::F64(a) => a.iter().copied().collect(),
            other => panic!("expected f64 results, got {other:?}"),
        })
        .collect()
}

/// `Value`s of the results, for `second_opinion`.
macro_rules! values {
    ($($x:expr),* $(,)?) => { vec![$(Value::from($x.clone())),*] };
}

// ---------------------------------------------------------------------------------------
// Empty axes
// ---------------------------------------------------------------------------------------

mod empty {
    scan_tests::program! {
        /// Reductions with an identity: sum 0, prod 1; mean, var, std NaN.
        pub fn with_identity(x: ArrayView2<f64>) -> Result<(f64, Array1<f64>, f64, Array1<f64>, f64, Array1<f64>, f64, Array1<f64>, f64, Array1<f64>)> {
            Ok((sum(x), sum(x, 1), prod(x), prod(x, 1), mean(x), mean(x, 1), var(x), var(x, 1), std(x), std(x, 1)))
        }

        /// any of nothing is false, all of nothing true.
        pub fn truths(x: ArrayView2<f64>) -> Result<(bool, Array1<bool>, bool, Array1<bool>)> {
            Ok((any(x), any(x, 1), all(x), all(x, 1)))
        }

        /// Empty results: cumsum, cumprod, max and argmax along the non-empty axis
        /// (nothing to reduce into); logsumexp of nothing is -inf.
        pub fn empty_results(x: ArrayView2<f64>, v: ArrayView1<f64>) -> Result<(Array1<f64>, Array2<f64>, Array1<f64>, Array1<i64>, f64, Array1<f64>)> {
            Ok((cumsum(x), cumprod(x, 1), max(x, 0), argmax(x, 0), logsumexp(v), logsumexp(x, 1)))
        }

        /// Integers: sum 0 and prod 1 in i64, mean NaN.
        pub fn integers(k: ArrayView1<i8>) -> Result<(i64, i64, f64)> {
            Ok((sum(k), prod(k), mean(k)))
        }

        // numpy raises for these: each is an `Err` naming the expression.
        pub fn max_all(x: ArrayView2<f64>) -> Result<f64> {
            Ok(max(x))
        }
        pub fn max_axis(x: ArrayView2<f64>) -> Result<Array1<f64>> {
            Ok(max(x, 1))
        }
        pub fn min_all(x: ArrayView2<f64>) -> Result<f64> {
            Ok(min(x))
        }
        pub fn min_axis(x: ArrayView2<f64>) -> Result<Array1<f64>> {
            Ok(min(x, 1))
        }
        pub fn argmax_all(x: ArrayView2<f64>) -> Result<i64> {
            Ok(argmax(x))
        }
        pub fn argmax_axis(x: ArrayView2<f64>) -> Result<Array1<i64>> {
            Ok(argmax(x, 1))
        }
        pub fn argmin_all(x: ArrayView2<f64>) -> Result<i64> {
            Ok(argmin(x))
        }
        pub fn argmin_axis(x: ArrayView2<f64>) -> Result<Array1<i64>> {
            Ok(argmin(x, 1))
        }
        pub fn softmax_axis(x: ArrayView2<f64>) -> Result<Array2<f64>> {
            Ok(softmax(x, 1))
        }
        pub fn log_softmax_axis(x: ArrayView2<f64>) -> Result<Array2<f64>> {
            Ok(log_softmax(x, 1))
        }
        /// The max of an empty row inside a step.
        pub fn max_in_a_step(x: ArrayView2<f64>) -> Result<Array1<f64>> {
            Ok(map(|r| max(r), sequences = x))
        }
    }
}

#[test]
fn reductions_over_empty_axes_follow_numpy() {
    let x = Array2::<f64>::zeros((2, 0));
    let v = Array1::<f64>::zeros(0);
    let got = empty::with_identity(x.view()).unwrap();
    // numpy: sum 0.0, prod 1.0, mean/var/std nan, each also per row.
    assert_bits(&[got.0], &[0.0]);
    assert_bits(&got.1.to_vec(), &[0.0, 0.0]);
    assert_bits(&[got.2], &[1.0]);
    assert_bits(&got.3.to_vec(), &[1.0, 1.0]);
    assert_bits(&[got.4], &[NAN]);
    assert_bits(&got.5.to_vec(), &[NAN, NAN]);
    assert_bits(&[got.6], &[NAN]);
    assert_bits(&got.7.to_vec(), &[NAN, NAN]);
    assert_bits(&[got.8], &[NAN]);
    assert_bits(&got.9.to_vec(), &[NAN, NAN]);
    second_opinion(
        empty::SOURCE,
        "with_identity",
        values![x],
        values![got.0, got.1, got.2, got.3, got.4, got.5, got.6, got.7, got.8, got.9],
    );

    let got = empty::truths(x.view()).unwrap();
    assert_eq!(got, (false, array![false, false], true, array![true, true]));
    second_opinion(
        empty::SOURCE,
        "truths",
        values![x],
        values![got.0, got.1, got.2, got.3],
    );

    let got = empty::empty_results(x.view(), v.view()).unwrap();
    // numpy: cumsum(x) shape (0,), cumprod(x, 1) shape (2, 0), max(x, 0) and argmax(x, 0)
    // shape (0,), logsumexp([]) = -inf, logsumexp(x, 1) = [-inf, -inf].
    assert_eq!(got.0.shape(), &[0]);
    assert_eq!(got.1.shape(), &[2, 0]);
    assert_eq!(got.2.shape(), &[0]);
    assert_eq!(got.3.shape(), &[0]);
    assert_bits(&[got.4], &[-INF]);
    assert_bits(&got.5.to_vec(), &[-INF, -INF]);
    second_opinion(
        empty::SOURCE,
        "empty_results",
        values![x, v],
        values![got.0, got.1, got.2, got.3, got.4, got.5],
    );

    let k = Array1::<i8>::zeros(0);
    let got = empty::integers(k.view()).unwrap();
    assert_eq!((got.0, got.1), (0, 1));
    assert!(got.2.is_nan());
    second_opinion(
        empty::SOURCE,
        "integers",
        values![k],
        values![got.0, got.1, got.2],
    );
}

#[test]
fn extremes_of_nothing_are_errs_naming_the_expression() {
    let x = Array2::<f64>::zeros((2, 0));
    // numpy raises ValueError for each ("zero-size array to reduction operation maximum
    // which has no identity", "attempt to get argmax of an empty sequence"); scipy's
    // softmax raises the same as max.
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "max_all",
            empty::max_all(x.view()).unwrap_err().to_string(),
            "max(x)",
        ),
        (
            "max_axis",
            empty::max_axis(x.view()).unwrap_err().to_string(),
            "max(x, 1)",
        ),
        (
            "min_all",
            empty::min_all(x.view()).unwrap_err().to_string(),
            "min(x)",
        ),
        (
            "min_axis",
            empty::min_axis(x.view()).unwrap_err().to_string(),
            "min(x, 1)",
        ),
        (
            "argmax_all",
            empty::argmax_all(x.view()).unwrap_err().to_string(),
            "argmax(x)",
        ),
        (
            "argmax_axis",
            empty::argmax_axis(x.view()).unwrap_err().to_string(),
            "argmax(x, 1)",
        ),
        (
            "argmin_all",
            empty::argmin_all(x.view()).unwrap_err().to_string(),
            "argmin(x)",
        ),
        (
            "argmin_axis",
            empty::argmin_axis(x.view()).unwrap_err().to_string(),
            "argmin(x, 1)",
        ),
        (
            "softmax_axis",
            empty::softmax_axis(x.view()).unwrap_err().to_string(),
            "softmax(x, 1)",
        ),
        (
            "log_softmax_axis",
            empty::log_softmax_axis(x.view()).unwrap_err().to_string(),
            "log_softmax(x, 1)",
        ),
        (
            "max_in_a_step",
            empty::max_in_a_step(x.view()).unwrap_err().to_string(),
            "max(r)",
        ),
    ];
    for (function, message, expression) in cases {
        assert!(message.contains(expression), "{function}: {message}");
        let e = evaluate_err(empty::SOURCE, function, values![x]);
        assert!(e.contains(expression), "evaluator, {function}: {e}");
    }
}

// ---------------------------------------------------------------------------------------
// NaN propagation
// ---------------------------------------------------------------------------------------

mod nans {
    scan_tests::program! {
        pub fn vector(x: ArrayView1<f64>) -> Result<(f64, f64, i64, i64, Array1<f64>, Array1<f64>, f64, f64)> {
            // `max(x * 1.0)` is the max of a map (one pass, in lanes).
            Ok((max(x), min(x), argmax(x), argmin(x), cumsum(x), cumprod(x), logsumexp(x), max(x * 1.0)))
        }

        pub fn matrix(m: ArrayView2<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<i64>, Array1<i64>, Array1<i64>, Array1<i64>)> {
            Ok((max(m, 1), max(m, 0), min(m, 1), min(m, 0), argmax(m, 1), argmax(m, 0), argmin(m, 1), argmin(m, 0)))
        }

        /// The extremes of each row, inside a step.
        pub fn rows(m: ArrayView2<f64>) -> Result<(Array1<f64>, Array1<i64>)> {
            let (hi, at) = map(|r| (max(r), argmax(r)), sequences = m);
            Ok((hi, at))
        }

        pub fn pairs(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((maximum(a, b), minimum(a, b), clip(a, 0.0, 1.5), clip(0.5, a, 1.5), clip(0.5, 0.0, a), relu(a)))
        }

        pub fn stable(v: ArrayView1<f64>) -> Result<(f64, Array1<f64>, Array1<f64>)> {
            Ok((logsumexp(v), softmax(v), log_softmax(v)))
        }
    }
}

#[test]
fn nan_propagates_as_in_numpy() {
    let x = array![1.0, NAN, 3.0, NAN, -2.0];
    let got = nans::vector(x.view()).unwrap();
    // numpy: max and min nan, argmax and argmin the first NaN (1); cumsum and cumprod nan
    // from the NaN on; logsumexp nan.
    assert_bits(&[got.0, got.1], &[NAN, NAN]);
    assert_eq!((got.2, got.3), (1, 1));
    assert_bits(&got.4.to_vec(), &[1.0, NAN, NAN, NAN, NAN]);
    assert_bits(&got.5.to_vec(), &[1.0, NAN, NAN, NAN, NAN]);
    assert_bits(&[got.6, got.7], &[NAN, NAN]);
    second_opinion(
        nans::SOURCE,
        "vector",
        values![x],
        values![got.0, got.1, got.2, got.3, got.4, got.5, got.6, got.7],
    );

    let m = array![[NAN, 2.0, 5.0], [4.0, -1.0, NAN]];
    let got = nans::matrix(m.view()).unwrap();
    assert_bits(&got.0.to_vec(), &[NAN, NAN]);
    assert_bits(&got.1.to_vec(), &[NAN, 2.0, NAN]);
    assert_bits(&got.2.to_vec(), &[NAN, NAN]);
    assert_bits(&got.3.to_vec(), &[NAN, -1.0, NAN]);
    assert_eq!(got.4, array![0, 2]);
    assert_eq!(got.5, array![0, 0, 1]);
    assert_eq!(got.6, array![0, 2]);
    assert_eq!(got.7, array![0, 1, 1]);
    second_opinion(
        nans::SOURCE,
        "matrix",
        values![m],
        values![got.0, got.1, got.2, got.3, got.4, got.5, got.6, got.7],
    );
    let got = nans::rows(m.view()).unwrap();
    assert_bits(&got.0.to_vec(), &[NAN, NAN]);
    assert_eq!(got.1, array![0, 2]);
    second_opinion(nans::SOURCE, "rows", values![m], values![got.0, got.1]);

    let a = array![NAN, 1.0, NAN, 2.0];
    let b = array![1.0, NAN, NAN, 3.0];
    let got = nans::pairs(a.view(), b.view()).unwrap();
    // numpy: maximum and minimum propagate NaN from either side (fmax/fmin, which do not,
    // are not in the step language); clip is NaN when any operand is; relu keeps NaN.
    assert_bits(&got.0.to_vec(), &[NAN, NAN, NAN, 3.0]);
    assert_bits(&got.1.to_vec(), &[NAN, NAN, NAN, 2.0]);
    assert_bits(&got.2.to_vec(), &[NAN, 1.0, NAN, 1.5]);
    assert_bits(&got.3.to_vec(), &[NAN, 1.0, NAN, 1.5]);
    assert_bits(&got.4.to_vec(), &[NAN, 0.5, NAN, 0.5]);
    assert_bits(&got.5.to_vec(), &[NAN, 1.0, NAN, 2.0]);
    second_opinion(
        nans::SOURCE,
        "pairs",
        values![a, b],
        values![got.0, got.1, got.2, got.3, got.4, got.5],
    );

    // scipy: all -inf gives logsumexp -inf and softmax/log_softmax NaN (-inf - -inf);
    // an inf gives logsumexp inf; a -inf beside a finite value has probability 0.
    let cases = [
        (array![-INF, -INF], -INF, [NAN, NAN], [NAN, NAN]),
        (array![INF, 1.0], INF, [NAN, NAN], [NAN, NAN]),
        (array![-INF, 0.0], 0.0, [0.0, 1.0], [-INF, 0.0]),
    ];
    for (v, lse, sm, lsm) in cases {
        let got = nans::stable(v.view()).unwrap();
        assert_bits(&[got.0], &[lse]);
        assert_bits(&got.1.to_vec(), &sm);
        assert_bits(&got.2.to_vec(), &lsm);
        second_opinion(
            nans::SOURCE,
            "stable",
            values![v],
            values![got.0, got.1, got.2],
        );
    }
}

// ---------------------------------------------------------------------------------------
// Signed zeros
// ---------------------------------------------------------------------------------------

mod zeros {
    scan_tests::program! {
        pub fn unary(z: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((sign(z), abs(z), -z, square(z), sqrt(z), reciprocal(z), relu(z), maximum(z, 0.0)))
        }

        pub fn ties(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
            Ok((maximum(a, b), minimum(a, b)))
        }

        pub fn rounding(h: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((round(h), floor(h), ceil(h), trunc(h)))
        }

        pub fn angles(y: ArrayView1<f64>, x: ArrayView1<f64>) -> Result<Array1<f64>> {
            Ok(arctan2(y, x))
        }

        pub fn odd(z: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((sin(z), tanh(z), expm1(z), log1p(z), arctan(z)))
        }

        pub fn division(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
            Ok((a % b, floor_div(a, b)))
        }

        pub fn accumulate(z: ArrayView1<f64>, w: ArrayView1<f64>) -> Result<(f64, f64, Array1<f64>)> {
            Ok((sum(z), prod(w), cumsum(z)))
        }
    }
}

#[test]
fn signed_zeros_follow_numpy() {
    let z = array![-0.0, 0.0];
    let got = zeros::unary(z.view()).unwrap();
    // numpy: sign(±0) = 0, abs(-0) = 0, -(0) = -0, square(-0) = 0, sqrt(-0) = -0,
    // reciprocal(±0) = ±inf, maximum(-0, 0) = 0 (so relu(-0) = 0).
    let expected: [&[f64]; 8] = [
        &[0.0, 0.0],
        &[0.0, 0.0],
        &[0.0, -0.0],
        &[0.0, 0.0],
        &[-0.0, 0.0],
        &[-INF, INF],
        &[0.0, 0.0],
        &[0.0, 0.0],
    ];
    let results = [
        &got.0, &got.1, &got.2, &got.3, &got.4, &got.5, &got.6, &got.7,
    ];
    let evaluated = evaluated_f64s(zeros::SOURCE, "unary", values![z]);
    for (i, want) in expected.iter().enumerate() {
        assert_bits_of(&format!("result {i}"), &results[i].to_vec(), want);
        assert_bits_of(&format!("evaluated result {i}"), &evaluated[i], want);
    }

    // numpy (x86-64): on a tie maximum and minimum return the second operand:
    // maximum(-0, 0) = 0, maximum(0, -0) = -0, minimum(0, -0) = -0, minimum(-0, 0) = 0.
    let a = array![-0.0, 0.0];
    let b = array![0.0, -0.0];
    let got = zeros::ties(a.view(), b.view()).unwrap();
    assert_bits(&got.0.to_vec(), &[0.0, -0.0]);
    assert_bits(&got.1.to_vec(), &[0.0, -0.0]);
    let evaluated = evaluated_f64s(zeros::SOURCE, "ties", values![a, b]);
    assert_bits(&evaluated[0], &[0.0, -0.0]);
    assert_bits(&evaluated[1], &[0.0, -0.0]);

    let h = array![-0.0, -0.5, 0.5, -1.5, 2.5, -2.5];
    let got = zeros::rounding(h.view()).unwrap();
    let expected: [&[f64]; 4] = [
        &[-0.0, -0.0, 0.0, -2.0, 2.0, -2.0],
        &[-0.0, -1.0, 0.0, -2.0, 2.0, -3.0],
        &[-0.0, -0.0, 1.0, -1.0, 3.0, -2.0],
        &[-0.0, -0.0, 0.0, -1.0, 2.0, -2.0],
    ];
    let results = [&got.0, &got.1, &got.2, &got.3];
    let evaluated = evaluated_f64s(zeros::SOURCE, "rounding", values![h]);
    for (i, want) in expected.iter().enumerate() {
        assert_bits_of(&format!("result {i}"), &results[i].to_vec(), want);
        assert_bits_of(&format!("evaluated result {i}"), &evaluated[i], want);
    }

    let y = array![0.0, -0.0, 0.0, -0.0, 1.0, -1.0];
    let x = array![0.0, 0.0, -0.0, -0.0, -INF, -INF];
    let pi = std::f64::consts::PI;
    let want = [0.0, -0.0, pi, -pi, pi, -pi];
    assert_bits(&zeros::angles(y.view(), x.view()).unwrap().to_vec(), &want);
    assert_bits(
        &evaluated_f64s(zeros::SOURCE, "angles", values![y, x])[0],
        &want,
    );

    let n = array![-0.0];
    let got = zeros::odd(n.view()).unwrap();
    let evaluated = evaluated_f64s(zeros::SOURCE, "odd", values![n]);
    for (i, r) in [&got.0, &got.1, &got.2, &got.3, &got.4].iter().enumerate() {
        assert_bits_of(&format!("result {i}"), &r.to_vec(), &[-0.0]);
        assert_bits_of(&format!("evaluated result {i}"), &evaluated[i], &[-0.0]);
    }

    // numpy's float % and //: the remainder takes the divisor's sign (a zero one too);
    // x // 0 is x / 0's infinity, 0 // 0 and x % 0 NaN.
    let a = array![-0.0, 0.0, -3.0, 1.0, -1.0, 0.0];
    let b = array![3.0, -3.0, 3.0, 0.0, 0.0, 0.0];
    let rem = [0.0, -0.0, 0.0, NAN, NAN, NAN];
    let fdiv = [-0.0, -0.0, -1.0, INF, -INF, NAN];
    let got = zeros::division(a.view(), b.view()).unwrap();
    assert_bits(&got.0.to_vec(), &rem);
    assert_bits(&got.1.to_vec(), &fdiv);
    let evaluated = evaluated_f64s(zeros::SOURCE, "division", values![a, b]);
    assert_bits(&evaluated[0], &rem);
    assert_bits(&evaluated[1], &fdiv);

    // numpy: sum([-0, -0]) = 0, prod([-0, 1]) = -0, cumsum([-0, -0]) = [-0, -0].
    let z = array![-0.0, -0.0];
    let w = array![-0.0, 1.0];
    let got = zeros::accumulate(z.view(), w.view()).unwrap();
    assert_bits(&[got.0, got.1], &[0.0, -0.0]);
    assert_bits(&got.2.to_vec(), &[-0.0, -0.0]);
    let evaluated = evaluated_f64s(zeros::SOURCE, "accumulate", values![z, w]);
    assert_bits(&evaluated[0], &[0.0]);
    assert_bits(&evaluated[1], &[-0.0]);
    assert_bits(&evaluated[2], &[-0.0, -0.0]);
}

// ---------------------------------------------------------------------------------------
// Integer overflow, division by -1 and by 0, numpy's accumulators
// ---------------------------------------------------------------------------------------

/// The same programs for each signed dtype: `a` is `[MIN, MAX, -1, 0]`, `two` `[MAX, MAX]`.
macro_rules! signed {
    ($($module:ident: $t:ident, sum $sum:expr, prod $prod:expr;)*) => {$(
        mod $module {
            scan_tests::program! {
                pub fn wraps(a: ArrayView1<$t>, m: $t, z: $t) -> Result<(Array1<$t>, Array1<$t>, Array1<$t>, Array1<$t>, Array1<$t>, Array1<$t>, Array1<$t>, Array1<$t>, Array1<$t>, Array1<$t>, Array1<$t>)> {
                    Ok((-a, abs(a), square(a), a + 1, a * 2, a - 1, floor_div(a, m), a % m, floor_div(a, z), a % z, sign(a)))
                }

                pub fn accumulates(two: ArrayView1<$t>) -> Result<(i64, Array1<i64>, i64, Array1<i64>, f64)> {
                    Ok((sum(two), cumsum(two), prod(two), cumprod(two), mean(two)))
                }
            }
        }

        #[test]
        fn $module() {
            let a = array![$t::MIN, $t::MAX, -1, 0];
            let got = $module::wraps(a.view(), -1, 0).unwrap();
            // numpy: -MIN = MIN, abs(MIN) = MIN, MIN // -1 = MIN, MIN % -1 = 0, x // 0 =
            // x % 0 = 0 (with a warning), MAX + 1 = MIN, MIN - 1 = MAX.
            assert_eq!(got.0, array![$t::MIN, -$t::MAX, 1, 0], "-a");
            assert_eq!(got.1, array![$t::MIN, $t::MAX, 1, 0], "abs");
            assert_eq!(got.2, array![0, 1, 1, 0], "square");
            assert_eq!(got.3, array![$t::MIN + 1, $t::MIN, 0, 1], "a + 1");
            assert_eq!(got.4, array![0, -2, -2, 0], "a * 2");
            assert_eq!(got.5, array![$t::MAX, $t::MAX - 1, -2, -1], "a - 1");
            assert_eq!(got.6, array![$t::MIN, -$t::MAX, 1, 0], "a // -1");
            assert_eq!(got.7, array![0, 0, 0, 0], "a % -1");
            assert_eq!(got.8, array![0, 0, 0, 0], "a // 0");
            assert_eq!(got.9, array![0, 0, 0, 0], "a % 0");
            assert_eq!(got.10, array![-1, 1, -1, 0], "sign");
            second_opinion(
                $module::SOURCE,
                "wraps",
                vec![Value::from(&a), Value::from(-1 as $t), Value::from(0 as $t)],
                values![got.0, got.1, got.2, got.3, got.4, got.5, got.6, got.7, got.8, got.9, got.10],
            );

            let two = array![$t::MAX, $t::MAX];
            let got = $module::accumulates(two.view()).unwrap();
            // numpy: sums and products in int64 (which wraps in turn), mean in float64.
            assert_eq!(got.0, $sum, "sum");
            assert_eq!(got.1, array![$t::MAX as i64, $sum], "cumsum");
            assert_eq!(got.2, $prod, "prod");
            assert_eq!(got.3, array![$t::MAX as i64, $prod], "cumprod");
            assert_eq!(got.4, $t::MAX as f64, "mean");
            second_opinion(
                $module::SOURCE,
                "accumulates",
                values![two],
                values![got.0, got.1, got.2, got.3, got.4],
            );
        }
    )*};
}

signed! {
    signed_i8: i8, sum 254, prod 16129;
    signed_i16: i16, sum 65534, prod 1073676289;
    signed_i32: i32, sum 4294967294, prod 4611686014132420609;
    signed_i64: i64, sum -2, prod 1;
}

/// The same for each unsigned dtype: `a` is `[0, 1, MAX]`, `two` `[MAX, MAX]`.
macro_rules! unsigned {
    ($($module:ident: $t:ident, sum $sum:expr, prod $prod:expr;)*) => {$(
        mod $module {
            scan_tests::program! {
                pub fn wraps(a: ArrayView1<$t>, z: $t) -> Result<(Array1<$t>, Array1<$t>, Array1<$t>, Array1<$t>, Array1<$t>, Array1<$t>, Array1<$t>, Array1<$t>)> {
                    Ok((-a, a + 1, a - 1, square(a), floor_div(a, z), a % z, abs(a), sign(a)))
                }

                pub fn accumulates(two: ArrayView1<$t>) -> Result<(u64, Array1<u64>, u64, f64)> {
                    Ok((sum(two), cumsum(two), prod(two), mean(two)))
                }
            }
        }

        #[test]
        fn $module() {
            let a = array![0, 1, $t::MAX];
            let got = $module::wraps(a.view(), 0).unwrap();
            // numpy: -1 = MAX, MAX + 1 = 0, 0 - 1 = MAX, MAX * MAX = 1, x // 0 = x % 0 = 0.
            assert_eq!(got.0, array![0, $t::MAX, 1], "-a");
            assert_eq!(got.1, array![1, 2, 0], "a + 1");
            assert_eq!(got.2, array![$t::MAX, 0, $t::MAX - 1], "a - 1");
            assert_eq!(got.3, array![0, 1, 1], "square");
            assert_eq!(got.4, array![0, 0, 0], "a // 0");
            assert_eq!(got.5, array![0, 0, 0], "a % 0");
            assert_eq!(got.6, array![0, 1, $t::MAX], "abs");
            assert_eq!(got.7, array![0, 1, 1], "sign");
            second_opinion(
                $module::SOURCE,
                "wraps",
                vec![Value::from(&a), Value::from(0 as $t)],
                values![got.0, got.1, got.2, got.3, got.4, got.5, got.6, got.7],
            );

            let two = array![$t::MAX, $t::MAX];
            let got = $module::accumulates(two.view()).unwrap();
            // numpy: sums and products in uint64 (which wraps in turn), mean in float64.
            assert_eq!(got.0, $sum, "sum");
            assert_eq!(got.1, array![$t::MAX as u64, $sum], "cumsum");
            assert_eq!(got.2, $prod, "prod");
            assert_eq!(got.3, $t::MAX as f64, "mean");
            second_opinion(
                $module::SOURCE,
                "accumulates",
                values![two],
                values![got.0, got.1, got.2, got.3],
            );
        }
    )*};
}

unsigned! {
    unsigned_u8: u8, sum 510, prod 65025;
    unsigned_u16: u16, sum 131070, prod 4294836225;
    unsigned_u32: u32, sum 8589934590, prod 18446744065119617025;
    unsigned_u64: u64, sum 18446744073709551614, prod 1;
}

mod int_division {
    scan_tests::program! {
        /// `/` of two integers is true division in f64.
        pub fn true_division(a: ArrayView1<i32>, b: ArrayView1<i32>) -> Result<Array1<f64>> {
            Ok(a / b)
        }

        /// The mean of i64 values whose sum overflows i64.
        pub fn mean_of_large(k: ArrayView1<i64>) -> Result<f64> {
            Ok(mean(k))
        }
    }
}

#[test]
fn integer_true_division_and_means_follow_numpy() {
    let a = array![1, 0, -1, 7];
    let b = array![0, 0, 0, 2];
    let got = int_division::true_division(a.view(), b.view()).unwrap();
    // numpy: [1, 0, -1, 7] / [0, 0, 0, 2] = [inf, nan, -inf, 3.5].
    assert_bits(&got.to_vec(), &[INF, NAN, -INF, 3.5]);
    second_opinion(
        int_division::SOURCE,
        "true_division",
        values![a, b],
        values![got],
    );

    // numpy: mean([2**62, 2**62]) = 4.611686018427388e+18 (numpy adds in float64).
    let k = array![1i64 << 62, 1i64 << 62];
    let got = int_division::mean_of_large(k.view()).unwrap();
    assert_eq!(got, 4.611686018427388e18);
    second_opinion(
        int_division::SOURCE,
        "mean_of_large",
        values![k],
        values![got],
    );
}

// ---------------------------------------------------------------------------------------
// Negative indices and steps
// ---------------------------------------------------------------------------------------

mod indexing {
    scan_tests::program! {
        /// x = arange(12).reshape(3, 4) in the test.
        pub fn negatives(x: ArrayView2<i64>) -> Result<(Array1<i64>, Array1<i64>, i64, Array2<i64>, Array2<i64>, Array2<i64>, Array2<i64>, Array1<i64>)> {
            Ok((
                x[-1],
                x[(.., -1)],
                x[(-1, -4)],
                x[(slice(None, None, -1), slice(None, None, -2))],
                x[(slice(-2, None, -1), slice(3, 0, -2))],
                x[(slice(10, -10, -1), -3..-1)],
                x[slice(5, 1)],
                x[-3],
            ))
        }

        pub fn row(x: ArrayView2<i64>, i: i64) -> Result<Array1<i64>> {
            Ok(x[i])
        }

        pub fn column(x: ArrayView2<i64>, j: i64) -> Result<Array1<i64>> {
            Ok(x[(.., j)])
        }

        pub fn takes(v: ArrayView1<i64>, x: ArrayView2<i64>, idx: ArrayView1<i64>) -> Result<(Array1<i64>, Array2<i64>, Array1<i64>)> {
            Ok((take(v, idx), take(x, [-1, 0], 1), v[idx]))
        }
    }
}

#[test]
fn negative_indices_and_steps_follow_numpy() {
    let x = Array2::from_shape_fn((3, 4), |(i, j)| (4 * i + j) as i64);
    let got = indexing::negatives(x.view()).unwrap();
    assert_eq!(got.0, array![8, 9, 10, 11]);
    assert_eq!(got.1, array![3, 7, 11]);
    assert_eq!(got.2, 8);
    assert_eq!(got.3, array![[11, 9], [7, 5], [3, 1]]);
    assert_eq!(got.4, array![[7, 5], [3, 1]]);
    assert_eq!(got.5, array![[9, 10], [5, 6], [1, 2]]);
    assert_eq!(got.6.shape(), &[0, 4]);
    assert_eq!(got.7, array![0, 1, 2, 3]);
    second_opinion(
        indexing::SOURCE,
        "negatives",
        values![x],
        values![got.0, got.1, got.2, got.3, got.4, got.5, got.6, got.7],
    );

    // numpy: IndexError for x[-4], x[3], x[:, -5], x[:, 4].
    for i in [-4i64, 3] {
        let e = indexing::row(x.view(), i).unwrap_err().to_string();
        assert!(e.contains("x[i]"), "{e}");
        let e = evaluate_err(indexing::SOURCE, "row", values![x, i]);
        assert!(e.contains("x[i]"), "{e}");
    }
    for j in [-5i64, 4] {
        let e = indexing::column(x.view(), j).unwrap_err().to_string();
        assert!(e.contains("x[(.., j)]"), "{e}");
        let e = evaluate_err(indexing::SOURCE, "column", values![x, j]);
        assert!(e.contains("x[(.., j)]"), "{e}");
    }

    let v = array![10i64, 20, 30];
    let idx = array![-1i64, -3, 0];
    let got = indexing::takes(v.view(), x.view(), idx.view()).unwrap();
    // numpy: take(v, [-1, -3, 0]) = [30, 10, 10]; take(x, [-1, 0], 1) = [[3, 0], [7, 4],
    // [11, 8]]; v[idx] the same as take.
    assert_eq!(got.0, array![30, 10, 10]);
    assert_eq!(got.1, array![[3, 0], [7, 4], [11, 8]]);
    assert_eq!(got.2, array![30, 10, 10]);
    second_opinion(
        indexing::SOURCE,
        "takes",
        values![v, x, idx],
        values![got.0, got.1, got.2],
    );
    // numpy: IndexError for take(v, [3]) and take(v, [-4]).
    for bad in [array![3i64], array![-4i64]] {
        let e = indexing::takes(v.view(), x.view(), bad.view())
            .unwrap_err()
            .to_string();
        assert!(e.contains("take(v, idx)"), "{e}");
        let e = evaluate_err(indexing::SOURCE, "takes", values![v, x, bad]);
        assert!(e.contains("take(v, idx)"), "{e}");
    }
}

// ---------------------------------------------------------------------------------------
// clip with lo > hi; pow
// ---------------------------------------------------------------------------------------

mod clip_pow {
    scan_tests::program! {
        pub fn clips(x: ArrayView1<f64>, k: ArrayView1<i64>) -> Result<(Array1<f64>, Array1<i64>)> {
            Ok((clip(x, 6.0, 4.0), clip(k, 6, 4)))
        }

        pub fn pows(b: ArrayView1<f64>, e: ArrayView1<f64>) -> Result<Array1<f64>> {
            Ok(pow(b, e))
        }

        /// `pow` of integers is computed in f64 (the step language's rule); `powi` keeps
        /// the integer dtype and wraps; `powi` of an integer with a negative exponent is a
        /// compile error (numpy raises: ui `call_powi_negative_of_integers`).
        pub fn int_pows(k: ArrayView1<i64>, e: ArrayView1<i64>, s: ArrayView1<i8>) -> Result<(Array1<f64>, Array1<i64>, Array1<i64>, Array1<i8>)> {
            Ok((pow(k, e), powi(k, 0), powi(k, 41), powi(s, 5)))
        }
    }
}

#[test]
fn clip_with_lo_above_hi_and_pow_at_the_edges() {
    let x = array![0.0, 5.0, 10.0];
    let k = array![0i64, 5, 10];
    let got = clip_pow::clips(x.view(), k.view()).unwrap();
    // numpy: clip(x, 6, 4) = [4, 4, 4] (hi wins), for floats and ints.
    assert_bits(&got.0.to_vec(), &[4.0, 4.0, 4.0]);
    assert_eq!(got.1, array![4, 4, 4]);
    second_opinion(
        clip_pow::SOURCE,
        "clips",
        values![x, k],
        values![got.0, got.1],
    );

    let b = array![0.0, NAN, 1.0, -0.0, 0.0, -8.0];
    let e = array![0.0, 0.0, NAN, -1.0, -1.0, 1.0 / 3.0];
    let got = clip_pow::pows(b.view(), e.view()).unwrap();
    // numpy: 0 ** 0 = 1, nan ** 0 = 1, 1 ** nan = 1, -0 ** -1 = -inf, 0 ** -1 = inf,
    // (-8) ** (1/3) = nan.
    let want = [1.0, 1.0, 1.0, -INF, INF, NAN];
    assert_bits(&got.to_vec(), &want);
    assert_bits(
        &evaluated_f64s(clip_pow::SOURCE, "pows", values![b, e])[0],
        &want,
    );

    let k = array![0i64, 2, 3];
    let e = array![0i64, -1, 2];
    let s = array![3i8, -1, 2];
    let got = clip_pow::int_pows(k.view(), e.view(), s.view()).unwrap();
    // numpy: 0 ** 0 = 1; 2 ** -1 raises for integers (here pow computes in f64: 0.5);
    // 3 ** 41 wraps to -420491770248316829 in int64, int8 3 ** 5 to -13.
    assert_bits(&got.0.to_vec(), &[1.0, 0.5, 9.0]);
    assert_eq!(got.1, array![1, 1, 1]);
    assert_eq!(got.2, array![0, 2199023255552, -420491770248316829]);
    assert_eq!(got.3, array![-13, -1, 32]);
    second_opinion(
        clip_pow::SOURCE,
        "int_pows",
        values![k, e, s],
        values![got.0, got.1, got.2, got.3],
    );
}
