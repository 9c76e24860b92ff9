//! Kernels must not allocate when their output buffer already has the right shape: this
//! is what lets generated loops run without touching the allocator after the first step.
//!
//! A counting global allocator records every allocation. Everything runs in one `#[test]`
//! so no other test thread allocates while a section is being measured.

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

fn ramp(rows: usize, cols: usize) -> Array2<f64> {
    Array::from_shape_fn((rows, cols), |(i, j)| ((i * cols + j) % 7) as f64 - 3.0)
}

#[test]
fn kernels_do_not_allocate_with_ready_buffers() {
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

    // Small matrix products use the direct loop, for every dtype and layout.
    let ai = a.mapv(|x| x as i32);
    let mut outi = Array2::<i32>::zeros((8, 8));
    let a32 = a.mapv(|x| x as f32);
    let mut out32 = Array2::<f32>::zeros((8, 8));
    let n = allocations(|| {
        kernels::dot_mm(&mut out2, a.view(), a.view(), "a @ a").unwrap();
        kernels::dot_mm(&mut out2, a.t(), a.slice(s![..;-1, ..]), "a.T @ a").unwrap();
        kernels::dot_mm(&mut outi, ai.view(), ai.t(), "a @ a.T").unwrap();
        kernels::dot_mm(&mut out32, a32.view(), a32.view(), "a @ a").unwrap();
        kernels::dot_mv(&mut out1, a.view(), b.view(), "a @ b").unwrap();
        kernels::dot_vm(&mut out1, b.view(), a.t(), "b @ a.T").unwrap();
        kernels::dot_vv(b.view(), b.view(), "b @ b").unwrap();
    });
    assert_eq!(n, 0, "small dot products allocated");

    // Products with a vector operand never go through matrixmultiply, at any size.
    let big = ramp(300, 400);
    let x300 = Array1::from_iter((0..300).map(f64::from));
    let x400 = Array1::from_iter((0..400).map(f64::from));
    let mut y400 = Array1::<f64>::zeros(400);
    let mut y300 = Array1::<f64>::zeros(300);
    let n = allocations(|| {
        kernels::dot_vm(&mut y400, x300.view(), big.view(), "x @ W").unwrap();
        kernels::dot_mv(&mut y300, big.view(), x400.view(), "W @ x").unwrap();
        kernels::dot_vm(&mut y300, x400.view(), big.t(), "x @ W.T").unwrap();
        kernels::dot_mv(&mut y400, big.t(), x300.view(), "W.T @ x").unwrap();
    });
    assert_eq!(n, 0, "large matrix-vector products allocated");

    // Large matrix products go through matrixmultiply, which allocates its packing buffer
    // on every call (`make_packing_buffer` in its gemm.rs; it has no API to pass one in),
    // whether or not it uses threads. Its first calls also start the thread pool and set up
    // per-thread scratch on the workers. Observed here, with MATMUL_NUM_THREADS unset, 1, 2
    // and 4: after a warm-up, exactly one allocation per call at every size. So this
    // section checks that bound (one allocation per call, not per element, row or block)
    // instead of zero; products below `GEMM_MIN_WORK` take the zero-allocation loop above.
    let m1 = ramp(64, 64);
    let m2 = ramp(200, 150);
    let m3 = ramp(150, 120);
    let m4 = ramp(400, 400);
    let mut c1 = Array2::<f64>::zeros((64, 64));
    let mut c2 = Array2::<f64>::zeros((200, 120));
    let mut c4 = Array2::<f64>::zeros((400, 400));
    let gemm_calls = |c1: &mut Array2<f64>, c2: &mut Array2<f64>, c4: &mut Array2<f64>| {
        [
            allocations(|| kernels::dot_mm(c1, m1.view(), m1.t(), "m1 @ m1.T").unwrap()),
            allocations(|| kernels::dot_mm(c2, m2.view(), m3.view(), "m2 @ m3").unwrap()),
            allocations(|| kernels::dot_mm(c4, m4.view(), m4.view(), "m4 @ m4").unwrap()),
        ]
    };
    let warm_up = gemm_calls(&mut c1, &mut c2, &mut c4);
    for _ in 0..3 {
        let counts = gemm_calls(&mut c1, &mut c2, &mut c4);
        assert!(
            counts.iter().all(|&c| c <= 1),
            "gemm allocations per call: {counts:?} (warm-up: {warm_up:?})"
        );
    }

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
        kernels::arange(&mut ar, 5).unwrap();
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
