//! Elementwise maps with numpy broadcasting, writing into a reused output buffer.
//!
//! The output's rank `D` is the largest input rank; lower-rank inputs (scalars as 0-d
//! views from `ndarray::aview0`) broadcast. The shape check runs before `Zip`, whose
//! `and_broadcast` would otherwise panic.
//!
//! When the output is contiguous in standard order and every input either has its shape
//! (contiguous), covers its last axes (a contiguous row broadcast along the leading axes,
//! like a bias) or is a single value, the map runs as plain loops over slices through
//! [`isa::with_best_isa`]: the closure (one operation, or a fused chain) is inlined into
//! them and vectorized, with AVX2 where the CPU has it. Otherwise (strided, transposed or
//! reversed views, other broadcasts) `ndarray::Zip` walks the arrays. Both compute the same
//! bits.
//!
//! `pair1`..`pair16` are a fused pass with two results (an LSTM's state and output from its
//! gate block): both of the inputs' broadcast shape, written in one pass, row by row.

use std::mem::MaybeUninit;

use ndarray::{ArrayView, ArrayViewMut, Axis, Dimension, IntoDimension, IxDyn, Zip};

use crate::element::Element;
use crate::error::Result;
use crate::kernels::buffer::{as_slots, broadcast_shape, prepare_fast_first, Destination};
use crate::kernels::isa;

/// Most elements per slice loop when an input is a single value (the length of the stack
/// buffer that repeats it).
const BLOCK: usize = 128;

/// Maps of at least this many elements are split in two halves, the second run by the
/// spinning helper thread, when two threads are allowed: elman's step (tanh of 16384 f32)
/// 22 µs on one thread.
const SPLIT_MIN_ELEMENTS: usize = 16384;

/// Rows shorter than this (a broadcast row of a few elements) go through `Zip`: one slice
/// loop per row would cost more than it saves.
const MIN_ROW: usize = 16;

/// How an input covers the output, when the map can run as slice loops.
#[derive(Clone, Copy)]
enum Operand<'a, A> {
    /// The output's shape, contiguous: element i of the output reads `s[i]`.
    Full(&'a [A]),
    /// The output's last axes (after leading axes of length 1), contiguous: element i
    /// reads `s[i % s.len()]`.
    Row(&'a [A]),
    /// One value for every element.
    Scalar(A),
}

impl<'a, A: Copy> Operand<'a, A> {
    /// How `x` covers an output of shape `out` (which broadcasting already checked), if
    /// slice loops can read it.
    fn of<D: Dimension>(x: &ArrayView<'a, A, D>, out: &[usize]) -> Option<Self> {
        if x.len() == 1 {
            return x.iter().next().map(|&v| Operand::Scalar(v));
        }
        let s = x.to_slice()?;
        let lead = x.shape().iter().take_while(|&&d| d == 1).count();
        if x.shape() == out {
            Some(Operand::Full(s))
        } else if out.ends_with(&x.shape()[lead..]) {
            Some(Operand::Row(s))
        } else {
            None
        }
    }

    /// The row length for [`blocks`]: `Some(len)` for a row, `Some(0)` for a scalar.
    fn period(&self) -> Option<usize> {
        match self {
            Operand::Full(_) => None,
            Operand::Row(s) => Some(s.len()),
            Operand::Scalar(_) => Some(0),
        }
    }

    /// A value to fill the block buffer with: the scalar (any element for the others,
    /// which do not read the buffer). `None` only for an empty input.
    fn fill(&self) -> Option<A> {
        match self {
            Operand::Full(s) | Operand::Row(s) => s.first().copied(),
            Operand::Scalar(v) => Some(*v),
        }
    }

    /// Elements `start..start + len` of the output as read from this input; the block is
    /// inside one row, and at most `BLOCK` long when a scalar is read (see [`blocks`]).
    #[inline(always)]
    fn block<'b>(&'b self, buffer: &'b [A], start: usize, len: usize) -> &'b [A] {
        match self {
            Operand::Full(s) => &s[start..start + len],
            Operand::Row(s) => {
                let at = start % s.len();
                &s[at..at + len]
            }
            Operand::Scalar(_) => &buffer[..len],
        }
    }
}

/// The row length and the most elements of one slice loop, from each input's period
/// (`Operand::period`); `None` when a row is too short to pay.
fn blocks(n: usize, periods: &[Option<usize>]) -> Option<(usize, usize)> {
    let mut row = n.max(1);
    let mut most = usize::MAX;
    for p in periods.iter().flatten() {
        match *p {
            0 => most = BLOCK,
            p if p < MIN_ROW => return None,
            // Rows are products of the output's last axes, so each divides the longer ones
            // and a block inside the shortest row is inside every row.
            p => row = row.min(p),
        }
    }
    Some((row, most))
}

/// One function per arity, `$name(o, ops, f) -> bool`: `o[i] = f(inputs at i)` over the
/// output slice `o` in blocks inside rows, each block a plain indexed loop over slices of
/// the block's length (bounds checks go away, the loop vectorizes), run through
/// `with_best_isa`. The `#[inline(always)]` closure is compiled inside each instruction
/// set's function. `false` (nothing written) when a row is too short to pay.
macro_rules! slice_loops {
    ($name:ident: $($op:ident $buf:ident: $t:ident),+) => {
        #[inline(always)]
        fn $name<$($t: Copy + Sync,)+ U: Send>(
            o: &mut [MaybeUninit<U>],
            ($($op,)+): ($(Operand<'_, $t>,)+),
            f: &(impl Fn($($t),+) -> U + Sync),
        ) -> bool {
            let n = o.len();
            if n == 0 {
                return true;
            }
            let Some((row, most)) = blocks(n, &[$($op.period()),+]) else {
                return false;
            };
            // Elements `lo..lo + o.len()` of the output into `o`; a scalar input's block
            // is read from its buffer (`BLOCK` copies of it; the others' are not read).
            let run = |o: &mut [MaybeUninit<U>], lo: usize, ($($buf,)+): ($(&[$t],)+)| {
                isa::with_best_isa(
                    #[inline(always)]
                    || {
                        let hi = lo + o.len();
                        let mut start = lo;
                        while start < hi {
                            // Up to the end of the row, at most `most`.
                            let len = (row - start % row).min(most).min(hi - start);
                            let out = &mut o[start - lo..start - lo + len];
                            $(let $op = $op.block($buf, start, len);)+
                            for i in 0..len {
                                out[i] = MaybeUninit::new(f($($op[i]),+));
                            }
                            start += len;
                        }
                    },
                )
            };
            // The buffers are made only when a scalar is read: filling them costs more
            // than a small map's whole loop (a Kalman filter's 4 x 4 sums).
            let scalars = $(matches!($op, Operand::Scalar(_)))||+;
            let ($(Some($buf),)+) = ($($op.fill(),)+) else {
                return false;
            };
            let pass = |o: &mut [MaybeUninit<U>], lo: usize| {
                if scalars {
                    let ($($buf,)+) = ($([$buf; BLOCK],)+);
                    run(o, lo, ($(&$buf[..],)+));
                } else {
                    run(o, lo, ($({ let $buf: &[$t] = &[]; $buf },)+));
                }
            };
            if n >= SPLIT_MIN_ELEMENTS && crate::threads::num_threads() >= 2 {
                // Two halves, the second on the spinning helper (`threads::spin`).
                let mid = n / 2 / 64 * 64;
                let (first, second) = o.split_at_mut(mid);
                crate::threads::spin::join(|| pass(first, 0), || pass(second, mid));
            } else {
                pass(o, 0);
            }
            true
        }
    };
}

/// One function per arity, `$name(out, inputs, f) -> bool`: when the output's last axis
/// is contiguous and every input, broadcast to the output's shape, is contiguous or
/// repeats one value along it (a column slice `z[:, a..b]`, a matrix's rows beside a
/// column vector), the map runs row by row through the slice loops above, vectorized, where
/// `Zip` would go element by element. `false` (nothing written) otherwise.
macro_rules! row_loops {
    ($name:ident, $slices:ident: $($op:ident: $t:ident $d:ident),+) => {
        fn $name<$($t: Copy + Sync, $d: Dimension,)+ U: Send, D: Dimension>(
            out: &mut ArrayViewMut<'_, U, D>,
            ($($op,)+): ($(ArrayView<'_, $t, $d>,)+),
            f: &(impl Fn($($t),+) -> U + Sync),
        ) -> bool {
            $(let Some($op) = $op.broadcast(out.raw_dim()) else {
                return false;
            };)+
            let Some(last) = out.ndim().checked_sub(1) else {
                return false;
            };
            if out.ndim() < 2 || out.shape()[last] < MIN_ROW || out.strides()[last] != 1 {
                return false;
            }
            if $(!matches!($op.strides()[last], 0 | 1))||+ {
                return false;
            }
            // Row by row, in the same (logical) order for the output and every input
            // (all of one shape); `Zip` would take at most five inputs.
            let pass = |mut out: ArrayViewMut<'_, U, D>, $($op: ArrayView<'_, $t, D>),+| {
                $(let mut $op = $op.rows().into_iter();)+
                for o in out.rows_mut() {
                    let Some(o) = o.into_slice() else {
                        unreachable!("rows of a contiguous last axis are slices")
                    };
                    $(
                        let Some($op) = $op.next() else {
                            unreachable!("inputs of the output's shape have its rows")
                        };
                        let $op = match $op.to_slice() {
                            Some(s) if s.len() == o.len() => Operand::Full(s),
                            _ => Operand::Scalar($op[0]),
                        };
                    )+
                    $slices(as_slots(o), ($($op,)+), f);
                }
            };
            // Halves of the leading axis over the spinning helper, as a contiguous map of
            // that size is split (a row long enough is split by the slice loops instead):
            // an increment written into its columns of a gradient's gate block.
            let (lead, len) = (out.shape()[0], out.shape()[last]);
            if out.len() >= SPLIT_MIN_ELEMENTS
                && len < SPLIT_MIN_ELEMENTS
                && lead >= 2
                && crate::threads::num_threads() >= 2
            {
                let mid = lead / 2;
                let (first, second) = out.view_mut().split_at(Axis(0), mid);
                $(let $op = $op.split_at(Axis(0), mid);)+
                crate::threads::spin::join(
                    || pass(first, $($op.0),+),
                    || pass(second, $($op.1),+),
                );
            } else {
                pass(out.view_mut(), $($op),+);
            }
            true
        }
    };
}

/// `x` broadcast to `shape` as `rows x len` (`len` its last axis, the leading ones
/// merged) when it reads each row contiguously or as one value, for the row-by-row loops.
/// ndarray's reshape refuses any view that is not contiguous, a column block among them,
/// so a matrix is taken as it is and a vector as one row.
fn rows_of<'b, T, D: Dimension>(
    x: &'b ArrayView<'_, T, D>,
    shape: &[usize],
    rows: usize,
    len: usize,
) -> Option<ndarray::ArrayView2<'b, T>> {
    let v = x.broadcast(IxDyn(shape))?;
    let v = match shape.len() {
        1 => v
            .into_dimensionality::<ndarray::Ix1>()
            .ok()?
            .insert_axis(Axis(0)),
        2 => v.into_dimensionality::<ndarray::Ix2>().ok()?,
        _ => v.into_shape_with_order((rows, len)).ok()?,
    };
    matches!(v.strides()[1], 0 | 1).then_some(v)
}

/// One function per arity, `$name(o, shape, inputs, f) -> bool`: the contiguous output
/// `o` of shape `shape` (possibly uninitialised: a trace's new row) row by row through the
/// slice loops, when every input broadcast to `shape` reads each row contiguously or as
/// one value (a column slice `z[:, a..b]` of an LSTM's gate block). Rows are split in two
/// halves over the spinning helper when the map is large enough, as the slice loops split
/// a contiguous map. `false` (nothing written) otherwise.
macro_rules! rows_of_slices {
    ($name:ident, $slices:ident: $($op:ident: $t:ident $d:ident),+) => {
        fn $name<$($t: Copy + Sync, $d: Dimension,)+ U: Send>(
            o: &mut [MaybeUninit<U>],
            shape: &[usize],
            ($($op,)+): ($(ArrayView<'_, $t, $d>,)+),
            f: &(impl Fn($($t),+) -> U + Sync),
        ) -> bool {
            let (Some(&len), true) = (shape.last(), shape.len() >= 2) else {
                return false;
            };
            if len < MIN_ROW || o.len() != shape.iter().product::<usize>() {
                return false;
            }
            let rows = o.len() / len;
            // Each input as `rows x len` (broadcast, its leading axes merged: ndarray's
            // reshape refuses any view that is not contiguous, a column block among them,
            // so a matrix is taken as it is), reading its rows contiguously or as a
            // repeated value.
            $(
                let Some($op) = rows_of(&$op, shape, rows, len) else {
                    return false;
                };
            )+
            let pass = |o: &mut [MaybeUninit<U>], first: usize| {
                for (r, o) in o.chunks_exact_mut(len).enumerate() {
                    $(
                        let $op = $op.row(first + r);
                        let $op = match $op.to_slice() {
                            Some(s) if s.len() == len => Operand::Full(s),
                            _ => Operand::Scalar($op[0]),
                        };
                    )+
                    $slices(o, ($($op,)+), f);
                }
            };
            // A row long enough to be split by the slice loops is not split here too.
            if o.len() >= SPLIT_MIN_ELEMENTS
                && len < SPLIT_MIN_ELEMENTS
                && rows >= 2
                && crate::threads::num_threads() >= 2
            {
                let mid = rows / 2;
                let (first, second) = o.split_at_mut(mid * len);
                crate::threads::spin::join(|| pass(first, 0), || pass(second, mid));
            } else {
                pass(o, 0);
            }
            true
        }
    };
}

/// One function per arity, `$name(out, inputs..., what, f)`: `out = f(inputs...)`
/// elementwise with numpy broadcasting, `Err(Broadcast)` naming `what` when the shapes do
/// not broadcast. Contiguous operands (or rows of them, `rows_of_slices`, `row_loops`) run
/// as vectorized slice loops; anything else is walked by `Zip` (`zip`, at most five inputs
/// beside the output, the most it takes) or element by element through each input's index
/// (`indexed`, a fused chain of more arrays whose operands are strided).
macro_rules! map_fn {
    ($how:ident $name:ident, $slices:ident, $row_slices:ident, $rows:ident:
     $($op:ident: $t:ident $d:ident),+) => {
        #[doc = concat!("`out = f(", stringify!($($op),+), ")` elementwise with broadcasting.")]
        #[allow(clippy::too_many_arguments)]
        pub fn $name<'o, $($t, $d,)+ U, D>(
            out: impl Destination<'o, U, D>,
            $($op: ArrayView<'_, $t, $d>,)+
            what: &str,
            f: impl Fn($($t),+) -> U + Sync,
        ) -> Result<()>
        where
            $($t: Copy + Sync, $d: Dimension,)+
            U: Element,
            D: Dimension,
        {
            let shape: D = broadcast_shape(what, &[$($op.shape()),+])?;
            // Contiguous operands: one vectorized pass writing every element (into a
            // trace's new row as it is, uninitialised).
            let fast = |o: &mut [MaybeUninit<U>], sh: &[usize]| {
                if let ($(Some($op),)+) = ($(Operand::of(&$op, sh),)+) {
                    $slices(o, ($($op,)+), &f)
                } else {
                    $row_slices(o, sh, ($($op.view(),)+), &f)
                }
            };
            let Some(mut out) = prepare_fast_first(out, shape, what, fast)? else {
                return Ok(());
            };
            if $rows(&mut out, ($($op.view(),)+), &f) {
                return Ok(());
            }
            map_fn!(@walk $how out, f, $($op),+);
            Ok(())
        }
    };
    (@walk zip $out:ident, $f:ident, $($op:ident),+) => {
        Zip::from($out)
            $(.and_broadcast($op))+
            .for_each(|o, $(&$op),+| *o = $f($($op),+));
    };
    (@walk indexed $out:ident, $f:ident, $($op:ident),+) => {{
        let shape = $out.raw_dim();
        $(
            let Some($op) = $op.broadcast(shape.clone()) else {
                unreachable!("the shapes broadcast (checked above)")
            };
        )+
        for (index, o) in $out.indexed_iter_mut() {
            let index = index.into_dimension();
            *o = $f($($op[index.clone()]),+);
        }
    }};
}

/// Every arity's kernels: its slice loops, its rows of slices, its row loops and its map.
macro_rules! arity {
    ($how:ident $map:ident, $slices:ident, $row_slices:ident, $rows:ident:
     $($op:ident $buf:ident: $t:ident $d:ident),+) => {
        slice_loops!($slices: $($op $buf: $t),+);
        rows_of_slices!($row_slices, $slices: $($op: $t $d),+);
        row_loops!($rows, $slices: $($op: $t $d),+);
        map_fn!($how $map, $slices, $row_slices, $rows: $($op: $t $d),+);
    };
}

arity!(zip map1, slices1, row_slices1, rows1: a fill_a: A Da);
arity!(zip map2, slices2, row_slices2, rows2: a fill_a: A Da, b fill_b: B Db);
arity!(zip map3, slices3, row_slices3, rows3: a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc);
arity!(zip map4, slices4, row_slices4, rows4:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd);
arity!(zip map5, slices5, row_slices5, rows5:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De);
arity!(indexed map6, slices6, row_slices6, rows6:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg);
arity!(indexed map7, slices7, row_slices7, rows7:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh);
arity!(indexed map8, slices8, row_slices8, rows8:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di);
arity!(indexed map9, slices9, row_slices9, rows9:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di, j fill_j: J Dj);
arity!(indexed map10, slices10, row_slices10, rows10:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di, j fill_j: J Dj, k fill_k: K Dk);
arity!(indexed map11, slices11, row_slices11, rows11:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di, j fill_j: J Dj, k fill_k: K Dk, l fill_l: L Dl);
arity!(indexed map12, slices12, row_slices12, rows12:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di, j fill_j: J Dj, k fill_k: K Dk, l fill_l: L Dl, m fill_m: M Dm);
arity!(indexed map13, slices13, row_slices13, rows13:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di, j fill_j: J Dj, k fill_k: K Dk, l fill_l: L Dl, m fill_m: M Dm,
    n fill_n: N Dn);
arity!(indexed map14, slices14, row_slices14, rows14:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di, j fill_j: J Dj, k fill_k: K Dk, l fill_l: L Dl, m fill_m: M Dm,
    n fill_n: N Dn, o fill_o: O Do);
arity!(indexed map15, slices15, row_slices15, rows15:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di, j fill_j: J Dj, k fill_k: K Dk, l fill_l: L Dl, m fill_m: M Dm,
    n fill_n: N Dn, o fill_o: O Do, p fill_p: P Dp);
arity!(indexed map16, slices16, row_slices16, rows16:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di, j fill_j: J Dj, k fill_k: K Dk, l fill_l: L Dl, m fill_m: M Dm,
    n fill_n: N Dn, o fill_o: O Do, p fill_p: P Dp, q fill_q: Q Dq);

/// `true` when the operands `part` (some of `all`'s shapes) broadcast to the shape that
/// `all` broadcast to: a fused pass's second result, computed from `part`, is then of the
/// pass's whole shape and written as the pass goes (`pair1` and kin). `false` when it is
/// broadcast further, or a shape does not broadcast (the maps computing the two one after
/// the other then say which).
pub fn broadcasts_alike(part: &[&[usize]], all: &[&[usize]]) -> bool {
    match (
        broadcast_shape::<IxDyn>("", part),
        broadcast_shape::<IxDyn>("", all),
    ) {
        (Ok(p), Ok(a)) => p == a,
        _ => false,
    }
}

/// Most elements of one block of a pass with two results: its second result is computed
/// into a buffer of the block (on the stack, in the first-level cache), then the first
/// from it. One loop computing both would chain the second's work and the first's in each
/// element (an LSTM's `c_t`, then `tanh(c_t)`): measured on the step's 32 x 512 f32 gate
/// arithmetic (Zen 3, AVX2), 128 µs against 94 µs for the two maps it replaces; in blocks,
/// each loop is as short as one of those maps and the two results are written in one pass.
const PAIR_BLOCK: usize = BLOCK;

/// One function per arity, `$rows(a, b, shape, inputs, fb, fa) -> bool`: a fused pass with
/// two results, `b = fb(inputs)` and `a = fa(inputs, b)`, over the contiguous outputs `a`
/// and `b` of shape `shape` (possibly uninitialised: trace rows), row by row in blocks of
/// slices as the slice loops run a map, when every input broadcast to `shape` reads each
/// row contiguously or as one value (a column slice `z[:, a..b]` of an LSTM's gate block,
/// a column vector). Large passes are split in two halves over the spinning helper.
/// `false` (nothing written) otherwise.
macro_rules! pair_rows {
    ($rows:ident: $($op:ident $buf:ident: $t:ident $d:ident),+) => {
        fn $rows<$($t: Copy + Sync, $d: Dimension,)+ U: Send, V: Copy + Default + Send>(
            a: &mut [MaybeUninit<U>],
            b: &mut [MaybeUninit<V>],
            shape: &[usize],
            ($($op,)+): ($(ArrayView<'_, $t, $d>,)+),
            fb: &(impl Fn($($t),+) -> V + Sync),
            fa: &(impl Fn($($t,)+ V) -> U + Sync),
        ) -> bool {
            let n = a.len();
            if n == 0 || b.len() != n {
                return n == 0 && b.is_empty();
            }
            let Some(&len) = shape.last() else {
                return false;
            };
            let rows = n / len;
            $(
                let Some($op) = rows_of(&$op, shape, rows, len) else {
                    return false;
                };
            )+
            // Buffers repeating a value are made (row by row) only when a row reads one.
            let scalars = $(($op.strides()[1] == 0 && len > 1))||+;
            // Elements `lo..lo + a.len()` of the results.
            let pass = |a: &mut [MaybeUninit<U>], b: &mut [MaybeUninit<V>], lo: usize| {
                isa::with_best_isa(
                    #[inline(always)]
                    || {
                        let mut second = [V::default(); PAIR_BLOCK];
                        let hi = lo + a.len();
                        let mut start = lo;
                        while start < hi {
                            let r = start / len;
                            let end = ((r + 1) * len).min(hi);
                            $(
                                let $op = $op.row(r);
                                let $op = match $op.to_slice() {
                                    Some(s) if s.len() == len => Operand::Full(s),
                                    _ => Operand::Scalar($op[0]),
                                };
                                // A value read by the row, repeated (`BLOCK` copies).
                                let $buf: Option<[$t; BLOCK]> = match $op {
                                    Operand::Scalar(v) if scalars => Some([v; BLOCK]),
                                    _ => None,
                                };
                                let $buf: &[$t] = $buf.as_ref().map_or(&[], |b| &b[..]);
                            )+
                            // Columns `c..c + k` of row `r`, block by block.
                            let mut at = start;
                            while at < end {
                                let k = (end - at).min(PAIR_BLOCK);
                                let c = at - r * len;
                                let oa = &mut a[at - lo..at - lo + k];
                                let ob = &mut b[at - lo..at - lo + k];
                                let second = &mut second[..k];
                                $(let $op = $op.block($buf, c, k);)+
                                for i in 0..k {
                                    second[i] = fb($($op[i]),+);
                                }
                                for i in 0..k {
                                    oa[i] = MaybeUninit::new(fa($($op[i],)+ second[i]));
                                    ob[i] = MaybeUninit::new(second[i]);
                                }
                                at += k;
                            }
                            start = end;
                        }
                    },
                )
            };
            if n >= SPLIT_MIN_ELEMENTS && crate::threads::num_threads() >= 2 {
                let mid = n / 2 / 64 * 64;
                let (a1, a2) = a.split_at_mut(mid);
                let (b1, b2) = b.split_at_mut(mid);
                crate::threads::spin::join(|| pass(a1, b1, 0), || pass(a2, b2, mid));
            } else {
                pass(a, b, 0);
            }
            true
        }
    };
}

/// One function per arity, `$name(out_a, out_b, inputs..., what, fb, fa)`: a fused pass
/// with two results, `out_b = fb(inputs...)` and `out_a = fa(inputs..., out_b)`
/// elementwise with numpy broadcasting, both of the inputs' broadcast shape
/// (`Err(Broadcast)` naming `what` when they do not broadcast). Rows read contiguously or
/// as one value run as vectorized slice loops ([`pair_rows`]); anything else element by
/// element through each input's index.
macro_rules! pair_fn {
    ($name:ident, $rows:ident: $($op:ident $buf:ident: $t:ident $d:ident),+) => {
        pair_rows!($rows: $($op $buf: $t $d),+);

        #[doc = concat!("`out_b = fb(", stringify!($($op),+), ")`, `out_a = fa(", stringify!($($op),+), ", out_b)` elementwise with broadcasting, in one pass.")]
        #[allow(clippy::too_many_arguments)]
        pub fn $name<'a, 'b, $($t, $d,)+ U, V, D>(
            out_a: impl Destination<'a, U, D>,
            out_b: impl Destination<'b, V, D>,
            $($op: ArrayView<'_, $t, $d>,)+
            what: &str,
            fb: impl Fn($($t),+) -> V + Sync,
            fa: impl Fn($($t,)+ V) -> U + Sync,
        ) -> Result<()>
        where
            $($t: Copy + Sync, $d: Dimension,)+
            U: Element,
            V: Element,
            D: Dimension,
        {
            let shape: D = broadcast_shape(what, &[$($op.shape()),+])?;
            let mut a = out_a.prepare_elems(shape.clone(), what)?;
            let mut b = out_b.prepare_elems(shape.clone(), what)?;
            if let (Some(sa), Some(sb)) = (a.slots(), b.slots()) {
                if $rows(sa, sb, shape.slice(), ($($op.view(),)+), &fb, &fa) {
                    a.written();
                    b.written();
                    return Ok(());
                }
            }
            let (mut a, mut b) = (a.into_view()?, b.into_view()?);
            $(
                let Some($op) = $op.broadcast(shape.clone()) else {
                    unreachable!("the shapes broadcast (checked above)")
                };
            )+
            for (index, x) in a.indexed_iter_mut() {
                let index = index.into_dimension();
                let v = fb($($op[index.clone()]),+);
                *x = fa($($op[index.clone()],)+ v);
                b[index] = v;
            }
            Ok(())
        }
    };
}

pair_fn!(pair1, pair_rows1: a fill_a: A Da);
pair_fn!(pair2, pair_rows2: a fill_a: A Da, b fill_b: B Db);
pair_fn!(pair3, pair_rows3: a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc);
pair_fn!(pair4, pair_rows4: a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd);
pair_fn!(pair5, pair_rows5:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De);
pair_fn!(pair6, pair_rows6:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg);
pair_fn!(pair7, pair_rows7:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh);
pair_fn!(pair8, pair_rows8:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di);
pair_fn!(pair9, pair_rows9:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di, j fill_j: J Dj);
pair_fn!(pair10, pair_rows10:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di, j fill_j: J Dj, k fill_k: K Dk);
pair_fn!(pair11, pair_rows11:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di, j fill_j: J Dj, k fill_k: K Dk, l fill_l: L Dl);
pair_fn!(pair12, pair_rows12:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di, j fill_j: J Dj, k fill_k: K Dk, l fill_l: L Dl, m fill_m: M Dm);
pair_fn!(pair13, pair_rows13:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di, j fill_j: J Dj, k fill_k: K Dk, l fill_l: L Dl, m fill_m: M Dm,
    n fill_n: N Dn);
pair_fn!(pair14, pair_rows14:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di, j fill_j: J Dj, k fill_k: K Dk, l fill_l: L Dl, m fill_m: M Dm,
    n fill_n: N Dn, o fill_o: O Do);
pair_fn!(pair15, pair_rows15:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di, j fill_j: J Dj, k fill_k: K Dk, l fill_l: L Dl, m fill_m: M Dm,
    n fill_n: N Dn, o fill_o: O Do, p fill_p: P Dp);
pair_fn!(pair16, pair_rows16:
    a fill_a: A Da, b fill_b: B Db, c fill_c: C Dc, d fill_d: E Dd, e fill_e: F De, g fill_g: G Dg,
    h fill_h: H Dh, i fill_i: I Di, j fill_j: J Dj, k fill_k: K Dk, l fill_l: L Dl, m fill_m: M Dm,
    n fill_n: N Dn, o fill_o: O Do, p fill_p: P Dp, q fill_q: Q Dq);

#[cfg(test)]
mod contiguous_tests {
    use super::*;
    use crate::math;
    use ndarray::{s, Array1, Array2, ArrayD, IxDyn, ShapeBuilder};

    /// Values over every function's range, with special values among them.
    fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut state = seed;
        let specials = [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e-310,
            -800.0,
        ];
        (0..n)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                if i % 97 == 0 {
                    specials[(i / 97) % specials.len()]
                } else {
                    (state >> 11) as f64 / (1u64 << 53) as f64 * 60.0 - 30.0
                }
            })
            .collect()
    }

    /// The same data as `v`, in a column-major (non-standard) layout: Zip's path.
    fn strided(v: &Array2<f64>) -> Array2<f64> {
        let mut f = Array2::<f64>::zeros(v.raw_dim().f());
        f.assign(v);
        f
    }

    fn same_bits<T: Copy + Into<f64>>(a: &[T], b: &[T]) {
        assert_eq!(a.len(), b.len());
        for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
            let (x, y): (f64, f64) = (x.into(), y.into());
            assert!(x.to_bits() == y.to_bits(), "element {i}: {x:e} vs {y:e}");
        }
    }

    #[test]
    fn contiguous_and_strided_inputs_give_the_same_bits() {
        let shape = (37, 29);
        let a = Array2::from_shape_vec(shape, values(37 * 29, 1)).unwrap();
        let b = Array2::from_shape_vec(shape, values(37 * 29, 2)).unwrap();
        let c = Array2::from_shape_vec(shape, values(37 * 29, 3)).unwrap();
        let (fa, fb, fc) = (strided(&a), strided(&b), strided(&c));
        assert!(a.as_slice().is_some() && fa.as_slice().is_none());
        let chain = |x: f64, y: f64, z: f64| {
            math::add(
                math::mul(math::sigmoid(x), math::tanh(y)),
                math::mul(math::exp(math::mul(z, 0.1)), math::log(math::abs(x))),
            )
        };
        let mut fast = Array2::<f64>::zeros((0, 0));
        let mut slow = Array2::<f64>::zeros((0, 0));
        map3(&mut fast, a.view(), b.view(), c.view(), "chain", chain).unwrap();
        map3(&mut slow, fa.view(), fb.view(), fc.view(), "chain", chain).unwrap();
        // The output buffer is standard either way; compare element by element.
        let (fast, slow): (Vec<f64>, Vec<f64>) = (
            fast.iter().copied().collect(),
            slow.iter().copied().collect(),
        );
        same_bits(&fast, &slow);
        // Against the formula evaluated one element at a time.
        let one_by_one: Vec<f64> = a
            .iter()
            .zip(&b)
            .zip(&c)
            .map(|((&x, &y), &z)| chain(x, y, z))
            .collect();
        same_bits(&fast, &one_by_one);

        // f32, one to five inputs.
        let a32 = a.mapv(|x| x as f32);
        let b32 = b.mapv(|x| x as f32);
        let r32 = a32.slice(s![.., ..;-1]).to_owned();
        let mut fast = Array2::<f32>::zeros((0, 0));
        let mut slow = Array2::<f32>::zeros((0, 0));
        map1(&mut fast, a32.view(), "tanh", math::tanh).unwrap();
        map1(&mut slow, r32.slice(s![.., ..;-1]), "tanh", math::tanh).unwrap();
        same_bits(fast.as_slice().unwrap(), slow.as_slice().unwrap());
        map2(&mut fast, a32.view(), b32.view(), "f", |x, y| {
            math::sigmoid(x) * math::exp(y)
        })
        .unwrap();
        let bt = b32.t().to_owned();
        map2(&mut slow, r32.slice(s![.., ..;-1]), bt.t(), "f", |x, y| {
            math::sigmoid(x) * math::exp(y)
        })
        .unwrap();
        same_bits(fast.as_slice().unwrap(), slow.as_slice().unwrap());
        let f4 = |x: f32, y: f32, z: f32, w: f32| math::tanh(x * y) + math::log(z) * w;
        map4(
            &mut fast,
            a32.view(),
            b32.view(),
            a32.view(),
            b32.view(),
            "f4",
            f4,
        )
        .unwrap();
        map4(
            &mut slow,
            r32.slice(s![.., ..;-1]),
            b32.view(),
            a32.view(),
            bt.t(),
            "f4",
            f4,
        )
        .unwrap();
        same_bits(fast.as_slice().unwrap(), slow.as_slice().unwrap());
        let f5 =
            |x: f32, y: f32, z: f32, w: f32, v: f32| math::sigmoid(x - y) * z + w * math::tanh(v);
        map5(
            &mut fast,
            a32.view(),
            b32.view(),
            a32.view(),
            b32.view(),
            a32.view(),
            "f5",
            f5,
        )
        .unwrap();
        map5(
            &mut slow,
            a32.view(),
            bt.t(),
            a32.view(),
            b32.view(),
            r32.slice(s![.., ..;-1]),
            "f5",
            f5,
        )
        .unwrap();
        same_bits(fast.as_slice().unwrap(), slow.as_slice().unwrap());
    }

    /// `f` over the inputs broadcast to `shape`, one element at a time in standard order.
    fn by_element3(
        shape: &[usize],
        a: &ArrayD<f64>,
        b: &ArrayD<f64>,
        c: &ArrayD<f64>,
        f: impl Fn(f64, f64, f64) -> f64,
    ) -> Vec<f64> {
        let sh = IxDyn(shape);
        let (a, b, c) = (
            a.broadcast(sh.clone()).unwrap(),
            b.broadcast(sh.clone()).unwrap(),
            c.broadcast(sh).unwrap(),
        );
        a.iter()
            .zip(b.iter())
            .zip(c.iter())
            .map(|((&x, &y), &z)| f(x, y, z))
            .collect()
    }

    #[test]
    fn broadcast_rows_and_scalars_run_as_slice_loops_with_the_same_bits() {
        let f = |x: f64, y: f64, z: f64| math::tanh(math::add(math::mul(x, y), z));
        let arr = |shape: &[usize], seed: u64| {
            let n = shape.iter().product();
            ArrayD::from_shape_vec(IxDyn(shape), values(n, seed)).unwrap()
        };
        // (output shape, a, b, c): full, rows of the last axes (with a leading 1), a scalar,
        // rows longer than a block, and a row too short for slice loops.
        type Shapes = (Vec<usize>, Vec<usize>, Vec<usize>, Vec<usize>);
        let cases: Vec<Shapes> = vec![
            (vec![37, 64], vec![37, 64], vec![64], vec![]),
            (vec![4, 300], vec![300], vec![4, 300], vec![1]),
            (vec![3, 5, 40], vec![5, 40], vec![40], vec![3, 5, 40]),
            (vec![6, 40], vec![1, 40], vec![6, 40], vec![1, 1]),
            (vec![1000], vec![1000], vec![], vec![1000]),
            (vec![9, 3], vec![9, 3], vec![3], vec![]),
            (vec![2, 0, 20], vec![2, 0, 20], vec![20], vec![]),
        ];
        for (out_shape, sa, sb, sc) in cases {
            let (a, b, c) = (arr(&sa, 5), arr(&sb, 6), arr(&sc, 7));
            let mut out = ArrayD::<f64>::zeros(IxDyn(&[]));
            map3(&mut out, a.view(), b.view(), c.view(), "f", f).unwrap();
            assert_eq!(out.shape(), &out_shape[..]);
            let expected = by_element3(&out_shape, &a, &b, &c, f);
            let got: Vec<f64> = out.iter().copied().collect();
            same_bits(&got, &expected);
        }
    }

    #[test]
    fn column_slices_and_column_vectors_run_row_by_row_with_the_same_bits() {
        // An LSTM's gates: column blocks of a [B, 4H] matrix, each row contiguous but the
        // rows 4H apart; beside them a [B, 1] column (one value per row), a contiguous
        // matrix, and a transposed one (not row-contiguous: element by element).
        let f = |x: f64, y: f64, z: f64| math::tanh(math::add(math::mul(x, y), z));
        let (b, h) = (7, 40);
        let z = Array2::from_shape_vec((b, 4 * h), values(b * 4 * h, 11)).unwrap();
        let gate = |k: usize| z.slice(s![.., k * h..(k + 1) * h]);
        let column = Array2::from_shape_vec((b, 1), values(b, 12)).unwrap();
        let full = Array2::from_shape_vec((b, h), values(b * h, 13)).unwrap();
        let wide = Array2::from_shape_vec((h, b), values(b * h, 14)).unwrap();
        let dyn3 = |v: ndarray::ArrayView2<f64>| v.to_owned().into_dyn();
        let cases: Vec<[ndarray::ArrayView2<f64>; 3]> = vec![
            [gate(0), gate(1), gate(2)],
            [gate(3), column.view(), full.view()],
            [column.view(), gate(2), wide.t()],
        ];
        for [x, y, w] in cases {
            let mut out = Array2::<f64>::zeros((0, 0));
            map3(&mut out, x, y, w, "f", f).unwrap();
            let expected = by_element3(&[b, h], &dyn3(x), &dyn3(y), &dyn3(w), f);
            same_bits(out.as_slice().unwrap(), &expected);
        }
        // Into a column block of a wider matrix (a row of rows, written in place).
        let mut wider = Array2::<f64>::from_elem((b, 2 * h), -1.0);
        let block = crate::kernels::Row::new(wider.slice_mut(s![.., h..]), "`h`", "g");
        map2(block, gate(1), column.view(), "g", math::mul).unwrap();
        for r in 0..b {
            for c in 0..h {
                assert_eq!(wider[[r, c]], -1.0, "left block untouched");
                assert_eq!(
                    wider[[r, h + c]].to_bits(),
                    (z[[r, h + c]] * column[[r, 0]]).to_bits()
                );
            }
        }
    }

    #[test]
    fn column_slices_into_an_uninitialised_row_at_one_and_two_threads() {
        // An LSTM's `o * tanh(c_t)` into a trace's new row: the row memory is not
        // initialised and one operand is a column block; the rows are written by the slice
        // loops directly (halves on two threads from SPLIT_MIN_ELEMENTS on), same bits.
        let _guard = crate::threads::TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let f = |x: f64, y: f64| math::mul(math::sigmoid(x), math::tanh(y));
        for (b, h) in [(3usize, 40usize), (64, 512)] {
            let z = Array2::from_shape_vec((b, 4 * h), values(b * 4 * h, 21)).unwrap();
            let gate = z.slice(s![.., 3 * h..]);
            let c = Array2::from_shape_vec((b, h), values(b * h, 22)).unwrap();
            let dyn2 = |v: ndarray::ArrayView2<f64>| v.to_owned().into_dyn();
            let expected: Vec<f64> = {
                let (g, c) = (dyn2(gate), dyn2(c.view()));
                let sh = IxDyn(&[b, h]);
                let (g, c) = (g.broadcast(sh.clone()).unwrap(), c.broadcast(sh).unwrap());
                g.iter().zip(c.iter()).map(|(&x, &y)| f(x, y)).collect()
            };
            for threads in [1, 2] {
                crate::threads::set_num_threads(threads);
                let mut buf = ndarray::Array3::<f64>::zeros((0, 0, 0));
                let mut trace = crate::kernels::ArrayTrace::new(&mut buf);
                trace.start("n", &[b, h], 2, 2).unwrap();
                let (_, mut slot) = trace.next_slot("n").unwrap();
                map2(
                    slot.row("`h`", "o * tanh(c)"),
                    gate,
                    c.view(),
                    "o * tanh(c)",
                    f,
                )
                .unwrap();
                trace.commit_row("n").unwrap();
                let row = trace.row(0).unwrap();
                same_bits(row.as_slice().unwrap(), &expected);
                // Written by the row slices (not zero-filled first and then by `Zip`).
                let mut direct = vec![MaybeUninit::<f64>::uninit(); b * h];
                assert!(row_slices2(&mut direct, &[b, h], (gate, c.view()), &f));
            }
        }
        crate::threads::set_num_threads(0);
    }

    #[test]
    fn an_lstm_s_gates_from_thirteen_operands_in_one_pass() {
        // SPEC's LSTM after slice_operands: each gate `x_w[:, k] + h_w[:, k] + b[k]` from
        // column slices of the input projection, the recurrent product and the bias row,
        // and the previous state: thirteen operands, the state and the output in one pass
        // (pair13), bit for bit the two maps it replaces, at one and two threads.
        let _guard = crate::threads::TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let gate = |x: f64, d: f64, b: f64| math::add(math::add(x, d), b);
        for (rows, h) in [(3usize, 40usize), (64, 512)] {
            let xw = Array2::from_shape_vec((rows, 4 * h), values(rows * 4 * h, 51)).unwrap();
            let hw = Array2::from_shape_vec((rows, 4 * h), values(rows * 4 * h, 52)).unwrap();
            let b = Array1::from_vec(values(4 * h, 53));
            let c = Array2::from_shape_vec((rows, h), values(rows * h, 54)).unwrap();
            let at = |k: usize| {
                (
                    xw.slice(s![.., k * h..(k + 1) * h]),
                    hw.slice(s![.., k * h..(k + 1) * h]),
                    b.slice(s![k * h..(k + 1) * h]),
                )
            };
            let ((xi, di, bi), (xf, df, bf)) = (at(0), at(1));
            let ((xg, dg, bg), (xo, d_o, bo)) = (at(2), at(3));
            let cell = |xi, di, bi, xf, df, bf, xg, dg, bg, c| {
                let (i, f) = (
                    math::sigmoid(gate(xi, di, bi)),
                    math::sigmoid(gate(xf, df, bf)),
                );
                math::add(math::mul(f, c), math::mul(i, math::tanh(gate(xg, dg, bg))))
            };
            let out =
                |xo, d_o, bo, c_t| math::mul(math::sigmoid(gate(xo, d_o, bo)), math::tanh(c_t));
            let mut c_ref = Array2::<f64>::zeros((0, 0));
            map10(
                &mut c_ref,
                xi,
                di,
                bi,
                xf,
                df,
                bf,
                xg,
                dg,
                bg,
                c.view(),
                "c",
                cell,
            )
            .unwrap();
            let mut h_ref = Array2::<f64>::zeros((0, 0));
            map4(&mut h_ref, xo, d_o, bo, c_ref.view(), "h", out).unwrap();
            for threads in [1, 2] {
                crate::threads::set_num_threads(threads);
                let (mut h_new, mut c_new) = (Array2::zeros((0, 0)), Array2::zeros((0, 0)));
                pair13(
                    &mut h_new,
                    &mut c_new,
                    xi,
                    di,
                    bi,
                    xf,
                    df,
                    bf,
                    xg,
                    dg,
                    bg,
                    xo,
                    d_o,
                    bo,
                    c.view(),
                    "o * tanh(c_t)",
                    |xi, di, bi, xf, df, bf, xg, dg, bg, _, _, _, c| {
                        cell(xi, di, bi, xf, df, bf, xg, dg, bg, c)
                    },
                    |_, _, _, _, _, _, _, _, _, xo, d_o, bo, _, c_t| out(xo, d_o, bo, c_t),
                )
                .unwrap();
                same_bits(h_new.as_slice().unwrap(), h_ref.as_slice().unwrap());
                same_bits(c_new.as_slice().unwrap(), c_ref.as_slice().unwrap());
            }
        }
        crate::threads::set_num_threads(0);
    }

    #[test]
    fn a_pass_with_two_results_gives_the_bits_of_two_maps() {
        // An LSTM's state and output from its gate block's column slices, the previous
        // state and a column vector (one value per row): into a trace's new row (not
        // zeroed first) and a buffer, at one and two threads, small and past
        // SPLIT_MIN_ELEMENTS; then a transposed operand (the element-by-element path).
        let _guard = crate::threads::TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let cell = |i: f64, g: f64, c: f64, k: f64| {
            math::add(math::mul(math::sigmoid(i), math::tanh(g)), math::mul(c, k))
        };
        let out = |o: f64, c: f64| math::mul(math::sigmoid(o), math::tanh(c));
        for (b, h) in [(3usize, 40usize), (64, 512)] {
            let z = Array2::from_shape_vec((b, 4 * h), values(b * 4 * h, 41)).unwrap();
            let (i, g, o) = (
                z.slice(s![.., ..h]),
                z.slice(s![.., h..2 * h]),
                z.slice(s![.., 3 * h..]),
            );
            let c = Array2::from_shape_vec((b, h), values(b * h, 42)).unwrap();
            let k = Array2::from_shape_vec((b, 1), values(b, 43)).unwrap();
            let mut c_ref = Array2::<f64>::zeros((0, 0));
            map4(&mut c_ref, i, g, c.view(), k.view(), "c", cell).unwrap();
            let mut h_ref = Array2::<f64>::zeros((0, 0));
            map2(&mut h_ref, o, c_ref.view(), "h", out).unwrap();
            for threads in [1, 2] {
                crate::threads::set_num_threads(threads);
                let mut buf = ndarray::Array3::<f64>::zeros((0, 0, 0));
                let mut trace = crate::kernels::ArrayTrace::new(&mut buf);
                trace.start("n", &[b, h], 2, 2).unwrap();
                let (_, mut slot) = trace.next_slot("n").unwrap();
                let mut c_new = Array2::<f64>::zeros((0, 0));
                pair5(
                    slot.row("`h`", "o * tanh(c_t)"),
                    &mut c_new,
                    i,
                    g,
                    c.view(),
                    k.view(),
                    o,
                    "o * tanh(c_t)",
                    |i, g, c, k, _| cell(i, g, c, k),
                    |_, _, _, _, o, c_t| out(o, c_t),
                )
                .unwrap();
                trace.commit_row("n").unwrap();
                let row = trace.row(0).unwrap();
                same_bits(row.as_slice().unwrap(), h_ref.as_slice().unwrap());
                same_bits(c_new.as_slice().unwrap(), c_ref.as_slice().unwrap());
            }
            // `c` read through its transpose's transpose: column-major, strided rows.
            let c_cols = c.t().to_owned();
            let (mut x, mut y) = (Array2::<f64>::zeros((0, 0)), Array2::<f64>::zeros((0, 0)));
            let (second, first) = (math::sub, |o: f64, c: f64, _| out(o, c));
            pair2(&mut x, &mut y, o, c_cols.t(), "f", second, first).unwrap();
            let (mut x_ref, mut y_ref) = (x.clone(), y.clone());
            map2(&mut x_ref, o, c.view(), "f", out).unwrap();
            map2(&mut y_ref, o, c.view(), "f", math::sub).unwrap();
            same_bits(x.as_slice().unwrap(), x_ref.as_slice().unwrap());
            same_bits(y.as_slice().unwrap(), y_ref.as_slice().unwrap());
            // Shapes that do not broadcast: the error names the pass.
            let short = Array2::<f64>::zeros((b, h + 1));
            let e = pair2(&mut x, &mut y, o, short.view(), "f(o, c)", second, first);
            let e = e.unwrap_err();
            assert!(
                matches!(e, crate::Error::Broadcast { ref what, .. } if what == "f(o, c)"),
                "{e:?}"
            );
        }
        crate::threads::set_num_threads(0);
    }

    #[test]
    fn the_second_result_is_whole_only_when_its_operands_give_the_whole_shape() {
        let (row, mat, col) = (
            [1usize, 4].as_slice(),
            [3usize, 4].as_slice(),
            [3usize, 1].as_slice(),
        );
        assert!(broadcasts_alike(&[mat], &[row, mat]));
        assert!(broadcasts_alike(&[row, col], &[mat, row]));
        assert!(!broadcasts_alike(&[row], &[row, mat]));
        assert!(!broadcasts_alike(
            &[[2usize, 4].as_slice()],
            &[[2usize, 4].as_slice(), mat]
        ));
    }

    #[test]
    fn a_column_block_destination_is_split_in_halves_at_two_threads() {
        // An increment written into its columns of a gradient's `[B, 4H]` gate block
        // (join_slices): the destination's rows are contiguous but 4H apart, so the rows
        // path runs; from SPLIT_MIN_ELEMENTS on, in two halves of the rows at 2 threads.
        // Same bits either way, nothing written outside the block.
        let _guard = crate::threads::TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let f = |x: f64, y: f64, w: f64| math::mul(math::sigmoid(x), math::sub(y, w));
        for (b, h) in [(5usize, 40usize), (64, 512)] {
            let z = Array2::from_shape_vec((b, 4 * h), values(b * 4 * h, 31)).unwrap();
            let gate = z.slice(s![.., 2 * h..3 * h]);
            let c = Array2::from_shape_vec((b, h), values(b * h, 32)).unwrap();
            let column = Array2::from_shape_vec((b, 1), values(b, 33)).unwrap();
            let dyn2 = |v: ndarray::ArrayView2<f64>| v.to_owned().into_dyn();
            let expected = by_element3(
                &[b, h],
                &dyn2(gate),
                &dyn2(c.view()),
                &dyn2(column.view()),
                f,
            );
            for threads in [1, 2] {
                crate::threads::set_num_threads(threads);
                let mut wide = Array2::<f64>::from_elem((b, 4 * h), -1.0);
                let block = wide.slice_mut(s![.., h..2 * h]);
                map3(block, gate, c.view(), column.view(), "f", f).unwrap();
                let got = wide.slice(s![.., h..2 * h]).to_owned();
                same_bits(got.as_slice().unwrap(), &expected);
                let (left, right) = (wide.slice(s![.., ..h]), wide.slice(s![.., 2 * h..]));
                let outside = left.iter().chain(right.iter());
                assert!(
                    outside.copied().all(|x| x == -1.0),
                    "{b} x {h}, {threads} threads"
                );
            }
        }
        crate::threads::set_num_threads(0);
    }

    #[test]
    fn contiguous_maps_write_every_element_and_reuse_the_buffer() {
        // Lengths around the vector widths, including 0 and 1.
        for n in [0usize, 1, 3, 4, 7, 8, 9, 31, 33, 1000] {
            let a = Array1::from_iter((0..n).map(|i| i as f64 * 0.5 - 3.0));
            let b = Array1::from_iter((0..n).map(|i| i as f64));
            let mut out = Array1::<f64>::from_elem(n, f64::NAN);
            let ptr = out.as_ptr();
            map2(&mut out, a.view(), b.view(), "a * b", math::mul).unwrap();
            assert_eq!(out.as_ptr(), ptr);
            let expected: Vec<f64> = (0..n).map(|i| (i as f64 * 0.5 - 3.0) * i as f64).collect();
            assert_eq!(out.to_vec(), expected, "n = {n}");
            let mut flags = Array1::<bool>::default(0);
            map1(&mut flags, a.view(), "a > 0", |x| x > 0.0).unwrap();
            assert_eq!(
                flags.to_vec(),
                a.iter().map(|&x| x > 0.0).collect::<Vec<_>>()
            );
        }
    }
}

#[cfg(test)]
mod wide_tests {
    use super::*;
    use ndarray::{array, s, Array1, Array2, ShapeBuilder};

    #[test]
    fn map4_and_map5_broadcast_every_operand() {
        let a = array![[1.0, 2.0], [3.0, 4.0]];
        let row = array![10.0, 20.0];
        let col = array![[100.0], [200.0]];
        let mut out = Array2::<f64>::zeros((0, 0));
        map4(
            &mut out,
            a.view(),
            row.view(),
            col.view(),
            a.view(),
            "x",
            |p, q, r, s| p + q + r + s,
        )
        .unwrap();
        assert_eq!(out, array![[112.0, 124.0], [216.0, 228.0]]);
        map5(
            &mut out,
            a.view(),
            row.view(),
            col.view(),
            a.view(),
            row.view(),
            "x",
            |p, q, r, s, t| p * q + r - s * t,
        )
        .unwrap();
        assert_eq!(out, array![[100.0, 100.0], [200.0, 200.0]]);
        let bad = array![1.0, 2.0, 3.0];
        let e = map4(
            &mut out,
            a.view(),
            bad.view(),
            col.view(),
            a.view(),
            "f * c + i * g",
            |p, q, r, s| p + q + r + s,
        )
        .unwrap_err();
        assert!(e.to_string().contains("f * c + i * g"), "{e}");
    }

    /// An LSTM cell's arithmetic over ten arrays: the gate blocks are column slices of
    /// three `[rows, 4 n]` arrays (the last a bias row broadcast down), and the cell state.
    fn cell(rows: usize, n: usize, layout: &str) -> (Array2<f64>, Array2<f64>) {
        let value =
            |i: usize, j: usize, seed: usize| ((i * 7 + j * 3 + seed * 5) % 11) as f64 - 5.0;
        let x = Array2::from_shape_fn((rows, 4 * n), |(i, j)| value(i, j, 1));
        let d = Array2::from_shape_fn((rows, 4 * n), |(i, j)| value(i, j, 2));
        let b = Array1::from_shape_fn(4 * n, |j| value(0, j, 3));
        let c = Array2::from_shape_fn((rows, n), |(i, j)| value(i, j, 4));
        let f = |p: f64, q: f64, r: f64, s: f64, t: f64, u: f64, v: f64, w: f64, y: f64, z: f64| {
            (p + q + r) * z + (s + t + u) * (v - w + y)
        };
        let want = Array2::from_shape_fn((rows, n), |(i, j)| {
            let g = |k: usize| (x[[i, k * n + j]], d[[i, k * n + j]], b[k * n + j]);
            let ((p, q, r), (s, t, u), (v, w, y)) = (g(0), g(1), g(2));
            f(p, q, r, s, t, u, v, w, y, c[[i, j]])
        });
        // Contiguous gate blocks (the slice loops), column slices (row by row), or the
        // same values column-major (element by element).
        let block = |a: &Array2<f64>, k: usize| a.slice(s![.., k * n..(k + 1) * n]).to_owned();
        let (xs, ds): (Vec<_>, Vec<_>) = (0..3).map(|k| (block(&x, k), block(&d, k))).unzip();
        let column_major = |a: &Array2<f64>| {
            let mut f = Array2::<f64>::zeros(a.raw_dim().f());
            f.assign(a);
            f
        };
        let (x, d, c) = match layout {
            "column-major" => (column_major(&x), column_major(&d), column_major(&c)),
            _ => (x, d, c),
        };
        fn part(a: &Array2<f64>, k: usize, n: usize) -> ArrayView<'_, f64, ndarray::Ix2> {
            a.view().slice_move(s![.., k * n..(k + 1) * n])
        }
        let bp = |k: usize| b.slice(s![k * n..(k + 1) * n]);
        let mut out = Array2::<f64>::zeros((0, 0));
        if layout == "contiguous" {
            map10(
                &mut out,
                xs[0].view(),
                ds[0].view(),
                bp(0),
                xs[1].view(),
                ds[1].view(),
                bp(1),
                xs[2].view(),
                ds[2].view(),
                bp(2),
                c.view(),
                "cell",
                f,
            )
            .unwrap();
        } else {
            map10(
                &mut out,
                part(&x, 0, n),
                part(&d, 0, n),
                bp(0),
                part(&x, 1, n),
                part(&d, 1, n),
                bp(1),
                part(&x, 2, n),
                part(&d, 2, n),
                bp(2),
                c.view(),
                "cell",
                f,
            )
            .unwrap();
        }
        (out, want)
    }

    #[test]
    fn map10_agrees_with_a_loop_on_every_path() {
        for layout in ["contiguous", "column slices", "column-major"] {
            // Rows long enough for the row loops, too short for them, and enough elements
            // for the map to be split over two threads.
            for (rows, n) in [(5, 40), (3, 5), (64, 300)] {
                let (out, want) = cell(rows, n, layout);
                assert_eq!(out, want, "{layout} {rows} x {n}");
            }
        }
    }

    #[test]
    fn map12_broadcasts_and_names_a_bad_shape() {
        let a = array![[1.0, 2.0], [3.0, 4.0]];
        let row = array![10.0, 20.0];
        let col = array![[100.0], [200.0]];
        let one = ndarray::arr0(0.5);
        let mut out = Array2::<f64>::zeros((0, 0));
        let sum = |p: f64,
                   q: f64,
                   r: f64,
                   s: f64,
                   t: f64,
                   u: f64,
                   v: f64,
                   w: f64,
                   x: f64,
                   y: f64,
                   z: f64,
                   o: f64| { p + q + r + s + t + u + v + w + x + y + z + o };
        map12(
            &mut out,
            a.view(),
            row.view(),
            col.view(),
            one.view(),
            a.t(),
            row.view(),
            col.view(),
            a.view(),
            one.view(),
            row.view(),
            col.view(),
            a.view(),
            "x",
            sum,
        )
        .unwrap();
        let want = Array2::from_shape_fn((2, 2), |(i, j)| {
            3.0 * a[[i, j]] + a[[j, i]] + 3.0 * row[j] + 3.0 * col[[i, 0]] + 1.0
        });
        assert_eq!(out, want);
        let bad = array![1.0, 2.0, 3.0];
        let e = map12(
            &mut out,
            a.view(),
            row.view(),
            col.view(),
            one.view(),
            a.t(),
            row.view(),
            col.view(),
            a.view(),
            one.view(),
            bad.view(),
            col.view(),
            a.view(),
            "wide sum",
            sum,
        )
        .unwrap_err();
        assert!(e.to_string().contains("wide sum"), "{e}");
    }

    #[test]
    fn map16_reads_sixteen_operands_with_broadcasting() {
        // The widest map fusion makes (`MAX_ARRAYS`): a matrix, its transpose, a row, a
        // column and a 0-d array, each four times, weighted by position so that an
        // operand read in the wrong place changes the sum.
        let a = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]];
        let row = array![10.0, 20.0, 30.0];
        let col = array![[100.0], [200.0], [300.0]];
        let one = ndarray::arr0(0.5);
        let mut out = Array2::<f64>::zeros((0, 0));
        #[rustfmt::skip]
        let weighted = |x0: f64, x1: f64, x2: f64, x3: f64, x4: f64, x5: f64, x6: f64, x7: f64,
                        x8: f64, x9: f64, x10: f64, x11: f64, x12: f64, x13: f64, x14: f64,
                        x15: f64| {
            [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15]
                .iter()
                .enumerate()
                .fold(0.0, |sum, (k, x)| sum + (k + 1) as f64 * x)
        };
        map16(
            &mut out,
            a.view(),
            a.t(),
            row.view(),
            col.view(),
            one.view(),
            a.view(),
            a.t(),
            row.view(),
            col.view(),
            one.view(),
            a.view(),
            a.t(),
            row.view(),
            col.view(),
            one.view(),
            a.view(),
            "x",
            weighted,
        )
        .unwrap();
        let want = Array2::from_shape_fn((3, 3), |(i, j)| {
            let (m, t, r, c) = (a[[i, j]], a[[j, i]], row[j], col[[i, 0]]);
            let x = [m, t, r, c, 0.5, m, t, r, c, 0.5, m, t, r, c, 0.5, m];
            x.iter()
                .enumerate()
                .fold(0.0, |sum, (k, x)| sum + (k + 1) as f64 * x)
        });
        assert_eq!(out, want);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::math;
    use ndarray::{array, aview0, aview1, s, Array0, Array1, Array2, Array3, ArrayD, IxDyn};

    #[test]
    fn map1_same_shape_and_cast() {
        let a = array![[1.0f64, -2.0], [3.0, -4.0]];
        let mut out = Array2::<f64>::zeros((0, 0));
        map1(&mut out, a.view(), "abs(a)", math::abs).unwrap();
        assert_eq!(out, array![[1.0, 2.0], [3.0, 4.0]]);
        let mut flags = Array2::<bool>::default((0, 0));
        map1(&mut flags, a.view(), "a > 0", |x| x > 0.0).unwrap();
        assert_eq!(flags, array![[true, false], [true, false]]);
    }

    #[test]
    fn map1_scalar_view() {
        let x = 2.0f32;
        let mut out = Array0::<f32>::zeros(());
        map1(&mut out, aview0(&x), "exp(x)", math::exp).unwrap();
        assert_eq!(out[()], 2.0f32.exp());
    }

    #[test]
    fn map2_broadcasts_row_and_scalar() {
        let a = array![[1, 2, 3], [4, 5, 6]];
        let b = array![10, 20, 30];
        let mut out = Array2::<i32>::zeros((0, 0));
        map2(&mut out, a.view(), b.view(), "a + b", math::add).unwrap();
        assert_eq!(out, array![[11, 22, 33], [14, 25, 36]]);
        let two = 2;
        map2(&mut out, a.view(), aview0(&two), "a * 2", math::mul).unwrap();
        assert_eq!(out, array![[2, 4, 6], [8, 10, 12]]);
        // Scalar on the left, column against row.
        let col = array![[1.0], [2.0]];
        let row = array![10.0, 20.0, 30.0];
        let mut o = Array2::<f64>::zeros((0, 0));
        map2(&mut o, col.view(), row.view(), "col - row", math::sub).unwrap();
        assert_eq!(o, array![[-9.0, -19.0, -29.0], [-8.0, -18.0, -28.0]]);
    }

    #[test]
    fn map2_strided_and_reversed_inputs() {
        let a = Array1::from_iter(0..10i64);
        let b = Array1::from_iter(100..105i64);
        let mut out = Array1::<i64>::zeros(0);
        map2(
            &mut out,
            a.slice(s![..;2]),
            b.slice(s![..;-1]),
            "a + b",
            math::add,
        )
        .unwrap();
        assert_eq!(out, array![104, 105, 106, 107, 108]);
    }

    #[test]
    fn map2_mixed_dtypes() {
        let a = array![1i32, 2, 3];
        let b = array![0.5f64, 0.25, 2.0];
        let mut out = Array1::<f64>::zeros(0);
        map2(&mut out, a.view(), b.view(), "a * b", |x: i32, y: f64| {
            f64::from(x) * y
        })
        .unwrap();
        assert_eq!(out, array![0.5, 0.5, 6.0]);
    }

    #[test]
    fn map2_reuses_buffer() {
        let a = array![1.0f64, 2.0];
        let mut out = Array1::<f64>::zeros(2);
        let ptr = out.as_ptr();
        map2(&mut out, a.view(), a.view(), "a + a", math::add).unwrap();
        assert_eq!(out.as_ptr(), ptr);
        assert_eq!(out, array![2.0, 4.0]);
    }

    #[test]
    fn map2_error_names_expression_and_shapes() {
        let a = Array2::<f64>::zeros((2, 3));
        let b = Array1::<f64>::zeros(4);
        let mut out = Array2::<f64>::zeros((0, 0));
        let e = map2(&mut out, a.view(), b.view(), "a + b", math::add).unwrap_err();
        assert_eq!(
            e,
            Error::Broadcast {
                what: "a + b".into(),
                shapes: vec![vec![2, 3], vec![4]],
            }
        );
        // Nothing was resized on error.
        assert_eq!(out.shape(), &[0, 0]);
    }

    #[test]
    fn map3_select() {
        let c = array![true, false, true];
        let a = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let zero = 0.0f32;
        let mut out = Array2::<f32>::zeros((0, 0));
        map3(
            &mut out,
            c.view(),
            a.view(),
            aview0(&zero),
            "where",
            math::select,
        )
        .unwrap();
        assert_eq!(out, array![[1.0, 0.0, 3.0], [4.0, 0.0, 6.0]]);
        let bad = aview1(&[1.0f32, 2.0]);
        let e = map3(
            &mut out,
            c.view(),
            a.view(),
            bad,
            "where(c, a, b)",
            math::select,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot broadcast shapes [3], [2, 3] and [2] together in `where(c, a, b)`"
        );
    }

    #[test]
    fn map_zero_size_and_dyn() {
        let a = Array2::<f64>::zeros((0, 3));
        let b = array![1.0, 2.0, 3.0];
        let mut out = Array2::<f64>::zeros((5, 5));
        map2(&mut out, a.view(), b.view(), "a + b", math::add).unwrap();
        assert_eq!(out.shape(), &[0, 3]);
        let d = ArrayD::<i64>::from_elem(IxDyn(&[2, 1, 2]), 1);
        let e = Array3::<i64>::from_elem((1, 3, 1), 2);
        let mut od = ArrayD::<i64>::zeros(IxDyn(&[]));
        map2(&mut od, d.view(), e.view(), "d + e", math::add).unwrap();
        assert_eq!(od.shape(), &[2, 3, 2]);
        assert!(od.iter().all(|&x| x == 3));
    }
}
