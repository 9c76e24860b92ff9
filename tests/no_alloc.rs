//! A generated scan loop allocates nothing per step: every buffer is declared before the
//! loop and reused, so the number of heap allocations of a call does not depend on the
//! number of steps. A counting global allocator measures it: the same compiled function
//! runs with 10 and with 1000 steps and both calls must allocate exactly as often.
//!
//! Only allocations made by the measuring thread are counted (the test harness allocates
//! on its own threads at any time), and a global lock lets one measurement run at a time.
//!
//! With the matrixmultiply backend (a cargo feature of scan-runtime) the count may grow with
//! the chunks of steps a product before or after the loop is made in, never per step
//! (docs/SEMANTICS.md).
//!
//! Threads (`scan_runtime::set_num_threads`): at 1 thread, and for every product too small
//! to be split, a step allocates nothing. A matrix product split over threads (at least
//! `scan_runtime::threads::PAR_MIN_WORK` multiply-adds) runs its parts on rayon's workers,
//! each packing into its own buffer (made once per thread), through `rayon::join`, whose
//! only allocation is a new block of rayon's queue of injected jobs once every 63 split
//! products, on the calling thread: so there "no allocation per step" becomes "at most one
//! allocation per 63 split products", which `matrix_matrix_steps_at_1_and_2_threads` pins.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use scan_runtime::prelude::*;

mod common;
use common::{matrix, second_opinion, Value};

struct CountingAllocator;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread's allocations are being counted. Const-initialized and without
    /// a destructor, so reading it from inside the allocator never allocates.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn record() {
    if COUNTING.with(Cell::get) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the
// only addition is a counter update, which neither allocates nor touches the memory.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record();
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record();
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record();
        // SAFETY: `ptr` was allocated by `System` (through this allocator) with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` (through this allocator) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// One measurement at a time.
static LOCK: Mutex<()> = Mutex::new(());

/// The number of allocations (including reallocations) `f` makes on this thread. The
/// result is dropped inside the window, which only frees.
fn allocations<T>(f: impl FnOnce() -> T) -> usize {
    ALLOCATIONS.store(0, Ordering::SeqCst);
    COUNTING.with(|c| c.set(true));
    let result = f();
    COUNTING.with(|c| c.set(false));
    let n = ALLOCATIONS.load(Ordering::SeqCst);
    drop(result);
    n
}

/// Warms up with `make(3)()`, then counts the allocations of `make(10)()` and
/// `make(1000)()` and checks they are equal. `make` gets the number of steps and builds
/// the inputs outside the counted window; only the closure it returns is measured.
fn assert_allocations_independent_of_steps<C, T>(case: &str, make: impl Fn(usize) -> C)
where
    C: FnOnce() -> T,
{
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // Warm-up: lazily initialized statics (thread-locals, std internals) allocate once.
    // The largest call too: a matrix product large enough for faer's packed kernels
    // (here the input projection hoisted before the loop) makes its thread's packing
    // buffer the first time, once per thread.
    let _ = allocations(make(3));
    let _ = allocations(make(1000));
    let few_call = make(10);
    let few = allocations(few_call);
    let many_call = make(1000);
    let many = allocations(many_call);
    // The result is returned in a fresh array, so a call that counted nothing would mean
    // the counter was not active.
    assert!(few > 0, "{case}: no allocation counted at all");
    if scan_runtime::kernels::dot::GEMM_BACKEND == "matrixmultiply" {
        // docs/SEMANTICS.md's exception: matrixmultiply allocates its packing buffer in
        // every product of at least 32³ multiply-adds, and the products made before or
        // after a loop a chunk of steps at a time grow in number with the steps. Never one
        // per step: the 990 more steps may add at most one allocation per 16 of them.
        assert!(
            many >= few && many - few <= 990 / 16,
            "{case}: {few} allocations with 10 steps but {many} with 1000 steps \
             (matrixmultiply backend)"
        );
        return;
    }
    assert_eq!(
        few,
        many,
        "{case}: {few} allocations with 10 steps but {many} with 1000 steps \
         ({:.3} per extra step)",
        (many as f64 - few as f64) / 990.0
    );
}

mod programs {
    scan_tests::program! {
        /// x_t = tanh(x_{t-1} * a + u_t).
        pub fn elementwise(u: ArrayView2<f64>, x0: ArrayView1<f64>, a: ArrayView1<f64>) -> Result<Array2<f64>> {
            let xs = scan(|u_t, x_tm1, a| tanh(x_tm1 * a + u_t), sequences = u, outputs_info = x0, non_sequences = a);
            Ok(xs)
        }

        /// The same recurrence without a sequence, driven by n_steps.
        pub fn elementwise_n(x0: ArrayView1<f64>, a: ArrayView1<f64>, k: usize) -> Result<Array2<f64>> {
            let xs = scan(|x_tm1, a| tanh(x_tm1 * a + 0.5), outputs_info = x0, non_sequences = a, n_steps = k);
            Ok(xs)
        }

        /// h_t = tanh(h_{t-1} W + x_t U).
        pub fn rnn(x: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>, u: ArrayView2<f64>) -> Result<Array2<f64>> {
            let hs = scan(|x_t, h, w, u| tanh(h.dot(w) + x_t.dot(u)), sequences = x, outputs_info = h0, non_sequences = [w, u]);
            Ok(hs)
        }

        /// The scan tutorial's RNN (scan-bench's seed_taps): its two recurrent products are
        /// one product by the matrices stacked before the loop (stack_dots).
        #[allow(clippy::too_many_arguments)]
        pub fn seed_taps(u: ArrayView2<f64>, x0: ArrayView2<f64>, y0: ArrayView1<f64>, w: ArrayView2<f64>,
                         w_in_1: ArrayView2<f64>, w_in_2: ArrayView2<f64>, w_feedback: ArrayView2<f64>,
                         w_out: ArrayView2<f64>) -> Result<(Array2<f64>, Array2<f64>)> {
            let (x_vals, y_vals) = scan(
                |u_tm4, u_t, x_tm3, x_tm1, y_tm1, w, w_in_1, w_in_2, w_feedback, w_out| {
                    let x_t = tanh(x_tm1.dot(w) + u_t.dot(w_in_1) + u_tm4.dot(w_in_2) + y_tm1.dot(w_feedback));
                    (x_t, x_tm3.dot(w_out))
                },
                sequences = [taps(u, [-4, 0])],
                outputs_info = [taps(x0, [-3, -1]), y0],
                non_sequences = [w, w_in_1, w_in_2, w_feedback, w_out],
                strict = true,
            );
            Ok((x_vals, y_vals))
        }

        /// The gradient of an RNN's summed states with respect to its weights and inputs:
        /// the forward loop, then the backward one (grad/scan.rs), each reusing its step's
        /// buffers.
        #[allow(clippy::type_complexity)]
        pub fn rnn_grad(x: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>, u: ArrayView2<f64>) -> Result<(Array2<f64>, Array2<f64>, Array2<f64>)> {
            let hs = scan(|x_t, h, w, u| tanh(h.dot(w) + x_t.dot(u)), sequences = x, outputs_info = h0, non_sequences = [w, u]);
            let (gw, gu, gx) = grad(sum(hs), [w, u, x]);
            Ok((gw, gu, gx))
        }

        /// scan-bench's lstm_grad: the backward step writes each gate's adjoint into its
        /// columns of the gate block (join_slices), its plan and buffers kept from step
        /// to step.
        pub fn lstm_grad(x: ArrayView3<f32>, w_x: ArrayView2<f32>, w_h: ArrayView2<f32>, b: ArrayView1<f32>)
            -> Result<(Array2<f32>, Array2<f32>, Array1<f32>)>
        {
            let zero = zeros((x.shape[1], w_h.shape[0])) as f32;
            let (h, c) = scan(
                |x_t, h_tm1, c_tm1, w_x, w_h, b| {
                    let z = x_t.dot(w_x) + h_tm1.dot(w_h) + b;
                    let n = h_tm1.shape[1];
                    let i = sigmoid(z[(.., ..n)]);
                    let f = sigmoid(z[(.., n..2 * n)]);
                    let g = tanh(z[(.., 2 * n..3 * n)]);
                    let o = sigmoid(z[(.., 3 * n..)]);
                    let c_t = f * c_tm1 + i * g;
                    (o * tanh(c_t), c_t)
                },
                sequences = x,
                outputs_info = [zero, zero],
                non_sequences = [w_x, w_h, b],
            );
            let (g_w_x, g_w_h, g_b) = grad(sum(h), [w_x, w_h, b]);
            Ok((g_w_x, g_w_h, g_b))
        }

        /// A state made of two blocks of zeros incremented (join_slices): written in place
        /// when they tile it, else zeros and additions into the same buffers.
        pub fn blocks(a: ArrayView3<f64>, s0: ArrayView2<f64>, k: usize) -> Result<Array3<f64>> {
            let n = k as i64;
            let states = scan(
                |a_t, s| {
                    let z = zeros_like(s);
                    let left = inc_subtensor(z[(.., ..n)], tanh(a_t + s[(.., ..n)]));
                    inc_subtensor(left[(.., n..2 * n)], cos(s[(.., ..1)]))
                },
                sequences = a,
                outputs_info = s0,
            );
            Ok(states)
        }

        /// The same with checkpoints every 6 steps: the checkpoint pass, the tail and the
        /// backward pass over segments each run nested loops (a segment recomputed, then
        /// its backward pass), whose buffers are made once and reused segment after segment.
        #[allow(clippy::type_complexity)]
        pub fn rnn_grad_checkpoints(x: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>, u: ArrayView2<f64>) -> Result<(Array2<f64>, Array2<f64>, Array2<f64>)> {
            let hs = scan(|x_t, h, w, u| tanh(h.dot(w) + x_t.dot(u)), sequences = x, outputs_info = h0, non_sequences = [w, u], checkpoints = 6);
            let (gw, gu, gx) = grad(sum(hs[-1]), [w, u, x]);
            Ok((gw, gu, gx))
        }

        /// A batch RNN: matrix·matrix products in the step (h is [B, H]).
        pub fn batch_rnn(x: ArrayView3<f32>, h0: ArrayView2<f32>, w: ArrayView2<f32>, u: ArrayView2<f32>) -> Result<Array3<f32>> {
            let hs = scan(|x_t, h, w, u| tanh(h.dot(w) + x_t.dot(u)), sequences = x, outputs_info = h0, non_sequences = [w, u]);
            Ok(hs)
        }

        /// A MITSOT output of vector rows: x_t = 0.5 x_{t-1} - 0.25 x_{t-2} + a.
        pub fn mitsot(x0: ArrayView2<f64>, a: ArrayView1<f64>, k: usize) -> Result<Array2<f64>> {
            let xs = scan(
                |x_tm2, x_tm1, a| x_tm1 * 0.5 - x_tm2 * 0.25 + a,
                outputs_info = taps(x0, [-2, -1]),
                non_sequences = a,
                n_steps = k,
            );
            Ok(xs)
        }

        /// A NITSOT output of vector rows: y_t = tanh(u_t W).
        pub fn nitsot(u: ArrayView2<f64>, w: ArrayView2<f64>) -> Result<Array2<f64>> {
            let ys = scan(|u_t, w| tanh(u_t.dot(w)), outputs_info = None, sequences = u, non_sequences = w);
            Ok(ys)
        }

        /// A noisy recurrence whose key is carried: each step draws a vector of normals
        /// and of Bernoulli coins into buffers made on the first step.
        pub fn noisy(x0: ArrayView1<f64>, seed: i64, k: usize) -> Result<Array2<f64>> {
            let (xs, _) = scan(
                |x_tm1, key| {
                    let (key, z) = normal(key, x_tm1.len());
                    let (key, keep) = bernoulli(key, sigmoid(x_tm1));
                    (where_(keep, x_tm1 * 0.9 + z * 0.1, x_tm1), key)
                },
                outputs_info = [x0, rng_key(seed)],
                n_steps = k,
            );
            Ok(xs)
        }

        /// A NITSOT output of scalars, with a sequence tap window.
        pub fn nitsot_scalar(u: ArrayView1<f64>) -> Result<Array1<f64>> {
            let ys = scan(|u_tm2, u_t| u_t - u_tm2, sequences = taps(u, [-2, 0]));
            Ok(ys)
        }

        /// A scan inside each step of another: every row's discounted running sum,
        /// mixed into the outer state.
        pub fn nested(m: ArrayView2<f64>, h0: ArrayView1<f64>) -> Result<Array2<f64>> {
            let hs = scan(
                |row, h_tm1| {
                    let sums = scan(|x, acc| acc * 0.5 + x, sequences = row, outputs_info = 0.0);
                    tanh(h_tm1 * 0.5 + sums)
                },
                sequences = m,
                outputs_info = h0,
            );
            Ok(hs)
        }

        /// Linear algebra in the step (a Riccati recursion): Cholesky, solves with vector
        /// and matrix right-hand sides, a triangular solve and a log-determinant, their
        /// workspaces made before the loop.
        pub fn riccati(u: ArrayView2<f64>, p0: ArrayView2<f64>, q: ArrayView2<f64>, r: ArrayView2<f64>)
            -> Result<(Array3<f64>, Array2<f64>, Array1<f64>)>
        {
            let (ps, xs, lds) = scan(
                |u_t, p, q, r| {
                    let s = p + r;
                    let l = cholesky(s);
                    let x = cho_solve((l, true), u_t) + solve_triangular(l, u_t, lower = true);
                    let (_, ld) = slogdet(s);
                    (q + p - dot(p, solve(s, p, assume_a = "pos")), x, ld)
                },
                sequences = u,
                outputs_info = [p0, None, None],
                non_sequences = [q, r],
            );
            Ok((ps, xs, lds))
        }

        /// Factorisations with several results in the step (one node, read through its
        /// parts) and singular values: eigh of a symmetric matrix, qr (each mode), svdvals
        /// and svd (thin and full) of a tall one.
        pub fn spectral(m: ArrayView3<f64>, t: ArrayView3<f64>)
            -> Result<(Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>)>
        {
            Ok(scan(
                |m_t, t_t| {
                    let (w, v) = eigh(m_t + m_t.t());
                    let (q, r) = qr(t_t);
                    let (qc, rc) = qr(t_t, mode = "complete");
                    let (u, s, vh) = svd(t_t, full_matrices = false);
                    let (uf, _, vhf) = svd(t_t);
                    let more = qc.sum() + rc.sum() + qr(t_t, mode = "r").sum() + u.sum() + s.sum()
                        + vh.sum() + uf.sum() + vhf.sum();
                    (w + v.sum(), q.sum() + r.sum(), svdvals(t_t), more)
                },
                sequences = [m, t],
                outputs_info = [None, None, None, None],
            ))
        }

        /// A nested scan whose inner loop runs over a vector state (a SITSOT of rank 1).
        pub fn nested_vector(m: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>) -> Result<Array2<f64>> {
            let hs = scan(
                |row, h_tm1, w| {
                    let inner = scan(|g, w| tanh(g.dot(w)), outputs_info = h_tm1 + row, non_sequences = w, n_steps = 3);
                    inner[-1]
                },
                sequences = m,
                outputs_info = h0,
                non_sequences = w,
            );
            Ok(hs)
        }
    }
}

#[test]
fn elementwise_recurrence_over_a_sequence() {
    let x0 = Array1::from_elem(4, 0.1);
    let a = Array1::from_elem(4, 0.9);
    assert_allocations_independent_of_steps("elementwise over u", |n| {
        let u = matrix(n, 4, 1);
        let (x0, a) = (x0.clone(), a.clone());
        move || {
            let xs = programs::elementwise(u.view(), x0.view(), a.view()).unwrap();
            assert_eq!(xs.dim(), (n, 4));
            xs
        }
    });
}

#[test]
fn elementwise_recurrence_with_n_steps() {
    let x0 = Array1::from_elem(4, 0.1);
    let a = Array1::from_elem(4, 0.9);
    assert_allocations_independent_of_steps("elementwise with n_steps", |n| {
        let (x0, a) = (x0.clone(), a.clone());
        move || {
            let xs = programs::elementwise_n(x0.view(), a.view(), n).unwrap();
            assert_eq!(xs.dim(), (n, 4));
            xs
        }
    });
}

#[test]
fn random_draws_in_a_step() {
    let x0 = Array1::from_elem(6, 0.3);
    assert_allocations_independent_of_steps("normal and bernoulli draws", |n| {
        let x0 = x0.clone();
        move || {
            let xs = programs::noisy(x0.view(), 5, n).unwrap();
            assert_eq!(xs.dim(), (n, 6));
            xs
        }
    });
}

#[test]
fn matrix_vector_rnn_step() {
    let (n_in, n_h) = (3, 5);
    let h0 = Array1::zeros(n_h);
    let w = matrix(n_h, n_h, 2);
    let u = matrix(n_in, n_h, 3);
    assert_allocations_independent_of_steps("rnn", |n| {
        let x = matrix(n, n_in, 4);
        let (h0, w, u) = (h0.clone(), w.clone(), u.clone());
        move || {
            let hs = programs::rnn(x.view(), h0.view(), w.view(), u.view()).unwrap();
            assert_eq!(hs.dim(), (n, n_h));
            hs
        }
    });
}

/// The scan tutorial's RNN: the stacked product copies its left operands into a buffer of
/// its own, made at the first step. At n_x = 160, n_y = 48 the stacked matrix (208 x 160)
/// is packed before the loop; at 1 column of feedback the step adds the two products
/// (their sum broadcasts) into buffers kept from step to step too.
#[test]
fn the_tutorial_rnn_with_stacked_products() {
    let (n_u, n_y) = (8, 48);
    for (n_x, feedback_columns) in [(160, 160), (12, 1)] {
        let x0 = matrix(3, n_x, 1);
        let y0 = matrix(1, n_y, 2).row(0).to_owned();
        let weights = [
            matrix(n_x, n_x, 3),
            matrix(n_u, n_x, 4),
            matrix(n_u, n_x, 5),
            matrix(n_y, feedback_columns, 6),
            matrix(n_x, n_y, 7),
        ];
        let case = format!("seed_taps n_x = {n_x}, feedback of {feedback_columns} columns");
        assert_allocations_independent_of_steps(&case, |n| {
            let u = matrix(n + 4, n_u, 8);
            let (x0, y0, [w, w1, w2, wf, wo]) = (x0.clone(), y0.clone(), weights.clone());
            move || {
                let (xs, ys) = programs::seed_taps(
                    u.view(),
                    x0.view(),
                    y0.view(),
                    w.view(),
                    w1.view(),
                    w2.view(),
                    wf.view(),
                    wo.view(),
                )
                .unwrap();
                assert_eq!((xs.dim(), ys.dim()), ((n, n_x), (n, n_y)));
                (xs, ys)
            }
        });
    }
}

/// Backpropagation through time allocates per call, not per step: the backward scan's
/// step keeps its buffers from step to step as the forward one does.
#[test]
fn a_gradient_through_a_scan() {
    let (n_in, n_h) = (3, 4);
    let h0 = Array1::zeros(n_h);
    let w = matrix(n_h, n_h, 2) * 0.5;
    let u = matrix(n_in, n_h, 3);
    assert_allocations_independent_of_steps("rnn_grad", |n| {
        let x = matrix(n, n_in, 4);
        let (h0, w, u) = (h0.clone(), w.clone(), u.clone());
        move || {
            let g = programs::rnn_grad(x.view(), h0.view(), w.view(), u.view()).unwrap();
            assert_eq!(g.2.dim(), (n, n_in));
            g
        }
    });
}

/// An LSTM's gradient: the backward step's gate block is joined from the gates' adjoints,
/// each written into its columns.
#[test]
fn an_lstm_gradient_with_its_gate_block_joined() {
    let (batch, n_in, n) = (2, 3, 4);
    let f32s = |m: scan_runtime::ndarray::Array2<f64>| m.mapv(|v| v as f32);
    let w_x = f32s(matrix(n_in, 4 * n, 2));
    let w_h = f32s(matrix(n, 4 * n, 3));
    let b = f32s(matrix(1, 4 * n, 4)).row(0).to_owned();
    assert_allocations_independent_of_steps("lstm_grad", |steps| {
        let x = Array3::from_shape_fn((steps, batch, n_in), |(t, i, j)| {
            ((t * 7 + i * 3 + j) as f32 * 0.3).sin()
        });
        let (w_x, w_h, b) = (w_x.clone(), w_h.clone(), b.clone());
        move || {
            let g = programs::lstm_grad(x.view(), w_x.view(), w_h.view(), b.view()).unwrap();
            assert_eq!(g.1.dim(), (n, 4 * n));
            g
        }
    });
}

/// Blocks of zeros incremented: each written in place (the blocks tile the state), one
/// copied broadcast (an increment of one column for a block of 3), zeros and additions (a
/// state wider than the blocks).
#[test]
fn blocks_of_zeros_incremented() {
    for (cols, k) in [(6, 3), (7, 3), (2, 1)] {
        let s0 = matrix(3, cols, 1);
        assert_allocations_independent_of_steps(&format!("blocks of {cols}, k = {k}"), |steps| {
            let a = Array3::from_shape_fn((steps, 3, k), |(t, i, j)| {
                ((t * 5 + i * 2 + j) as f64 * 0.4).cos()
            });
            let s0 = s0.clone();
            move || {
                let states = programs::blocks(a.view(), s0.view(), k).unwrap();
                assert_eq!(states.dim(), (steps, 3, cols));
                states
            }
        });
    }
}

/// The same with checkpoints: per call, not per step, and not per segment either. 10 and
/// 1000 steps are 1 and 166 segments of 6 with the same 4 steps after them, so that the
/// loop over those last steps sizes its buffers in both calls alike.
#[test]
fn a_checkpointed_gradient_through_a_scan() {
    let (n_in, n_h) = (3, 4);
    let h0 = Array1::zeros(n_h);
    let w = matrix(n_h, n_h, 2) * 0.5;
    let u = matrix(n_in, n_h, 3);
    assert_eq!((10 % 6, 1000 % 6), (4, 4));
    assert_allocations_independent_of_steps("rnn_grad_checkpoints", |n| {
        let x = matrix(n, n_in, 4);
        let (h0, w, u) = (h0.clone(), w.clone(), u.clone());
        move || {
            let g =
                programs::rnn_grad_checkpoints(x.view(), h0.view(), w.view(), u.view()).unwrap();
            assert_eq!(g.2.dim(), (n, n_in));
            g
        }
    });
    let x = matrix(9, n_in, 4);
    let g = programs::rnn_grad_checkpoints(x.view(), h0.view(), w.view(), u.view()).unwrap();
    second_opinion(
        programs::SOURCE,
        "rnn_grad_checkpoints",
        vec![x.into(), h0.into(), w.into(), u.into()],
        vec![g.0.into(), g.1.into(), g.2.into()],
    );
}

#[test]
fn cholesky_and_solves_in_a_step() {
    let n_x = 3;
    let q = Array2::eye(n_x) * 0.1;
    let r = Array2::eye(n_x) * 0.5;
    let p0 = Array2::eye(n_x);
    assert_allocations_independent_of_steps("riccati", |n| {
        let u = matrix(n, n_x, 9);
        let (p0, q, r) = (p0.clone(), q.clone(), r.clone());
        move || {
            let out = programs::riccati(u.view(), p0.view(), q.view(), r.view()).unwrap();
            assert_eq!(out.1.dim(), (n, n_x));
            out
        }
    });
    let u = matrix(6, n_x, 9);
    let (ps, xs, lds) = programs::riccati(u.view(), p0.view(), q.view(), r.view()).unwrap();
    second_opinion(
        programs::SOURCE,
        "riccati",
        vec![u.into(), p0.into(), q.into(), r.into()],
        vec![ps.into(), xs.into(), lds.into()],
    );
}

#[test]
fn eigh_qr_and_svd_in_a_step() {
    // Pseudo-random elements (a matrix of sines has a low rank: repeated eigenvalues,
    // whose eigenvectors are not unique, and columns whose reflections are rounding).
    let stack = |n: usize, rows: usize, cols: usize, seed: usize| {
        Array3::from_shape_fn((n, rows, cols), |(t, i, j)| {
            let k = t * rows * cols + i * cols + j + seed;
            ((k * 7919 + 13) % 1009) as f64 / 1009.0 - 0.5
        })
    };
    assert_allocations_independent_of_steps("spectral", |n| {
        let (m, t) = (stack(n, 6, 6, 1), stack(n, 7, 4, 2));
        move || {
            let out = programs::spectral(m.view(), t.view()).unwrap();
            assert_eq!(out.2.dim(), (n, 4));
            out
        }
    });
    let (m, t) = (stack(5, 6, 6, 1), stack(5, 7, 4, 2));
    let (w, s, sv, more) = programs::spectral(m.view(), t.view()).unwrap();
    second_opinion(
        programs::SOURCE,
        "spectral",
        vec![m.into(), t.into()],
        vec![w.into(), s.into(), sv.into(), more.into()],
    );
}

#[test]
fn mitsot_output() {
    let x0 = matrix(2, 4, 5);
    let a = Array1::from_elem(4, 0.1);
    assert_allocations_independent_of_steps("mitsot", |n| {
        let (x0, a) = (x0.clone(), a.clone());
        move || {
            let xs = programs::mitsot(x0.view(), a.view(), n).unwrap();
            assert_eq!(xs.dim(), (n, 4));
            xs
        }
    });
}

#[test]
fn nitsot_output() {
    let w = matrix(3, 4, 6);
    assert_allocations_independent_of_steps("nitsot of vectors", |n| {
        let u = matrix(n, 3, 7);
        let w = w.clone();
        move || {
            let ys = programs::nitsot(u.view(), w.view()).unwrap();
            assert_eq!(ys.dim(), (n, 4));
            ys
        }
    });
    assert_allocations_independent_of_steps("nitsot of scalars", |n| {
        // Taps [-2, 0] take 2 rows: n + 2 rows give n steps.
        let u = Array1::from_iter((0..n + 2).map(|i| i as f64));
        move || {
            let ys = programs::nitsot_scalar(u.view()).unwrap();
            assert_eq!(ys.len(), n);
            ys
        }
    });
}

#[test]
fn nested_scan() {
    // The outer loop runs 10 or 1000 steps; the inner one 6 steps inside each of them.
    let h0 = Array1::zeros(6);
    assert_allocations_independent_of_steps("nested scalar inner scan", |n| {
        let m = matrix(n, 6, 8);
        let h0 = h0.clone();
        move || {
            let hs = programs::nested(m.view(), h0.view()).unwrap();
            assert_eq!(hs.dim(), (n, 6));
            hs
        }
    });
    let w = matrix(6, 6, 9);
    assert_allocations_independent_of_steps("nested vector inner scan", |n| {
        let m = matrix(n, 6, 10);
        let (h0, w) = (h0.clone(), w.clone());
        move || {
            let hs = programs::nested_vector(m.view(), h0.view(), w.view()).unwrap();
            assert_eq!(hs.dim(), (n, 6));
            hs
        }
    });
}

/// Allocations per extra step of `make(steps)()` between `few` and `many` steps (after a
/// warm-up).
fn allocations_per_step<C, T>(case: &str, few: usize, many: usize, make: impl Fn(usize) -> C) -> f64
where
    C: FnOnce() -> T,
{
    let _ = allocations(make(3));
    let _ = allocations(make(many));
    let few_count = allocations(make(few));
    let many_count = allocations(make(many));
    assert!(few_count > 0, "{case}: no allocation counted at all");
    let extra = many_count.checked_sub(few_count).unwrap_or_else(|| {
        panic!("{case}: {few_count} allocations with {few} steps, {many_count} with {many}")
    });
    extra as f64 / (many - few) as f64
}

#[test]
fn matrix_matrix_steps_at_1_and_2_threads() {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let f32_matrix = |r, c, seed| matrix(r, c, seed).mapv(|v| v as f32);
    // (batch, hidden): a step product of 4 x 64 x 64 is never split; 16 x 1024 x 1024 is
    // PAR_MIN_WORK, split when the setting allows.
    for (batch, hidden, split) in [(4usize, 64usize, false), (16, 1024, true)] {
        let n_in = 3;
        assert_eq!(
            batch * hidden * hidden >= scan_runtime::threads::PAR_MIN_WORK,
            split
        );
        let h0 = Array2::<f32>::zeros((batch, hidden));
        let w = f32_matrix(hidden, hidden, 11) * 0.1;
        let u = f32_matrix(n_in, hidden, 12);
        for threads in [1, 2] {
            scan_runtime::set_num_threads(threads);
            let case = format!("batch rnn {batch}x{hidden}, {threads} threads");
            let per_step = allocations_per_step(&case, 10, 40, |n| {
                let x = Array3::from_shape_fn((n, batch, n_in), |(t, b, i)| {
                    ((t * 7 + b * 3 + i) % 5) as f32 - 2.0
                });
                let (h0, w, u) = (h0.clone(), w.clone(), u.clone());
                move || {
                    let hs = programs::batch_rnn(x.view(), h0.view(), w.view(), u.view()).unwrap();
                    assert_eq!(hs.dim(), (n, batch, hidden));
                    hs
                }
            });
            // The product by the non-sequence `w` runs on `w` packed before the loop
            // (`kernels::PackedMatrix`, whatever the GEMM backend), its scratch reused.
            // rayon's queue of injected jobs grows by a block every 63 split products:
            // over the 30 extra steps measured, 0 or 1 allocation.
            if split && threads > 1 {
                assert!(per_step * 30.0 <= 1.0, "{case}: {per_step} per step")
            } else {
                assert_eq!(per_step, 0.0, "{case}: {per_step} allocations per step")
            }
        }
    }
    scan_runtime::set_num_threads(0);
}

#[test]
fn the_counter_sees_allocations() {
    // The measurement is not vacuous: a Vec per step is counted per step.
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let per_step = |n: usize| {
        allocations(|| {
            (0..n)
                .map(|i| std::hint::black_box(vec![i; 4]).len())
                .sum::<usize>()
        })
    };
    assert_eq!(per_step(1000) - per_step(10), 990);
}

/// The programs measured here also agree with the reference evaluator.
#[test]
fn programs_agree_with_the_evaluator() {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let u = matrix(7, 4, 1);
    let x0 = Array1::from_elem(4, 0.1);
    let a = Array1::from_elem(4, 0.9);
    let w = matrix(4, 4, 2);
    let uu = matrix(4, 4, 3);
    let init2 = matrix(2, 4, 4);
    let v = Array1::from_iter((0..9).map(|i| (i * i) as f64));
    let src = programs::SOURCE;
    let got = programs::elementwise(u.view(), x0.view(), a.view()).unwrap();
    let args = vec![u.clone().into(), x0.clone().into(), a.clone().into()];
    second_opinion(src, "elementwise", args, vec![got.into()]);
    let got = programs::elementwise_n(x0.view(), a.view(), 5).unwrap();
    let args = vec![x0.clone().into(), a.clone().into(), Value::from(5i64)];
    second_opinion(src, "elementwise_n", args, vec![got.into()]);
    let got = programs::rnn(u.view(), x0.view(), w.view(), uu.view()).unwrap();
    let args = vec![
        u.clone().into(),
        x0.clone().into(),
        w.clone().into(),
        uu.into(),
    ];
    second_opinion(src, "rnn", args, vec![got.into()]);
    let got = programs::mitsot(init2.view(), a.view(), 6).unwrap();
    let args = vec![init2.into(), a.clone().into(), Value::from(6i64)];
    second_opinion(src, "mitsot", args, vec![got.into()]);
    let got = programs::nitsot(u.view(), w.view()).unwrap();
    let args = vec![u.clone().into(), w.clone().into()];
    second_opinion(src, "nitsot", args, vec![got.into()]);
    let got = programs::noisy(x0.view(), 5, 9).unwrap();
    let args = vec![x0.clone().into(), Value::from(5i64), Value::from(9i64)];
    second_opinion(src, "noisy", args, vec![got.into()]);
    let got = programs::nitsot_scalar(v.view()).unwrap();
    assert_eq!(got.to_vec(), vec![4., 8., 12., 16., 20., 24., 28.]);
    second_opinion(src, "nitsot_scalar", vec![v.into()], vec![got.into()]);
    let got = programs::nested(u.view(), x0.view()).unwrap();
    let args = vec![u.clone().into(), x0.clone().into()];
    second_opinion(src, "nested", args, vec![got.into()]);
    let got = programs::nested_vector(u.view(), x0.view(), w.view()).unwrap();
    let args = vec![u.into(), x0.into(), w.into()];
    second_opinion(src, "nested_vector", args, vec![got.into()]);
    for (cols, k) in [(6, 3), (7, 3)] {
        let (a, s0) = (Array3::from_elem((4, 3, k), 0.25), matrix(3, cols, 5));
        let got = programs::blocks(a.view(), s0.view(), k).unwrap();
        let args = vec![a.into(), s0.into(), Value::from(k as i64)];
        second_opinion(src, "blocks", args, vec![got.into()]);
    }
}
