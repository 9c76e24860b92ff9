//! cumsum_all: s_t = s_{t-1} + seq_t, s_{-1} = 0, seq = arange(up_to), i64, every step
//! kept; up_to = 2000000 (per-step overhead of a scalar recurrence with a generated
//! sequence).

use scan_runtime::prelude::*;

use crate::timing::Impl;
use crate::{Bench, DType};

scan_twice! {
    /// The scan tutorial's triangular numbers.
    pub fn cumsum_all(up_to: i64) -> Result<Array1<i64>> {
        let s = scan(|x, acc| acc + x, sequences = arange(up_to), outputs_info = 0i64);
        Ok(s)
    }
}

/// The hand-written loop: the running sum in a register, each step's value written once
/// into an output allocated at its final size (the iterator's exact length). It keeps the
/// recurrence: the closed form t(t+1)/2 would be a different program, not a better loop.
/// Wrapping adds, like the scan (numpy's int64 overflow).
pub fn cumsum_hand(up_to: i64) -> Array1<i64> {
    let mut acc = 0i64;
    Array1::from_iter((0..up_to).map(|x| {
        acc = acc.wrapping_add(x);
        acc
    }))
}

pub fn run(bench: &mut Bench) {
    let up_to = bench.size(2_000_000, 100, 10) as i64;
    bench.run(
        "cumsum_all",
        DType::I64,
        Impl::fallible("scan", || rw::cumsum_all(up_to)),
        Impl::fallible("scan_norewrite", || norw::cumsum_all(up_to)),
        Impl::infallible("handwritten", || cumsum_hand(up_to)),
    );
}
