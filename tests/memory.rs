//! What the save-mem rewrite buys, measured: peak heap bytes of a call, counted by a
//! global allocator (only on the measuring thread; one measurement at a time). An output
//! of which only the last steps are read holds only those, so memory does not grow with
//! the number of steps.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Mutex;

use scan_runtime::prelude::*;

mod common;
use common::{second_opinion, Value};

struct PeakAllocator;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);
/// Bytes asked for zero-filled (`alloc_zeroed`).
static ZEROED: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    /// Whether this thread's allocations are being counted. Const-initialized and without
    /// a destructor, so reading it from inside the allocator never allocates.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn grow(bytes: usize) {
    if COUNTING.with(Cell::get) {
        let live = LIVE.fetch_add(bytes as isize, Ordering::Relaxed) + bytes as isize;
        PEAK.fetch_max(live, Ordering::Relaxed);
    }
}

fn shrink(bytes: usize) {
    if COUNTING.with(Cell::get) {
        LIVE.fetch_sub(bytes as isize, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the
// only addition is counter updates, which neither allocate nor touch the memory.
unsafe impl GlobalAlloc for PeakAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        if COUNTING.with(Cell::get) {
            ZEROED.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        grow(new_size);
        shrink(layout.size());
        // SAFETY: `ptr` was allocated by `System` (through this allocator) with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrink(layout.size());
        // SAFETY: `ptr` was allocated by `System` (through this allocator) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: PeakAllocator = PeakAllocator;

static LOCK: Mutex<()> = Mutex::new(());

/// The peak of heap bytes live during `f` beyond those live when it started, on this
/// thread, and `f`'s result.
fn peak_bytes<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let (peak, _, result) = peak_and_zeroed_bytes(f);
    (peak, result)
}

/// [`peak_bytes`], and the bytes allocated zero-filled.
fn peak_and_zeroed_bytes<T>(f: impl FnOnce() -> T) -> (usize, usize, T) {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    LIVE.store(0, Ordering::SeqCst);
    PEAK.store(0, Ordering::SeqCst);
    ZEROED.store(0, Ordering::SeqCst);
    COUNTING.with(|c| c.set(true));
    let result = f();
    COUNTING.with(|c| c.set(false));
    (
        PEAK.load(Ordering::SeqCst).max(0) as usize,
        ZEROED.load(Ordering::SeqCst).max(0) as usize,
        result,
    )
}

mod programs {
    scan_tests::program! {
        /// The tutorial's power, keeping only the last step.
        pub fn power(a: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
            let r = scan(|p, a| p * a, outputs_info = ones_like(a), non_sequences = a, n_steps = k);
            Ok(r[-1])
        }

        /// The last state returned twice, and beside the one-row stack it comes from: each
        /// returned value its own array (the buffer moved out once, copied where a later
        /// result still reads it).
        pub fn power_twice(a: ArrayView1<f64>, k: usize) -> Result<(Array1<f64>, Array2<f64>, Array1<f64>)> {
            let r = scan(|p, a| p * a, outputs_info = ones_like(a), non_sequences = a, n_steps = k);
            Ok((r[-1], r[-1..], r[-1]))
        }

        /// A running sum keeping every step.
        pub fn cumsum(u: ArrayView1<f64>) -> Result<Array1<f64>> {
            let s = scan(|u_t, s| s + u_t, sequences = u, outputs_info = 0.0);
            Ok(s)
        }

        /// Vector rows, every step kept: the step's last kernel writes each row in place.
        pub fn recentred(x0: ArrayView1<f64>, k: usize) -> Result<(Array2<f64>, Array2<f64>)> {
            let (xs, ys) = scan(|x| (x - max(x) * 0.5, x * 2.0), outputs_info = [x0, None], n_steps = k);
            Ok((xs, ys))
        }

        /// Counts up by `step` until past `limit`, at most `k` steps, every step kept.
        pub fn count_until(step: f64, limit: f64, k: usize) -> Result<Array1<f64>> {
            let xs = scan(|x, step, limit| (x + step, until(x + step > limit)), outputs_info = 0.0, non_sequences = [step, limit], n_steps = k);
            Ok(xs)
        }

        /// The same with vector rows.
        pub fn rows_until(x0: ArrayView1<f64>, limit: f64, k: usize) -> Result<Array2<f64>> {
            let xs = scan(|x, limit| (x + 1.0, until(sum(x) > limit)), outputs_info = x0, non_sequences = limit, n_steps = k);
            Ok(xs)
        }

        /// The first steps of a counter bounded by `k`.
        pub fn first_steps(k: usize) -> Result<(f64, Array1<f64>)> {
            let xs = scan(|x| x + 1.0, outputs_info = 0.0, n_steps = k);
            Ok((xs[3], xs[..2]))
        }

        pub fn total(u: ArrayView1<f64>) -> Result<f64> {
            Ok(reduce(|u_t, s| s + u_t, sequences = u, outputs_info = 0.0))
        }

        pub fn total_left(u: ArrayView2<f64>) -> Result<Array1<f64>> {
            Ok(foldl(|u_t, s| s * 0.5 + u_t, sequences = u, outputs_info = zeros_like(u[0])))
        }

        pub fn total_right(u: ArrayView2<f64>) -> Result<Array1<f64>> {
            Ok(foldr(|u_t, s| s * 0.5 + u_t, sequences = u, outputs_info = zeros_like(u[0])))
        }

        /// An Elman RNN whose cost reads its last state (an encoder), differentiated with
        /// respect to its weights and initial state: without checkpoints, the backward
        /// pass reads every state from the forward trace.
        #[allow(clippy::type_complexity)]
        pub fn elman_grad(x: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>, u: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array2<f64>, Array1<f64>, Array1<f64>)> {
            let hs = scan(|x_t, h, w, u, b| tanh(dot(x_t, w) + dot(h, u) + b), sequences = x, outputs_info = h0, non_sequences = [w, u, b]);
            let last = hs[-1];
            let cost = sum(last * last);
            let (gw, gu, gb, gh0) = grad(cost, [w, u, b, h0]);
            Ok((cost, gw, gu, gb, gh0))
        }

        /// The same storing the state before every 32nd step.
        #[allow(clippy::type_complexity)]
        pub fn elman_grad_ck32(x: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>, u: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array2<f64>, Array1<f64>, Array1<f64>)> {
            let hs = scan(|x_t, h, w, u, b| tanh(dot(x_t, w) + dot(h, u) + b), sequences = x, outputs_info = h0, non_sequences = [w, u, b], checkpoints = 32);
            let last = hs[-1];
            let cost = sum(last * last);
            let (gw, gu, gb, gh0) = grad(cost, [w, u, b, h0]);
            Ok((cost, gw, gu, gb, gh0))
        }
    }
}

#[test]
fn power_of_a_million_elements_holds_three_vectors_not_sixty_four() {
    let n = 1_000_000;
    let a = Array1::from_shape_fn(n, |i| 1.0 + (i % 7) as f64 * 1e-3);
    let (peak, r) = peak_bytes(|| programs::power(a.view(), 64).unwrap());
    let vector = n * std::mem::size_of::<f64>();
    assert!(
        peak <= 3 * vector,
        "peak {peak} bytes, more than 3 vectors of {vector} bytes (64 steps kept?)"
    );
    // Issue 6's target: within 1.5x of the input. The state is the `ones_like` buffer
    // taken over, and `r[-1]` is that buffer moved out at return, not copied.
    assert!(
        2 * peak <= 3 * vector,
        "peak {peak} bytes, more than 1.5 vectors of {vector} bytes"
    );
    // The numbers: a**64, by a hand-written loop.
    for i in [0, 1, 5, 6, n - 1] {
        let mut p = 1.0;
        for _ in 0..64 {
            p *= a[i];
        }
        assert_eq!(r[i], p, "element {i}");
    }
}

#[test]
fn a_state_returned_several_ways_is_moved_once_and_copied_where_still_read() {
    let a = Array1::from(vec![1.5, -2.0, 0.5]);
    let (x, stack, y) = programs::power_twice(a.view(), 3).unwrap();
    let cubes = Array1::from(vec![1.5f64.powi(3), -8.0, 0.125]);
    assert_eq!(x, cubes);
    assert_eq!(y, cubes);
    assert_eq!(stack, cubes.clone().insert_axis(Axis(0)));
    // No step: `r[-1]` of no row is the same error as before.
    assert!(programs::power_twice(a.view(), 0).is_err());
}

#[test]
fn a_running_sum_keeping_every_step_holds_its_rows_once() {
    let u = Array1::from_shape_fn(100_000, |i| (i % 13) as f64 - 6.0);
    let (peak, s) = peak_bytes(|| programs::cumsum(u.view()).unwrap());
    let rows = u.len() * std::mem::size_of::<f64>();
    // The result itself (plus its one initial row): nothing else of that size.
    assert!(
        peak <= rows + 64,
        "peak {peak} bytes for {rows} bytes of rows"
    );
    let mut acc = 0.0;
    for (i, x) in u.iter().enumerate() {
        acc += x;
        assert_eq!(s[i], acc);
    }
}

#[test]
fn array_rows_are_written_in_place_not_through_a_buffer_of_the_step() {
    let (n, k) = (100_000, 6);
    let x0 = Array1::from_shape_fn(n, |i| (i % 11) as f64);
    let (peak, zeroed, (xs, ys)) =
        peak_and_zeroed_bytes(|| programs::recentred(x0.view(), k).unwrap());
    // Two traces (the recurrent one with its initial row) and one row for the map
    // output's first step, which makes its trace: no buffer of the step's besides.
    let row = n * std::mem::size_of::<f64>();
    let traces = (k + 1) * row + k * row;
    assert!(
        peak <= traces + row + 1024,
        "peak {peak} bytes for {traces} bytes of traces and a {row}-byte row"
    );
    // The traces are not zero-filled before their rows are written: the only memory asked
    // for zeroed is the step's own buffer for the map output's first row.
    assert!(
        zeroed <= row + 1024,
        "{zeroed} bytes allocated zero-filled for {traces} bytes of traces"
    );
    // By hand: x_t = x_{t-1} - max(x_{t-1}) / 2, y_t = 2 x_{t-1}.
    let mut x = x0.to_vec();
    for t in 0..k {
        let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        for i in [0, 1, 7, n - 1] {
            assert_eq!(ys[[t, i]], x[i] * 2.0, "y[{t}, {i}]");
        }
        x.iter_mut().for_each(|v| *v -= m * 0.5);
        for i in [0, 1, 7, n - 1] {
            assert_eq!(xs[[t, i]], x[i], "x[{t}, {i}]");
        }
    }
}

#[test]
fn reduce_foldl_and_foldr_hold_constant_state() {
    let mut peaks = Vec::new();
    for steps in [10usize, 10_000] {
        let u = Array1::from_shape_fn(steps, |i| (i % 5) as f64);
        let (peak, t) = peak_bytes(|| programs::total(u.view()).unwrap());
        assert!(peak <= 64, "reduce over {steps} steps: peak {peak} bytes");
        assert_eq!(t, u.sum());

        let m = Array2::from_shape_fn((steps, 8), |(i, j)| ((i + j) % 5) as f64);
        let (peak_l, l) = peak_bytes(|| programs::total_left(m.view()).unwrap());
        let (peak_r, r) = peak_bytes(|| programs::total_right(m.view()).unwrap());
        // A handful of 8-element rows (state, step result, zeros_like, the result).
        for (peak, what) in [(peak_l, "foldl"), (peak_r, "foldr")] {
            assert!(
                peak <= 6 * 64,
                "{what} over {steps} steps: peak {peak} bytes"
            );
        }
        peaks.push((peak, peak_l, peak_r));
        let (mut hl, mut hr) = (Array1::<f64>::zeros(8), Array1::<f64>::zeros(8));
        for t in 0..steps {
            hl = &hl * 0.5 + m.row(t);
            hr = &hr * 0.5 + m.row(steps - 1 - t);
        }
        assert_eq!(l, hl);
        assert_eq!(r, hr);
        second_opinion(
            programs::SOURCE,
            "total_right",
            vec![Value::from(m.clone())],
            vec![Value::from(r)],
        );
    }
    assert_eq!(
        peaks[0], peaks[1],
        "peak bytes grow with the number of steps"
    );
}

#[test]
fn an_until_trace_grows_with_the_steps_taken_not_the_bound() {
    for (limit, steps) in [(0.5, 1usize), (10.0, 11), (40.0, 41), (100.0, 101)] {
        let (peak, xs) = peak_bytes(|| programs::count_until(1.0, limit, 10_000_000).unwrap());
        let expected: Vec<f64> = (1..=steps).map(|i| i as f64).collect();
        assert_eq!(xs.to_vec(), expected, "limit {limit}");
        // 10 million rows would be 80 MB; the steps taken need a few hundred bytes.
        assert!(peak <= 64 * 1024, "limit {limit}: peak {peak} bytes");
        second_opinion(
            programs::SOURCE,
            "count_until",
            vec![Value::from(1.0), Value::from(limit), Value::from(1000i64)],
            vec![Value::from(
                programs::count_until(1.0, limit, 1000).unwrap(),
            )],
        );
    }
    // Vector rows, growing past the first rows, and a bound reached before the condition.
    // The condition reads the previous row: sum = 3 + 3t first exceeds 60 at t = 20.
    let x0 = Array1::from(vec![0.0, 1.0, 2.0]);
    for (limit, bound, steps) in [(60.0, 1000usize, 21usize), (1e9, 37, 37), (-1.0, 5, 1)] {
        let xs = programs::rows_until(x0.view(), limit, bound).unwrap();
        assert_eq!(xs.nrows(), steps, "limit {limit}");
        for (t, row) in xs.rows().into_iter().enumerate() {
            assert_eq!(
                row.to_vec(),
                vec![t as f64 + 1.0, t as f64 + 2.0, t as f64 + 3.0]
            );
        }
        second_opinion(
            programs::SOURCE,
            "rows_until",
            vec![
                Value::from(x0.clone()),
                Value::from(limit),
                Value::from(bound as i64),
            ],
            vec![Value::from(xs)],
        );
    }
}

#[test]
fn reading_the_first_steps_of_a_long_loop_runs_only_those() {
    // A trillion steps bound the loop, but only x[3] and x[..2] are read: 4 steps run.
    let (peak, (x3, head)) = peak_bytes(|| programs::first_steps(1_000_000_000_000).unwrap());
    assert_eq!(x3, 4.0);
    assert_eq!(head.to_vec(), vec![1.0, 2.0]);
    assert!(peak <= 1024, "peak {peak} bytes");
    // Fewer steps than read: the same index error as without the cap.
    assert!(programs::first_steps(3).is_err());
    let got = programs::first_steps(10).unwrap();
    second_opinion(
        programs::SOURCE,
        "first_steps",
        vec![Value::from(10i64)],
        vec![Value::from(got.0), Value::from(got.1)],
    );
}

/// `checkpoints = 32` on an Elman RNN (hidden size 64) whose cost reads its last state:
/// the part of the gradient's peak heap that grows with the number of steps T shrinks by
/// about 32. Measured as the growth of the peak from T = 1000 to T = 2000, per step, so
/// that what does not depend on T (weights' gradients, the loops' buffers and packed
/// matrices: more loops with checkpoints) drops out. Of that growth, both programs hold
/// two T x 64 arrays of f64 whatever the checkpoints, computed from the program: the
/// cost's adjoint of the states (zeros with the last row's adjoint added in place) and the
/// input projection `x W` hoisted before the forward loop. The
/// rest is the trace part: without checkpoints the forward trace, 1 row per step (the
/// backward pass reads `h[t-1]` through a view of it with h0 in front, and computes
/// `1 - h^2` in its step); with checkpoints the window before each segment and its copy
/// with h0 in front, about 2 rows per 32 steps (a segment's own rows are reused from
/// segment to segment and do not grow with T). The bound asserted, at most an eighth of
/// the trace part without checkpoints (the expected ratio is 16 to 32) and at most 4 rows
/// per segment of 32 steps, is computed from those counts, not from the measurement.
#[test]
fn checkpoints_shrink_the_gradients_trace_part_by_about_n() {
    let (n_in, hidden, every) = (16usize, 64usize, 32usize);
    let h0 = Array1::from_shape_fn(hidden, |i| (i as f64 * 0.3).sin() * 0.5);
    let w = Array2::from_shape_fn((n_in, hidden), |(i, j)| {
        ((i * 7 + j * 3) % 11) as f64 * 0.02 - 0.1
    });
    let u = Array2::from_shape_fn((hidden, hidden), |(i, j)| {
        ((i * 5 + j * 13) % 17) as f64 * 0.01 - 0.08
    });
    let b = Array1::from_shape_fn(hidden, |i| (i % 5) as f64 * 0.01);
    let row = hidden * std::mem::size_of::<f64>();
    let mut peaks = Vec::new();
    for t in [1000usize, 2000] {
        let x = Array2::from_shape_fn((t, n_in), |(i, j)| ((i * 3 + j) % 7) as f64 * 0.1 - 0.3);
        let plain = || programs::elman_grad(x.view(), h0.view(), w.view(), u.view(), b.view());
        let checkpointed =
            || programs::elman_grad_ck32(x.view(), h0.view(), w.view(), u.view(), b.view());
        // Warm-up: the threads' matrix-product buffers, made once.
        // The runtime's pool emptied before each: a call then allocates its large buffers
        // afresh, where it would otherwise reuse the last call's.
        let _ = (plain().unwrap(), checkpointed().unwrap());
        scan_runtime::kernels::pool::release();
        let (peak_plain, p) = peak_bytes(|| plain().unwrap());
        scan_runtime::kernels::pool::release();
        let (peak_ck, c) = peak_bytes(|| checkpointed().unwrap());
        // The same numbers (the segments' contributions are summed in another order).
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(1.0);
        let flat = |r: &(f64, Array2<f64>, Array2<f64>, Array1<f64>, Array1<f64>)| {
            let mut v = vec![r.0];
            v.extend(r.1.iter().chain(&r.2).chain(&r.3).chain(&r.4));
            v
        };
        for (k, (x, y)) in flat(&p).into_iter().zip(flat(&c)).enumerate() {
            assert!(close(x, y), "T = {t}, value {k}: {x} vs {y}");
        }
        peaks.push((t, peak_plain, peak_ck));
    }
    let [(t1, plain1, ck1), (t2, plain2, ck2)] = peaks[..] else {
        unreachable!()
    };
    let per_step = |a: usize, b: usize| (b as f64 - a as f64) / (t2 - t1) as f64;
    let fixed = 2.0 * row as f64;
    let trace_plain = per_step(plain1, plain2) - fixed;
    let trace_ck = per_step(ck1, ck2) - fixed;
    let report = format!(
        "peaks: T = {t1}: {plain1} bytes without checkpoints, {ck1} with; T = {t2}: {plain2}, \
         {ck2}; per step beyond the fixed {fixed} bytes: {trace_plain:.1} without, {trace_ck:.1} with"
    );
    // The measurement sees the trace.
    assert!(trace_plain >= row as f64, "{report}");
    assert!(trace_ck * 8.0 <= trace_plain, "{report}");
    assert!(trace_ck <= 4.0 * row as f64 / every as f64, "{report}");
    eprintln!("{report}");
    // The program agrees with the evaluator (smaller sizes: 2 segments and 5 steps).
    let x = Array2::from_shape_fn((69, 3), |(i, j)| ((i * 3 + j) % 7) as f64 * 0.1 - 0.3);
    let (h0, w, u, b) = (
        h0.slice(s![..5]),
        w.slice(s![..3, ..5]),
        u.slice(s![..5, ..5]),
        b.slice(s![..5]),
    );
    let c = programs::elman_grad_ck32(x.view(), h0, w, u, b).unwrap();
    second_opinion(
        programs::SOURCE,
        "elman_grad_ck32",
        [
            x.into_dyn(),
            h0.to_owned().into_dyn(),
            w.to_owned().into_dyn(),
            u.to_owned().into_dyn(),
            b.to_owned().into_dyn(),
        ]
        .iter()
        .map(Value::from)
        .collect(),
        vec![
            Value::from(c.0),
            Value::from(c.1),
            Value::from(c.2),
            Value::from(c.3),
            Value::from(c.4),
        ],
    );
}

/// The gradient of a batched LSTM (scan-bench's lstm_grad: the four gates are slices of one
/// `[B, 4H]` pre-activation), in a float type and under rewrite settings of the caller's
/// choice.
macro_rules! lstm_grad {
    ($module:ident: $t:ident, [$($setting:tt)*]) => {
        mod $module {
            scan_tests::program! {
                #![rewrites($($setting)*)]

                #[allow(clippy::type_complexity)]
                pub fn lstm_grad(x: ArrayView3<$t>, w_x: ArrayView2<$t>, w_h: ArrayView2<$t>, b: ArrayView1<$t>) -> Result<(Array2<$t>, Array2<$t>, Array1<$t>)> {
                    let zero = zeros((x.shape[1], w_h.shape[0])) as $t;
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
            }
        }
    };
}

// The program measured; with no rewrite, the rounding it is held to; in f64, the values
// both f32 programs round.
lstm_grad!(rewritten: f32, [all]);
lstm_grad!(unrewritten: f32, [none]);
lstm_grad!(reference: f64, [none]);

/// An LSTM's gradient by BPTT (scan-bench's lstm_grad, smaller): the part of the peak heap
/// that grows with the steps, measured as in the checkpoints test above, in `[B, H]` f32
/// rows per step. Counted from the program: the forward traces of h and c (1 row each),
/// the four gates' activations the forward loop keeps for the backward one (1 each) and
/// one stack of the gates' adjoint dG (4): 10 (`tanh(c_t)` is computed again in the
/// backward step from c's trace; kept, it was one more: 11). The gate block is not computed again, so neither `h_tm1.dot(w_h)` nor the
/// input projection `x_t.dot(w_x)` is kept (4 rows each before: 15; the projection is
/// made a chunk of steps at a time). The weight gradients read x_t and h[t-1] where they
/// are (x, and h's trace with h0 in front) and dG from its one stack, summed after the
/// loop to each product's shape; before that, the backward loop also stored dG a second
/// time (4) and copies of x_t (I/H = 0.5) and h[t-1] (1): 20.5 rows per step, measured.
#[test]
fn an_lstm_gradient_stores_the_gates_adjoint_once_and_copies_no_sequence() {
    // Batch 16: the product after the loop copies a reversed sequence 64 steps at a time,
    // fewer than the steps measured.
    let (batch, n_in, hidden) = (16usize, 8usize, 16usize);
    let w_x = Array2::from_shape_fn((n_in, 4 * hidden), |(i, j)| {
        ((i * 7 + j * 3) % 11) as f32 * 0.02 - 0.1
    });
    let w_h = Array2::from_shape_fn((hidden, 4 * hidden), |(i, j)| {
        ((i * 5 + j * 13) % 17) as f32 * 0.01 - 0.08
    });
    let b = Array1::from_shape_fn(4 * hidden, |i| (i % 5) as f32 * 0.01);
    let mut peaks = Vec::new();
    for t in [100usize, 200] {
        let x = Array3::from_shape_fn((t, batch, n_in), |(s, i, j)| {
            ((s * 3 + i * 5 + j) % 7) as f32 * 0.1 - 0.3
        });
        let run = || rewritten::lstm_grad(x.view(), w_x.view(), w_h.view(), b.view()).unwrap();
        // Warm-up (the threads' product buffers), and an empty pool as in the test above.
        let _ = run();
        scan_runtime::kernels::pool::release();
        let (peak, (g_x, g_h, g_b)) = peak_bytes(run);
        peaks.push((t, peak));
        // The values: within the rounding of the program with no rewrite. Both f32
        // programs are measured against the f64 one; the rewrites change the order of
        // sums (and the backend's blocks do), not the precision, so the rewritten
        // program's largest error is at most twice the other's. Comparing the two f32
        // results directly held them to 1e-5 of each other, which a backend summing in
        // another order (matrixmultiply's) missed by 1%, while each was 1e-5 from f64.
        let (p_x, p_h, p_b) =
            unrewritten::lstm_grad(x.view(), w_x.view(), w_h.view(), b.view()).unwrap();
        let f64s = |a: ArrayView2<f32>| a.mapv(f64::from);
        let (r_x, r_h, r_b) = reference::lstm_grad(
            x.mapv(f64::from).view(),
            f64s(w_x.view()).view(),
            f64s(w_h.view()).view(),
            b.mapv(f64::from).view(),
        )
        .unwrap();
        let error = |got: &[f32], want: &[f64]| {
            got.iter()
                .zip(want)
                .map(|(&g, &w)| (f64::from(g) - w).abs() / w.abs().max(1.0))
                .fold(0.0f64, f64::max)
        };
        let flat2 = |a: &Array2<f32>| a.iter().copied().collect::<Vec<f32>>();
        let flat64 = |a: &Array2<f64>| a.iter().copied().collect::<Vec<f64>>();
        let worst = |x: &Array2<f32>, h: &Array2<f32>, b: &Array1<f32>| {
            error(&flat2(x), &flat64(&r_x))
                .max(error(&flat2(h), &flat64(&r_h)))
                .max(error(&b.to_vec(), &r_b.to_vec()))
        };
        let (rewritten, plain) = (worst(&g_x, &g_h, &g_b), worst(&p_x, &p_h, &p_b));
        eprintln!("lstm gradient, {t} steps: largest error against f64 {rewritten:.3e}, with no rewrite {plain:.3e}");
        assert!(plain < 1e-4, "the f32 program with no rewrite: {plain:e}");
        assert!(
            rewritten <= 2.0 * plain,
            "rewritten {rewritten:e} against {plain:e} with no rewrite"
        );
    }
    let row = (batch * hidden * std::mem::size_of::<f32>()) as f64;
    let per_step = (peaks[1].1 as f64 - peaks[0].1 as f64) / 100.0 / row;
    let report = format!("peaks {peaks:?}: {per_step:.2} [B, H] rows per step");
    // The matrixmultiply backend makes the input projection in one product over every
    // step (`kernels::chunk_steps`: its products allocate), where faer's makes it a chunk
    // of steps at a time: its 4 rows per step are held, measured.
    let projection = if scan_runtime::kernels::dot::GEMM_BACKEND == "matrixmultiply" {
        4.0
    } else {
        0.0
    };
    assert!(
        per_step >= 9.0 + projection,
        "the measurement sees the stacks: {report}"
    );
    assert!(per_step <= 10.5 + projection, "{report}");
    eprintln!("lstm gradient: {report}");
}

macro_rules! tutorial_rnn {
    ($module:ident: [$($setting:tt)*]) => {
        mod $module {
            scan_tests::program! {
                #![rewrites($($setting)*)]

                /// The scan tutorial's RNN (scan-bench's seed_taps).
                #[allow(clippy::too_many_arguments)]
                pub fn rnn(u: ArrayView2<f64>, x0: ArrayView2<f64>, y0: ArrayView1<f64>, w: ArrayView2<f64>,
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
            }
        }
    };
}

tutorial_rnn!(grouped: [all]);
tutorial_rnn!(ungrouped: [all_except(group_projections)]);

/// The tutorial's RNN (seed_taps, at T = 2000 steps, n_u = 64, n_x = 128, n_y = 32): its
/// two input projections, `u_t.dot(w_in_1)` and `u_tm4.dot(w_in_2)`, are one `T x n_x`
/// stack before the loop (the second product accumulated onto the first in its buffer),
/// where each was a stack of its own. Besides the traces of x and y (returned), the call
/// holds one stack and small buffers (the stacked and packed recurrent matrices, about
/// 0.1 stack each): less than two stacks, where without the grouping it holds two and more.
/// Stacks of 2 MB, below the pool's 4 MB, so nothing is kept from call to call.
#[test]
fn the_tutorial_rnns_input_projections_are_one_stack() {
    let (t, n_u, n_x, n_y) = (2000usize, 64usize, 128usize, 32usize);
    let gen = |rows: usize, cols: usize, seed: u64| common::matrix(rows, cols, seed) * 0.2;
    let (u, x0, y0) = (
        gen(t + 4, n_u, 1),
        gen(3, n_x, 2),
        gen(1, n_y, 3).row(0).to_owned(),
    );
    let (w, w_in_1, w_in_2) = (gen(n_x, n_x, 4), gen(n_u, n_x, 5), gen(n_u, n_x, 6));
    let (w_feedback, w_out) = (gen(n_y, n_x, 7), gen(n_x, n_y, 8));
    macro_rules! call {
        ($module:ident) => {
            || {
                $module::rnn(
                    u.view(),
                    x0.view(),
                    y0.view(),
                    w.view(),
                    w_in_1.view(),
                    w_in_2.view(),
                    w_feedback.view(),
                    w_out.view(),
                )
                .unwrap()
            }
        };
    }
    // Warm-up (the thread's product buffers), then an empty pool.
    let _ = call!(grouped)();
    let _ = call!(ungrouped)();
    scan_runtime::kernels::pool::release();
    let (peak, (x, y)) = peak_bytes(call!(grouped));
    let (peak_without, (x_without, y_without)) = peak_bytes(call!(ungrouped));
    let f64s = std::mem::size_of::<f64>();
    let traces = ((t + 3) * n_x + (t + 1) * n_y) * f64s;
    let stack = t * n_x * f64s;
    let report = format!(
        "peak {peak} bytes grouped, {peak_without} without; traces {traces}, a stack {stack}"
    );
    assert!(peak >= traces + stack, "{report}");
    assert!(peak < traces + 3 * stack / 2, "{report}");
    assert!(peak_without >= traces + 2 * stack, "{report}");
    // The same values (within rounding: the sum is regrouped).
    for (a, b) in [(x, x_without), (y, y_without)] {
        assert_eq!(a.shape(), b.shape());
        common::assert_allclose(
            &a.iter().copied().collect::<Vec<_>>(),
            &b.iter().copied().collect::<Vec<_>>(),
            1e-12,
        );
    }
    eprintln!("tutorial rnn: {report}");
}
