//! Helpers for the interchanged scan loop ("element chunks outer, steps inner"), which the
//! loop-interchange rewrite chooses for a recurrence whose step is elementwise. Generated
//! code takes [`chunk`] elements of every row at a time and runs every step on them with
//! the output taps held in local arrays (registers, for full chunks), writing only the
//! rows the outputs keep.
//!
//! The loop runs only on contiguous (standard-layout) data whose rows all have the same
//! shape ([`common_row`]) and where it pays ([`worth_it`]); otherwise the ordinary loop
//! runs, so broadcasting and shape errors are exactly those of the ordinary loop.

use std::cell::Cell;

use ndarray::{Array, Dimension};

/// Bytes of each output row per chunk: 16 `f64` or 32 `f32`, eight SSE registers per
/// row of history. Measured on power_large with `cargo run --release --example
/// interchange` (hand-written chunks of 4 to 1024 f64: 16 fastest, 32 close, 64 and more
/// fall back to L1 speed; see docs/ARCHITECTURE.md).
pub const CHUNK_BYTES: usize = 128;

/// Elements per chunk when the widest output element has the largest of `sizes` bytes.
pub const fn chunk(sizes: &[usize]) -> usize {
    let mut widest = 1;
    let mut i = 0;
    while i < sizes.len() {
        if sizes[i] > widest {
            widest = sizes[i];
        }
        i += 1;
    }
    CHUNK_BYTES / widest
}

/// Rows of at most this many chunks run interchanged even when every step reads a
/// sequence row or writes a trace row. Beyond it, the ordinary loop's row-by-row streams
/// win: the interchanged loop would read and write them in chunk-wide strips, one pass
/// per chunk (measured: 4 chunks of f64 1.1-1.4x faster, 16 chunks 1.3-3x slower).
pub const STREAMING_CHUNKS: usize = 4;

/// Which loop generated code runs for a scan marked for interchange, on this thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Interchanged where it pays ([`worth_it`]): the default.
    Auto,
    /// Interchanged whenever the rows allow it (for tests).
    Always,
    /// The ordinary loop (for tests and measurements).
    Never,
}

thread_local! {
    static POLICY: Cell<Policy> = const { Cell::new(Policy::Auto) };
}

/// Sets this thread's [`Policy`]; returns the previous one.
pub fn set_policy(policy: Policy) -> Policy {
    POLICY.with(|p| p.replace(policy))
}

/// Whether to run interchanged over rows of `total` elements in chunks of `chunk`, when
/// `streams` says every step reads a sequence row or writes a row of a kept trace.
/// Without streams it always pays (the state stays in registers instead of being swept
/// through memory every step); with them, only for short rows.
pub fn worth_it(total: usize, chunk: usize, streams: bool) -> bool {
    match POLICY.with(Cell::get) {
        Policy::Always => true,
        Policy::Never => false,
        Policy::Auto => !streams || total <= STREAMING_CHUNKS * chunk,
    }
}

/// The common row shape of `shapes`, if there is at least one, all are equal and they have
/// `R` axes; `None` otherwise (the caller then runs the ordinary loop).
pub fn common_row<const R: usize>(shapes: &[&[usize]]) -> Option<[usize; R]> {
    let first = *shapes.first()?;
    let row: [usize; R] = first.try_into().ok()?;
    shapes.iter().all(|s| *s == first).then_some(row)
}

/// A state that the interchanged loop wrote chunk after chunk into `data` (its initial
/// value a `fill_like` never written: `emit/interchange.rs`), as an array of shape `row`.
pub fn state_from<T, D: Dimension>(row: D, data: Vec<T>) -> Array<T, D> {
    // The loop appends every chunk of the row, `row.size()` elements in all.
    Array::from_shape_vec(row, data)
        .expect("the interchanged loop writes every element of the state")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_row_needs_equal_shapes_of_the_rank() {
        assert_eq!(common_row::<1>(&[&[3], &[3]]), Some([3]));
        assert_eq!(common_row::<2>(&[&[2, 0], &[2, 0], &[2, 0]]), Some([2, 0]));
        assert_eq!(common_row::<1>(&[&[3], &[1]]), None);
        assert_eq!(common_row::<1>(&[&[3, 1]]), None);
        assert_eq!(common_row::<1>(&[]), None);
    }

    #[test]
    fn chunk_follows_the_widest_element() {
        assert_eq!(chunk(&[8]), 16);
        assert_eq!(chunk(&[4, 8, 1]), 16);
        assert_eq!(chunk(&[4]), 32);
        assert_eq!(chunk(&[1]), 128);
        assert_eq!(chunk(&[]), 128);
    }

    #[test]
    fn policy_decides_per_thread() {
        assert!(worth_it(1_000_000, 16, false));
        assert!(worth_it(64, 16, true));
        assert!(!worth_it(65, 16, true));
        assert_eq!(set_policy(Policy::Never), Policy::Auto);
        assert!(!worth_it(3, 16, false));
        std::thread::spawn(|| assert!(worth_it(3, 16, false)))
            .join()
            .unwrap();
        set_policy(Policy::Always);
        assert!(worth_it(1_000_000, 16, true));
        assert_eq!(set_policy(Policy::Auto), Policy::Always);
    }
}
