//! Large buffers kept from one call to the next. A generated function's own buffers (the
//! hoisted input projection of a loop, say) live for one call; freed, a buffer of more than
//! glibc's largest mmap threshold (32 MB) goes back to the system, and the next call maps
//! fresh memory and faults in every page of it again: an LSTM's 33.5 MB projection cost
//! 20% of its call that way. So a generated function hands its large buffers that it does
//! not return to [`recycle`] before it returns (its scans' traces too), and
//! `try_ensure_shape` and a trace's first reservation (`ArrayTrace`) take their memory from
//! here when a kept buffer fits; a `PackedMatrix` gives its panels back when dropped and
//! takes them from here when it packs. Kept per thread (a call's buffers are on its thread),
//! at most [`KEPT`] buffers, oldest dropped first; [`release`] frees them.

use std::any::Any;
use std::cell::RefCell;

use ndarray::{Array, Dimension};

/// Buffers of at least this many bytes are kept; smaller ones the allocator serves well
/// once the large ones stop coming and going (an LSTM call, with its 4 MB packed weights
/// kept, no longer faulted in its 2 MB ones either: from about 4,300 page faults per call
/// to none). Keeping from 1 MB made calls of different lengths allocate differently
/// (tests/no_alloc.rs).
pub const KEEP_MIN_BYTES: usize = 4 << 20;

/// How many buffers a thread keeps: a gradient's call holds about this many large ones
/// (the forward trace, the input projection, the backward loop's stacks).
pub const KEPT: usize = 16;

thread_local! {
    /// Kept buffers (each a `Vec<T>` of length 0), oldest first.
    static KEPT_BUFFERS: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
    /// Each float type's scratch vector ([`with_scratch`]).
    static SCRATCH_F32: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    static SCRATCH_F64: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// The element types with a scratch vector per thread ([`with_scratch`]).
// Used by the faer backend alone (and the tests).
#[cfg_attr(
    not(all(feature = "faer", not(feature = "matrixmultiply"))),
    allow(dead_code)
)]
pub(crate) trait Scratch: Copy + Default + 'static {
    fn key() -> &'static std::thread::LocalKey<RefCell<Vec<Self>>>;
}

impl Scratch for f32 {
    fn key() -> &'static std::thread::LocalKey<RefCell<Vec<f32>>> {
        &SCRATCH_F32
    }
}

impl Scratch for f64 {
    fn key() -> &'static std::thread::LocalKey<RefCell<Vec<f64>>> {
        &SCRATCH_F64
    }
}

/// Runs `f` on `len` elements of this thread's scratch vector for `T` (holding whatever its
/// last user left), which is kept for the next call: a kernel's temporary copy allocates
/// on its first call only, also inside a loop's step. A call made while the scratch is in
/// use (nested, from `f`) gets a vector of its own. [`release`] frees it.
#[cfg_attr(
    not(all(feature = "faer", not(feature = "matrixmultiply"))),
    allow(dead_code)
)]
pub(crate) fn with_scratch<T: Scratch, R>(len: usize, f: impl FnOnce(&mut [T]) -> R) -> R {
    let mut v = T::key().with(|cell| cell.take());
    v.resize(len, T::default());
    let r = f(&mut v[..len]);
    T::key().with(|cell| *cell.borrow_mut() = v);
    r
}

/// Keeps `a`'s memory for a later call on this thread when it is large enough.
pub fn recycle<T: 'static, D: Dimension>(a: Array<T, D>) {
    recycle_vec(a.into_raw_vec_and_offset().0);
}

/// Keeps `data`'s memory for a later call on this thread when it is large enough (the
/// packed matrices' panels, say).
pub(crate) fn recycle_vec<T: 'static>(data: Vec<T>) {
    if data.capacity().saturating_mul(std::mem::size_of::<T>()) < KEEP_MIN_BYTES {
        return;
    }
    // Its elements stay: `take`'s caller shortens or lengthens the vector to the length it
    // needs, writing only the elements it adds (zeroing 33.5 MB was 3% of an LSTM call).
    KEPT_BUFFERS.with(|kept| {
        let mut kept = kept.borrow_mut();
        if kept.len() >= KEPT {
            kept.remove(0);
        }
        kept.push(Box::new(data));
    });
}

/// A kept `Vec<T>` (holding what its last user left in it) with room for `len` elements and not more than twice that (so
/// a small request does not pin a large buffer), if there is one.
pub(crate) fn take<T: 'static>(len: usize) -> Option<Vec<T>> {
    if len.saturating_mul(std::mem::size_of::<T>()) < KEEP_MIN_BYTES {
        return None;
    }
    KEPT_BUFFERS.with(|kept| {
        let mut kept = kept.borrow_mut();
        let at = kept.iter().position(|b| {
            b.downcast_ref::<Vec<T>>()
                .is_some_and(|v| v.capacity() >= len && v.capacity() / 2 <= len)
        })?;
        kept.remove(at).downcast::<Vec<T>>().ok().map(|b| *b)
    })
}

/// Frees the buffers this thread keeps, and its scratch vectors.
pub fn release() {
    KEPT_BUFFERS.with(|kept| kept.borrow_mut().clear());
    SCRATCH_F32.with(|s| s.take());
    SCRATCH_F64.with(|s| s.take());
}

/// How many buffers this thread keeps (for tests).
pub fn kept() -> usize {
    KEPT_BUFFERS.with(|kept| kept.borrow().len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array1, Array2};

    #[test]
    fn a_large_buffer_is_kept_and_given_back_with_its_memory() {
        release();
        let n = KEEP_MIN_BYTES; // 16 MB of f32
        let a = Array1::<f32>::from_elem(n, 7.0);
        let ptr = a.as_ptr();
        recycle(a);
        assert_eq!(kept(), 1);
        // Not for another element type, nor for a request under half its size.
        assert!(take::<f64>(n / 2).is_none());
        assert!(take::<f32>(n / 2 - 1).is_none());
        let v = take::<f32>(n - 3).expect("kept");
        // Given back as it was left, not cleared (its user overwrites what it needs).
        assert_eq!((v.len(), v.as_ptr()), (n, ptr));
        assert!(v.iter().all(|&x| x == 7.0));
        assert!(v.capacity() >= n);
        assert_eq!(kept(), 0);
    }

    #[test]
    fn the_scratch_is_kept_per_type_and_a_nested_call_gets_its_own() {
        release();
        let first = with_scratch::<f32, _>(1000, |s| {
            s.fill(2.0);
            // Nested: not the outer one's memory.
            let inner = with_scratch::<f32, _>(10, |t| {
                assert_eq!(t.len(), 10);
                t.as_ptr()
            });
            assert_ne!(inner, s.as_ptr());
            s.as_ptr()
        });
        // The next call gets the kept vector, as its last user left it (shorter requests
        // too), and the other type its own.
        let again = with_scratch::<f32, _>(500, |s| {
            assert!(s.iter().all(|&x| x == 2.0));
            s.as_ptr()
        });
        assert_eq!(again, first);
        with_scratch::<f64, _>(3, |s| assert_eq!(s, &[0.0; 3]));
        release();
        with_scratch::<f32, _>(2, |s| assert_eq!(s, &[0.0; 2]));
    }

    #[test]
    fn small_buffers_are_not_kept_and_at_most_kept_buffers_are() {
        release();
        recycle(Array2::<f64>::zeros((10, 10)));
        assert_eq!(kept(), 0);
        for _ in 0..KEPT + 2 {
            recycle(Array1::<u8>::zeros(KEEP_MIN_BYTES));
        }
        assert_eq!(kept(), KEPT);
        release();
        assert_eq!(kept(), 0);
        assert!(take::<u8>(KEEP_MIN_BYTES).is_none());
    }
}
