//! Row-major copies of a column-major matrix: `cargo run --release -p scan-bench --example
//! transpose_probe -- M K` times `scan_runtime::kernels::dot::transpose_into` (fastest of 21).
use scan_runtime::ndarray::Array2;
use std::time::Instant;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let (m, k) = (args[0], args[1]);
    let at = Array2::<f32>::from_shape_fn((k, m), |(i, j)| (i * 7 + j) as f32);
    let a = at.t();
    let mut dst = vec![0.0f32; m * k];
    let mut best = f64::MAX;
    for _ in 0..21 {
        let t0 = Instant::now();
        scan_runtime::kernels::dot::transpose_into(&mut dst, a);
        best = best.min(t0.elapsed().as_secs_f64());
    }
    assert_eq!(dst[k + 1], a[[1, 1]]);
    println!(
        "m={m} k={k} ms={:.3} ns_per_element={:.2}",
        best * 1e3,
        best * 1e9 / (m * k) as f64
    );
}
