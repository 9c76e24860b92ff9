//! The process's allocator: the system allocator, counted, so the peak bytes held during
//! one call can be read (`peak_mb=`).
//!
//! Every method forwards to `System` (zeroed allocation and reallocation included), so the
//! implementations are timed with the allocator a user's program has: `calloc` of fresh
//! pages writes nothing, a growing vector may be extended where it lies. A counter that
//! only forwards `alloc` and `dealloc` (the `GlobalAlloc` defaults for the rest, as the
//! `peak_alloc` crate has it) writes zeros over every zeroed allocation and copies on every
//! reallocation: it charged a memset of each 16 MB trace to loops that never pay it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Counts live and peak bytes, for every thread alike (two relaxed atomic operations per
/// allocation).
pub struct Counting {
    live: AtomicUsize,
    peak: AtomicUsize,
}

impl Counting {
    pub const fn new() -> Self {
        Counting {
            live: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        }
    }

    /// Bytes live now.
    pub fn live(&self) -> usize {
        self.live.load(Relaxed)
    }

    /// The most bytes live since the last [`Counting::reset_peak`].
    pub fn peak(&self) -> usize {
        self.peak.load(Relaxed)
    }

    /// Starts a new peak from the bytes live now.
    pub fn reset_peak(&self) {
        self.peak.store(self.live(), Relaxed);
    }

    fn grow(&self, bytes: usize) {
        let live = self.live.fetch_add(bytes, Relaxed).wrapping_add(bytes);
        self.peak.fetch_max(live, Relaxed);
    }

    fn shrink(&self, bytes: usize) {
        self.live.fetch_sub(bytes, Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, and
// counts only after a successful call; the counters are atomics that neither allocate nor
// touch the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            self.grow(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            self.grow(layout.size());
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` was allocated by `System` (through this allocator) with `layout`;
        // the caller upholds the rest of `GlobalAlloc::realloc`'s contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            self.grow(new_size);
            self.shrink(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.shrink(layout.size());
        // SAFETY: `ptr` was allocated by `System` (through this allocator) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::ALLOC;

    #[test]
    fn the_peak_of_a_call_counts_what_it_held_at_once() {
        ALLOC.reset_peak();
        let before = ALLOC.live();
        // Through `black_box`: an optimized build would otherwise drop the unread vectors'
        // allocations altogether.
        let a = std::hint::black_box(vec![0u8; 1 << 20]);
        let mut b: Vec<u8> = std::hint::black_box(Vec::with_capacity(1 << 10));
        b.resize(1 << 21, 1);
        let b = std::hint::black_box(b);
        let held = ALLOC.peak() - before;
        drop((a, b));
        // Other test threads may allocate meanwhile: at least both vectors were live.
        assert!(held >= (1 << 20) + (1 << 21), "peak {held}");
    }
}

/// The allocator of the benchmark process.
#[global_allocator]
pub static ALLOC: Counting = Counting::new();
