//! Products with a right operand packed once: `a · w` for a weight matrix `w` that a loop
//! reads at every step (an RNN's recurrent weights). A GEMM library packs `w` into panels
//! on every call; [`PackedMatrix`] packs it once before the loop, so each step only packs
//! its small left operand (a vector is read in place) and runs the kernel.
//!
//! The kernel is the classic register-blocked one: `MR` rows of `a` (each step of `k`
//! reads one element of each) times one panel of `NR` columns of `w` (stored `k`-major),
//! accumulated in an `MR x NR` block of registers with fused multiply-adds. It
//! is Rust over fixed-size arrays and SIMD intrinsics, compiled inside functions built for
//! AVX-512 or AVX2 + FMA and chosen at run time (as `isa::with_best_isa` does): 12 x 32 f32
//! (24 AVX-512 registers) or 6 x 16 (12 AVX2 ones), half as many columns for f64; a last
//! row block of fewer rows takes a narrower kernel (AVX-512: 8, 4 or 1 rows; AVX2: 4, 2 or
//! 1). Panels are visited in order, each by every row block, and each row block
//! prefetches its share of the panel two on into the second-level cache: a `w` larger than that cache (an LSTM's 512 x
//! 2048) streams from the third level while the kernel computes. The order alternates
//! from one product to the next (first to last, then last to first), so that a product
//! starts on the panels its predecessor left in the second-level cache. A product of few
//! rows takes a panel's `k` in chunks that stay in the first-level cache from one row
//! block to the next (`KC_BYTES`); a wide one packs its left operand
//! ([`PACK_LEFT_COLS`]). Measured on a 2-core Intel Xeon (AVX-512), products of the step
//! shapes (f32, one thread, twelfth session): elman's 32 x 512 times 512 x 512 98 µs (171
//! GFLOP/s; faer, which packs `w` each call: 120 µs), lstm's 32 x 512 times 512 x 2048
//! 378 µs (178 GFLOP/s; faer 760 µs); the machine's peak is about 210.
//!
//! Rounding: each output element is the sum over `k` in order, by fused multiply-adds (by
//! a multiply and an add on CPUs without FMA); like any GEMM's, it may differ from
//! another backend's in the last bits.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

use ndarray::{ArrayView1, ArrayView2, ArrayViewMut2, Axis, Ix1, Ix2};

use crate::error::Result;
use crate::kernels::buffer::Destination;

/// Packing pays from this many elements of `w` on (`k * n`). Measured on a 2-core Intel
/// Xeon (AVX-512), f32, against faer's product (which packs small matrices cheaply or not
/// at all): 32x128x128 takes 8.8 µs packed, 7.2 µs by faer; 8x256x256 7.1 µs, 9.3 µs;
/// 32x512x512 141 µs, 186 µs; 1x128x128 0.8 µs, 1.2 µs.
pub const PACK_MIN: usize = 256 * 256 / 2;

/// [`PACK_MIN`] for a matrix that only vectors multiply ([`PackedMatrix::pack_vectors`]):
/// the plain vector-matrix product (faer's) reads the matrix column by column at half the
/// SIMD width. Measured on a 2-core Intel Xeon (AVX-512), one thread, packed against
/// plain: f64 128 x 32 0.32 µs against 0.43, 64 x 64 0.21 against 0.47, 16 x 16 0.078
/// against 0.065; f32 32 x 32 0.090 against 0.115.
pub const PACK_VECTOR_MIN: usize = 32 * 32;

/// The instruction set a packing was made for: it sets the panel width and the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Isa {
    Avx512,
    Avx2,
    Base,
}

fn detect() -> Isa {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") && super::isa::has_avx2_fma() {
            return Isa::Avx512;
        }
        if super::isa::has_avx2_fma() {
            return Isa::Avx2;
        }
    }
    Isa::Base
}

/// A `(k, n)` matrix packed for [`PackedMatrix::dot_mm`] and [`PackedMatrix::dot_vm`],
/// with the scratch memory those products reuse (so a step allocates nothing after the
/// first).
#[derive(Clone, Debug)]
pub struct PackedMatrix<T: 'static> {
    k: usize,
    n: usize,
    isa: Isa,
    /// Whether `w` was packed (it was large enough); if not, `panels` is empty.
    packed: bool,
    /// After `start` elements of padding, panel `j` holds columns `j*nr .. j*nr + nr`
    /// (zeros past `n`), row after row; `nr` is the kernel's panel width (`blocking`).
    panels: Vec<T>,
    /// Where the panels start: on a cache line (`buffer::ALIGN`), so that no vector load
    /// of a panel row straddles two lines.
    start: usize,
    /// The left operand of the current product, packed.
    left: Vec<T>,
    /// The order of the next product's panels: it alternates, so that a product starts
    /// on the panels the one before it ended on, still in cache.
    reverse: bool,
}

impl<T: 'static> Drop for PackedMatrix<T> {
    /// The panels' memory goes to the pool for the next call's packing.
    fn drop(&mut self) {
        super::pool::recycle_vec(std::mem::take(&mut self.panels));
    }
}

impl<T: 'static> Default for PackedMatrix<T> {
    /// Nothing packed: products are the plain ones until [`PackedMatrix::pack`].
    fn default() -> Self {
        PackedMatrix {
            k: 0,
            n: 0,
            isa: Isa::Base,
            packed: false,
            panels: Vec::new(),
            start: 0,
            left: Vec::new(),
            reverse: false,
        }
    }
}

/// The element types of the portable kernel: `a * b + c` (a multiply and an add; `mul_add`
/// would be a libm call without FMA).
trait Fma: Copy + Default + Send + Sync {
    fn plain(a: Self, b: Self, c: Self) -> Self;
    fn sum(a: Self, b: Self) -> Self;
}

macro_rules! fma_impl {
    ($t:ty) => {
        impl Fma for $t {
            #[inline(always)]
            fn plain(a: Self, b: Self, c: Self) -> Self {
                a * b + c
            }
            #[inline(always)]
            fn sum(a: Self, b: Self) -> Self {
                a + b
            }
        }
    };
}
fma_impl!(f32);
fma_impl!(f64);

/// The left operand `a` of a product, as the kernels read it.
#[derive(Clone, Copy)]
enum Left<'a, T> {
    /// Its rows read in place, each contiguous: a pointer per row in the kernels.
    Rows(ArrayView2<'a, T>),
    /// A single row (`m == 1`) read in place along its stride, through one pointer.
    Row(ArrayView2<'a, T>),
    /// Row blocks ([`RowBlocks`]), `k`-major, zeros past `m` ([`pack_block`],
    /// [`SharedLeft`]), each read through one pointer. Packing pays on wide products
    /// ([`PACK_LEFT_COLS`]).
    Packed(&'a [T]),
}

/// A kernel's row block: how it reads element `(r, kk)`.
trait Block<T>: Copy {
    /// # Safety
    /// `(r, kk)` must be in the block: `r` below the kernel's rows, `kk` below `k`.
    unsafe fn at(self, r: usize, kk: usize) -> T;

    /// The block from step `k0` of `k` on (`k0 <= k`).
    fn skip(self, k0: usize) -> Self;
}

/// Rows in place, a pointer each ([`Left::Rows`]).
#[derive(Clone, Copy)]
struct RowBlock<T, const R: usize>([*const T; R]);

impl<T: Copy, const R: usize> Block<T> for RowBlock<T, R> {
    #[inline(always)]
    unsafe fn at(self, r: usize, kk: usize) -> T {
        // SAFETY: the caller's contract; each row holds `k` elements.
        unsafe { *self.0[r].add(kk) }
    }

    #[inline(always)]
    fn skip(self, k0: usize) -> Self {
        RowBlock(self.0.map(|row| row.wrapping_add(k0)))
    }
}

/// One pointer and the distance between steps of `k` ([`Left::Row`], [`Left::Packed`]).
#[derive(Clone, Copy)]
struct StepBlock<T> {
    at: *const T,
    step: isize,
}

impl<T: Copy> Block<T> for StepBlock<T> {
    #[inline(always)]
    unsafe fn at(self, r: usize, kk: usize) -> T {
        // SAFETY: the caller's contract; the block holds `k` steps of its rows.
        unsafe { *self.at.offset(kk as isize * self.step + r as isize) }
    }

    #[inline(always)]
    fn skip(self, k0: usize) -> Self {
        StepBlock {
            at: self.at.wrapping_offset(k0 as isize * self.step),
            ..self
        }
    }
}

/// One product's operands, for the kernels: the left operand `a` (`m x k`) and `panels`,
/// the packed `w`.
struct Job<'a, T> {
    m: usize,
    k: usize,
    n: usize,
    left: Left<'a, T>,
    panels: &'a [T],
    /// Add the product to `out` rather than overwrite it.
    add: bool,
    /// Visit the panels last to first.
    reverse: bool,
}

impl<T> Job<'_, T> {
    /// Pointers to rows `i .. i + R` of `a` read in place (a row past `m` repeats the
    /// last one: the kernel computes it and the caller does not store it).
    #[inline(always)]
    fn rows<const R: usize>(&self, a: ArrayView2<'_, T>, i: usize) -> RowBlock<T, R> {
        let mut rows = [core::ptr::null(); R];
        let last = self.m.saturating_sub(1);
        for (r, row) in rows.iter_mut().enumerate() {
            *row = a.row((i + r).min(last)).as_ptr();
        }
        RowBlock(rows)
    }

    /// The row block that starts at row `i` of a [`Left::Row`] or [`Left::Packed`]
    /// operand (not called on [`Left::Rows`]).
    #[inline(always)]
    fn steps<const MR: usize>(&self, i: usize) -> StepBlock<T> {
        match self.left {
            Left::Packed(left) => StepBlock {
                at: left[i * self.k..].as_ptr(),
                step: RowBlocks::new(self.m, MR).stride_at(i) as isize,
            },
            Left::Row(a) | Left::Rows(a) => StepBlock {
                at: a.as_ptr(),
                step: a.strides()[1],
            },
        }
    }
}

/// Packing the left operand pays from this many columns of `w` on, per thread
/// ([`PackedMatrix`]'s product): each packed element is then read by the kernels at least
/// `PACK_LEFT_COLS / nr` times. Measured on a 2-core Intel Xeon (AVX-512), f32, against
/// the rows read in place: 32 x 512 x 2048 0.87x (one thread) and 0.95x (two), 256 x 256
/// x 2048 0.80x and 0.88x; 32 x 512 x 512 1.01x and 1.35x, 12 x 256 x 128 1.16x.
pub const PACK_LEFT_COLS: usize = 1024;

/// Packing at least this many elements of `w` is split over two threads when they are
/// allowed. Measured on a 2-core Intel Xeon (AVX-512), f32: an LSTM's 512 x 2048 weights
/// packed in 365 µs on one thread, 196 µs on two (lstm
/// at two threads: 42.3 -> 41.5 ms).
const PACK_SPLIT_MIN: usize = 1 << 18;

/// Panels `first..` of `w` (`k x n`) into `dst`, which holds a whole number of panels:
/// panel `j` is columns `j * nr..j * nr + nr` row after row, zeros past `n`. Every element
/// of `dst` is written.
fn fill_panels<T: Copy + Default>(
    dst: &mut [MaybeUninit<T>],
    w: ArrayView2<'_, T>,
    nr: usize,
    first: usize,
) {
    let (k, n) = w.dim();
    for (p, panel) in dst.chunks_exact_mut((k * nr).max(1)).enumerate() {
        let j = (first + p) * nr;
        let cols = w.slice(ndarray::s![.., j..(j + nr).min(n)]);
        for (src, d) in cols.rows().into_iter().zip(panel.chunks_exact_mut(nr)) {
            // A contiguous row is a plain copy (element by element through the view's
            // iterator, the packing of an LSTM's weights took 1.3 ms of its call).
            let (d, pad) = d.split_at_mut(src.len());
            match src.as_slice() {
                Some(s) => {
                    for (d, &x) in d.iter_mut().zip(s) {
                        d.write(x);
                    }
                }
                None => {
                    for (d, &x) in d.iter_mut().zip(src.iter()) {
                        d.write(x);
                    }
                }
            }
            for d in pad {
                d.write(T::default());
            }
        }
    }
}

/// The `stride` rows of `a` (`m x k`, any strides) from row `first` on packed for the
/// kernels into `dst` (`k * stride` elements): `k`-major, element `(r, kk)` at `kk *
/// stride + r`, zeros past `m`.
fn pack_block<T: Copy + Default>(dst: &mut [T], a: ArrayView2<'_, T>, first: usize, stride: usize) {
    for r in 0..stride {
        let i = first + r;
        if i < a.nrows() {
            for (d, &x) in dst.chunks_exact_mut(stride).zip(a.row(i)) {
                d[r] = x;
            }
        } else {
            for d in dst.chunks_exact_mut(stride) {
                d[r] = T::default();
            }
        }
    }
}

/// How the kernels cut a product's `m` rows into blocks of `mr`: block `b` is rows `b *
/// mr..`, the last one shorter, except that with AVX2's blocks of six a last block of
/// two rows after a full one (`m` = 6 q + 2, a batch of 32) is cut as two blocks of four
/// instead: a kernel over four rows keeps 8 chains of multiply-adds in flight, enough
/// for a core with two FMA units of latency 4 (AMD Zen 3), where two rows keep 4.
/// Measured on an AMD EPYC Zen 3, f32, `kernel_probe 32 512 2048 N`, alternating with the
/// blocks of six and two (medians of 7 and 6 runs): one thread 760 -> 727 µs, two 393 ->
/// 380 µs. The two-row kernels ([`Pair`]) stay for `m` = 2 and the one-row ones. A packed
/// left operand ([`pack_block`]) stores block `b` from element `first * k` on, with
/// its own stride (`mr`, or four for the two blocks of four).
#[derive(Clone, Copy)]
struct RowBlocks {
    m: usize,
    mr: usize,
    /// The last eight rows are two blocks of four.
    fours: bool,
}

impl RowBlocks {
    fn new(m: usize, mr: usize) -> Self {
        RowBlocks {
            m,
            mr,
            fours: mr == 6 && m > mr && m % mr == 2,
        }
    }

    /// How many blocks (as many as blocks of `mr`, the last shorter).
    fn count(&self) -> usize {
        self.m.div_ceil(self.mr)
    }

    /// The first row of the two blocks of four, if there are.
    fn fours_from(&self) -> Option<usize> {
        self.fours.then(|| (self.count() - 2) * self.mr)
    }

    /// Block `b`'s first row, rows and packed stride.
    fn block(&self, b: usize) -> (usize, usize, usize) {
        match self.fours_from() {
            Some(from) if b * self.mr >= from => {
                let first = from + (b * self.mr - from) / self.mr * 4;
                (first, 4, 4)
            }
            _ => {
                let first = b * self.mr;
                (first, self.mr.min(self.m - first), self.mr)
            }
        }
    }

    /// The packed stride of the block that starts at row `first`.
    fn stride_at(&self, first: usize) -> usize {
        match self.fours_from() {
            Some(from) if first >= from => 4,
            _ => self.mr,
        }
    }
}

/// The left operand packed ([`pack_block`], block after block) by every part of a split
/// product at its start, each part taking the next block not taken yet, then waiting
/// until all are packed: where one thread packed it all while the others waited, with no
/// synchronisation of its own (the parts' join starts them). A part run after another
/// (the helper busy) finds every block packed.
struct SharedLeft<'a, T> {
    /// The packed blocks' memory (`blocks * k * mr` elements), written through this
    /// pointer until `done` reaches `blocks`, only read after.
    at: *mut T,
    len: usize,
    a: ArrayView2<'a, T>,
    plan: RowBlocks,
    blocks: usize,
    /// The next block to take.
    next: AtomicUsize,
    /// Blocks packed.
    done: AtomicUsize,
    _memory: std::marker::PhantomData<&'a mut [T]>,
}

// SAFETY: the parts write disjoint blocks (each block is taken once, by `next`) and read
// the memory only after every write (`done`, release/acquire); `a` is only read.
unsafe impl<T: Sync> Sync for SharedLeft<'_, T> {}

impl<'a, T: Copy + Default + Sync> SharedLeft<'a, T> {
    fn new(memory: &'a mut Vec<T>, a: ArrayView2<'a, T>, mr: usize) -> Self {
        let plan = RowBlocks::new(a.nrows(), mr);
        let blocks = plan.count();
        // Every block at `first * k`, `stride * k` elements long; the last ends the memory.
        let len = match blocks.checked_sub(1).map(|last| plan.block(last)) {
            Some((first, _, stride)) => (first + stride) * a.ncols(),
            None => 0,
        };
        memory.resize(len, T::default());
        SharedLeft {
            at: memory.as_mut_ptr(),
            len,
            a,
            plan,
            blocks,
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            _memory: std::marker::PhantomData,
        }
    }

    /// Packs blocks until none is left, waits for the ones other parts took, and gives
    /// the packed operand.
    fn packed(&self) -> &[T] {
        let k = self.a.ncols();
        loop {
            let b = self.next.fetch_add(1, Ordering::Relaxed);
            if b >= self.blocks {
                break;
            }
            let (first, _, stride) = self.plan.block(b);
            // SAFETY: block `b` (elements `first * k..(first + stride) * k`, inside the
            // `len` of the vector; blocks do not overlap) is taken by this call alone, and
            // nothing reads it before `done` counts it.
            let dst = unsafe { std::slice::from_raw_parts_mut(self.at.add(first * k), stride * k) };
            pack_block(dst, self.a, first, stride);
            self.done.fetch_add(1, Ordering::Release);
        }
        while self.done.load(Ordering::Acquire) < self.blocks {
            std::hint::spin_loop();
        }
        // SAFETY: every block is written (`done`, acquire: the writes happen before this
        // read) and none is written again, so the memory is initialised and only read.
        unsafe { std::slice::from_raw_parts(self.at, self.len) }
    }
}

/// `out[rows, cols] = block` (`+= block` when `add`), rows `i..i + rows` and columns
/// `j..j + cols`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn store<T: Fma, const NR: usize>(
    out: &mut ArrayViewMut2<'_, T>,
    i: usize,
    j: usize,
    rows: usize,
    cols: usize,
    block: &[[T; NR]],
    add: bool,
) {
    for (r, values) in block.iter().enumerate().take(rows) {
        let mut row = out.row_mut(i + r);
        // A whole panel's columns: a copy of known length, inlined (else a call to
        // memmove for every row of every block).
        if let (Some(s), true) = (row.as_slice_mut(), cols == NR) {
            let dst: &mut [T; NR] = (&mut s[j..j + NR]).try_into().expect("NR columns");
            if add {
                for (d, &v) in dst.iter_mut().zip(values) {
                    *d = T::sum(*d, v);
                }
            } else {
                *dst = *values;
            }
            continue;
        }
        match (row.as_slice_mut(), add) {
            (Some(s), false) => s[j..j + cols].copy_from_slice(&values[..cols]),
            (Some(s), true) => {
                for (d, &v) in s[j..j + cols].iter_mut().zip(&values[..cols]) {
                    *d = T::sum(*d, v);
                }
            }
            (None, _) => {
                for (c, &v) in values[..cols].iter().enumerate() {
                    row[j + c] = if add { T::sum(row[j + c], v) } else { v };
                }
            }
        }
    }
}

/// The portable kernel (CPUs without AVX2): the `R x NR` block `a` times one panel, into
/// the first `R` rows of `acc` (added to what they hold unless `start`).
///
/// # Safety
/// `a` must hold `R` rows of `panel.len()` elements.
#[inline(always)]
unsafe fn portable<T: Fma, const R: usize, const NR: usize, const MR: usize>(
    a: impl Block<T>,
    panel: &[[T; NR]],
    acc: &mut [[T; NR]; MR],
    start: bool,
) {
    let mut block = [[T::default(); NR]; R];
    if !start {
        block.copy_from_slice(&acc[..R]);
    }
    for (kk, b) in panel.iter().enumerate() {
        for (r, row) in block.iter_mut().enumerate() {
            // SAFETY: the caller's contract, `kk < panel.len()`, `r < R`.
            let a = unsafe { a.at(r, kk) };
            for c in 0..NR {
                row[c] = T::plain(a, b[c], row[c]);
            }
        }
    }
    acc[..R].copy_from_slice(&block);
}

/// How many panels ahead of the one being computed the kernels prefetch. Each panel is
/// fetched in parts, one per row block, so the requests spread over the panel's whole
/// computation instead of piling up in the last block (where they stalled it: a third of
/// an LSTM product's samples sat on one prefetch instruction).
const PREFETCH_AHEAD: usize = 2;

/// Panels `panels` of the product into `out` (whose columns start at panel
/// `panels.start`'s first column). `kernel(rows, i, panel, prefetch, acc)` computes the
/// block of the first `rows` rows from row `i` on (a kernel may compute a few rows more,
/// which are not stored) and, on the way, prefetches the rows of `prefetch`: its row
/// block's share of the panel [`PREFETCH_AHEAD`] on, so that each panel is on its way to
/// the second-level cache while the ones before it are computed. `pair`, when given,
/// computes a last row block of at most two rows over two panels at once ([`Pair`]).
#[inline(always)]
fn run<T: Fma, const NR: usize, const MR: usize>(
    job: &Job<'_, T>,
    panels: std::ops::Range<usize>,
    out: &mut ArrayViewMut2<'_, T>,
    kernel: impl Fn(usize, usize, usize, &[[T; NR]], &[[T; NR]], &mut [[T; NR]; MR], bool),
    pair: Option<Pair<'_, T, NR, MR>>,
) {
    let (m, k) = (job.m, job.k);
    let (all, _) = job.panels.as_chunks::<NR>();
    let plan = RowBlocks::new(m, MR);
    let blocks = plan.count();
    // Steps of `k` at a time: a panel's share that stays in the first-level cache while
    // every row block reads it, when the row blocks' partial sums fit here.
    let kc = if blocks <= KC_BLOCKS {
        (KC_BYTES / (NR * core::mem::size_of::<T>())).max(1)
    } else {
        k
    };
    let chunks = k.div_ceil(kc).max(1);
    let mut accs = [[[T::default(); NR]; MR]; KC_BLOCKS];
    let (first, end) = (panels.start, panels.end);
    let share = k.div_ceil((blocks * chunks).max(1));
    let count = panels.len();
    // The panel visited `at_n`-th, and the one `PREFETCH_AHEAD` after it (empty past the
    // last).
    let visit = |at_n: usize| {
        if job.reverse {
            end - 1 - at_n
        } else {
            first + at_n
        }
    };
    let panel_at = |j: usize| &all[j * k..(j + 1) * k];
    let later_at = |at_n: usize| {
        let ahead = at_n + PREFETCH_AHEAD;
        if ahead < count {
            panel_at(visit(ahead))
        } else {
            &[]
        }
    };
    // The last row block, by `pair` two panels at a time (the first of each two left for
    // the second), when it has at most two rows and `k` is not in chunks.
    let tail = plan.block(blocks.max(1) - 1).1;
    let pair = pair.filter(|_| chunks == 1 && tail <= 2 && m > 0);
    for at_n in 0..count {
        let j = visit(at_n);
        let panel = panel_at(j);
        let later = later_at(at_n);
        let cols = NR.min(job.n - j * NR);
        let at = (j - first) * NR;
        for c in 0..chunks {
            let k0 = c * kc;
            let part = &panel[k0..(k0 + kc).min(k)];
            for b in 0..blocks {
                let (i, rows, _) = plan.block(b);
                let from = ((c * blocks + b) * share).min(later.len());
                let prefetch = &later[from..(from + share).min(later.len())];
                if let (Some(pair), true) = (pair, b + 1 == blocks) {
                    if at_n % 2 == 0 && at_n + 1 < count {
                        continue;
                    }
                    if at_n % 2 == 1 {
                        let before = visit(at_n - 1);
                        let later_before = later_at(at_n - 1);
                        let from_before = from.min(later_before.len());
                        let prefetch_before = &later_before
                            [from_before..(from_before + share).min(later_before.len())];
                        let (acc_before, acc) = accs.split_at_mut(1);
                        let (acc_before, acc) = (&mut acc_before[0], &mut acc[0]);
                        pair(
                            i,
                            [panel_at(before), panel],
                            [prefetch_before, prefetch],
                            [&mut *acc_before, &mut *acc],
                        );
                        let cols_before = NR.min(job.n - before * NR);
                        let at_before = (before - first) * NR;
                        store(out, i, at_before, rows, cols_before, acc_before, job.add);
                        store(out, i, at, rows, cols, acc, job.add);
                        continue;
                    }
                }
                let acc = &mut accs[if chunks > 1 { b } else { 0 }];
                kernel(rows, i, k0, part, prefetch, acc, c == 0);
                if c + 1 == chunks {
                    store(out, i, at, rows, cols, acc, job.add);
                }
            }
        }
    }
}

/// A kernel for a last row block of at most two rows (with AVX2, `m` = 2 or `6 q + 1`;
/// `6 q + 2` is cut otherwise, [`RowBlocks`]) over two panels at once: `pair(i, panels,
/// prefetch, accs)` computes the block from row `i` on times each panel into its `acc`
/// (overwritten), prefetching both rows of `prefetch`. Two rows by one panel keep 4 sums
/// in registers, 4 chains of multiply-adds of 5 cycles each on a Zen 1 core, which issues
/// one 256-bit FMA per cycle: a fifth of its cycles idle; over two panels, 8 chains. Each
/// sum is still made in the order of `k`.
type Pair<'p, T, const NR: usize, const MR: usize> =
    &'p dyn Fn(usize, [&[[T; NR]]; 2], [&[[T; NR]]; 2], [&mut [[T; NR]; MR]; 2]);

/// A product of at most this many row blocks runs its `k` in chunks ([`KC_BYTES`]),
/// keeping each row block's partial sums between them (on the stack).
const KC_BLOCKS: usize = 4;

/// Bytes of a panel read at a time by every row block of a small product (`k` in chunks):
/// the chunk stays in the first-level cache (48 KB here) from one row block to the next,
/// where a whole panel (64 KB for `k` = 512) came from the second level each time.
/// Bit-identical: each sum is still made in order, its partial sum kept exactly. Measured
/// on a 2-core Intel Xeon (AVX-512), f32, the kernel alone over 16 panels by 3 row
/// blocks: `k` of 512 191 GFLOP/s, of 256 206.
const KC_BYTES: usize = 32 << 10;

/// The rows a kernel prefetches, spread evenly over its steps of `k`: one of `rows` every
/// `steps / rows` steps, from the first step on.
#[cfg(target_arch = "x86_64")]
struct Spread {
    every: usize,
    countdown: usize,
    row: usize,
}

#[cfg(target_arch = "x86_64")]
impl Spread {
    #[inline(always)]
    fn new(steps: usize, rows: usize) -> Self {
        Spread {
            every: (steps / rows.max(1)).max(1),
            countdown: 1,
            row: 0,
        }
    }

    /// Called once a step: the row to prefetch at this one, if any (past the last row,
    /// an index the caller's `get` declines).
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        self.countdown -= 1;
        if self.countdown != 0 {
            return None;
        }
        self.countdown = self.every;
        self.row += 1;
        Some(self.row - 1)
    }
}

/// Prefetches one row of a panel (`2 * lanes` elements, 64 or 128 bytes: one or two cache
/// lines) into the second-level cache.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn prefetch_row<T, const NR: usize>(row: &[T; NR]) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T1};
    let p = row.as_ptr();
    // SAFETY: a prefetch never faults; the second address is inside the row (its second
    // half).
    unsafe {
        _mm_prefetch::<_MM_HINT_T1>(p.cast());
        _mm_prefetch::<_MM_HINT_T1>(p.add(NR / 2).cast());
    }
}

/// A kernel in SIMD intrinsics: the `R x (2 * lanes)` block `a` times one panel, in `2 R`
/// vector registers (LLVM left the portable loop's block in scalar registers when `R` was
/// 8), into the first `R` rows of `acc` (added to what they hold unless `start`); the rows of `prefetch`
/// (part of a later panel) are prefetched into the second-level cache, evenly over the
/// steps of `k`.
#[cfg(target_arch = "x86_64")]
macro_rules! simd_kernel {
    ($name:ident, $feature:literal, $t:ty, $lanes:literal, $mr:literal,
     $zero:ident, $load:ident, $set1:ident, $fma:ident, $store:ident) => {
        /// # Safety
        /// The CPU must have the instruction sets of the `target_feature` attribute, and
        /// `a` must hold `R` rows of `panel.len()` elements.
        #[target_feature(enable = $feature)]
        unsafe fn $name<const R: usize>(
            a: impl Block<$t>,
            panel: &[[$t; 2 * $lanes]],
            prefetch: &[[$t; 2 * $lanes]],
            acc: &mut [[$t; 2 * $lanes]; $mr],
            start: bool,
        ) {
            use std::arch::x86_64::*;
            const { assert!(R <= $mr) };
            let mut c = [[$zero(); 2]; R];
            if !start {
                for r in 0..R {
                    let row = acc[r].as_ptr();
                    // SAFETY: each row of `acc` holds `2 * lanes` elements: two unaligned
                    // loads of `lanes`.
                    unsafe { c[r] = [$load(row), $load(row.add($lanes))] };
                }
            }
            let mut spread = Spread::new(panel.len(), prefetch.len());
            for (kk, b) in panel.iter().enumerate() {
                if let Some(p) = spread.next().and_then(|r| prefetch.get(r)) {
                    prefetch_row(p);
                }
                // SAFETY: `b` holds `2 * lanes` elements: two unaligned loads of `lanes`.
                let (b0, b1) = unsafe { ($load(b.as_ptr()), $load(b.as_ptr().add($lanes))) };
                for r in 0..R {
                    // SAFETY: the caller's contract, `kk < panel.len()`, `r < R`.
                    let x = $set1(unsafe { a.at(r, kk) });
                    c[r][0] = $fma(x, b0, c[r][0]);
                    c[r][1] = $fma(x, b1, c[r][1]);
                }
            }
            for r in 0..R {
                let row = acc[r].as_mut_ptr();
                // SAFETY: each row of `acc` holds `2 * lanes` elements: two unaligned
                // stores of `lanes`.
                unsafe {
                    $store(row, c[r][0]);
                    $store(row.add($lanes), c[r][1]);
                }
            }
        }
    };
}

/// The kernel of [`Pair`] in SIMD intrinsics: the `R x (2 * lanes)` block `a` (`R <= 2`)
/// times two panels, in `4 R` vector registers, into the first `R` rows of each `acc`.
#[cfg(target_arch = "x86_64")]
macro_rules! simd_pair_kernel {
    ($name:ident, $feature:literal, $t:ty, $lanes:literal, $mr:literal,
     $zero:ident, $load:ident, $set1:ident, $fma:ident, $store:ident) => {
        /// # Safety
        /// The CPU must have the instruction sets of the `target_feature` attribute, and
        /// `a` must hold `R` rows of `panels[0].len()` elements; both panels have that
        /// length.
        #[target_feature(enable = $feature)]
        unsafe fn $name<const R: usize>(
            a: impl Block<$t>,
            panels: [&[[$t; 2 * $lanes]]; 2],
            prefetch: [&[[$t; 2 * $lanes]]; 2],
            acc: [&mut [[$t; 2 * $lanes]; $mr]; 2],
        ) {
            use std::arch::x86_64::*;
            const { assert!(R <= 2) };
            let mut c = [[$zero(); 4]; R];
            // The rows of `prefetch`: the first's, then the second's.
            let [fetch0, fetch1] = prefetch;
            let mut spread = Spread::new(panels[0].len(), fetch0.len() + fetch1.len());
            for (kk, (b, d)) in panels[0].iter().zip(panels[1]).enumerate() {
                let row = spread.next().and_then(|r| match fetch0.get(r) {
                    Some(p) => Some(p),
                    None => fetch1.get(r - fetch0.len()),
                });
                if let Some(p) = row {
                    prefetch_row(p);
                }
                // SAFETY: `b` and `d` hold `2 * lanes` elements each: unaligned loads of
                // `lanes`.
                let (b0, b1, d0, d1) = unsafe {
                    (
                        $load(b.as_ptr()),
                        $load(b.as_ptr().add($lanes)),
                        $load(d.as_ptr()),
                        $load(d.as_ptr().add($lanes)),
                    )
                };
                for r in 0..R {
                    // SAFETY: the caller's contract, `kk < panels[0].len()`, `r < R`.
                    let x = $set1(unsafe { a.at(r, kk) });
                    c[r][0] = $fma(x, b0, c[r][0]);
                    c[r][1] = $fma(x, b1, c[r][1]);
                    c[r][2] = $fma(x, d0, c[r][2]);
                    c[r][3] = $fma(x, d1, c[r][3]);
                }
            }
            let [acc0, acc1] = acc;
            for r in 0..R {
                let (row0, row1) = (acc0[r].as_mut_ptr(), acc1[r].as_mut_ptr());
                // SAFETY: each row of an `acc` holds `2 * lanes` elements: two unaligned
                // stores of `lanes`.
                unsafe {
                    $store(row0, c[r][0]);
                    $store(row0.add($lanes), c[r][1]);
                    $store(row1, c[r][2]);
                    $store(row1.add($lanes), c[r][3]);
                }
            }
        }
    };
}

/// Panels a vector's product runs through at once ([`run_vector`]).
const VECTOR_PANELS: usize = 4;

/// A vector's product runs [`VECTOR_PANELS`] panels at once when it has that many and its
/// packed matrix holds at most this many bytes (it is read from the second-level cache);
/// a larger one, from the third level, gains more from the prefetching and alternating
/// order of the panel-at-a-time path. Measured on a 2-core Intel Xeon (AVX-512), one
/// thread: f64 160 x 128 1.70 µs instead of 2.15, f32 512 x 512 10.5 µs instead of 16.1;
/// f32 512 x 2048 145 µs instead of 106.
const VECTOR_GROUP_MAX_BYTES: usize = 1 << 20;

/// Whether a vector's product over `panels` panels runs them in groups ([`run_vector`]).
fn in_groups<T>(job: &Job<'_, T>, panels: usize) -> bool {
    panels >= VECTOR_PANELS && job.k * job.n * core::mem::size_of::<T>() <= VECTOR_GROUP_MAX_BYTES
}

/// A vector's product (`m == 1`) over `panels`, [`VECTOR_PANELS`] at a time: `kernel(group,
/// acc)` computes the group's columns into `acc` (a group short of panels at the end
/// repeats its last one, computed and not stored). A panel at a time, the kernel waited on
/// its two sums' multiply-add latency; four panels are eight independent sums, each still
/// made in order over `k`.
#[inline(always)]
fn run_vector<T: Fma, const NR: usize>(
    job: &Job<'_, T>,
    panels: std::ops::Range<usize>,
    out: &mut ArrayViewMut2<'_, T>,
    kernel: impl Fn([&[[T; NR]]; VECTOR_PANELS], &mut [[T; NR]; VECTOR_PANELS]),
) {
    let k = job.k;
    let (all, _) = job.panels.as_chunks::<NR>();
    let mut acc = [[T::default(); NR]; VECTOR_PANELS];
    let mut j = panels.start;
    while j < panels.end {
        let g = VECTOR_PANELS.min(panels.end - j);
        let group = core::array::from_fn(|p| {
            let q = j + p.min(g - 1);
            &all[q * k..(q + 1) * k]
        });
        kernel(group, &mut acc);
        for (p, block) in acc.chunks_exact(1).take(g).enumerate() {
            let q = j + p;
            let cols = NR.min(job.n - q * NR);
            store(out, 0, (q - panels.start) * NR, 1, cols, block, job.add);
        }
        j += g;
    }
}

/// The vector kernel in SIMD intrinsics: the row `a` times [`VECTOR_PANELS`] panels of
/// `2 * lanes` columns, into `acc`.
#[cfg(target_arch = "x86_64")]
macro_rules! simd_vector_kernel {
    ($name:ident, $feature:literal, $t:ty, $lanes:literal,
     $zero:ident, $load:ident, $set1:ident, $fma:ident, $store:ident) => {
        /// # Safety
        /// The CPU must have the instruction sets of the `target_feature` attribute, and
        /// `a` must hold one row of `panels[0].len()` elements; every panel has that
        /// length.
        #[target_feature(enable = $feature)]
        unsafe fn $name(
            a: StepBlock<$t>,
            panels: [&[[$t; 2 * $lanes]]; VECTOR_PANELS],
            acc: &mut [[$t; 2 * $lanes]; VECTOR_PANELS],
        ) {
            use std::arch::x86_64::*;
            let k = panels[0].len();
            let panels = panels.map(|p| &p[..k]);
            let mut c = [[$zero(); 2]; VECTOR_PANELS];
            for kk in 0..k {
                // SAFETY: the caller's contract, `kk < k`.
                let x = $set1(unsafe { a.at(0, kk) });
                for (cp, panel) in c.iter_mut().zip(panels) {
                    let b = panel[kk].as_ptr();
                    // SAFETY: `b` holds `2 * lanes` elements: two unaligned loads.
                    let (b0, b1) = unsafe { ($load(b), $load(b.add($lanes))) };
                    cp[0] = $fma(x, b0, cp[0]);
                    cp[1] = $fma(x, b1, cp[1]);
                }
            }
            for (row, cp) in acc.iter_mut().zip(c) {
                let row = row.as_mut_ptr();
                // SAFETY: each row of `acc` holds `2 * lanes` elements: two unaligned
                // stores of `lanes`.
                unsafe {
                    $store(row, cp[0]);
                    $store(row.add($lanes), cp[1]);
                }
            }
        }
    };
}

/// Every kernel of one instruction set and element type, from one list of intrinsics:
/// the block kernel ([`simd_kernel`]), the vector kernel ([`simd_vector_kernel`]) and,
/// for AVX2, the two-panel one ([`simd_pair_kernel`]).
#[cfg(target_arch = "x86_64")]
macro_rules! simd_kernels {
    ($feature:literal, $t:ty, lanes $lanes:literal, rows $mr:literal,
     kernel $name:ident, vector $vector:ident, $(pair $pair:ident,)?
     [$zero:ident, $load:ident, $set1:ident, $fma:ident, $store:ident]) => {
        simd_kernel!($name, $feature, $t, $lanes, $mr, $zero, $load, $set1, $fma, $store);
        simd_vector_kernel!($vector, $feature, $t, $lanes, $zero, $load, $set1, $fma, $store);
        $(simd_pair_kernel!($pair, $feature, $t, $lanes, $mr, $zero, $load, $set1, $fma, $store);)?
    };
}

#[cfg(target_arch = "x86_64")]
simd_kernels!("avx512f", f32, lanes 16, rows 12, kernel avx512_f32, vector avx512_vector_f32,
    [_mm512_setzero_ps, _mm512_loadu_ps, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_storeu_ps]);
#[cfg(target_arch = "x86_64")]
simd_kernels!("avx512f", f64, lanes 8, rows 12, kernel avx512_f64, vector avx512_vector_f64,
    [_mm512_setzero_pd, _mm512_loadu_pd, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_storeu_pd]);
#[cfg(target_arch = "x86_64")]
simd_kernels!("avx2,fma", f32, lanes 8, rows 6, kernel avx2_f32, vector avx2_vector_f32,
    pair avx2_pair_f32,
    [_mm256_setzero_ps, _mm256_loadu_ps, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_storeu_ps]);
#[cfg(target_arch = "x86_64")]
simd_kernels!("avx2,fma", f64, lanes 4, rows 6, kernel avx2_f64, vector avx2_vector_f64,
    pair avx2_pair_f64,
    [_mm256_setzero_pd, _mm256_loadu_pd, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_storeu_pd]);

/// The product's panels by the kernels of one instruction set and element type.
macro_rules! dispatch {
    ($t:ty, $avx512:ident, $avx2:ident, $avx2_pair:ident, $avx512_vector:ident,
     $avx2_vector:ident) => {
        pub(super) fn run_panels(
            isa: Isa,
            job: &Job<'_, $t>,
            panels: std::ops::Range<usize>,
            out: &mut ArrayViewMut2<'_, $t>,
        ) {
            const E: usize = core::mem::size_of::<$t>();
            // SAFETY (every arm): `Job::rows` and `Job::steps` give blocks of `R` rows
            // of `k` elements, `k` being the panels' length (a `Left::Row` operand has
            // one row, and every kernel on it has `R == 1` because `m == 1`). Fewer rows than a block's take the narrowest kernel that
            // covers them (the rows past them repeat the last row or are the packing's
            // zeros, and are not stored). The SIMD arms: `isa` is Avx512 only when
            // `detect` found AVX-512F on this CPU, Avx2 only when it found AVX2 and FMA,
            // the kernels' only other requirements.
            match (isa, job.left) {
                // SAFETY: as above; `steps` gives the vector's one row.
                #[cfg(target_arch = "x86_64")]
                (Isa::Avx512, Left::Row(_)) if in_groups(job, panels.len()) => {
                    run_vector::<$t, { 128 / E }>(job, panels, out, |g, acc| unsafe {
                        $avx512_vector(job.steps::<12>(0), g, acc)
                    })
                }
                #[cfg(target_arch = "x86_64")]
                (Isa::Avx2, Left::Row(_)) if in_groups(job, panels.len()) => {
                    run_vector::<$t, { 64 / E }>(job, panels, out, |g, acc| unsafe {
                        $avx2_vector(job.steps::<6>(0), g, acc)
                    })
                }
                #[cfg(target_arch = "x86_64")]
                (Isa::Avx512, Left::Rows(a)) => run::<$t, { 128 / E }, 12>(
                    job,
                    panels,
                    out,
                    |rows, i, k0, p, n, acc, start| match rows {
                        9.. => unsafe {
                            $avx512::<12>(job.rows::<12>(a, i).skip(k0), p, n, acc, start)
                        },
                        5..=8 => unsafe {
                            $avx512::<8>(job.rows::<8>(a, i).skip(k0), p, n, acc, start)
                        },
                        2..=4 => unsafe {
                            $avx512::<4>(job.rows::<4>(a, i).skip(k0), p, n, acc, start)
                        },
                        _ => unsafe {
                            $avx512::<1>(job.rows::<1>(a, i).skip(k0), p, n, acc, start)
                        },
                    },
                    None,
                ),
                #[cfg(target_arch = "x86_64")]
                (Isa::Avx512, _) => run::<$t, { 128 / E }, 12>(
                    job,
                    panels,
                    out,
                    |rows, i, k0, p, n, acc, start| {
                        let a = job.steps::<12>(i).skip(k0);
                        match rows {
                            9.. => unsafe { $avx512::<12>(a, p, n, acc, start) },
                            5..=8 => unsafe { $avx512::<8>(a, p, n, acc, start) },
                            2..=4 => unsafe { $avx512::<4>(a, p, n, acc, start) },
                            _ => unsafe { $avx512::<1>(a, p, n, acc, start) },
                        }
                    },
                    None,
                ),
                #[cfg(target_arch = "x86_64")]
                (Isa::Avx2, Left::Rows(a)) => {
                    run::<$t, { 64 / E }, 6>(
                        job,
                        panels,
                        out,
                        |rows, i, k0, p, n, acc, start| match rows {
                            5.. => unsafe {
                                $avx2::<6>(job.rows::<6>(a, i).skip(k0), p, n, acc, start)
                            },
                            3..=4 => unsafe {
                                $avx2::<4>(job.rows::<4>(a, i).skip(k0), p, n, acc, start)
                            },
                            2 => unsafe {
                                $avx2::<2>(job.rows::<2>(a, i).skip(k0), p, n, acc, start)
                            },
                            _ => unsafe {
                                $avx2::<1>(job.rows::<1>(a, i).skip(k0), p, n, acc, start)
                            },
                        },
                        Some(&|i, p, f, acc| match job.m - i {
                            // SAFETY: as above, two rows (or one) of `a` in place.
                            2 => unsafe { $avx2_pair::<2>(job.rows::<2>(a, i), p, f, acc) },
                            _ => unsafe { $avx2_pair::<1>(job.rows::<1>(a, i), p, f, acc) },
                        }),
                    )
                }
                #[cfg(target_arch = "x86_64")]
                (Isa::Avx2, _) => {
                    run::<$t, { 64 / E }, 6>(
                        job,
                        panels,
                        out,
                        |rows, i, k0, p, n, acc, start| {
                            let a = job.steps::<6>(i).skip(k0);
                            match rows {
                                5.. => unsafe { $avx2::<6>(a, p, n, acc, start) },
                                3..=4 => unsafe { $avx2::<4>(a, p, n, acc, start) },
                                // Two rows (`m` = 2), in 4 registers rather than 8 (half
                                // the work); mostly two panels at once instead (`Pair`).
                                2 => unsafe { $avx2::<2>(a, p, n, acc, start) },
                                _ => unsafe { $avx2::<1>(a, p, n, acc, start) },
                            }
                        },
                        Some(&|i, p, f, acc| match job.m - i {
                            // SAFETY: as above, the block's first two rows (or one).
                            2 => unsafe { $avx2_pair::<2>(job.steps::<6>(i), p, f, acc) },
                            _ => unsafe { $avx2_pair::<1>(job.steps::<6>(i), p, f, acc) },
                        }),
                    )
                }
                (_, Left::Rows(a)) => run::<$t, { 32 / E }, 4>(
                    job,
                    panels,
                    out,
                    |rows, i, k0, p, _, acc, start| {
                        if rows == 1 {
                            unsafe {
                                portable::<$t, 1, { 32 / E }, 4>(
                                    job.rows::<1>(a, i).skip(k0),
                                    p,
                                    acc,
                                    start,
                                )
                            }
                        } else {
                            unsafe {
                                portable::<$t, 4, { 32 / E }, 4>(
                                    job.rows::<4>(a, i).skip(k0),
                                    p,
                                    acc,
                                    start,
                                )
                            }
                        }
                    },
                    None,
                ),
                (_, _) => run::<$t, { 32 / E }, 4>(
                    job,
                    panels,
                    out,
                    |rows, i, k0, p, _, acc, start| {
                        let a = job.steps::<4>(i).skip(k0);
                        if rows == 1 {
                            unsafe { portable::<$t, 1, { 32 / E }, 4>(a, p, acc, start) }
                        } else {
                            unsafe { portable::<$t, 4, { 32 / E }, 4>(a, p, acc, start) }
                        }
                    },
                    None,
                ),
            }
        }
    };
}

/// Panel width and row block for an instruction set (as `kernels!` instantiates them).
fn blocking(isa: Isa, elem: usize) -> (usize, usize) {
    match isa {
        Isa::Avx512 => (128 / elem, 12),
        Isa::Avx2 => (64 / elem, 6),
        Isa::Base => (32 / elem, 4),
    }
}

macro_rules! packed_impl {
    ($t:ty, $kernels:ident) => {
        impl PackedMatrix<$t> {
            /// `w` (any strides) packed for the kernels of this CPU, when it is large
            /// enough to pay ([`PACK_MIN`]); else nothing is kept and the products are
            /// the plain ones.
            pub fn new(w: ArrayView2<'_, $t>) -> Self {
                let mut p = Self::default();
                p.pack(w);
                p
            }

            /// Packs `w` in place of the matrix packed before, in the same memory (a
            /// loop nested in another packs again each time it runs, allocating only
            /// when `w` grows).
            pub fn pack(&mut self, w: ArrayView2<'_, $t>) {
                let (k, n) = w.dim();
                self.pack_for(w, detect(), k * n >= PACK_MIN);
            }

            /// [`Self::pack`] for a matrix that only vectors multiply
            /// ([`Self::dot_vm`], [`Self::dot_add_vm`]): packed from [`PACK_VECTOR_MIN`]
            /// elements on.
            pub fn pack_vectors(&mut self, w: ArrayView2<'_, $t>) {
                let (k, n) = w.dim();
                self.pack_for(w, detect(), k * n >= PACK_VECTOR_MIN);
            }

            fn pack_for(&mut self, w: ArrayView2<'_, $t>, isa: Isa, pack: bool) {
                let (k, n) = w.dim();
                let (nr, _) = blocking(isa, core::mem::size_of::<$t>());
                let count = if pack { n.div_ceil(nr) } else { 0 };
                let len = count * k * nr;
                // The memory of a matrix packed in an earlier call when there is one
                // (`pool`): fresh memory is faulted in page by page (an LSTM's two
                // weight matrices, 6 MB, at every call).
                if self.panels.capacity() < len {
                    if let Some(kept) = super::pool::take::<$t>(len) {
                        self.panels = kept;
                    }
                }
                // Padding first, up to a cache line: the allocator gives 16-byte
                // alignment, and an LSTM's W_x panels were read 16 bytes off a line in
                // every call (each 128-byte panel row over three lines).
                let pad = super::buffer::align_elems::<$t>();
                self.panels.clear();
                self.panels.reserve(len + pad);
                let skip = if len == 0 {
                    0
                } else {
                    self.panels
                        .as_ptr()
                        .align_offset(super::buffer::ALIGN)
                        .min(pad)
                };
                self.panels.resize(skip, 0.0);
                self.start = skip;
                let slots = &mut self.panels.spare_capacity_mut()[..len];
                if len >= PACK_SPLIT_MIN && crate::threads::num_threads() >= 2 {
                    // Shared with the spinning helper: at two threads the packing of an
                    // LSTM's 6 MB of weights was the call's longest serial part.
                    let mut chunks: [Option<_>; SHARED_CHUNKS] = Default::default();
                    let mut rest = slots;
                    for (i, chunk) in chunks.iter_mut().enumerate() {
                        let panels = nth_range(0..count, i, SHARED_CHUNKS);
                        let (head, tail) = rest.split_at_mut(panels.len() * k * nr);
                        rest = tail;
                        *chunk = Some((panels.start, head));
                    }
                    crate::threads::spin::share(chunks, |(first, slots)| {
                        fill_panels(slots, w, nr, first)
                    });
                } else {
                    fill_panels(slots, w, nr, 0);
                }
                // SAFETY: `fill_panels` wrote each of the `len` elements after the
                // padding, within the capacity reserved above.
                unsafe { self.panels.set_len(skip + len) };
                (self.k, self.n, self.isa, self.packed) = (k, n, isa, pack);
            }

            #[cfg(test)]
            fn for_isa(w: ArrayView2<'_, $t>, isa: Isa, pack: bool) -> Self {
                let mut p = Self::default();
                p.pack_for(w, isa, pack);
                p
            }

            /// `out = a · w` for an `(m, k)` matrix `a`, `w` the matrix this was made
            /// from: through the packed panels when there are some, else the plain
            /// product (`kernels::dot_mm`), whose errors these are (`Err(Dot)` naming
            /// `what` when `a` has not `k` columns).
            #[inline(always)]
            pub fn dot_mm<'o>(
                &mut self,
                out: impl Destination<'o, $t, Ix2>,
                a: ArrayView2<'_, $t>,
                w: ArrayView2<'_, $t>,
                what: &str,
            ) -> Result<()> {
                let (m, k) = a.dim();
                if !self.packed || w.dim() != (self.k, self.n) || k != self.k {
                    return super::dot::dot_mm(out, a, w, what);
                }
                let mut out = out.prepare(Ix2(m, self.n), what)?;
                self.product(a, &mut out, false);
                Ok(())
            }

            /// `out = c + a · w` (the gemm rewrite's `c + dot(a, w)`): `c` broadcast into
            /// `out`, then the product added through the packed panels. Anything else
            /// (a difference, `c` larger than the product, no panels): the plain kernel,
            /// `kernels::dot_add_mm`, whose errors these are.
            #[inline(always)]
            pub fn dot_add_mm<'o, Dc: ndarray::Dimension>(
                &mut self,
                out: impl Destination<'o, $t, Ix2>,
                c: ndarray::ArrayView<'_, $t, Dc>,
                a: ArrayView2<'_, $t>,
                w: ArrayView2<'_, $t>,
                subtract: bool,
                what: &str,
            ) -> Result<()> {
                let (m, k) = a.dim();
                if subtract || !self.packed || w.dim() != (self.k, self.n) || k != self.k {
                    return super::dot::dot_add_mm(out, c, a, w, subtract, what);
                }
                let cv = c.view();
                let Some(addend) = cv.broadcast(Ix2(m, self.n)) else {
                    return super::dot::dot_add_mm(out, c, a, w, subtract, what);
                };
                let mut out = out.prepare(Ix2(m, self.n), what)?;
                super::dot::copy_addend(&mut out, addend);
                self.product(a, &mut out, true);
                Ok(())
            }

            /// `out = c + a · w` for a vector `a` of length `k` (see [`Self::dot_add_mm`]).
            pub fn dot_add_vm<'o, Dc: ndarray::Dimension>(
                &mut self,
                out: impl Destination<'o, $t, Ix1>,
                c: ndarray::ArrayView<'_, $t, Dc>,
                a: ArrayView1<'_, $t>,
                w: ArrayView2<'_, $t>,
                subtract: bool,
                what: &str,
            ) -> Result<()> {
                let cv = c.view();
                let Some(addend) = cv.broadcast(Ix1(self.n)) else {
                    return super::dot::dot_add_vm(out, c, a, w, subtract, what);
                };
                if subtract || !self.packed || w.dim() != (self.k, self.n) || a.len() != self.k {
                    return super::dot::dot_add_vm(out, c, a, w, subtract, what);
                }
                let mut out = out.prepare(Ix1(self.n), what)?;
                super::dot::copy_addend(&mut out, addend);
                let mut out = out.insert_axis(Axis(0));
                self.product(a.insert_axis(Axis(0)), &mut out, true);
                Ok(())
            }

            /// Rows `start .. start + chunk` of the stack product `a · w` (`a` of shape
            /// `(t, m, k)`, fewer rows at the end of `a`) into the first rows of `out`,
            /// which keeps `chunk` rows: `kernels::project_chunk` through the packed `w`
            /// (a loop's input projection, a chunk of steps at a time). Measured on a
            /// 2-core Intel Xeon (AVX-512): elman's projection by faer's GEMM in chunks
            /// was slower than the packed product of every step (the program without
            /// rewrites); through the packed `w` the chunks are faster than both.
            pub fn project_chunk(
                &mut self,
                out: &mut ndarray::Array3<$t>,
                a: ndarray::ArrayView3<'_, $t>,
                w: ArrayView2<'_, $t>,
                start: usize,
                chunk: usize,
                what: &str,
            ) -> Result<()> {
                let ((t, m, k), n) = (a.dim(), w.ncols());
                if k != w.nrows() {
                    return Err(crate::error::Error::Dot {
                        what: what.to_string(),
                        left: a.shape().to_vec(),
                        right: w.shape().to_vec(),
                    });
                }
                let end = start.saturating_add(chunk).min(t);
                let rows = end.saturating_sub(start);
                crate::kernels::try_ensure_shape(what, out, ndarray::Ix3(chunk, m, n))?;
                let a = a.slice_axis(Axis(0), ndarray::Slice::from(start.min(end)..end));
                let mut out = out.slice_axis_mut(Axis(0), ndarray::Slice::from(0..rows));
                if let (Ok(a2), Ok(o2)) = (
                    a.into_shape_with_order((rows * m, k)),
                    out.view_mut().into_shape_with_order((rows * m, n)),
                ) {
                    return self.dot_mm(o2, a2, w, what);
                }
                for (o, a_t) in out.outer_iter_mut().zip(a.outer_iter()) {
                    self.dot_mm(o, a_t, w, what)?;
                }
                Ok(())
            }

            /// `out = a · w` for a vector `a` of length `k` (see [`Self::dot_mm`]).
            pub fn dot_vm<'o>(
                &mut self,
                out: impl Destination<'o, $t, Ix1>,
                a: ArrayView1<'_, $t>,
                w: ArrayView2<'_, $t>,
                what: &str,
            ) -> Result<()> {
                if !self.packed || w.dim() != (self.k, self.n) || a.len() != self.k {
                    return super::dot::dot_vm(out, a, w, what);
                }
                let out = out.prepare(Ix1(self.n), what)?;
                self.product(a.insert_axis(Axis(0)), &mut out.insert_axis(Axis(0)), false);
                Ok(())
            }

            /// `out += a · w` for an `(m, k)` matrix `a` and an `(m, n)` view `out` (a
            /// step's row block that already holds the input projection, say).
            /// `Err(Dot)` naming `what` when the shapes do not fit.
            pub fn dot_mm_add(
                &mut self,
                mut out: ArrayViewMut2<'_, $t>,
                a: ArrayView2<'_, $t>,
                w: ArrayView2<'_, $t>,
                what: &str,
            ) -> Result<()> {
                let ((m, k), (k2, n)) = (a.dim(), w.dim());
                if k != k2 || out.dim() != (m, n) {
                    return Err(crate::error::Error::Dot {
                        what: what.to_string(),
                        left: a.shape().to_vec(),
                        right: w.shape().to_vec(),
                    });
                }
                if !self.packed || w.dim() != (self.k, self.n) {
                    ndarray::linalg::general_mat_mul(1.0, &a, &w, 1.0, &mut out);
                    return Ok(());
                }
                self.product(a, &mut out, true);
                Ok(())
            }

            /// `out = a · w`, shapes checked.
            fn product(
                &mut self,
                a: ArrayView2<'_, $t>,
                out: &mut ArrayViewMut2<'_, $t>,
                add: bool,
            ) {
                let (m, k) = a.dim();
                let (nr, mr) = blocking(self.isa, core::mem::size_of::<$t>());
                if k == 0 {
                    // Empty sums.
                    if !add {
                        out.fill(0.0);
                    }
                    return;
                }
                let panels = self.n.div_ceil(nr);
                let parts = split_parts(panels, m * k * self.n);
                // A single row read in place along its stride; rows read in place when
                // each is contiguous and the product too narrow for packing to pay; else
                // `a` packed.
                let contiguous = k == 1 || a.strides()[1] == 1;
                let shared = if m == 1 || (contiguous && self.n < PACK_LEFT_COLS * parts) {
                    None
                } else {
                    Some(SharedLeft::new(&mut self.left, a, mr))
                };
                let (n, panels_memory, reverse, isa) =
                    (self.n, &self.panels[self.start..], self.reverse, self.isa);
                self.reverse = !self.reverse;
                let run = |range: std::ops::Range<usize>, out: &mut ArrayViewMut2<'_, $t>| {
                    let left = match &shared {
                        Some(shared) => Left::Packed(shared.packed()),
                        None if m == 1 => Left::Row(a),
                        None => Left::Rows(a),
                    };
                    let job = Job {
                        m,
                        k,
                        n,
                        left,
                        panels: panels_memory,
                        add,
                        reverse,
                    };
                    $kernels::run_panels(isa, &job, range, out)
                };
                split_in(0..panels, parts, nr, out, &run);
            }
        }
    };
}
mod kernels_f32 {
    use super::*;
    dispatch!(
        f32,
        avx512_f32,
        avx2_f32,
        avx2_pair_f32,
        avx512_vector_f32,
        avx2_vector_f32
    );
}
mod kernels_f64 {
    use super::*;
    dispatch!(
        f64,
        avx512_f64,
        avx2_f64,
        avx2_pair_f64,
        avx512_vector_f64,
        avx2_vector_f64
    );
}
packed_impl!(f32, kernels_f32);
packed_impl!(f64, kernels_f64);

/// A packed product is shared from this many multiply-adds on, between this thread and
/// the spinning helper (`crate::threads::spin`). Measured on a 2-core Intel Xeon
/// (AVX-512), f32, products back to back: elman's step product (32 x 512 x 512, 8.4 M)
/// 157 µs on one thread, 81 µs split; lstm's (32 x 512 x 2048, 33.5 M) 600 µs, 304 µs;
/// 32 x 256 x 256 (2.1 M) 27 µs, 31 µs split (loses).
pub const SPLIT_MIN_WORK: usize = 4 << 20;

/// Into how many parts a product of `panels` panels and `work` multiply-adds is split,
/// each a range of panels and the columns of `out` they write, run by [`split_in`]: one
/// (this thread) unless the product is large enough to pay; two (this thread and the
/// spinning helper, `crate::threads::spin`, sharing [`SHARED_CHUNKS`] ranges) from
/// [`SPLIT_MIN_WORK`] on, one per thread on
/// rayon's pool from `threads::PAR_MIN_WORK` on when more than two threads are allowed.
fn split_parts(panels: usize, work: usize) -> usize {
    let threads = crate::threads::num_threads().min(panels);
    if threads < 2 || work < SPLIT_MIN_WORK {
        return 1;
    }
    if threads > 2 && work >= crate::threads::PAR_MIN_WORK {
        threads
    } else {
        2
    }
}

/// Into how many ranges of panels a product (or a packing) shared with the spinning helper
/// is cut, each thread taking the next one free (`threads::spin::share`). In two fixed
/// halves, lstm's step at two threads waited for its slower half 8% of the time on a
/// noisy 2-core VM (one vCPU slowed by the host for a while, the other idle at the join);
/// in eighths, 3%.
const SHARED_CHUNKS: usize = 8;

/// `panels` cut into `N` ranges of nearly equal length (`None` where empty), each with the
/// columns of `out` it writes (the last one's possibly short of a whole panel).
fn column_chunks<'a, T, const N: usize>(
    panels: std::ops::Range<usize>,
    nr: usize,
    out: ArrayViewMut2<'a, T>,
) -> [Option<(std::ops::Range<usize>, ArrayViewMut2<'a, T>)>; N] {
    let mut chunks = std::array::from_fn(|_| None);
    let mut rest = out;
    for (i, chunk) in chunks.iter_mut().enumerate() {
        let range = nth_range(panels.clone(), i, N);
        let cols = if i + 1 == N {
            rest.ncols()
        } else {
            (range.len() * nr).min(rest.ncols())
        };
        let (head, tail) = rest.split_at(Axis(1), cols);
        rest = tail;
        if !range.is_empty() {
            *chunk = Some((range, head));
        }
    }
    chunks
}

/// The `i`-th of `n` consecutive ranges of nearly equal length that `all` is cut into.
fn nth_range(all: std::ops::Range<usize>, i: usize, n: usize) -> std::ops::Range<usize> {
    let count = all.len();
    all.start + count * i / n..all.start + count * (i + 1) / n
}

/// `panels` in `parts` parts: two shared with the spinning helper in [`SHARED_CHUNKS`]
/// ranges; more in halves (recursively) over rayon's pool, the first half on this thread.
fn split_in<T: Send>(
    panels: std::ops::Range<usize>,
    parts: usize,
    nr: usize,
    out: &mut ArrayViewMut2<'_, T>,
    run: &(impl Fn(std::ops::Range<usize>, &mut ArrayViewMut2<'_, T>) + Sync),
) {
    let count = panels.len();
    let first = parts / 2;
    let half = count * first / parts.max(1);
    if parts <= 1 || half == 0 || half == count {
        run(panels, out);
        return;
    }
    if parts == 2 {
        let chunks = column_chunks::<T, SHARED_CHUNKS>(panels, nr, out.view_mut());
        crate::threads::spin::share(chunks, |(range, mut out)| run(range, &mut out));
        return;
    }
    let at = panels.start + half;
    let (mut left, mut right) = out.view_mut().split_at(Axis(1), half * nr);
    let (a, b) = (panels.start..at, at..panels.end);
    let rest = parts - first;
    #[cfg(feature = "faer")]
    {
        rayon::join(
            || split_in(a, first, nr, &mut left, run),
            || split_in(b, rest, nr, &mut right, run),
        );
    }
    #[cfg(not(feature = "faer"))]
    {
        split_in(a, first, nr, &mut left, run);
        split_in(b, rest, nr, &mut right, run);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use ndarray::{s, Array1, Array2};

    /// `a · w` by the textbook loop, in f64.
    fn reference(a: &Array2<f64>, w: &Array2<f64>) -> Array2<f64> {
        let (m, n) = (a.nrows(), w.ncols());
        Array2::from_shape_fn((m, n), |(i, j)| {
            (0..a.ncols()).map(|k| a[[i, k]] * w[[k, j]]).sum()
        })
    }

    /// Multiples of 1/64 in [-0.75, 0.75]: their products' sums are exact in f64 and (for
    /// the sizes here) in f32, in any order.
    fn matrix(rows: usize, cols: usize, seed: usize) -> Array2<f64> {
        Array2::from_shape_fn((rows, cols), |(i, j)| {
            (((i * 131 + j * 71 + seed * 17) % 97) as f64 - 48.0) / 64.0
        })
    }

    /// The instruction sets this CPU runs, each of which a test packs for in turn.
    fn isas() -> Vec<Isa> {
        let best = detect();
        [Isa::Avx512, Isa::Avx2, Isa::Base]
            .into_iter()
            .filter(|&i| match best {
                Isa::Avx512 => true,
                Isa::Avx2 => i != Isa::Avx512,
                Isa::Base => i == Isa::Base,
            })
            .collect()
    }

    #[test]
    fn products_of_every_shape_agree_with_the_textbook_loop() {
        // Row counts around the blocks (4, 6, 8, 12), column counts around the panels (4..32).
        for &(m, k, n) in &[
            (1, 1, 1),
            (1, 7, 33),
            (2, 5, 3),
            (5, 9, 16),
            (6, 16, 31),
            (7, 3, 64),
            (8, 64, 65),
            (9, 17, 8),
            (13, 1, 40),
            (20, 33, 97),
            (25, 8, 64),
            (32, 128, 96),
            (3, 0, 5),
            (0, 4, 4),
            // Wide enough for the left operand to be packed (PACK_LEFT_COLS).
            (2, 5, 1030),
            (13, 7, 1024),
            (25, 3, 1100),
            // Long sums of few rows, run in chunks of `k` (KC_BYTES) on every instruction
            // set: still each sum in order, bit for bit.
            (13, 1100, 40),
            (32, 600, 70),
            (1, 1300, 33),
            (48, 300, 1030),
            // Two rows after full blocks of 6: with AVX2, the last eight rows as two blocks
            // of four (`RowBlocks`), read in place and packed, in chunks of `k` too.
            (14, 40, 70),
            (14, 40, 64),
            (8, 3, 48),
            (32, 40, 1030),
            (32, 40, 1024),
            (14, 1100, 40),
            (20, 1100, 1030),
            // Two rows alone, and one after full blocks (AVX2's `Pair`: two panels at
            // once, an odd panel count's last one alone), in place and packed.
            (2, 40, 70),
            (2, 40, 1030),
            (7, 40, 70),
            (13, 40, 1030),
        ] {
            let (a, w) = (matrix(m, k, 1), matrix(k, n, 2));
            let want = reference(&a, &w);
            let (a32, w32) = (a.mapv(|x| x as f32), w.mapv(|x| x as f32));
            for isa in isas() {
                let mut p = PackedMatrix::<f64>::for_isa(w.view(), isa, true);
                let mut out = Array2::<f64>::from_elem((m, n), f64::NAN);
                p.dot_mm(&mut out, a.view(), w.view(), "a · w").unwrap();
                assert_eq!(out, want, "{m}x{k}x{n} {isa:?}");
                // Again (the scratch reused), and in f32.
                p.dot_mm(&mut out, a.view(), w.view(), "a · w").unwrap();
                assert_eq!(out, want);
                let mut p32 = PackedMatrix::<f32>::for_isa(w32.view(), isa, true);
                let mut out32 = Array2::<f32>::zeros((0, 0));
                p32.dot_mm(&mut out32, a32.view(), w32.view(), "a · w")
                    .unwrap();
                assert_eq!(out32, want.mapv(|x| x as f32), "{m}x{k}x{n} {isa:?} f32");
                if m >= 1 {
                    let mut v = Array1::<f64>::zeros(0);
                    p.dot_vm(&mut v, a.row(0), w.view(), "a · w").unwrap();
                    assert_eq!(v, want.row(0), "{m}x{k}x{n} {isa:?} vector");
                }
            }
        }
    }

    #[test]
    fn products_added_into_a_destination() {
        for &(m, k, n) in &[(32, 64, 70), (1, 9, 5), (7, 3, 33)] {
            let (a, w, c) = (matrix(m, k, 1), matrix(k, n, 2), matrix(m, n, 3));
            let want = &c + &reference(&a, &w);
            for isa in isas() {
                let mut p = PackedMatrix::<f64>::for_isa(w.view(), isa, true);
                let mut out = c.clone();
                p.dot_mm_add(out.view_mut(), a.view(), w.view(), "c + a · w")
                    .unwrap();
                assert_eq!(out, want, "{m}x{k}x{n} {isa:?}");
            }
            // Not packed (small): the same sums.
            let mut p = PackedMatrix::<f64>::new(w.view());
            let mut out = c.clone();
            p.dot_mm_add(out.view_mut(), a.view(), w.view(), "c + a · w")
                .unwrap();
            assert_eq!(out, want);
            let e = p.dot_mm_add(out.view_mut(), a.t(), w.view(), "c + a · w");
            assert!(e.is_err() || m == k, "mismatched shapes");
        }
    }

    /// The gemm rewrite's `c + a · w` through the panels: `c` full, a row (a bias) and a
    /// scalar; a difference and a sum larger than the product go to the plain kernel.
    #[test]
    fn sums_of_an_addend_and_a_product() {
        for &(m, k, n) in &[(32, 64, 70), (1, 9, 5), (7, 3, 33)] {
            let (a, w, c) = (matrix(m, k, 1), matrix(k, n, 2), matrix(m, n, 3));
            let product = reference(&a, &w);
            let bias = c.row(0).to_owned();
            for isa in isas() {
                let mut p = PackedMatrix::<f64>::for_isa(w.view(), isa, true);
                let mut out = Array2::<f64>::zeros((0, 0));
                p.dot_add_mm(&mut out, c.view(), a.view(), w.view(), false, "c + a · w")
                    .unwrap();
                assert_eq!(out, &c + &product, "{m}x{k}x{n} {isa:?}");
                p.dot_add_mm(
                    &mut out,
                    bias.view(),
                    a.view(),
                    w.view(),
                    false,
                    "c + a · w",
                )
                .unwrap();
                assert_eq!(out, &bias + &product, "{m}x{k}x{n} {isa:?} row");
                p.dot_add_mm(
                    &mut out,
                    ndarray::arr0(2.0).view(),
                    a.view(),
                    w.view(),
                    true,
                    "c - a · w",
                )
                .unwrap();
                assert_eq!(
                    out,
                    product.mapv(|x| 2.0 - x),
                    "{m}x{k}x{n} {isa:?} difference"
                );
                let mut v = Array1::<f64>::zeros(0);
                p.dot_add_vm(&mut v, bias.view(), a.row(0), w.view(), false, "c + a · w")
                    .unwrap();
                assert_eq!(v, &bias + &product.row(0), "{m}x{k}x{n} {isa:?} vector");
                p.dot_add_vm(&mut v, bias.view(), a.row(0), w.view(), true, "c - a · w")
                    .unwrap();
                assert_eq!(
                    v,
                    &bias - &product.row(0),
                    "{m}x{k}x{n} {isa:?} vector difference"
                );
            }
        }
        // Three rows of c beside a product of one row: numpy broadcasts the product.
        let (a, w, c) = (matrix(1, 64, 1), matrix(64, 70, 2), matrix(3, 70, 3));
        let mut p = PackedMatrix::<f64>::new(w.view());
        let mut out = Array2::<f64>::zeros((0, 0));
        p.dot_add_mm(&mut out, c.view(), a.view(), w.view(), false, "c + a · w")
            .unwrap();
        assert_eq!(out, &c + &reference(&a, &w));
    }

    #[test]
    fn a_small_matrix_is_not_packed_and_gives_the_plain_product() {
        let (a, w) = (matrix(4, 20, 7), matrix(20, 30, 8));
        let mut p = PackedMatrix::<f64>::new(w.view());
        assert!(
            !p.packed && p.panels.is_empty(),
            "20 x 30 is below PACK_MIN"
        );
        let mut out = Array2::<f64>::zeros((0, 0));
        p.dot_mm(&mut out, a.view(), w.view(), "a · w").unwrap();
        assert_eq!(out, reference(&a, &w));
        let big = matrix(256, 200, 9);
        assert!(PackedMatrix::<f32>::new(big.mapv(|x| x as f32).view()).packed);
    }

    /// A transposed matrix (a backward step's `dz . W^T`, packed from `W.t()`): the same
    /// products as the transpose made contiguous.
    #[test]
    fn a_transposed_matrix_packs_as_its_transpose() {
        let (a, w) = (matrix(32, 96, 5), matrix(80, 96, 6));
        let wt = w.t();
        let want = reference(&a, &wt.to_owned());
        for isa in isas() {
            let mut p = PackedMatrix::<f64>::for_isa(wt, isa, true);
            let mut out = Array2::<f64>::zeros((0, 0));
            p.dot_mm(&mut out, a.view(), wt, "dz . W^T").unwrap();
            assert_eq!(out, want, "{isa:?}");
        }
        // Large enough to be packed by `new`, as the generated code does.
        let big = matrix(256, 256, 7);
        let mut p = PackedMatrix::<f64>::new(big.t());
        assert!(p.packed);
        let mut out = Array2::<f64>::zeros((0, 0));
        let full = matrix(8, 256, 8);
        p.dot_mm(&mut out, full.view(), big.t(), "dz . W^T")
            .unwrap();
        assert_eq!(out, reference(&full, &big.t().to_owned()));
    }

    #[test]
    fn strided_operands_and_destinations() {
        let (a, w) = (matrix(10, 12, 3), matrix(24, 9, 4));
        let w_strided = w.slice(s![..;2, ..]); // 12 x 9, rows stepped
        let want = reference(&a, &w_strided.to_owned());
        for isa in isas() {
            let mut p = PackedMatrix::<f64>::for_isa(w_strided, isa, true);
            let mut out = Array2::<f64>::zeros((10, 9));
            p.dot_mm(&mut out, a.view(), w_strided, "a · w").unwrap();
            assert_eq!(out, want);
            // A transposed left operand and a transposed destination.
            let at = a.t().to_owned();
            let mut dest = Array2::<f64>::zeros((9, 10));
            p.dot_mm(dest.view_mut().reversed_axes(), at.t(), w_strided, "a · w")
                .unwrap();
            assert_eq!(dest.t(), want);
            // Vectors read in place along their strides: a column, and a row reversed.
            let mut v = Array1::<f64>::zeros(0);
            p.dot_vm(&mut v, at.column(3), w_strided, "a · w").unwrap();
            assert_eq!(v, want.row(3));
            let reversed = a.slice(s![4, ..;-1]);
            let want_rev = reference(
                &reversed.to_owned().insert_axis(Axis(0)),
                &w_strided.to_owned(),
            );
            p.dot_vm(&mut v, reversed, w_strided, "a · w").unwrap();
            assert_eq!(v, want_rev.row(0));
        }
    }

    #[test]
    fn a_left_operand_of_the_wrong_width_is_the_plain_products_error() {
        let w = Array2::<f32>::zeros((300, 300));
        let mut p = PackedMatrix::<f32>::new(w.view());
        assert!(p.packed);
        let mut out = Array2::<f32>::zeros((0, 0));
        let a = Array2::<f32>::zeros((2, 5));
        let e = p
            .dot_mm(&mut out, a.view(), w.view(), "h.dot(w)")
            .unwrap_err();
        assert_eq!(
            e,
            Error::Dot {
                what: "h.dot(w)".into(),
                left: vec![2, 5],
                right: vec![300, 300],
            }
        );
        let mut v = Array1::<f32>::zeros(0);
        let x = Array1::<f32>::zeros(3);
        assert!(p.dot_vm(&mut v, x.view(), w.view(), "x").is_err());
        // A destination row of the wrong length is the step's shape error.
        let mut trace = Array2::<f32>::zeros((2, 7));
        let row = crate::kernels::Row::new(trace.row_mut(0), "`h`", "h.dot(w)");
        let e = p
            .dot_vm(row, Array1::<f32>::zeros(300).view(), w.view(), "h.dot(w)")
            .unwrap_err();
        assert!(matches!(e, Error::StepResultShape { .. }), "{e:?}");
    }

    #[test]
    fn a_matrix_only_vectors_multiply_is_packed_from_a_smaller_size() {
        // 40 x 40 is below PACK_MIN, not below PACK_VECTOR_MIN; 20 x 20 below both.
        for (k, n, packed) in [(40, 40, true), (20, 20, false), (30, 300, true)] {
            let (a, w) = (matrix(2, k, 1), matrix(k, n, 2));
            let want = reference(&a, &w);
            assert!(!PackedMatrix::<f64>::new(w.view()).packed || k * n >= PACK_MIN);
            let mut p = PackedMatrix::<f64>::default();
            p.pack_vectors(w.view());
            assert_eq!(p.packed, packed, "{k} x {n}");
            let mut v = Array1::<f64>::zeros(0);
            p.dot_vm(&mut v, a.row(1), w.view(), "a · w").unwrap();
            assert_eq!(v, want.row(1), "{k} x {n}");
        }
        // Vectors along any stride, through four panels at a time (64 columns of f64 and
        // more) and one at a time: a row reversed and a column.
        for n in [64, 100, 300] {
            let (a, w) = (matrix(3, 40, 3), matrix(40, n, 4));
            let mut p = PackedMatrix::<f64>::default();
            p.pack_vectors(w.view());
            let mut v = Array1::<f64>::zeros(0);
            let reversed = a.slice(s![2, ..;-1]);
            p.dot_vm(&mut v, reversed, w.view(), "a · w").unwrap();
            let want = reference(&reversed.to_owned().insert_axis(Axis(0)), &w);
            assert_eq!(v, want.row(0), "reversed, {n} columns");
            let at = a.t().as_standard_layout().into_owned();
            p.dot_vm(&mut v, at.column(1), w.view(), "a · w").unwrap();
            assert_eq!(v, reference(&a, &w).row(1), "a column, {n} columns");
        }
    }

    #[test]
    fn a_dropped_packing_leaves_its_memory_to_the_next() {
        use crate::kernels::pool;
        pool::release();
        let (a, w) = (matrix(3, 512, 1), matrix(512, 1024, 2)); // 4 MB of panels
        let p = PackedMatrix::<f64>::new(w.view());
        let memory = p.panels.as_ptr();
        drop(p);
        assert_eq!(pool::kept(), 1);
        let mut q = PackedMatrix::<f64>::new(w.view());
        assert_eq!((q.panels.as_ptr(), pool::kept()), (memory, 0));
        let mut out = Array2::<f64>::zeros((0, 0));
        q.dot_mm(&mut out, a.view(), w.view(), "a · w").unwrap();
        assert_eq!(out, reference(&a, &w));
    }

    #[test]
    fn a_product_split_over_threads_agrees() {
        let _guard = crate::threads::TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // 62 rows: with AVX2 the last eight as two blocks of four (`RowBlocks`) in each
        // part.
        let (a, w) = (matrix(62, 512, 5), matrix(512, 520, 6));
        let want = reference(&a, &w);
        // Rows read in place, and a left operand whose rows are not contiguous, packed by
        // both parts of the split product (`SharedLeft`).
        let at = Array2::from_shape_fn((512, 62), |(i, j)| a[[j, i]]);
        assert_ne!(at.t().strides()[1], 1);
        let mut p = PackedMatrix::<f64>::new(w.view());
        let mut out = Array2::<f64>::zeros((0, 0));
        for threads in [1, 2] {
            crate::threads::set_num_threads(threads);
            for left in [a.view(), at.t()] {
                // Twice: the panels are visited in one order, then in the other.
                for _ in 0..2 {
                    p.dot_mm(&mut out, left, w.view(), "a · w").unwrap();
                    assert_eq!(out, want, "{threads} threads");
                }
            }
        }
        crate::threads::set_num_threads(0);
    }

    /// The chunks a shared product is cut into cover its panels in order, each with its
    /// panels' columns, the last one short of a whole panel when the matrix is; fewer
    /// panels than chunks leave some empty.
    #[test]
    fn column_chunks_cover_the_panels_and_their_columns() {
        for (panels, nr, n) in [
            (0..66, 8, 521),
            (3..66, 8, 521),
            (0..5, 16, 80),
            (0..1, 4, 3),
        ] {
            let mut out = Array2::<f64>::zeros((2, n - panels.start * nr));
            let chunks = column_chunks::<f64, 8>(panels.clone(), nr, out.view_mut());
            let (mut next, mut cols) = (panels.start, 0);
            let mut some = 0;
            for (range, view) in chunks.into_iter().flatten() {
                assert_eq!(range.start, next);
                assert!(range.end > range.start);
                let width = ((range.end - range.start) * nr).min(n - range.start * nr);
                assert_eq!(view.dim(), (2, width), "{range:?}");
                (next, cols, some) = (range.end, cols + width, some + 1);
            }
            assert_eq!((next, cols), (panels.end, n - panels.start * nr));
            assert_eq!(some, panels.len().min(8));
        }
    }

    /// A matrix of at least `PACK_SPLIT_MIN` elements is packed by both threads: the
    /// same panels (the last one padded with zeros) as on one, contiguous or not.
    #[test]
    fn packing_split_over_threads_agrees() {
        let _guard = crate::threads::TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let (a, w) = (matrix(20, 515, 7), matrix(515, 521, 8));
        const { assert!(515 * 521 >= PACK_SPLIT_MIN) };
        let want = reference(&a, &w);
        let wt = w.t().to_owned();
        for w in [w.view(), wt.t()] {
            let mut packed = Vec::new();
            for threads in [1, 2] {
                crate::threads::set_num_threads(threads);
                let mut p = PackedMatrix::<f64>::new(w);
                let mut out = Array2::<f64>::zeros((0, 0));
                p.dot_mm(&mut out, a.view(), w, "a · w").unwrap();
                assert_eq!(out, want, "{threads} threads");
                let panels = &p.panels[p.start..];
                assert_eq!(panels.as_ptr() as usize % crate::kernels::buffer::ALIGN, 0);
                packed.push(panels.to_vec());
            }
            assert_eq!(packed[0], packed[1]);
        }
        crate::threads::set_num_threads(0);
    }
}
