//! Generated code cannot clash with the user's names: the functions below are named like
//! runtime modules and generated locals, their parameters and step variables are named like
//! generated locals (`__scan_0`, swapped), and the module they are in defines its own
//! `Result`, `Error`, `kernels`, `ndarray`, `math`, `Array`, ... without importing the
//! prelude. Each function computes what it should (against hand-computed numbers).
//!
//! The macro is called directly, not through a `macro_rules!` wrapper such as
//! `scan_tests::program!`: a wrapper's hygiene would keep the generated locals apart from
//! the user's names and hide a clash. The build-script door writes the same code as text,
//! where no hygiene applies at all.

use scan_runtime::ndarray::array;

#[allow(dead_code, non_snake_case, non_camel_case_types, clippy::all)]
mod user {
    // The user's own items, named like what generated code reaches (it reaches them all as
    // `::scan_runtime::...`, `::core::...`).
    pub type Result<T> = std::result::Result<T, String>;
    pub struct Error;
    pub struct Array<T>(pub T);
    pub struct ArrayView<T>(pub T);
    pub struct Ix1;
    pub mod kernels {
        pub fn map2() {}
        pub fn sequence_steps() {}
    }
    pub mod math {}
    pub mod ndarray {}
    pub mod __private {}
    pub mod scan_runtime {}
    pub trait Cast {}
    pub trait Element {}

    ::scan_runtime::scan! {
        /// Parameters named like the generated locals, in the other order: `__scan_1` is the
        /// first parameter, `__scan_0` the second.
        pub fn kernels(__scan_1: ArrayView1<f64>, __scan_0: f64) -> Result<Array1<f64>> {
            let __scan_2 = scan(
                |__scan_3, __scan_4, __scan_0| __scan_3 * __scan_0 + __scan_4,
                sequences = __scan_1,
                outputs_info = 0.0,
                non_sequences = __scan_0,
            );
            Ok(__scan_2)
        }

        /// Three scalars named like the first three generated locals, in another order.
        pub fn rotated(__scan_2: f64, __scan_0: f64, __scan_1: f64) -> Result<f64> {
            Ok(__scan_2 - __scan_0 * __scan_1)
        }

        /// Step variables named like runtime modules and the result type.
        pub fn ndarray(kernels: ArrayView1<f64>, ndarray: i64) -> Result<(Array1<f64>, i64)> {
            let Result = map(|math, Error| math * 2.0 + Error, sequences = kernels, non_sequences = 1.0);
            let __y = ndarray + 1;
            Ok((Result, __y))
        }

        pub fn __scan_0(__x0: f64, __e0: usize, __scan_5: ArrayView1<i64>) -> Result<f64> {
            let __scan_1 = scan(|__y| __y * __x0, outputs_info = 1.0, n_steps = __e0);
            Ok(__scan_1[-1] + __scan_5.sum())
        }

        pub fn core(scan_runtime: f64, __scan_arg0: f64, Ok_: f64) -> Result<f64> {
            Ok(scan_runtime - __scan_arg0 * Ok_)
        }
    }
}

#[test]
fn parameters_named_like_generated_locals_keep_their_values() {
    // a running sum of v * k: [1*10, 1*10 + 2*10, 1*10 + 2*10 + 3*10]
    let v = array![1.0, 2.0, 3.0];
    let sums = user::kernels(v.view(), 10.0).expect("runs");
    assert_eq!(sums.to_vec(), vec![10.0, 30.0, 60.0]);
}

#[test]
fn scalar_parameters_named_like_generated_locals_keep_their_values() {
    // 100 - 3 * 5
    assert_eq!(user::rotated(100.0, 3.0, 5.0).expect("runs"), 85.0);
}

#[test]
fn step_variables_named_like_runtime_modules() {
    let v = array![1.0, -2.0];
    let (doubled, next) = user::ndarray(v.view(), 41).expect("runs");
    assert_eq!(doubled.to_vec(), vec![3.0, -3.0]);
    assert_eq!(next, 42);
}

#[test]
fn functions_named_like_generated_locals_and_crates() {
    // 3^4 + (1 + 2)
    let r = user::__scan_0(3.0, 4, array![1, 2].view()).expect("runs");
    assert_eq!(r, 84.0);
    assert_eq!(user::core(10.0, 2.0, 3.0).expect("runs"), 4.0);
}
