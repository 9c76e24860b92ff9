//! The SPEC cases, one file each: the `scan!` program as SPEC writes it and the best
//! hand-written loop side by side.

use crate::Bench;

/// Compiles a `scan!` program twice from the same tokens: module `rw` with the default
/// rewrites (impl=scan) and module `norw` in a block that opens with `#![rewrites(none)]`
/// (impl=scan_norewrite), so the two cannot drift apart.
macro_rules! scan_twice {
    ($($program:tt)*) => {
        /// Compiled with the default rewrites.
        pub mod rw {
            scan_runtime::scan! { $($program)* }
        }
        /// The same program with every rewrite off.
        pub mod norw {
            scan_runtime::scan! { #![rewrites(none)] $($program)* }
        }
    };
}

mod cumsum_all;
mod elman;
mod elman_grad;
mod kalman;
mod linrec2;
mod lstm;
mod lstm_grad;
mod polynomial;
mod power;
mod seed_taps;
mod until_newton;

/// A case: makes its inputs and runs its implementations.
pub type Case = fn(&mut Bench);

/// Every case in SPEC's order, by name.
pub const ALL: &[(&str, Case)] = &[
    ("power_small", power::power_small),
    ("power_large", power::power_large),
    ("cumsum_all", cumsum_all::run),
    ("linrec2", linrec2::run),
    ("polynomial", polynomial::run),
    ("elman", elman::run),
    ("lstm", lstm::run),
    ("seed_taps", seed_taps::run),
    ("until_newton", until_newton::run),
    ("kalman", kalman::kalman4),
    ("kalman16", kalman::kalman16),
    ("elman_grad", elman_grad::run),
    ("lstm_grad", lstm_grad::run),
];
