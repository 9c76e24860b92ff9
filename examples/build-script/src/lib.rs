//! `scan!` programs compiled by a build script (build.rs, `scan_codegen::Builder`) instead of
//! the macro: each `src/*.scan` file holds what a `scan! { }` block would hold, and becomes
//! `$OUT_DIR/<stem>.rs`, included here.

/// The runtime under another path: src/cumsum.scan is generated with
/// `Builder::runtime_path("crate::rt")`.
pub use scan_runtime as rt;

/// The tutorial's RNN (src/rnn.scan).
pub mod rnn {
    include!(concat!(env!("OUT_DIR"), "/rnn.rs"));
}

/// Cumulative sums (src/cumsum.scan), generated with the rewrites off.
pub mod cumsum {
    include!(concat!(env!("OUT_DIR"), "/cumsum.rs"));
}
