//! Kernels must not allocate when their output buffer already has the right shape: this
//! is what lets generated loops run without touching the allocator after the first step.
//!
//! A counting global allocator records every allocation, on every thread (so the rayon
//! workers of a product split over threads are counted too). Everything runs in one
//! `#[test]` so no other test thread allocates while a section is being measured.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use scan_runtime::__private::{kernels, math};
use scan_runtime::ndarray::{aview0, s, Array, Array0, Array1, Array2, Array3, Ix1, Ix2, Ix3};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made while running `f`.
fn allocations(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    f();
    ALLOCATIONS.load(Ordering::SeqCst) - before
}

/// What a large matrix product may allocate per call, after a warm-up, by backend.
///
/// - faer (the default): nothing, at 1 thread and for products kept on the calling thread:
///   packing memory is a buffer per thread, made by the thread's first product. A product
///   split over 2 threads runs its parts on rayon's workers, each packing into its own
///   buffer (made in the warm-up); the split (`rayon::join` from outside the pool) only
///   allocates when rayon's queue of injected jobs needs a new block, once per 63 jobs. So
///   over the runs below (10 split calls) at most one allocation in all.
/// - matrixmultiply: its packing buffer, on every call (`make_packing_buffer` in its
///   gemm.rs; it has no API to pass one in), whatever the threads: one allocation per call
///   at every size (matrixmultiply reads its own MATMUL_NUM_THREADS, not the setting).
/// - no backend: the direct loop, nothing.
fn check_gemm_allocations(
    threads: usize,
    split: &[bool],
    warm_up: [usize; 5],
    runs: &[[usize; 5]],
) {
    let context =
        format!("{threads} threads: allocations per call {runs:?} (warm-up: {warm_up:?})");
    match scan_runtime::kernels::dot::GEMM_BACKEND {
        "matrixmultiply" => assert!(runs.iter().flatten().all(|&c| c <= 1), "{context}"),
        "faer" if threads > 1 => {
            for (i, &is_split) in split.iter().enumerate() {
                let total: usize = runs.iter().map(|r| r[i]).sum();
                let bound = if is_split { 1 } else { 0 };
                assert!(total <= bound, "call {i}: {context}");
            }
        }
        _ => assert!(runs.iter().flatten().all(|&c| c == 0), "{context}"),
    }
}

fn ramp(rows: usize, cols: usize) -> Array2<f64> {
    Array::from_shape_fn((rows, cols), |(i, j)| ((i * cols + j) % 7) as f64 - 3.0)
}

#[test]
fn kernels_do_not_allocate_with_ready_buffers() {
    // Two rayon workers even on a 1-core machine, so the split path is what is measured.
    // Set before anything starts rayon's pool; nothing else runs in this process yet.
    std::env::set_var("RAYON_NUM_THREADS", "2");
    scan_runtime::set_num_threads(1);
    // Every buffer and input is created (and every kernel warmed up once) before measuring.
    let a = ramp(8, 8);
    let b = Array1::from_iter((0..8).map(f64::from));
    let two = 2.0f64;
    let mut out2 = Array2::<f64>::zeros((8, 8));
    let mut out1 = Array1::<f64>::zeros(8);
    let mut out0 = Array0::<f64>::zeros(());

    let n = allocations(|| {
        kernels::map2(&mut out2, a.view(), a.view(), "a + a", math::add).unwrap();
        kernels::map2(&mut out2, a.view(), b.view(), "a * b", math::mul).unwrap();
        kernels::map2(&mut out2, a.t(), aview0(&two), "a.T - 2", math::sub).unwrap();
        kernels::map1(&mut out2, a.view(), "tanh(a)", math::tanh).unwrap();
        kernels::map3(
            &mut out1,
            b.view(),
            b.slice(s![..;-1]),
            aview0(&two),
            "where",
            |x, y, z| math::select(x > z, x, y),
        )
        .unwrap();
    });
    assert_eq!(n, 0, "elementwise kernels allocated");

    let n = allocations(|| {
        kernels::ensure_shape(&mut out2, Ix2(8, 8));
        kernels::ensure_shape(&mut out1, Ix1(8));
        let _: Ix3 = kernels::broadcast_shape("x", &[&[2, 1, 4], &[3, 1], &[]]).unwrap();
    });
    assert_eq!(n, 0, "buffer helpers allocated");

    // Small matrix products (direct loop or faer's small kernels), for every dtype and
    // layout.
    let ai = a.mapv(|x| x as i32);
    let mut outi = Array2::<i32>::zeros((8, 8));
    let a32 = a.mapv(|x| x as f32);
    let mut out32 = Array2::<f32>::zeros((8, 8));
    let small_products = |out2: &mut Array2<f64>,
                          outi: &mut Array2<i32>,
                          out32: &mut Array2<f32>,
                          out1: &mut Array1<f64>| {
        kernels::dot_mm(&mut *out2, a.view(), a.view(), "a @ a").unwrap();
        kernels::dot_mm(&mut *out2, a.t(), a.slice(s![..;-1, ..]), "a.T @ a").unwrap();
        kernels::dot_mm(outi, ai.view(), ai.t(), "a @ a.T").unwrap();
        kernels::dot_mm(out32, a32.view(), a32.view(), "a @ a").unwrap();
        kernels::dot_mv(&mut *out1, a.view(), b.view(), "a @ b").unwrap();
        kernels::dot_vm(&mut *out1, b.view(), a.t(), "b @ a.T").unwrap();
        kernels::dot_vv(b.view(), b.view(), "b @ b").unwrap();
    };
    // Warm-up: a backend's first product on a thread may set up its per-thread scratch.
    small_products(&mut out2, &mut outi, &mut out32, &mut out1);
    let n = allocations(|| small_products(&mut out2, &mut outi, &mut out32, &mut out1));
    assert_eq!(n, 0, "small dot products allocated");

    // Products with a vector operand, at any size (faer's vector kernels or the direct
    // loop, never threads nor matrixmultiply).
    let big = ramp(300, 400);
    let x300 = Array1::from_iter((0..300).map(f64::from));
    let x400 = Array1::from_iter((0..400).map(f64::from));
    let mut y400 = Array1::<f64>::zeros(400);
    let mut y300 = Array1::<f64>::zeros(300);
    let stack = Array3::from_shape_fn((3, 100, 400), |(i, j, k)| ((i + j + k) % 5) as f64);
    let mut ys = Array2::<f64>::zeros((3, 100));
    let vector_products = |y400: &mut Array1<f64>, y300: &mut Array1<f64>, ys: &mut Array2<f64>| {
        kernels::dot_vm(&mut *y400, x300.view(), big.view(), "x @ W").unwrap();
        kernels::dot_mv(&mut *y300, big.view(), x400.view(), "W @ x").unwrap();
        kernels::dot_vm(&mut *y300, x400.view(), big.t(), "x @ W.T").unwrap();
        kernels::dot_mv(&mut *y400, big.t(), x300.view(), "W.T @ x").unwrap();
        kernels::dot_stack_v(ys, stack.view(), x400.view(), "s @ x").unwrap();
    };
    vector_products(&mut y400, &mut y300, &mut ys);
    for threads in [1, 2] {
        scan_runtime::set_num_threads(threads);
        let n = allocations(|| vector_products(&mut y400, &mut y300, &mut ys));
        assert_eq!(
            n, 0,
            "large matrix-vector products allocated ({threads} threads)"
        );
    }

    // Large matrix products, at 1 and 2 threads (`scan_runtime::set_num_threads`).
    let m1 = ramp(64, 64);
    let m2 = ramp(200, 150);
    let m3 = ramp(150, 120);
    let m4 = ramp(400, 400);
    let h = ramp(32, 512).mapv(|x| x as f32);
    let w = ramp(512, 512).mapv(|x| x as f32);
    let xs = Array3::from_shape_fn((20, 32, 512), |(i, j, k)| ((i + j + k) % 5) as f32);
    let mut c1 = Array2::<f64>::zeros((64, 64));
    let mut c2 = Array2::<f64>::zeros((200, 120));
    let mut c4 = Array2::<f64>::zeros((400, 400));
    let mut ch = Array2::<f32>::zeros((32, 512));
    let mut cs = Array3::<f32>::zeros((20, 32, 512));
    type Buffers = (
        Array2<f64>,
        Array2<f64>,
        Array2<f64>,
        Array2<f32>,
        Array3<f32>,
    );
    let mut bufs: Buffers = (c1.clone(), c2.clone(), c4.clone(), ch.clone(), cs.clone());
    // Allocations of each call: m1·m1ᵀ (0.26 M multiply-adds), m2·m3 (3.6 M), m4·m4 (64 M),
    // elman's step h·W (32 x 512 x 512 f32, 8.4 M) and a stacked projection (168 M).
    let gemm_calls = |b: &mut Buffers| {
        [
            allocations(|| kernels::dot_mm(&mut b.0, m1.view(), m1.t(), "m1 @ m1.T").unwrap()),
            allocations(|| kernels::dot_mm(&mut b.1, m2.view(), m3.view(), "m2 @ m3").unwrap()),
            allocations(|| kernels::dot_mm(&mut b.2, m4.view(), m4.view(), "m4 @ m4").unwrap()),
            allocations(|| kernels::dot_mm(&mut b.3, h.view(), w.view(), "h @ W").unwrap()),
            allocations(|| kernels::dot_stack_m(&mut b.4, xs.view(), w.view(), "x @ W").unwrap()),
        ]
    };
    // Which calls are split over threads at 2 threads (PAR_MIN_WORK, 16 M, and more; the
    // others stay on this thread).
    let split = [false, false, true, false, true];
    for threads in [1, 2] {
        scan_runtime::set_num_threads(threads);
        // Warm-up: the first calls at a setting start rayon's pool and give each thread
        // its packing buffer.
        let warm_up = gemm_calls(&mut bufs);
        let runs: Vec<[usize; 5]> = (0..5).map(|_| gemm_calls(&mut bufs)).collect();
        check_gemm_allocations(threads, &split, warm_up, &runs);
    }
    scan_runtime::set_num_threads(1);
    (c1, c2, c4, ch, cs) = bufs;
    drop((c1, c2, c4, ch, cs));

    // Reductions into ready buffers.
    let c = Array3::from_shape_fn((4, 5, 6), |(i, j, k)| (i * 30 + j * 6 + k) as f64);
    let mut r2 = Array2::<f64>::zeros((5, 6));
    let mut r2b = Array2::<f64>::zeros((4, 5));
    let n = allocations(|| {
        kernels::sum_axis(&mut r2, c.view(), 0).unwrap();
        kernels::sum_axis(&mut r2b, c.view(), 2).unwrap();
        kernels::max_axis(&mut r2, c.view(), 0, "max").unwrap();
        kernels::min_axis(&mut r2b, c.view(), 2, "min").unwrap();
        kernels::mean_axis(&mut r2, c.view(), 0).unwrap();
        kernels::sum_axis(&mut out0, b.view(), 0).unwrap();
        let _ = kernels::sum_all(c.view());
        let _ = kernels::mean_all(c.slice(s![.., ..;2, ..]));
        let _ = kernels::max_all(c.view(), "max").unwrap();
        let _ = kernels::min_all(c.t(), "min").unwrap();
    });
    assert_eq!(n, 0, "reductions allocated");

    // Indexing, assignment and the scan loop's checks.
    let mut ar = Array1::<i64>::zeros(5);
    let mut copy = Array2::<f64>::zeros((8, 8));
    let n = allocations(|| {
        let row = kernels::index(a.view(), -1, "a").unwrap();
        let _ = kernels::scalar(kernels::index(row, 2, "a[-1]").unwrap());
        let _ = kernels::slice(a.view(), Some(-3), None);
        kernels::copy_into(&mut copy, a.view());
        kernels::assign(
            kernels::index_mut(copy.view_mut(), 0, "copy").unwrap(),
            b.view(),
            "copy[0] = b",
        )
        .unwrap();
        kernels::assign_add(
            kernels::slice_mut(copy.view_mut(), Some(1), Some(3)),
            aview0(&two),
            "copy[1:3] += 2",
        )
        .unwrap();
        kernels::fill_like(&mut out2, a.view(), 0.0);
        kernels::arange(&mut ar, 5, "arange(5)").unwrap();
        let _ = kernels::sequence_steps("u", 10, &[-2, 0]).unwrap();
        let _ = kernels::check_n_steps(4).unwrap();
        kernels::check_steps_available("u", 10, &[-2, 0], 8).unwrap();
        kernels::check_step_shape("`h0`", "h", &[8], out1.shape()).unwrap();
        let _ = kernels::check_initial_rows("x0", 3, &[-3, -1]).unwrap();
    });
    assert_eq!(n, 0, "indexing or loop checks allocated");

    // And the counter does work: a shape change reallocates.
    let n = allocations(|| kernels::ensure_shape(&mut out1, Ix1(9)));
    assert_eq!(n, 1);
}
