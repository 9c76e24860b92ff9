//! Support for the integration tests in `tests/` and the programs in `examples/`.

/// Compiles a `scan!` program and keeps its source text beside it, so a test can run the
/// same program through the reference evaluator (`scan_codegen::eval::run(SOURCE, ..)`)
/// and compare. Use it inside a module: `mod rnn { scan_tests::program! { pub fn ... } }`.
#[macro_export]
macro_rules! program {
    ($($program:tt)*) => {
        ::scan_runtime::scan! { $($program)* }
        /// The program's source, for the reference evaluator.
        #[allow(dead_code)]
        pub const SOURCE: &str = stringify!($($program)*);
    };
}

pub mod tutorial;
