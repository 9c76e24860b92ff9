//! The packed kernel alone: `cargo run --release -p scan-bench --example kernel_probe -- M K
//! N THREADS` times `PackedMatrix::dot_mm` of an `M x K` by a packed `K x N` f32 matrix
//! (the fastest of 31 rounds of 300 calls, in µs and GFLOP/s). Measures kernel changes
//! more steadily than a whole case (lstm's step product: 32 512 2048).

use scan_runtime::kernels::PackedMatrix;
use scan_runtime::ndarray::Array2;
use std::time::Instant;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let (m, k, n, threads) = (args[0], args[1], args[2], args[3]);
    let a = Array2::<f32>::from_shape_fn((m, k), |(i, j)| ((i * 7 + j * 3) % 11) as f32 * 0.01);
    let w = Array2::<f32>::from_shape_fn((k, n), |(i, j)| ((i * 5 + j * 13) % 17) as f32 * 0.01);
    let mut p = PackedMatrix::<f32>::new(w.view());
    let mut out = Array2::<f32>::zeros((m, n));
    scan_runtime::set_num_threads(threads);
    let reps = 300;
    let mut times = vec![];
    for _ in 0..31 {
        let t0 = Instant::now();
        for _ in 0..reps {
            p.dot_mm(out.view_mut(), a.view(), w.view(), "p").unwrap();
        }
        times.push(t0.elapsed().as_secs_f64() / reps as f64);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let best = times[0];
    let gf = 2.0 * (m * k * n) as f64 / best / 1e9;
    println!(
        "m={m} k={k} n={n} threads={threads} median_us={:.1} gflops={gf:.1}",
        best * 1e6
    );
}
