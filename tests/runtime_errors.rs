//! Size problems that only exist at run time come back from generated code as
//! `Err(scan_runtime::Error)` naming the user's argument (or expression) and the sizes
//! involved, never as a panic. One test per kind of problem, each asserting the exact
//! variant and fields, then one test that every message reads as one clear sentence.
//!
//! The reference evaluator (`scan_codegen::eval::run`) must reject the same inputs, with a
//! message naming the same argument or expression, and must agree with the generated code
//! on the inputs that succeed.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use common::{second_opinion, Value};
use scan_runtime::prelude::*;

mod steps {
    scan_tests::program! {
        /// Twice each element, for an explicit number of steps.
        pub fn take(u: ArrayView1<f64>, k: i64) -> Result<Array1<f64>> {
            let ys = scan(|u_t| u_t * 2.0, sequences = u, n_steps = k);
            Ok(ys)
        }

        /// A product of stacks sized by its operands' lengths (in this block, where no
        /// function of its own is named `matmul`).
        pub fn stacked_products(a: ArrayView3<f64>, b: ArrayView3<f64>) -> Result<Array3<f64>> {
            Ok(matmul(a, b))
        }

        /// The same with `n_steps` given as a `usize`.
        pub fn take_usize(u: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
            let ys = scan(|u_t| u_t * 2.0, sequences = u, n_steps = k);
            Ok(ys)
        }

        /// u[t] - u[t-4], for an explicit number of steps.
        pub fn take_taps(u: ArrayView1<f64>, k: i64) -> Result<Array1<f64>> {
            let ys = scan(|u_tm4, u_t| u_t - u_tm4, sequences = taps(u, [-4, 0]), n_steps = k);
            Ok(ys)
        }

        /// Two sequences: the short one must be the one named.
        pub fn take_two(a: ArrayView1<f64>, b: ArrayView1<f64>, k: i64) -> Result<Array1<f64>> {
            let ys = scan(|a_t, b_t| a_t + b_t, sequences = [a, b], n_steps = k);
            Ok(ys)
        }

        /// u[t] - u[t-4], as many steps as the sequence allows.
        pub fn window(u: ArrayView1<f64>) -> Result<Array1<f64>> {
            let ys = scan(|u_tm4, u_t| u_t - u_tm4, sequences = taps(u, [-4, 0]));
            Ok(ys)
        }

        /// A scalar recurrence with no sequence: only `n_steps` bounds it.
        pub fn count(k: i64) -> Result<Array1<f64>> {
            let xs = scan(|x| x + 1.0, outputs_info = 0.0, n_steps = k);
            Ok(xs)
        }
    }
}

mod states {
    scan_tests::program! {
        /// SITSOT: the step result must keep the initial state's shape.
        pub fn grow(x0: ArrayView1<f64>, v: ArrayView1<f64>, k: i64) -> Result<Array2<f64>> {
            let xs = scan(|x_tm1, v| x_tm1 + v, outputs_info = x0, non_sequences = v, n_steps = k);
            Ok(xs)
        }

        /// MITSOT: x0 holds the two rows before step 0.
        pub fn fib(x0: ArrayView1<i64>, k: i64) -> Result<Array1<i64>> {
            let xs = scan(|x_tm2, x_tm1| x_tm2 + x_tm1, outputs_info = taps(x0, [-2, -1]), n_steps = k);
            Ok(xs)
        }

        /// MITSOT of vector rows whose step result has another length than the rows.
        pub fn fib_rows(x0: ArrayView2<f64>, v: ArrayView1<f64>, k: i64) -> Result<Array2<f64>> {
            let xs = scan(
                |x_tm2, x_tm1, v| x_tm2[0] * v + x_tm1[0],
                outputs_info = taps(x0, [-2, -1]),
                non_sequences = v,
                n_steps = k,
            );
            Ok(xs)
        }

        /// NITSOT: one `arange(i)` row per step.
        pub fn ranges(ks: ArrayView1<i64>) -> Result<Array2<i64>> {
            let rows = scan(|i| arange(i), sequences = ks);
            Ok(rows)
        }

        /// NITSOT whose rows a kernel writes in place after the first: `arange(i) * 2`.
        pub fn doubled_ranges(ks: ArrayView1<i64>) -> Result<Array2<i64>> {
            let rows = scan(|i| arange(i) * 2, sequences = ks);
            Ok(rows)
        }
    }
}

mod ops {
    scan_tests::program! {
        /// Vector-matrix product inside a step.
        pub fn project(h0: ArrayView1<f64>, w: ArrayView2<f64>, k: i64) -> Result<Array2<f64>> {
            let hs = scan(|h, w| tanh(h.dot(w)), outputs_info = h0, non_sequences = w, n_steps = k);
            Ok(hs)
        }

        /// Matrix-matrix product outside any scan.
        pub fn matmul(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<Array2<f64>> {
            Ok(a.dot(b))
        }

        /// Elementwise with broadcasting outside any scan.
        pub fn add(a: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<Array2<f64>> {
            Ok(a + b)
        }

        /// A sum read only through two column slices (slice_operands computes each from
        /// the operands' slices).
        pub fn halves(a: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<Array2<f64>> {
            let z = a + b;
            Ok(z[(.., ..2)] * z[(.., 2..)])
        }

        /// `w[i]` with `i` read from an integer sequence.
        pub fn pick(w: ArrayView1<f64>, idx: ArrayView1<i64>) -> Result<Array1<f64>> {
            let ys = scan(|i, w| w[i], sequences = idx, non_sequences = w);
            Ok(ys)
        }

        /// `arange(n)` outside any scan.
        pub fn count_to(n: i64) -> Result<Array1<i64>> {
            Ok(arange(n))
        }

        /// `zeros((n, n))`.
        pub fn square_zeros(n: i64) -> Result<Array2<f64>> {
            Ok(zeros((n, n)))
        }

        /// A gather, an outer product, a product of stacks and a draw, each sized by its
        /// operands' lengths.
        pub fn gathered(x: ArrayView2<f64>, idx: ArrayView1<i64>) -> Result<Array2<f64>> {
            Ok(x[idx])
        }

        pub fn outer_of(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Result<Array2<f64>> {
            Ok(outer(a, b))
        }

        pub fn noise(n: i64) -> Result<Array2<f64>> {
            let (_, u) = uniform(rng_key(0), (n, n));
            Ok(u)
        }

        /// The tutorial's power: the last row of a scan of k steps.
        pub fn power(a: ArrayView1<f64>, k: i64) -> Result<Array1<f64>> {
            let result = scan(|prior, a| prior * a, outputs_info = ones_like(a), non_sequences = a, n_steps = k);
            Ok(result[-1])
        }
    }
}

mod backward {
    scan_tests::program! {
        /// A determinant's gradient, `det(a) inv(a)ᵀ`: its rule inverts the matrix, which
        /// fails for a singular one although `det` itself does not (it is 0).
        pub fn det_grad(a: ArrayView2<f64>) -> Result<Array2<f64>> {
            let d = det(a);
            Ok(grad(d, a))
        }

        /// The same for each matrix of a stack: the rule runs in the backward loop's step.
        pub fn det_grad_each(m: ArrayView3<f64>) -> Result<Array3<f64>> {
            let ds = map(|m_t| det(m_t), sequences = m);
            Ok(grad(sum(ds), m))
        }
    }
}

/// Checks that `e`'s message names each of `names` in backticks and contains each of
/// `numbers`.
fn assert_names(e: &Error, names: &[&str], numbers: &[&str]) {
    let msg = e.to_string();
    for name in names {
        assert!(
            msg.contains(&format!("`{name}`")),
            "message does not name `{name}`: {msg}"
        );
    }
    for n in numbers {
        assert!(msg.contains(n), "message does not contain {n}: {msg}");
    }
}

/// Runs `f`, turning a panic into a test failure that quotes the panic message, so a panic
/// is reported as "panicked instead of returning Err: ...".
fn no_panic<T>(case: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "<non-string panic payload>".to_string());
            panic!("{case}: panicked instead of returning Err: {msg}");
        }
    }
}

fn expect_err<T: std::fmt::Debug>(case: &str, f: impl FnOnce() -> Result<T>) -> Error {
    match no_panic(case, f) {
        Ok(v) => panic!("{case}: expected an Err, got Ok({v:?})"),
        Err(e) => e,
    }
}

/// Runs `function` of `source` through the reference evaluator on the inputs that made the
/// generated code fail: it must return `Err` too, for the same reason (not an IR error or
/// an argument of the wrong type), with a message containing each of `needles`. Returns
/// the message.
fn evaluator_rejects(source: &str, function: &str, args: Vec<Value>, needles: &[&str]) -> String {
    let msg = match scan_codegen::eval::run(source, function, args) {
        Ok(values) => panic!(
            "the evaluator accepted `{function}` on inputs the generated code rejects: {values:?}"
        ),
        Err(msg) => msg,
    };
    assert!(
        !msg.contains("IR error") && !msg.contains(" should be a "),
        "the evaluator failed on `{function}` for another reason: {msg}"
    );
    for needle in needles {
        assert!(
            msg.contains(needle),
            "the evaluator's message for `{function}` does not contain {needle}: {msg}"
        );
    }
    msg
}

// --- sequences and n_steps -------------------------------------------------------------

#[test]
fn n_steps_beyond_a_plain_sequence() {
    let u = array![1.0, 2.0, 3.0];
    // The boundary is not an error.
    assert_eq!(
        steps::take(u.view(), 3).unwrap().to_vec(),
        vec![2.0, 4.0, 6.0]
    );
    second_opinion(
        steps::SOURCE,
        "take",
        vec![Value::from(u.clone()), Value::from(3i64)],
        vec![Value::from(steps::take(u.view(), 3).unwrap())],
    );
    let e = expect_err("take(u of 3, n_steps = 5)", || steps::take(u.view(), 5));
    assert_eq!(
        e,
        Error::SequenceTooShort {
            sequence: "u".into(),
            length: 3,
            required: 5,
            detail: "n_steps = 5 with taps [0]".into(),
        }
    );
    assert_names(&e, &["u"], &["3 rows", "n_steps = 5", "needs 5"]);
    evaluator_rejects(
        steps::SOURCE,
        "take",
        vec![Value::from(u), Value::from(5i64)],
        &["`u`", "3 rows", "n_steps = 5", "5 rows"],
    );
}

#[test]
fn n_steps_beyond_a_tapped_sequence() {
    // taps [-4, 0] span 4 rows: n_steps = 5 needs 5 + 4 = 9 rows.
    let ok = Array1::from_iter((0..9).map(f64::from));
    assert_eq!(
        steps::take_taps(ok.view(), 5).unwrap().to_vec(),
        vec![4.0; 5]
    );
    second_opinion(
        steps::SOURCE,
        "take_taps",
        vec![Value::from(ok.clone()), Value::from(5i64)],
        vec![Value::from(steps::take_taps(ok.view(), 5).unwrap())],
    );
    let u = Array1::from_iter((0..6).map(f64::from));
    let e = expect_err("take_taps(u of 6, n_steps = 5)", || {
        steps::take_taps(u.view(), 5)
    });
    assert_eq!(
        e,
        Error::SequenceTooShort {
            sequence: "u".into(),
            length: 6,
            required: 9,
            detail: "n_steps = 5 with taps [-4, 0]".into(),
        }
    );
    assert_names(&e, &["u"], &["6 rows", "n_steps = 5", "[-4, 0]", "needs 9"]);
    evaluator_rejects(
        steps::SOURCE,
        "take_taps",
        vec![Value::from(u), Value::from(5i64)],
        &["`u`", "6 rows", "n_steps = 5", "[-4, 0]", "9 rows"],
    );
}

#[test]
fn n_steps_beyond_the_second_of_two_sequences_names_that_one() {
    let a = array![1.0, 2.0, 3.0, 4.0];
    let b = array![1.0, 2.0];
    let e = expect_err("take_two(a of 4, b of 2, n_steps = 3)", || {
        steps::take_two(a.view(), b.view(), 3)
    });
    assert_eq!(
        e,
        Error::SequenceTooShort {
            sequence: "b".into(),
            length: 2,
            required: 3,
            detail: "n_steps = 3 with taps [0]".into(),
        }
    );
    assert_names(&e, &["b"], &["2 rows", "needs 3"]);
    let msg = evaluator_rejects(
        steps::SOURCE,
        "take_two",
        vec![Value::from(a), Value::from(b), Value::from(3i64)],
        &["`b`", "2 rows", "3 rows"],
    );
    assert!(
        !msg.contains("`a`"),
        "the evaluator names the long sequence: {msg}"
    );
}

#[test]
fn sequence_shorter_than_its_tap_window() {
    // With taps [-4, 0] a sequence of 4 rows allows 0 steps; 3 rows is an error.
    let four = array![1.0, 2.0, 3.0, 4.0];
    assert_eq!(steps::window(four.view()).unwrap().len(), 0);
    second_opinion(
        steps::SOURCE,
        "window",
        vec![Value::from(four.clone())],
        vec![Value::from(steps::window(four.view()).unwrap())],
    );
    let u = array![1.0, 2.0, 3.0];
    let e = expect_err("window(u of 3)", || steps::window(u.view()));
    assert_eq!(
        e,
        Error::SequenceTooShort {
            sequence: "u".into(),
            length: 3,
            required: 4,
            detail: "the window of taps [-4, 0]".into(),
        }
    );
    assert_names(&e, &["u"], &["3 rows", "[-4, 0]", "needs 4"]);
    evaluator_rejects(
        steps::SOURCE,
        "window",
        vec![Value::from(u)],
        &["`u`", "3 rows", "[-4, 0]", "4"],
    );
}

#[test]
fn negative_n_steps() {
    let u = array![1.0, 2.0, 3.0];
    let expected = Error::InvalidArgument {
        what: "n_steps".into(),
        detail: "it must be >= 0, got -2".into(),
    };
    let e = expect_err("take(u, n_steps = -2)", || steps::take(u.view(), -2));
    assert_eq!(e, expected);
    assert_names(&e, &["n_steps"], &["-2"]);
    // Without any sequence too.
    let e = expect_err("count(n_steps = -2)", || steps::count(-2));
    assert_eq!(e, expected);
    assert_eq!(steps::count(0).unwrap().len(), 0);
    evaluator_rejects(
        steps::SOURCE,
        "take",
        vec![Value::from(u), Value::from(-2i64)],
        &["n_steps", "-2"],
    );
    evaluator_rejects(
        steps::SOURCE,
        "count",
        vec![Value::from(-2i64)],
        &["n_steps", "-2"],
    );
    second_opinion(
        steps::SOURCE,
        "count",
        vec![Value::from(0i64)],
        vec![Value::from(steps::count(0).unwrap())],
    );
}

#[test]
fn huge_usize_n_steps_is_too_many_steps_for_the_sequence() {
    // A `usize` n_steps is never negative; beyond i64::MAX it saturates (counts are i64 in
    // the graph, as in PyTensor). The error names the sequence that is too short.
    let u = array![1.0, 2.0, 3.0];
    let e = expect_err("take_usize(u, n_steps = usize::MAX)", || {
        steps::take_usize(u.view(), usize::MAX)
    });
    let Error::SequenceTooShort {
        sequence, length, ..
    } = &e
    else {
        panic!("expected SequenceTooShort, got {e:?}");
    };
    assert_eq!((sequence.as_str(), *length), ("u", 3));
    assert!(!e.to_string().contains(">= 0"), "{e}");
    assert_names(&e, &["u"], &["3 rows", &i64::MAX.to_string()]);
    // The evaluator takes a usize as a 0-d i64: usize::MAX saturated to i64::MAX.
    let msg = evaluator_rejects(
        steps::SOURCE,
        "take_usize",
        vec![Value::from(u), Value::from(i64::MAX)],
        &["`u`", "3 rows", &i64::MAX.to_string()],
    );
    assert!(!msg.contains("negative"), "{msg}");
}

#[test]
fn n_steps_too_large_for_an_output_buffer() {
    // i64::MAX + 1 rows cannot exist (ndarray caps an array at isize::MAX elements). This
    // must be an Err, like `arange` of too many elements, not a panic.
    let e = expect_err("count(n_steps = i64::MAX)", || steps::count(i64::MAX));
    let msg = e.to_string();
    assert!(
        msg.contains(&i64::MAX.to_string()) || msg.contains(&(1u64 << 63).to_string()),
        "the message should name the size: {msg}"
    );
    evaluator_rejects(
        steps::SOURCE,
        "count",
        vec![Value::from(i64::MAX)],
        &[&i64::MAX.to_string()],
    );
}

#[test]
fn results_too_large_to_allocate_are_errs_naming_the_expression_and_the_shape() {
    // 2^40 elements (8 TiB of f64 or i64): each kernel that sizes its result from run-time
    // lengths asks for the memory first, so the call returns an Err instead of the
    // process aborting on "memory allocation failed". (The evaluator is not asked: it
    // would try to allocate them.)
    let n = 1i64 << 20;
    let e = expect_err("arange(2^40)", || ops::count_to(n * n));
    assert_names(
        &e,
        &["arange(n)"],
        &["[1099511627776]", "cannot be allocated"],
    );
    let e = expect_err("zeros((2^20, 2^20))", || ops::square_zeros(n));
    assert_names(
        &e,
        &["zeros((n, n))"],
        &["[1048576, 1048576]", "cannot be allocated"],
    );
    // A product and a broadcast whose results, not operands, are too large.
    let column = Array2::<f64>::zeros((1 << 20, 1));
    let row = Array2::<f64>::zeros((1, 1 << 20));
    let e = expect_err("(2^20, 1) . (1, 2^20)", || {
        ops::matmul(column.view(), row.view())
    });
    assert_names(
        &e,
        &["a.dot(b)"],
        &["[1048576, 1048576]", "cannot be allocated"],
    );
    let vector = Array1::<f64>::zeros(1 << 20);
    let e = expect_err("(2^20, 1) + (2^20,)", || {
        ops::add(column.view(), vector.view())
    });
    assert_names(
        &e,
        &["a + b"],
        &["[1048576, 1048576]", "cannot be allocated"],
    );
    let e = expect_err("outer of two 2^20 vectors", || {
        ops::outer_of(vector.view(), vector.view())
    });
    assert_names(
        &e,
        &["outer(a, b)"],
        &["[1048576, 1048576]", "cannot be allocated"],
    );
    // 2^20 rows of 2^20 gathered from a 2-row matrix (16 MB in, 8 TiB out).
    let rows = Array2::<f64>::zeros((2, 1 << 20));
    let idx = Array1::<i64>::zeros(1 << 20);
    let e = expect_err("x[idx]", || ops::gathered(rows.view(), idx.view()));
    assert_names(
        &e,
        &["x[idx]"],
        &["[1048576, 1048576]", "cannot be allocated"],
    );
    // A batch of 2^10 products of (2^10, 1) by (1, 2^20): 2^40 results.
    let a = Array3::<f64>::zeros((1 << 10, 1 << 10, 1));
    let b = Array3::<f64>::zeros((1, 1, 1 << 20));
    let e = expect_err("matmul of stacks", || {
        steps::stacked_products(a.view(), b.view())
    });
    assert_names(&e, &["matmul(a, b)"], &["cannot be allocated"]);
    let e = expect_err("uniform of 2^40", || ops::noise(n));
    assert_names(
        &e,
        &["uniform(rng_key(0),(n, n))"],
        &["cannot be allocated"],
    );
}

// --- initial states and step results --------------------------------------------------

#[test]
fn sitsot_step_result_that_cannot_broadcast_with_the_state() {
    let x0 = array![1.0, 2.0, 3.0];
    let v = array![1.0, 2.0, 3.0, 4.0];
    let e = expect_err("grow(x0 of 3, v of 4)", || {
        states::grow(x0.view(), v.view(), 2)
    });
    assert_eq!(
        e,
        Error::Broadcast {
            what: "x_tm1 + v".into(),
            shapes: vec![vec![3], vec![4]],
        }
    );
    assert_names(&e, &["x_tm1 + v"], &["[3]", "[4]"]);
    evaluator_rejects(
        states::SOURCE,
        "grow",
        vec![Value::from(x0), Value::from(v), Value::from(2i64)],
        &["`x_tm1 + v`", "[3]", "[4]"],
    );
}

#[test]
fn sitsot_step_result_broadcast_to_another_shape_than_the_state() {
    // [1] + [3] broadcasts to [3]: a valid step, but not the shape of x0.
    let x0 = array![1.0];
    let v = array![1.0, 2.0, 3.0];
    let e = expect_err("grow(x0 of 1, v of 3)", || {
        states::grow(x0.view(), v.view(), 2)
    });
    assert_eq!(
        e,
        Error::StepResultShape {
            output: "`x0`".into(),
            result: "x_tm1 + v".into(),
            expected: vec![1],
            found: vec![3],
        }
    );
    assert_names(&e, &[], &["x0", "x_tm1 + v", "[1]", "[3]"]);
    evaluator_rejects(
        states::SOURCE,
        "grow",
        vec![
            Value::from(x0.clone()),
            Value::from(v.clone()),
            Value::from(2i64),
        ],
        &["x0", "[1]", "[3]"],
    );
    // With 0 steps the step never runs: no error.
    assert_eq!(states::grow(x0.view(), v.view(), 0).unwrap().dim(), (0, 1));
    second_opinion(
        states::SOURCE,
        "grow",
        vec![
            Value::from(x0.clone()),
            Value::from(v.clone()),
            Value::from(0i64),
        ],
        vec![Value::from(states::grow(x0.view(), v.view(), 0).unwrap())],
    );
}

#[test]
fn mitsot_initial_state_with_fewer_rows_than_its_taps_need() {
    assert_eq!(
        states::fib(array![0, 1].view(), 4).unwrap().to_vec(),
        vec![1, 2, 3, 5]
    );
    second_opinion(
        states::SOURCE,
        "fib",
        vec![Value::from(array![0i64, 1]), Value::from(4i64)],
        vec![Value::from(states::fib(array![0, 1].view(), 4).unwrap())],
    );
    let e = expect_err("fib(x0 of 1 row, taps [-2, -1])", || {
        states::fib(array![1].view(), 3)
    });
    assert_eq!(
        e,
        Error::InitialStateTooShort {
            output: "x0".into(),
            rows: 1,
            taps: vec![-2, -1],
            required: 2,
        }
    );
    assert_names(&e, &[], &["`x0`", "1 row", "need 2", "[-2, -1]"]);
    evaluator_rejects(
        states::SOURCE,
        "fib",
        vec![Value::from(array![1i64]), Value::from(3i64)],
        &["`x0`", "1 row", "[-2, -1]", "2"],
    );
}

#[test]
fn mitsot_step_result_with_another_row_shape() {
    let x0 = Array2::<f64>::ones((2, 3));
    let v = array![1.0, 2.0, 3.0, 4.0];
    let e = expect_err("fib_rows(rows of 3, result of 4)", || {
        states::fib_rows(x0.view(), v.view(), 2)
    });
    let Error::StepResultShape {
        output,
        expected,
        found,
        ..
    } = &e
    else {
        panic!("expected StepResultShape, got {e:?}");
    };
    assert_eq!(output, "`x0`");
    assert_eq!(expected, &vec![3]);
    assert_eq!(found, &vec![4]);
    assert_names(&e, &[], &["x0", "[3]", "[4]"]);
    evaluator_rejects(
        states::SOURCE,
        "fib_rows",
        vec![Value::from(x0), Value::from(v), Value::from(2i64)],
        &["x0", "[3]", "[4]"],
    );
}

#[test]
fn nitsot_step_result_whose_shape_changes_between_steps() {
    assert_eq!(
        states::ranges(array![2, 2].view()).unwrap(),
        array![[0, 1], [0, 1]]
    );
    second_opinion(
        states::SOURCE,
        "ranges",
        vec![Value::from(array![2i64, 2])],
        vec![Value::from(states::ranges(array![2, 2].view()).unwrap())],
    );
    let e = expect_err("ranges([1, 2])", || states::ranges(array![1, 2].view()));
    assert_eq!(
        e,
        Error::StepResultShape {
            output: "0".into(),
            result: "arange(i)".into(),
            expected: vec![1],
            found: vec![2],
        }
    );
    assert_names(&e, &["arange(i)"], &["output 0", "[1]", "[2]"]);
    evaluator_rejects(
        states::SOURCE,
        "ranges",
        vec![Value::from(array![1i64, 2])],
        &["[1]", "[2]"],
    );
}

#[test]
fn nitsot_row_written_in_place_whose_shape_changes_between_steps() {
    assert_eq!(
        states::doubled_ranges(array![3, 3, 3].view()).unwrap(),
        array![[0, 2, 4], [0, 2, 4], [0, 2, 4]]
    );
    second_opinion(
        states::SOURCE,
        "doubled_ranges",
        vec![Value::from(array![3i64, 3, 3])],
        vec![Value::from(
            states::doubled_ranges(array![3, 3, 3].view()).unwrap(),
        )],
    );
    for (ks, found) in [(array![2, 2, 3], 3), (array![2, 1], 1)] {
        let e = expect_err("doubled_ranges", || states::doubled_ranges(ks.view()));
        assert_eq!(
            e,
            Error::StepResultShape {
                output: "0".into(),
                result: "arange(i) * 2".into(),
                expected: vec![2],
                found: vec![found],
            }
        );
        evaluator_rejects(
            states::SOURCE,
            "doubled_ranges",
            vec![Value::from(ks.clone())],
            &["[2]", &format!("[{found}]")],
        );
    }
}

// --- operations -------------------------------------------------------------------------

#[test]
fn dot_mismatch_inside_a_step() {
    let h0 = array![1.0, 2.0, 3.0];
    let w = Array2::<f64>::zeros((4, 5));
    let e = expect_err("project(h0 of 3, w of 4x5)", || {
        ops::project(h0.view(), w.view(), 2)
    });
    assert_eq!(
        e,
        Error::Dot {
            what: "h.dot(w)".into(),
            left: vec![3],
            right: vec![4, 5],
        }
    );
    assert_names(&e, &["h.dot(w)"], &["[3]", "[4, 5]", "3 and 4"]);
    evaluator_rejects(
        ops::SOURCE,
        "project",
        vec![Value::from(h0), Value::from(w), Value::from(2i64)],
        &["`h.dot(w)`", "[3]", "[4, 5]"],
    );
}

#[test]
fn dot_mismatch_outside_a_scan() {
    let a = Array2::<f64>::zeros((2, 3));
    let b = Array2::<f64>::zeros((4, 5));
    let e = expect_err("matmul(2x3, 4x5)", || ops::matmul(a.view(), b.view()));
    assert_eq!(
        e,
        Error::Dot {
            what: "a.dot(b)".into(),
            left: vec![2, 3],
            right: vec![4, 5],
        }
    );
    assert_names(&e, &["a.dot(b)"], &["[2, 3]", "[4, 5]", "3 and 4"]);
    evaluator_rejects(
        ops::SOURCE,
        "matmul",
        vec![Value::from(a), Value::from(b)],
        &["`a.dot(b)`", "[2, 3]", "[4, 5]"],
    );
}

#[test]
fn elementwise_broadcast_mismatch() {
    let a = Array2::<f64>::zeros((2, 3));
    let b = Array1::<f64>::zeros(4);
    let e = expect_err("add(2x3, 4)", || ops::add(a.view(), b.view()));
    assert_eq!(
        e,
        Error::Broadcast {
            what: "a + b".into(),
            shapes: vec![vec![2, 3], vec![4]],
        }
    );
    assert_names(&e, &["a + b"], &["[2, 3]", "[4]"]);
    evaluator_rejects(
        ops::SOURCE,
        "add",
        vec![Value::from(a), Value::from(b)],
        &["`a + b`", "[2, 3]", "[4]"],
    );
}

#[test]
fn elementwise_broadcast_mismatch_read_through_slices() {
    // The columns of each slice (2) would fit a bias of 2 or 3; the sum's 4 do not.
    let a = array![[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]];
    for bad in [vec![1.0, 2.0], vec![1.0, 2.0, 3.0]] {
        let b = Array1::from(bad);
        let e = expect_err("halves(2x4, b)", || ops::halves(a.view(), b.view()));
        assert_eq!(
            e,
            Error::Broadcast {
                what: "a + b".into(),
                shapes: vec![vec![2, 4], vec![b.len()]],
            }
        );
        evaluator_rejects(
            ops::SOURCE,
            "halves",
            vec![Value::from(a.clone()), Value::from(b)],
            &["`a + b`", "[2, 4]"],
        );
    }
    // A bias of one value, or of the sum's columns.
    let one = ops::halves(a.view(), array![10.0].view()).unwrap();
    assert_eq!(
        one,
        array![[11.0 * 13.0, 12.0 * 14.0], [15.0 * 17.0, 16.0 * 18.0]]
    );
    let row = ops::halves(a.view(), array![1.0, 2.0, 3.0, 4.0].view()).unwrap();
    assert_eq!(
        row,
        array![[2.0 * 6.0, 4.0 * 8.0], [6.0 * 10.0, 8.0 * 12.0]]
    );
}

#[test]
fn index_out_of_bounds_inside_a_step() {
    let w = array![10.0, 20.0, 30.0];
    assert_eq!(
        ops::pick(w.view(), array![0, -1, 2].view())
            .unwrap()
            .to_vec(),
        vec![10.0, 30.0, 30.0]
    );
    second_opinion(
        ops::SOURCE,
        "pick",
        vec![Value::from(w.clone()), Value::from(array![0i64, -1, 2])],
        vec![Value::from(
            ops::pick(w.view(), array![0, -1, 2].view()).unwrap(),
        )],
    );
    let e = expect_err("pick(w of 3, i = 5)", || {
        ops::pick(w.view(), array![0, 5].view())
    });
    assert_eq!(
        e,
        Error::IndexOutOfBounds {
            what: "w[i]".into(),
            index: 5,
            length: 3,
        }
    );
    assert_names(&e, &["w[i]"], &["5", "length 3"]);
    evaluator_rejects(
        ops::SOURCE,
        "pick",
        vec![Value::from(w.clone()), Value::from(array![0i64, 5])],
        &["`w[i]`", "5", "3"],
    );
    let e = expect_err("pick(w of 3, i = -4)", || {
        ops::pick(w.view(), array![-4].view())
    });
    assert_eq!(
        e,
        Error::IndexOutOfBounds {
            what: "w[i]".into(),
            index: -4,
            length: 3,
        }
    );
    evaluator_rejects(
        ops::SOURCE,
        "pick",
        vec![Value::from(w), Value::from(array![-4i64])],
        &["`w[i]`", "-4", "3"],
    );
}

#[test]
fn last_row_of_a_scan_of_zero_steps() {
    let a = array![1.0, 2.0, 3.0];
    assert_eq!(
        ops::power(a.view(), 2).unwrap().to_vec(),
        vec![1.0, 4.0, 9.0]
    );
    second_opinion(
        ops::SOURCE,
        "power",
        vec![Value::from(a.clone()), Value::from(2i64)],
        vec![Value::from(ops::power(a.view(), 2).unwrap())],
    );
    let e = expect_err("power(a, k = 0)", || ops::power(a.view(), 0));
    assert_eq!(
        e,
        Error::IndexOutOfBounds {
            what: "result[-1]".into(),
            index: -1,
            length: 0,
        }
    );
    assert_names(&e, &["result[-1]"], &["-1", "length 0"]);
    evaluator_rejects(
        ops::SOURCE,
        "power",
        vec![Value::from(a), Value::from(0i64)],
        &["`result[-1]`", "-1", "0"],
    );
}

// --- gradients --------------------------------------------------------------------------

#[test]
fn singular_matrix_in_a_gradient_rule_names_the_forward_expression() {
    let singular = array![[1.0, 2.0], [2.0, 4.0]];
    let e = expect_err("det_grad(singular)", || backward::det_grad(singular.view()));
    assert_eq!(
        e,
        Error::Singular {
            what: "adjoint through det(a)".into(),
            step: None,
            pivot: 1,
        }
    );
    assert_eq!(
        e.to_string(),
        "`adjoint through det(a)`: the matrix is singular (its factorisation has a zero pivot at index 1)"
    );
    evaluator_rejects(
        backward::SOURCE,
        "det_grad",
        vec![Value::from(singular.clone())],
        &["`adjoint through det(a)`", "singular"],
    );
    // In the backward loop: the step's expression, and that loop's step, which goes through
    // the forward steps last first (its step 2 of 3 is forward step 0).
    let m = array![
        [[1.0, 2.0], [2.0, 4.0]],
        [[2.0, 0.0], [0.0, 4.0]],
        [[1.0, 0.0], [0.0, 1.0]]
    ];
    let e = expect_err("det_grad_each(m)", || backward::det_grad_each(m.view()));
    assert_eq!(
        e.to_string(),
        "`adjoint through det(m_t)` at step 2: the matrix is singular (its factorisation has a zero pivot at index 1)"
    );
    evaluator_rejects(
        backward::SOURCE,
        "det_grad_each",
        vec![Value::from(m)],
        &["`adjoint through det(m_t)`", "step 2", "singular"],
    );
}

// --- messages ---------------------------------------------------------------------------

/// Every error above, with the names and numbers its message must contain.
fn all_errors() -> Vec<(&'static str, Result<()>, Vec<&'static str>)> {
    fn unit<T>(r: Result<T>) -> Result<()> {
        r.map(|_| ())
    }
    let u3 = array![1.0, 2.0, 3.0];
    let u6 = Array1::from_iter((0..6).map(f64::from));
    vec![
        (
            "n_steps beyond a sequence",
            unit(steps::take(u3.view(), 5)),
            vec!["`u`", "3", "5"],
        ),
        (
            "n_steps beyond a tapped sequence",
            unit(steps::take_taps(u6.view(), 5)),
            vec!["`u`", "6", "9", "[-4, 0]"],
        ),
        (
            "sequence shorter than its tap window",
            unit(steps::window(u3.view())),
            vec!["`u`", "3", "4", "[-4, 0]"],
        ),
        (
            "negative n_steps",
            unit(steps::count(-2)),
            vec!["`n_steps`", "-2"],
        ),
        (
            "SITSOT broadcast",
            unit(states::grow(
                u3.view(),
                array![1.0, 2.0, 3.0, 4.0].view(),
                2,
            )),
            vec!["`x_tm1 + v`", "[3]", "[4]"],
        ),
        (
            "SITSOT result shape",
            unit(states::grow(array![1.0].view(), u3.view(), 2)),
            vec!["x0", "[1]", "[3]"],
        ),
        (
            "MITSOT rows",
            unit(states::fib(array![1].view(), 3)),
            vec!["x0", "1", "2"],
        ),
        (
            "MITSOT result shape",
            unit(states::fib_rows(
                Array2::ones((2, 3)).view(),
                array![1.0, 2.0, 3.0, 4.0].view(),
                2,
            )),
            vec!["x0", "[3]", "[4]"],
        ),
        (
            "NITSOT result shape",
            unit(states::ranges(array![1, 2].view())),
            vec!["[1]", "[2]"],
        ),
        (
            "dot in a step",
            unit(ops::project(u3.view(), Array2::zeros((4, 5)).view(), 2)),
            vec!["`h.dot(w)`", "[3]", "[4, 5]"],
        ),
        (
            "dot outside a scan",
            unit(ops::matmul(
                Array2::zeros((2, 3)).view(),
                Array2::zeros((4, 5)).view(),
            )),
            vec!["`a.dot(b)`", "[2, 3]", "[4, 5]"],
        ),
        (
            "broadcast",
            unit(ops::add(
                Array2::zeros((2, 3)).view(),
                Array1::zeros(4).view(),
            )),
            vec!["`a + b`", "[2, 3]", "[4]"],
        ),
        (
            "index in a step",
            unit(ops::pick(u3.view(), array![5].view())),
            vec!["`w[i]`", "5", "3"],
        ),
        (
            "last row of 0 steps",
            unit(ops::power(u3.view(), 0)),
            vec!["`result[-1]`", "-1", "0"],
        ),
        (
            "singular matrix in a gradient",
            unit(backward::det_grad(array![[1.0, 2.0], [2.0, 4.0]].view())),
            vec!["`adjoint through det(a)`", "1"],
        ),
    ]
}

/// Why `msg` is not one clear sentence, if it is not.
fn sentence_problems(msg: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if msg.is_empty() {
        problems.push("empty".to_string());
    }
    if msg.contains('\n') {
        problems.push("spans several lines".to_string());
    }
    if msg.trim_end_matches('.').contains(". ") {
        problems.push("has more than one sentence".to_string());
    }
    // A quoted name that itself holds a quoted name: "`sequence `u``".
    if msg.contains("``") || msg.matches('`').count() & 1 == 1 {
        problems.push("has nested or unbalanced backticks".to_string());
    }
    if msg.contains(" 1 rows") || msg.starts_with("1 rows") {
        problems.push("says \"1 rows\"".to_string());
    }
    problems
}

#[test]
fn every_message_is_one_clear_sentence_with_the_names_and_numbers() {
    let mut failures = Vec::new();
    for (case, result, needles) in all_errors() {
        let e = match result {
            Ok(()) => {
                failures.push(format!("{case}: expected an Err, got Ok"));
                continue;
            }
            Err(e) => e,
        };
        let msg = e.to_string();
        for needle in &needles {
            if !msg.contains(needle) {
                failures.push(format!("{case}: missing {needle}: {msg}"));
            }
        }
        for problem in sentence_problems(&msg) {
            failures.push(format!("{case}: {problem}: {msg}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} message problem(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
