//! SPEC.md's deterministic inputs (no files, no RNG): `gen(shape, seed, scale)`, element i
//! of the row-major flattening being `((((i + seed * 1000003) * 2654435761) mod 2^32) / 2^32
//! - 0.5) * scale`, computed in f64 (f32 inputs are rounded from it, like numpy's
//! `.astype(np.float32)`).

use scan_runtime::ndarray::{s, Array, Array1, Dimension, IntoDimension};

/// Inputs start on a cache line: where the allocator happens to put them (which moves
/// with anything allocated before, even the command line's length) changed seed_taps'
/// generated code by 17% through the alignment of the W it reads in place every step.
const ALIGN: usize = 64;

/// `gen(shape, seed, scale)` in f64.
pub fn gen<D: Dimension>(
    shape: impl IntoDimension<Dim = D>,
    seed: u64,
    scale: f64,
) -> Array<f64, D> {
    let dim = shape.into_dimension();
    let values = (0..dim.size() as u64)
        .map(|i| {
            // Wrapping is exact here: 2^64 is a multiple of 2^32.
            let h = (i + seed * 1_000_003).wrapping_mul(2_654_435_761) % (1 << 32);
            (h as f64 / 4_294_967_296.0 - 0.5) * scale
        })
        .collect();
    aligned(dim, values)
}

/// `len` zeros starting on a cache line, for a hand-written loop's buffers (the runtime
/// aligns its own the same way: `scan_runtime::kernels::buffer`).
pub fn aligned_zeros<T: Copy + Default>(len: usize) -> Array1<T> {
    let spare = ALIGN / std::mem::size_of::<T>().max(1);
    let padded = vec![T::default(); len + spare];
    let skip = padded.as_ptr().align_offset(ALIGN).min(spare);
    Array1::from_vec(padded).slice_move(s![skip..skip + len])
}

/// `values` as an array of shape `dim` whose first element starts a cache line.
fn aligned<T: Copy + Default, D: Dimension>(dim: D, values: Vec<T>) -> Array<T, D> {
    let mut a = aligned_zeros(values.len());
    a.iter_mut().zip(&values).for_each(|(d, &v)| *d = v);
    a.into_shape_with_order(dim)
        .expect("the shape's size is the vector's length")
}

/// `gen(shape, seed, scale)` rounded to f32.
pub fn gen_f32<D: Dimension>(
    shape: impl IntoDimension<Dim = D>,
    seed: u64,
    scale: f64,
) -> Array<f32, D> {
    let g = gen(shape, seed, scale);
    let values = g.iter().map(|&v| v as f32).collect();
    aligned(g.raw_dim(), values)
}

/// The elements of a standard-layout array, for the hand-written loops.
pub fn flat<T, D: Dimension>(a: &Array<T, D>) -> &[T] {
    a.as_slice().expect("inputs are made contiguous")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values from SPEC's numpy formula, worked out by hand for the first indices.
    #[test]
    fn matches_the_spec_formula() {
        let g = gen([3], 1, 2.0);
        for (i, &v) in g.iter().enumerate() {
            let h = ((i as u64 + 1_000_003) * 2_654_435_761) % 4_294_967_296;
            assert_eq!(v, (h as f64 / 4_294_967_296.0 - 0.5) * 2.0);
        }
        assert_eq!(
            gen((2, 3), 4, 1.0).iter().copied().collect::<Vec<_>>(),
            gen([6], 4, 1.0).to_vec()
        );
        assert!(gen([1000], 7, 0.1).iter().all(|v| v.abs() <= 0.05));
    }

    #[test]
    fn inputs_start_on_a_cache_line() {
        for n in [1usize, 7, 64, 1000] {
            let a = gen((n, 3), 2, 1.0);
            assert_eq!(a.as_ptr() as usize % ALIGN, 0);
            assert_eq!(a.as_slice().map(<[f64]>::len), Some(n * 3));
            let b = gen_f32((n, 3), 2, 1.0);
            assert_eq!(b.as_ptr() as usize % ALIGN, 0);
            let expect: Vec<f32> = a.iter().map(|&v| v as f32).collect();
            assert_eq!(b.iter().copied().collect::<Vec<_>>(), expect);
        }
    }
}
