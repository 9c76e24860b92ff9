//! SPEC.md's deterministic inputs (no files, no RNG): `gen(shape, seed, scale)`, element i
//! of the row-major flattening being `((((i + seed * 1000003) * 2654435761) mod 2^32) / 2^32
//! - 0.5) * scale`, computed in f64 (f32 inputs are rounded from it, like numpy's
//! `.astype(np.float32)`).

use scan_runtime::ndarray::{Array, Dimension, IntoDimension};

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
    Array::from_shape_vec(dim, values).expect("the shape's size is the vector's length")
}

/// `gen(shape, seed, scale)` rounded to f32.
pub fn gen_f32<D: Dimension>(
    shape: impl IntoDimension<Dim = D>,
    seed: u64,
    scale: f64,
) -> Array<f32, D> {
    gen(shape, seed, scale).mapv(|v| v as f32)
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
}
