//! One large f32 product through the runtime's `dot_mm` (the faer backend) and through a
//! `PackedMatrix` (packing included): `cargo run --release -p scan-bench --example gemm_probe
//! -- M K N THREADS [ROW_MAJOR_A [COLUMN_MAJOR_B]]` (flags 0 or 1; by default the left
//! operand is column-major, a transposed trace, and the right one row-major). Also times a
//! row-major copy of the left operand followed by the product. The fastest of 7 calls each.

use scan_runtime::kernels::PackedMatrix;
use scan_runtime::ndarray::Array2;
use std::time::Instant;

fn time(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..reps {
        let t0 = Instant::now();
        f();
        best = best.min(t0.elapsed().as_secs_f64());
    }
    best
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let (m, k, n, threads) = (args[0], args[1], args[2], args[3]);
    let row_major_a = args.get(4) == Some(&1);
    let column_major_b = args.get(5) == Some(&1);
    scan_runtime::set_num_threads(threads);
    // a is the transpose of a row-major (k, m) array, as h's trace transposed.
    let at = Array2::<f32>::from_shape_fn((k, m), |(i, j)| ((i * 7 + j * 3) % 11) as f32 * 0.01);
    let ar = at.t().as_standard_layout().into_owned();
    let a = if row_major_a { ar.view() } else { at.t() };
    let w0 = Array2::<f32>::from_shape_fn((k, n), |(i, j)| ((i * 5 + j * 13) % 17) as f32 * 0.01);
    let wt = w0.t().as_standard_layout().into_owned();
    let w = if column_major_b { wt.t() } else { w0.view() };
    let mut out = Array2::<f32>::zeros((m, n));
    let flops = 2.0 * (m * k * n) as f64 / 1e9;
    let reps = 7;
    let tf = time(reps, || {
        scan_runtime::kernels::dot::dot_mm(&mut out, a, w, "f").unwrap()
    });
    let r1 = out.clone();
    let mut buf = Array2::<f32>::zeros((m, k));
    let tc = time(reps, || {
        buf.assign(&a);
        scan_runtime::kernels::dot::dot_mm(&mut out, buf.view(), w, "f").unwrap()
    });
    println!("copy+faer_ms={:.2} ({:.1} GF/s)", tc * 1e3, flops / tc);
    let ar = a.as_standard_layout().into_owned();
    let wr = w.as_standard_layout().into_owned();
    let tpar = time(reps, || {
        let dst = faer::MatMut::from_row_major_slice_mut(out.as_slice_mut().unwrap(), m, n);
        let lhs = faer::MatRef::from_row_major_slice(ar.as_slice().unwrap(), m, k);
        let rhs = faer::MatRef::from_row_major_slice(wr.as_slice().unwrap(), k, n);
        let par = if threads > 1 {
            faer::Par::rayon(threads)
        } else {
            faer::Par::Seq
        };
        faer::linalg::matmul::matmul(dst, faer::Accum::Replace, lhs, rhs, 1.0, par);
    });
    println!(
        "faer_par_rowmajor_ms={:.2} ({:.1} GF/s)",
        tpar * 1e3,
        flops / tpar
    );
    let par_out = out.clone();
    {
        let dst = faer::MatMut::from_row_major_slice_mut(out.as_slice_mut().unwrap(), m, n);
        let lhs = faer::MatRef::from_row_major_slice(ar.as_slice().unwrap(), m, k);
        let rhs = faer::MatRef::from_row_major_slice(wr.as_slice().unwrap(), k, n);
        faer::linalg::matmul::matmul(dst, faer::Accum::Replace, lhs, rhs, 1.0, faer::Par::Seq);
    }
    println!("par_equals_seq={}", par_out == out);
    let tseq = time(reps, || {
        let dst = faer::MatMut::from_row_major_slice_mut(out.as_slice_mut().unwrap(), m, n);
        let lhs = faer::MatRef::from_row_major_slice(ar.as_slice().unwrap(), m, k);
        let rhs = faer::MatRef::from_row_major_slice(wr.as_slice().unwrap(), k, n);
        faer::linalg::matmul::matmul(dst, faer::Accum::Replace, lhs, rhs, 1.0, faer::Par::Seq);
    });
    println!(
        "faer_seq_rowmajor_ms={:.2} ({:.1} GF/s)",
        tseq * 1e3,
        flops / tseq
    );
    let tp = time(reps, || {
        let mut p = PackedMatrix::<f32>::new(w);
        p.dot_mm(&mut out, a, w, "p").unwrap();
    });
    assert_eq!(out.shape(), r1.shape());
    println!("m={m} k={k} n={n} threads={threads} faer_ms={:.2} ({:.1} GF/s) packed_ms={:.2} ({:.1} GF/s)", tf * 1e3, flops / tf, tp * 1e3, flops / tp);
}
