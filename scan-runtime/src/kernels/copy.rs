//! Copies of contiguous elements that do not stall on 4K aliasing.
//!
//! A core checks each load against the stores still in flight by the low 12 bits of their
//! addresses only. A forward copy whose destination starts just past its source in a 4 KB
//! page reads each vector of the source right after storing the one before it at an
//! address with the same low 12 bits, and every read then waits for that store. Where a
//! copy lands is the allocator's choice, so any large copy can meet it. There the copy
//! goes in blocks of 64 bytes from the last to the first, each block read before its
//! stores. Measured on an AMD EPYC (Zen 3) with glibc's `memcpy`
//! (`scan-bench/examples/copy_probe.rs`, 4096 f64): 8, 16 or 24 bytes past the source in
//! the page 10.7-15.6 µs forward, 0.75-0.87 backwards (one run 2.3); 32 to 56 bytes past
//! forward 0.55-0.79 in some runs, 1.53 in others (where the buffers start in a cache
//! line), backwards 0.82-1.30, so those stay forward; from 64 bytes on 0.54-0.70 forward.
//! 3 KB copies and more stall alike, 2 KB not. until_newton's initial state (4096 f64)
//! copied into its trace 16 bytes past the input made the whole call 20.6 µs instead of
//! 10.7.

use std::mem::MaybeUninit;

/// The span of addresses whose low 12 bits a core compares when it checks a load against
/// the stores still in flight.
const PAGE: usize = 4096;

/// Copies go backwards when the destination starts 1 to this many bytes past the source
/// in the page: less than one 32-byte vector (measured, see the module).
const ALIAS_WINDOW: usize = 31;

/// `dst.copy_from_slice(src)`, backwards in blocks when a forward copy would stall (see
/// the module). Panics, as `copy_from_slice` does, when the lengths differ.
pub fn copy_elems<T: Copy>(dst: &mut [T], src: &[T]) {
    assert_eq!(dst.len(), src.len(), "copy_elems: lengths differ");
    if !stalls_forward(dst.as_ptr(), src.as_ptr()) {
        dst.copy_from_slice(src);
        return;
    }
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and `copy_backwards` writes only
    // initialised values of `T` (copies of `src`'s), so every element of `dst` stays
    // initialised; `T: Copy` has no drop that the overwrite could skip.
    let dst = unsafe { &mut *(dst as *mut [T] as *mut [MaybeUninit<T>]) };
    copy_backwards(dst, src);
}

/// `dst.extend_from_slice(src)`, backwards in blocks when a forward copy would stall (see
/// the module).
pub fn append<T: Copy>(dst: &mut Vec<T>, src: &[T]) {
    dst.reserve(src.len());
    let start = dst.len();
    if !stalls_forward(dst.as_ptr().wrapping_add(start), src.as_ptr()) {
        dst.extend_from_slice(src);
        return;
    }
    copy_backwards(&mut dst.spare_capacity_mut()[..src.len()], src);
    // SAFETY: `copy_backwards` wrote all `src.len()` elements after the first `start`, and
    // `reserve` made room for them.
    unsafe { dst.set_len(start + src.len()) };
}

/// Whether a forward copy to `dst` from `src` stalls: `dst` starts 1 to [`ALIAS_WINDOW`]
/// bytes past `src` in the page.
fn stalls_forward<T>(dst: *const T, src: *const T) -> bool {
    let gap = (dst as usize).wrapping_sub(src as usize) % PAGE;
    (1..=ALIAS_WINDOW).contains(&gap)
}

/// Every element of `src` into `dst` (as long), the 64-byte blocks from the last to the
/// first, the part after the last whole block first. Each block is one fixed-size copy
/// (its loads before its stores); `black_box` on the block's index keeps the compiler
/// from merging the blocks back into one forward `memcpy`.
fn copy_backwards<T: Copy>(dst: &mut [MaybeUninit<T>], src: &[T]) {
    let block = (64 / std::mem::size_of::<T>().max(1)).max(1);
    let whole = src.len() / block * block;
    for (o, &s) in dst[whole..].iter_mut().zip(&src[whole..]) {
        o.write(s);
    }
    for b in (0..whole / block).rev() {
        let at = std::hint::black_box(b) * block;
        let (o, s) = (&mut dst[at..at + block], &src[at..at + block]);
        // SAFETY: `o` and `s` are `block` elements each (the slicing above checked it), of
        // the same layout (`MaybeUninit<T>` is `T`'s), and cannot overlap: `dst` is a
        // unique borrow and `src` a shared one.
        unsafe { std::ptr::copy_nonoverlapping(s.as_ptr(), o.as_mut_ptr().cast::<T>(), block) };
    }
}

#[cfg(test)]
mod tests {
    use super::{append, copy_elems, PAGE};

    /// `src`, `n` elements of `big` that start `gap` bytes before `at` in the page.
    fn source_before(big: &[f64], at: usize, gap: usize, n: usize) -> &[f64] {
        let k = (at.wrapping_sub(gap).wrapping_sub(big.as_ptr() as usize) % PAGE) / 8;
        let src = &big[k..k + n];
        assert_eq!(at.wrapping_sub(src.as_ptr() as usize) % PAGE, gap % PAGE);
        src
    }

    const GAPS: [usize; 8] = [8, 16, 24, 32, 64, 264, 0, 2048];
    const LENGTHS: [usize; 5] = [1, 7, 8, 13, 4096 + 5];

    /// `append` copies exactly what `extend_from_slice` would, at every distance in the
    /// page between the new elements and the source, inside the backwards window and out.
    #[test]
    fn append_copies_at_every_distance_in_the_page() {
        for gap in GAPS {
            for n in LENGTHS {
                let mut dst: Vec<f64> = vec![-1.0; 3];
                dst.reserve(n + 1024);
                let at = dst.as_ptr().wrapping_add(dst.len()) as usize;
                let big: Vec<f64> = (0..n + 1024).map(|i| i as f64 * 0.5 + 1.0).collect();
                let src = source_before(&big, at, gap, n);
                let mut want = dst.clone();
                want.extend_from_slice(src);
                append(&mut dst, src);
                assert_eq!(dst, want, "gap {gap}, n {n}");
            }
        }
    }

    /// `copy_elems` copies exactly what `copy_from_slice` would, at the same distances.
    #[test]
    fn copy_elems_copies_at_every_distance_in_the_page() {
        for gap in GAPS {
            for n in LENGTHS {
                let mut dst: Vec<f64> = vec![-1.0; n + 2];
                let at = dst.as_ptr().wrapping_add(1) as usize;
                let big: Vec<f64> = (0..n + 1024).map(|i| i as f64 * 0.25 - 3.0).collect();
                let src = source_before(&big, at, gap, n);
                let mut want = dst.clone();
                want[1..=n].copy_from_slice(src);
                copy_elems(&mut dst[1..=n], src);
                assert_eq!(dst, want, "gap {gap}, n {n}");
            }
        }
    }

    #[test]
    #[should_panic(expected = "lengths differ")]
    fn copy_elems_of_unequal_lengths_panics_as_copy_from_slice_does() {
        copy_elems(&mut [0.0f32; 3], &[1.0f32; 4]);
    }
}
