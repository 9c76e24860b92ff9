//! Reductions over every element or along one axis, with numpy's conventions: integer sums
//! wrap, `max`/`min` of nothing is an error and NaN propagates, `mean` of nothing is NaN.
//! Axis versions write into a reused buffer.

use std::mem::MaybeUninit;

use ndarray::{Array, Array1, ArrayView, ArrayView1, Axis, Dimension, IxDyn, RemoveAxis, Zip};

use crate::element::{Element, Float, Number};
use crate::error::{Error, Result};
use crate::kernels::buffer::{broadcast_shape, ensure_shape, prepare_fast_first, Destination};
use crate::kernels::isa;
use crate::math::{maximum, minimum};

/// Sum of every element (0 for an empty array).
pub fn sum_all<T: Number, D: Dimension>(a: ArrayView<'_, T, D>) -> T {
    match a.as_slice_memory_order() {
        Some(s) => sum_slice(s),
        None => a.fold(T::ZERO, |acc, &x| acc.num_add(x)),
    }
}

/// Largest element; NaN if any element is NaN. `Err(Empty)` naming `what` when empty.
pub fn max_all<T: Element, D: Dimension>(a: ArrayView<'_, T, D>, what: &str) -> Result<T> {
    let first = *a.first().ok_or_else(|| empty_error(what))?;
    if let Some(s) = a.as_slice_memory_order() {
        return Ok(isa::with_best_isa(
            #[inline(always)]
            || extreme_slice(s, |x, m| x > m),
        ));
    }
    Ok(a.fold(first, |acc, &x| maximum(acc, x)))
}

/// Smallest element; NaN if any element is NaN. `Err(Empty)` naming `what` when empty.
pub fn min_all<T: Element, D: Dimension>(a: ArrayView<'_, T, D>, what: &str) -> Result<T> {
    let first = *a.first().ok_or_else(|| empty_error(what))?;
    if let Some(s) = a.as_slice_memory_order() {
        return Ok(isa::with_best_isa(
            #[inline(always)]
            || extreme_slice(s, |x, m| x < m),
        ));
    }
    Ok(a.fold(first, |acc, &x| minimum(acc, x)))
}

/// Lanes of [`extreme_slice`]: 8 running extremes (two AVX2 registers of f32, four of f64).
const EXTREME_LANES: usize = 8;

/// The largest (or, with `<`, smallest) element of a non-empty slice, NaN if any is NaN.
#[inline(always)]
fn extreme_slice<T: Element>(s: &[T], beats: impl Fn(T, T) -> bool) -> T {
    let group = |i: usize| -> [T; EXTREME_LANES] {
        let g = &s[i..i + EXTREME_LANES];
        super::lanes::lanes_from(|l| g[l])
    };
    extreme_of(&mut (), s.len(), |_, i| group(i), |_, i| s[i], beats)
}

/// The largest (or, with `<`, smallest) of `at(0), .., at(n - 1)` (n > 0), NaN if any is
/// NaN, as the sequential fold of `maximum` computes it, in lanes so that the loop
/// vectorizes. Each lane keeps `if beats(x, m) { x } else { m }` (one `maxpd`/`minpd`, a
/// short loop-carried chain) and, beside it, the last NaN it saw (a select off that
/// chain): a compare-and-select on NaN in the same chain as the extreme made the chain,
/// and the loop, twice as slow. A NaN seen anywhere is the answer. Between equal values
/// the fold keeps the last (`maximum` returns its second operand on a tie) and the lanes
/// may keep another: only `-0.0` and `0.0` tell them apart, and numpy does not promise
/// which (its own SIMD loops depend on the positions). `group(i)` gives `at(i), .., at(i + 7)`
/// (one bounds check per slice). Both may write into `out` (a map computed in the same
/// pass); `at(0)` is called before `group(0)`.
#[inline(always)]
fn extreme_of<T: Element, S: ?Sized>(
    out: &mut S,
    n: usize,
    group: impl Fn(&mut S, usize) -> [T; EXTREME_LANES],
    at: impl Fn(&mut S, usize) -> T,
    beats: impl Fn(T, T) -> bool,
) -> T {
    #[allow(clippy::eq_op)]
    let is_nan = |x: T| x != x;
    let first = at(out, 0);
    let mut m = [first; EXTREME_LANES];
    let mut nan = [first; EXTREME_LANES];
    let full = n - n % EXTREME_LANES;
    let mut i = 0;
    while i < full {
        for ((m, nan), x) in m.iter_mut().zip(nan.iter_mut()).zip(group(out, i)) {
            *m = if beats(x, *m) { x } else { *m };
            *nan = if is_nan(x) { x } else { *nan };
        }
        i += EXTREME_LANES;
    }
    let mut best = m[0];
    for x in m[1..]
        .iter()
        .chain(&nan)
        .copied()
        .chain((full..n).map(|i| at(out, i)))
    {
        // No early exit at a NaN: every `at` runs (a map's tail is written).
        if beats(x, best) || is_nan(x) {
            best = x;
        }
    }
    best
}

macro_rules! extreme_of_map {
    ($max:ident, $min:ident: $a0:ident $t0:ident $d0:ident $(, $a:ident $t:ident $d:ident)*) => {
        /// `max(f(a, ..))` in one pass, without the map's array: the largest element of
        /// the map of `f` over the operands broadcast together (the error of the map,
        /// named `map_what`, when they do not broadcast; `Err(Empty)` naming `what` when
        /// the map is empty), NaN if any element is NaN.
        pub fn $max<$t0: Copy, $d0: Dimension, $($t: Copy, $d: Dimension,)* U: Element>(
            $a0: ArrayView<'_, $t0, $d0>,
            $($a: ArrayView<'_, $t, $d>,)*
            map_what: &str,
            what: &str,
            f: impl Fn($t0, $($t),*) -> U,
        ) -> Result<U> {
            extreme_of_map!(@body $a0 $($a)*; map_what, what, f, |x: U, m: U| x > m, maximum)
        }

        /// The smallest element; see the `max` twin.
        pub fn $min<$t0: Copy, $d0: Dimension, $($t: Copy, $d: Dimension,)* U: Element>(
            $a0: ArrayView<'_, $t0, $d0>,
            $($a: ArrayView<'_, $t, $d>,)*
            map_what: &str,
            what: &str,
            f: impl Fn($t0, $($t),*) -> U,
        ) -> Result<U> {
            extreme_of_map!(@body $a0 $($a)*; map_what, what, f, |x: U, m: U| x < m, minimum)
        }
    };
    (@body $a0:ident $($a:ident)*; $map_what:ident, $what:ident, $f:ident, $beats:expr, $fold:ident) => {{
        let shape: IxDyn = broadcast_shape($map_what, &[$a0.shape(), $($a.shape()),*])?;
        let n = shape.size();
        if n == 0 {
            return Err(empty_error($what));
        }
        // Every operand a slice of the whole shape: one pass, in lanes.
        if $a0.shape() == shape.slice() $(&& $a.shape() == shape.slice())* {
            if let (Some($a0), $(Some($a),)*) = ($a0.as_slice(), $($a.as_slice(),)*) {
                let group = |i: usize| -> [U; EXTREME_LANES] {
                    let $a0 = &$a0[i..i + EXTREME_LANES];
                    $(let $a = &$a[i..i + EXTREME_LANES];)*
                    super::lanes::lanes_from(|l| $f($a0[l], $($a[l]),*))
                };
                return Ok(isa::with_best_isa(
                    #[inline(always)]
                    || extreme_of(&mut (), n, |_, i| group(i), |_, i| $f($a0[i], $($a[i]),*), $beats),
                ));
            }
        }
        // Otherwise (broadcasting, strides): element by element, in the map's order.
        let (Some($a0), $(Some($a),)*) = ($a0.broadcast(shape.clone()), $($a.broadcast(shape.clone()),)*) else {
            unreachable!("broadcast_shape checked that the operands broadcast")
        };
        let zip = Zip::from(&$a0)$(.and(&$a))*;
        let mut best: Option<U> = None;
        zip.for_each(|&$a0, $(&$a),*| {
            let x = $f($a0, $($a),*);
            best = Some(match best {
                Some(m) => $fold(m, x),
                None => x,
            });
        });
        best.ok_or_else(|| empty_error($what))
    }};
}

extreme_of_map!(max_of_map1, min_of_map1: a A Da);
extreme_of_map!(max_of_map2, min_of_map2: a A Da, b B Db);
extreme_of_map!(max_of_map3, min_of_map3: a A Da, b B Db, c C Dc);

macro_rules! map_then_extreme {
    ($max:ident, $min:ident, $map:ident, $max_of:ident, $min_of:ident: $a0:ident $t0:ident $d0:ident $(, $a:ident $t:ident $d:ident)*) => {
        /// `out = f(a, ..)` elementwise as the map kernel of the same arity writes it, and
        /// in the same pass the largest `g(a, .., out)` (a step's new row and the largest
        /// change from the previous one): one read of the operands instead of two. Errors
        /// as the map's (named `map_what`) and then the `max`'s (`what`, when empty); NaN
        /// if any `g` is NaN.
        #[allow(clippy::too_many_arguments)]
        pub fn $max<'o, $t0: Copy + Sync, $d0: Dimension, $($t: Copy + Sync, $d: Dimension,)* U: Element, D: Dimension, V: Element>(
            out: impl Destination<'o, U, D>,
            $a0: ArrayView<'_, $t0, $d0>,
            $($a: ArrayView<'_, $t, $d>,)*
            map_what: &str,
            what: &str,
            f: impl Fn($t0, $($t,)*) -> U + Sync,
            g: impl Fn($t0, $($t,)* U) -> V,
        ) -> Result<V> {
            map_then_extreme!(@body out $a0 $($a)*; $map, $max_of, map_what, what, f, g, |x: V, m: V| x > m)
        }

        /// The smallest `g`; see the `max` twin.
        #[allow(clippy::too_many_arguments)]
        pub fn $min<'o, $t0: Copy + Sync, $d0: Dimension, $($t: Copy + Sync, $d: Dimension,)* U: Element, D: Dimension, V: Element>(
            out: impl Destination<'o, U, D>,
            $a0: ArrayView<'_, $t0, $d0>,
            $($a: ArrayView<'_, $t, $d>,)*
            map_what: &str,
            what: &str,
            f: impl Fn($t0, $($t,)*) -> U + Sync,
            g: impl Fn($t0, $($t,)* U) -> V,
        ) -> Result<V> {
            map_then_extreme!(@body out $a0 $($a)*; $map, $min_of, map_what, what, f, g, |x: V, m: V| x < m)
        }
    };
    (@body $out:ident $a0:ident $($a:ident)*; $map:ident, $extreme_of_map:ident, $map_what:ident, $what:ident, $f:ident, $g:ident, $beats:expr) => {{
        let shape: D = broadcast_shape($map_what, &[$a0.shape(), $($a.shape()),*])?;
        let n = shape.size();
        let mut best = None;
        // Every operand a slice of the output's shape: the one pass, in lanes.
        let fast = |o: &mut [MaybeUninit<U>], sh: &[usize]| {
            if n == 0 || $a0.shape() != sh $(|| $a.shape() != sh)* {
                return false;
            }
            let (Some($a0), $(Some($a),)*) = ($a0.as_slice(), $($a.as_slice(),)*) else {
                return false;
            };
            // `#[inline(always)]` on each closure: they run inside the AVX2 function.
            best = Some(isa::with_best_isa(
                #[inline(always)]
                || {
                    extreme_of(
                        o,
                        n,
                        #[inline(always)]
                        |o: &mut [MaybeUninit<U>], i: usize| -> [V; EXTREME_LANES] {
                            let $a0 = &$a0[i..i + EXTREME_LANES];
                            $(let $a = &$a[i..i + EXTREME_LANES];)*
                            let ys: [U; EXTREME_LANES] =
                                super::lanes::lanes_from(|l| $f($a0[l], $($a[l],)*));
                            for (o, &y) in o[i..i + EXTREME_LANES].iter_mut().zip(&ys) {
                                *o = MaybeUninit::new(y);
                            }
                            super::lanes::lanes_from(|l| $g($a0[l], $($a[l],)* ys[l]))
                        },
                        #[inline(always)]
                        |o: &mut [MaybeUninit<U>], i: usize| -> V {
                            let y = $f($a0[i], $($a[i],)*);
                            o[i] = MaybeUninit::new(y);
                            $g($a0[i], $($a[i],)* y)
                        },
                        $beats,
                    )
                },
            ));
            true
        };
        match prepare_fast_first($out, shape, $map_what, fast)? {
            None => best.ok_or_else(|| empty_error($what)),
            // Otherwise (broadcasting, strides, nothing to reduce): the map, then the
            // reduction over its operands and its result.
            Some(mut view) => {
                super::elementwise::$map(view.view_mut(), $a0.view(), $($a.view(),)* $map_what, &$f)?;
                $extreme_of_map($a0, $($a,)* view.view(), $map_what, $what, &$g)
            }
        }
    }};
}

map_then_extreme!(map1_max, map1_min, map1, max_of_map2, min_of_map2: a A Da);
map_then_extreme!(map2_max, map2_min, map2, max_of_map3, min_of_map3: a A Da, b B Db);

/// Mean of every element; NaN for an empty array (numpy warns and returns NaN).
pub fn mean_all<T: Float, D: Dimension>(a: ArrayView<'_, T, D>) -> T {
    let n = a.len();
    sum_all(a).div(T::from_usize(n))
}

/// numpy's `var` (ddof 0): the mean of the squared deviations from the mean, two passes;
/// NaN for an empty array.
pub fn var_all<T: Float, D: Dimension>(a: ArrayView<'_, T, D>) -> T {
    let mean = mean_all(a.view());
    let squares = a.fold(T::ZERO, |acc, &x| {
        let d = x.num_sub(mean);
        acc.num_add(d.num_mul(d))
    });
    squares.div(T::from_usize(a.len()))
}

/// numpy's `std` (ddof 0): the square root of [`var_all`].
pub fn std_all<T: Float, D: Dimension>(a: ArrayView<'_, T, D>) -> T {
    var_all(a).sqrt()
}

/// `log(sum(exp(a)))` without overflow: the largest element is taken out first
/// (`m + log(sum(exp(a - m)))`); -inf for an empty array or all -inf, +inf if any is
/// +inf, NaN if any is NaN.
pub fn logsumexp_all<T: Float, D: Dimension>(a: ArrayView<'_, T, D>) -> T {
    let Some(&first) = a.first() else {
        return T::ZERO.num_sub(T::ONE).div(T::ZERO);
    };
    let m = a.fold(first, |m, &x| maximum(m, x));
    if !m.is_finite() {
        // NaN, or an infinite largest element: it is the answer (sum of exp is inf or 0).
        return m;
    }
    let s = a.fold(T::ZERO, |acc, &x| acc.num_add(x.num_sub(m).exp()));
    m.num_add(s.ln())
}

/// `out = a.var(axis)`, `a.std(axis)` (`sqrt`) or `logsumexp(a, axis)` (see the `_all`
/// versions; NaN, NaN, -inf where the axis has length 0). `Err(InvalidArgument)` if `a`
/// has no such axis.
pub fn var_axis<T: Float, D: RemoveAxis>(
    out: &mut Array<T, D::Smaller>,
    a: ArrayView<'_, T, D>,
    axis: usize,
) -> Result<()> {
    lanewise(out, a, axis, "axis", var_all)
}

/// See [`var_axis`].
pub fn std_axis<T: Float, D: RemoveAxis>(
    out: &mut Array<T, D::Smaller>,
    a: ArrayView<'_, T, D>,
    axis: usize,
) -> Result<()> {
    lanewise(out, a, axis, "axis", std_all)
}

/// See [`var_axis`].
pub fn logsumexp_axis<T: Float, D: RemoveAxis>(
    out: &mut Array<T, D::Smaller>,
    a: ArrayView<'_, T, D>,
    axis: usize,
) -> Result<()> {
    lanewise(out, a, axis, "axis", logsumexp_all)
}

/// Each lane along `axis` reduced by `f`.
/// `Err(InvalidArgument)` naming `what` if `a` has no such axis.
fn lanewise<T: Element, R: Element, D: RemoveAxis>(
    out: &mut Array<R, D::Smaller>,
    a: ArrayView<'_, T, D>,
    axis: usize,
    what: &str,
    f: impl Fn(ArrayView1<'_, T>) -> R,
) -> Result<()> {
    let ax = check_axis(&a, axis, what)?;
    ensure_shape(out, a.raw_dim().remove_axis(ax));
    Zip::from(out)
        .and(a.lanes(ax))
        .for_each(|o, lane| *o = f(lane));
    Ok(())
}

/// numpy's `cumsum(a)` (`product` false) or `cumprod(a)` of every element, flattened in
/// row-major order: `out[i]` is the sum (product) of the first `i + 1` (integers wrap).
pub fn cumulative_all<T: Number, D: Dimension>(
    out: &mut Array1<T>,
    a: ArrayView<'_, T, D>,
    product: bool,
) {
    ensure_shape(out, ndarray::Ix1(a.len()));
    running(out.iter_mut(), a.iter().copied(), product);
}

/// The running sum (product) of `xs` into `out`, starting at the first element as numpy
/// does, not at 0 (`cumsum([-0.0])` is `[-0.0]`, where `0.0 + -0.0` would be `0.0`).
#[inline]
fn running<'o, T: Number + 'o>(
    out: impl Iterator<Item = &'o mut T>,
    xs: impl Iterator<Item = T>,
    product: bool,
) {
    let mut acc: Option<T> = None;
    for (o, x) in out.zip(xs) {
        let v = match acc {
            None => x,
            Some(a) if product => a.num_mul(x),
            Some(a) => a.num_add(x),
        };
        acc = Some(v);
        *o = v;
    }
}

/// numpy's `cumsum(a, axis)` / `cumprod(a, axis)`: the running sum (product) along `axis`,
/// `a`'s shape. `Err(InvalidArgument)` if `a` has no such axis.
pub fn cumulative_axis<T: Number, D: RemoveAxis>(
    out: &mut Array<T, D>,
    a: ArrayView<'_, T, D>,
    axis: usize,
    product: bool,
) -> Result<()> {
    let ax = check_axis(&a, axis, "axis")?;
    ensure_shape(out, a.raw_dim());
    Zip::from(out.lanes_mut(ax))
        .and(a.lanes(ax))
        .for_each(|mut o, lane| running(o.iter_mut(), lane.iter().copied(), product));
    Ok(())
}

/// `out = a.sum(axis)`. `Err(InvalidArgument)` if `a` has no such axis.
pub fn sum_axis<T: Number, D: RemoveAxis>(
    out: &mut Array<T, D::Smaller>,
    a: ArrayView<'_, T, D>,
    axis: usize,
) -> Result<()> {
    let ax = check_axis(&a, axis, "axis")?;
    ensure_shape(out, a.raw_dim().remove_axis(ax));
    if a.len_of(ax) == 0 {
        out.fill(T::ZERO);
        return Ok(());
    }
    reduce_axis(out, a, ax, sum_all, |acc, x| acc.num_add(x));
    Ok(())
}

/// The adjoint of a broadcast (reverse mode's `Op::Unbroadcast`): `out`, of `like`'s
/// shape, is `g` summed over its leading axes that `like` lacks and over every axis where
/// `like` has length 1; each element of `g` is added, in row-major order, into the
/// element it was broadcast from. `Err(InvalidArgument)` naming `what` when `like`'s shape
/// does not broadcast to `g`'s, or the result cannot be allocated.
pub fn sum_to_shape<'o, T: Number, D: Dimension, E: Dimension, U>(
    out: impl Destination<'o, T, D>,
    g: ArrayView<'_, T, E>,
    like: ArrayView<'_, U, D>,
    what: &str,
) -> Result<()> {
    let g = g.into_dyn();
    let (have, want) = (g.shape(), like.shape());
    let lead = have.len().checked_sub(want.len());
    let fits = lead.is_some_and(|lead| {
        want.iter()
            .zip(&have[lead..])
            .all(|(&w, &h)| w == h || w == 1)
    });
    let (Some(lead), true) = (lead, fits) else {
        return Err(Error::InvalidArgument {
            what: what.to_string(),
            detail: format!("a gradient of shape {have:?} cannot be summed to the shape {want:?}"),
        });
    };
    let mut out = out.prepare(like.raw_dim(), what)?;
    out.fill(T::ZERO);
    if want.iter().zip(&have[lead..]).all(|(w, h)| w == h) {
        // Only leading axes to sum (a bias added to every row): row by row, in order.
        let rows = g
            .view()
            .into_shape_with_order(IxDyn(&[have[..lead].iter().product(), out.len()]))
            .ok();
        if let (Some(rows), Some(o)) = (rows, out.as_slice_mut()) {
            for row in rows.outer_iter() {
                for (o, &v) in o.iter_mut().zip(row.iter()) {
                    *o = o.num_add(v);
                }
            }
            return Ok(());
        }
    }
    // Any other broadcast: element by element, its source index computed in place.
    let mut out = out.into_dyn();
    let mut at = [0usize; 8];
    let n = want.len().min(at.len());
    for (i, &v) in g.indexed_iter() {
        for k in 0..n {
            at[k] = if want[k] == 1 { 0 } else { i[lead + k] };
        }
        if let Some(o) = out.get_mut(&at[..n]) {
            *o = o.num_add(v);
        }
    }
    Ok(())
}

/// [`sum_to_shape`] without a copy when there is nothing to sum: `g` itself when it
/// already has `like`'s shape (the adjoint of an addition of operands of one shape, the
/// usual case, which the compiler cannot prove because shapes are known only at run
/// time), else `buf` filled by [`sum_to_shape`] and viewed.
pub fn sum_to_shape_view<'a, T: Number, D: Dimension, E: Dimension, U>(
    buf: &'a mut Array<T, D>,
    g: ArrayView<'a, T, E>,
    like: ArrayView<'_, U, D>,
    what: &str,
) -> Result<ArrayView<'a, T, D>> {
    if g.shape() == like.shape() {
        if let Ok(same) = g.clone().into_dimensionality::<D>() {
            return Ok(same);
        }
    }
    sum_to_shape(&mut *buf, g, like, what)?;
    Ok(buf.view())
}

/// Product of every element (1 for an empty array); integers wrap, as numpy's do.
pub fn prod_all<T: Number, D: Dimension>(a: ArrayView<'_, T, D>) -> T {
    a.fold(T::ONE, |acc, &x| acc.num_mul(x))
}

/// `out = a.prod(axis)` (1 where the axis has length 0). `Err(InvalidArgument)` if `a` has
/// no such axis.
pub fn prod_axis<T: Number, D: RemoveAxis>(
    out: &mut Array<T, D::Smaller>,
    a: ArrayView<'_, T, D>,
    axis: usize,
) -> Result<()> {
    let ax = check_axis(&a, axis, "axis")?;
    ensure_shape(out, a.raw_dim().remove_axis(ax));
    if a.len_of(ax) == 0 {
        out.fill(T::ONE);
        return Ok(());
    }
    reduce_axis(out, a, ax, |lane| prod_all(lane), |acc, x| acc.num_mul(x));
    Ok(())
}

/// Whether every element is true (true for an empty array).
pub fn all_all<D: Dimension>(a: ArrayView<'_, bool, D>) -> bool {
    a.iter().all(|&x| x)
}

/// Whether any element is true (false for an empty array).
pub fn any_all<D: Dimension>(a: ArrayView<'_, bool, D>) -> bool {
    a.iter().any(|&x| x)
}

/// `out = a.all(axis)` (true where the axis has length 0).
pub fn all_axis<D: RemoveAxis>(
    out: &mut Array<bool, D::Smaller>,
    a: ArrayView<'_, bool, D>,
    axis: usize,
) -> Result<()> {
    logical_axis(out, a, axis, true)
}

/// `out = a.any(axis)` (false where the axis has length 0).
pub fn any_axis<D: RemoveAxis>(
    out: &mut Array<bool, D::Smaller>,
    a: ArrayView<'_, bool, D>,
    axis: usize,
) -> Result<()> {
    logical_axis(out, a, axis, false)
}

/// `all` (`every`) or `any` along `axis`.
fn logical_axis<D: RemoveAxis>(
    out: &mut Array<bool, D::Smaller>,
    a: ArrayView<'_, bool, D>,
    axis: usize,
    every: bool,
) -> Result<()> {
    let ax = check_axis(&a, axis, "axis")?;
    ensure_shape(out, a.raw_dim().remove_axis(ax));
    if a.len_of(ax) == 0 {
        out.fill(every);
        return Ok(());
    }
    if every {
        reduce_axis(out, a, ax, all_all, |acc, x| acc & x);
    } else {
        reduce_axis(out, a, ax, any_all, |acc, x| acc | x);
    }
    Ok(())
}

/// The index (in logical, row-major order) of the largest element, the first one among
/// equals; a NaN counts as the largest (numpy's `argmax`: the first NaN). `Err(Empty)`
/// naming `what` when empty.
pub fn argmax_all<T: Element, D: Dimension>(a: ArrayView<'_, T, D>, what: &str) -> Result<i64> {
    arg_extreme(a.iter().copied(), |x, m| x > m).ok_or_else(|| empty_error(what))
}

/// The index of the smallest element (the first NaN if any); see [`argmax_all`].
pub fn argmin_all<T: Element, D: Dimension>(a: ArrayView<'_, T, D>, what: &str) -> Result<i64> {
    arg_extreme(a.iter().copied(), |x, m| x < m).ok_or_else(|| empty_error(what))
}

/// `out = a.argmax(axis)`: each lane's index of its largest element. `Err(Empty)` naming
/// `what` when the axis has length 0.
pub fn argmax_axis<T: Element, D: RemoveAxis>(
    out: &mut Array<i64, D::Smaller>,
    a: ArrayView<'_, T, D>,
    axis: usize,
    what: &str,
) -> Result<()> {
    arg_axis(out, a, axis, what, |x, m| x > m)
}

/// `out = a.argmin(axis)`; see [`argmax_axis`].
pub fn argmin_axis<T: Element, D: RemoveAxis>(
    out: &mut Array<i64, D::Smaller>,
    a: ArrayView<'_, T, D>,
    axis: usize,
    what: &str,
) -> Result<()> {
    arg_axis(out, a, axis, what, |x, m| x < m)
}

fn arg_axis<T: Element, D: RemoveAxis>(
    out: &mut Array<i64, D::Smaller>,
    a: ArrayView<'_, T, D>,
    axis: usize,
    what: &str,
    beats: impl Fn(T, T) -> bool + Copy,
) -> Result<()> {
    if a.len_of(check_axis(&a, axis, what)?) == 0 {
        return Err(empty_error(what));
    }
    lanewise(out, a, axis, what, |lane| {
        arg_extreme(lane.iter().copied(), beats).unwrap_or(0)
    })
}

/// The position of the first element that no later one beats, a NaN (unequal to itself)
/// beating everything and never beaten; `None` when there is none.
fn arg_extreme<T: Element>(
    xs: impl Iterator<Item = T>,
    beats: impl Fn(T, T) -> bool,
) -> Option<i64> {
    #[allow(clippy::eq_op)]
    let is_nan = |x: T| x != x;
    let mut best: Option<(usize, T)> = None;
    for (i, x) in xs.enumerate() {
        match best {
            None => best = Some((i, x)),
            Some((_, m)) if is_nan(m) => break,
            Some((_, m)) if is_nan(x) || beats(x, m) => best = Some((i, x)),
            Some(_) => {}
        }
    }
    best.map(|(i, _)| i as i64)
}

/// `out = a.max(axis)`. `Err(Empty)` naming `what` when the axis has length 0 (as numpy,
/// even if the result itself would be empty).
pub fn max_axis<T: Element, D: RemoveAxis>(
    out: &mut Array<T, D::Smaller>,
    a: ArrayView<'_, T, D>,
    axis: usize,
    what: &str,
) -> Result<()> {
    extremum_axis(out, a, axis, what, max_all, maximum)
}

/// `out = a.min(axis)`. `Err(Empty)` naming `what` when the axis has length 0.
pub fn min_axis<T: Element, D: RemoveAxis>(
    out: &mut Array<T, D::Smaller>,
    a: ArrayView<'_, T, D>,
    axis: usize,
    what: &str,
) -> Result<()> {
    extremum_axis(out, a, axis, what, min_all, minimum)
}

/// max_axis and min_axis: `whole` reduces a lane, `combine` folds two values.
fn extremum_axis<T: Element, D: RemoveAxis>(
    out: &mut Array<T, D::Smaller>,
    a: ArrayView<'_, T, D>,
    axis: usize,
    what: &str,
    whole: fn(ArrayView1<'_, T>, &str) -> Result<T>,
    combine: fn(T, T) -> T,
) -> Result<()> {
    let ax = check_axis(&a, axis, what)?;
    if a.len_of(ax) == 0 {
        return Err(empty_error(what));
    }
    ensure_shape(out, a.raw_dim().remove_axis(ax));
    // Lanes are non-empty, so `whole` cannot fail; the fallback value is never used.
    reduce_axis(
        out,
        a,
        ax,
        |lane| whole(lane, what).unwrap_or_default(),
        combine,
    );
    Ok(())
}

/// `out = a.mean(axis)`; NaN where the axis has length 0. `Err(InvalidArgument)` if `a` has
/// no such axis.
pub fn mean_axis<T: Float, D: RemoveAxis>(
    out: &mut Array<T, D::Smaller>,
    a: ArrayView<'_, T, D>,
    axis: usize,
) -> Result<()> {
    let n = T::from_usize(a.shape().get(axis).copied().unwrap_or(0));
    sum_axis(out, a, axis)?;
    out.mapv_inplace(|s| s.div(n));
    Ok(())
}

/// Fills `out` (already shaped) with the reduction of `a` along `ax` (non-empty). When the
/// axis is the contiguous one (or the only one), each lane is reduced on its own (`lane_op`, which can use
/// the unrolled slice loop); otherwise whole sub-arrays are combined elementwise
/// (`combine`), which walks memory in order.
fn reduce_axis<T: Element, D: RemoveAxis>(
    out: &mut Array<T, D::Smaller>,
    a: ArrayView<'_, T, D>,
    ax: Axis,
    lane_op: impl Fn(ArrayView1<'_, T>) -> T,
    combine: impl Fn(T, T) -> T,
) {
    // A 1-d input is a single lane: reducing it whole beats combining 0-d sub-arrays.
    if a.ndim() == 1 || a.stride_of(ax).unsigned_abs() == 1 {
        Zip::from(out)
            .and(a.lanes(ax))
            .for_each(|o, lane| *o = lane_op(lane));
    } else {
        let mut subs = a.axis_iter(ax);
        if let Some(first) = subs.next() {
            Zip::from(&mut *out).and(&first).for_each(|o, &x| *o = x);
        }
        for sub in subs {
            Zip::from(&mut *out)
                .and(&sub)
                .for_each(|o, &x| *o = combine(*o, x));
        }
    }
}

fn check_axis<T, D: Dimension>(a: &ArrayView<'_, T, D>, axis: usize, what: &str) -> Result<Axis> {
    if axis < a.ndim() {
        Ok(Axis(axis))
    } else {
        Err(Error::InvalidArgument {
            what: what.to_string(),
            detail: format!(
                "axis {axis} is out of range for an array of rank {}",
                a.ndim()
            ),
        })
    }
}

fn empty_error(what: &str) -> Error {
    Error::Empty {
        what: what.to_string(),
    }
}

/// Sum of a slice with eight independent accumulators (vectorizable for floats, and closer
/// to numpy's pairwise summation than one running sum).
fn sum_slice<T: Number>(s: &[T]) -> T {
    let mut acc = [T::ZERO; 8];
    let chunks = s.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a = a.num_add(x);
        }
    }
    let mut sum = (acc[0].num_add(acc[4]).num_add(acc[1].num_add(acc[5])))
        .num_add(acc[2].num_add(acc[6]).num_add(acc[3].num_add(acc[7])));
    for &x in rest {
        sum = sum.num_add(x);
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, s, Array0, Array1, Array2, Array3, ArrayD, IxDyn};

    #[test]
    fn sum_to_shape_view_reads_g_in_place_when_nothing_is_summed() {
        let g = array![[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let mut buf = Array2::<f64>::zeros((0, 0));
        let same = sum_to_shape_view(&mut buf, g.view(), g.view(), "g").unwrap();
        assert_eq!(same.as_ptr(), g.as_ptr(), "no copy");
        assert_eq!(same, g);
        // Summed over the broadcast axis: a bias's adjoint, then a leading axis.
        let like = Array2::<f64>::zeros((1, 3));
        let cols = sum_to_shape_view(&mut buf, g.view(), like.view(), "g").unwrap();
        assert_eq!(cols, array![[5.0, 7.0, 9.0]]);
        let mut v = Array1::<f64>::zeros(0);
        let like = Array1::<f64>::zeros(3);
        let lead = sum_to_shape_view(&mut v, g.view(), like.view(), "g").unwrap();
        assert_eq!(lead, array![5.0, 7.0, 9.0]);
        let bad = Array1::<f64>::zeros(2);
        let err = sum_to_shape_view(&mut v, g.view(), bad.view(), "g").unwrap_err();
        assert!(err.to_string().contains("[2, 3]"), "{err}");
    }

    #[test]
    fn max_and_min_of_slices_agree_with_the_fold_and_propagate_nan() {
        let fold = |v: &[f64], max: bool| {
            v[1..].iter().fold(
                v[0],
                |m, &x| {
                    if max {
                        maximum(m, x)
                    } else {
                        minimum(m, x)
                    }
                },
            )
        };
        for n in [1usize, 7, 8, 9, 33, 1000] {
            let v: Vec<f64> = (0..n)
                .map(|i| ((i * 37 % 101) as f64 - 50.0) * 0.25)
                .collect();
            let a = Array1::from(v.clone());
            assert_eq!(max_all(a.view(), "a").unwrap(), fold(&v, true), "n = {n}");
            assert_eq!(min_all(a.view(), "a").unwrap(), fold(&v, false), "n = {n}");
            for at in [0, n / 2, n - 1] {
                let mut w = v.clone();
                w[at] = f64::NAN;
                let b = Array1::from(w);
                assert!(
                    max_all(b.view(), "b").unwrap().is_nan(),
                    "n = {n}, NaN at {at}"
                );
                assert!(
                    min_all(b.view(), "b").unwrap().is_nan(),
                    "n = {n}, NaN at {at}"
                );
            }
        }
        let ints = Array1::from((0..50i64).map(|i| (i * 13) % 29 - 14).collect::<Vec<_>>());
        assert_eq!(max_all(ints.view(), "i").unwrap(), 14);
        assert_eq!(min_all(ints.view(), "i").unwrap(), -14);
        let inf = array![
            1.0f32,
            f32::NEG_INFINITY,
            3.0,
            f32::INFINITY,
            2.0,
            0.0,
            -1.0,
            5.0,
            4.0
        ];
        assert_eq!(max_all(inf.view(), "f").unwrap(), f32::INFINITY);
        assert_eq!(min_all(inf.view(), "f").unwrap(), f32::NEG_INFINITY);
    }

    #[test]
    fn sum_all_values() {
        let a = array![[1, 2, 3], [4, 5, 6]];
        assert_eq!(sum_all(a.view()), 21);
        assert_eq!(sum_all(a.t()), 21);
        assert_eq!(sum_all(a.slice(s![.., ..;-2])), 1 + 3 + 4 + 6);
        assert_eq!(sum_all(Array1::<f64>::zeros(0).view()), 0.0);
        let long = Array1::from_iter((1..=100).map(f64::from));
        assert_eq!(sum_all(long.view()), 5050.0);
        assert_eq!(
            sum_all(long.slice(s![..;3])),
            (0..34).map(|i| 1.0 + 3.0 * i as f64).sum()
        );
        // Integer sums wrap.
        let big = array![i32::MAX, 1];
        assert_eq!(sum_all(big.view()), i32::MIN);
        let scalar = Array0::from_elem((), 2.5f32);
        assert_eq!(sum_all(scalar.view()), 2.5);
    }

    #[test]
    fn max_min_all_values() {
        let a = array![[3.0, -1.0], [7.5, 2.0]];
        assert_eq!(max_all(a.view(), "max(a)").unwrap(), 7.5);
        assert_eq!(min_all(a.view(), "min(a)").unwrap(), -1.0);
        assert_eq!(max_all(a.t(), "max(a)").unwrap(), 7.5);
        let i = array![4i64, -9, 2];
        assert_eq!(max_all(i.view(), "max(i)").unwrap(), 4);
        assert_eq!(min_all(i.slice(s![..;-1]), "min(i)").unwrap(), -9);
        let b = array![false, true];
        assert!(max_all(b.view(), "any").unwrap());
        assert!(!min_all(b.view(), "all").unwrap());
        let nan_first = array![f64::NAN, 1.0];
        let nan_last = array![1.0f32, 5.0, f32::NAN];
        assert!(max_all(nan_first.view(), "m").unwrap().is_nan());
        assert!(min_all(nan_first.view(), "m").unwrap().is_nan());
        assert!(max_all(nan_last.view(), "m").unwrap().is_nan());
        assert!(min_all(nan_last.view(), "m").unwrap().is_nan());
    }

    #[test]
    fn max_min_all_empty() {
        let e = Array2::<f64>::zeros((0, 3));
        let err = max_all(e.view(), "max(x)").unwrap_err();
        assert_eq!(
            err,
            Error::Empty {
                what: "max(x)".into()
            }
        );
        assert_eq!(
            err.to_string(),
            "`max(x)` got an empty array, which has no element or row to take"
        );
        assert!(min_all(e.view(), "min(x)").is_err());
    }

    #[test]
    fn mean_all_values() {
        let a = array![[1.0f64, 2.0], [3.0, 6.0]];
        assert_eq!(mean_all(a.view()), 3.0);
        assert_eq!(mean_all(array![1.0f32, 2.0].view()), 1.5);
        assert!(mean_all(Array1::<f64>::zeros(0).view()).is_nan());
    }

    #[test]
    fn sum_axis_values() {
        let a = array![[1, 2, 3], [4, 5, 6]];
        let mut out = Array1::<i32>::zeros(0);
        sum_axis(&mut out, a.view(), 0).unwrap();
        assert_eq!(out, array![5, 7, 9]);
        sum_axis(&mut out, a.view(), 1).unwrap();
        assert_eq!(out, array![6, 15]);
        // Transposed and reversed inputs take the other loop order.
        sum_axis(&mut out, a.t(), 0).unwrap();
        assert_eq!(out, array![6, 15]);
        sum_axis(&mut out, a.t(), 1).unwrap();
        assert_eq!(out, array![5, 7, 9]);
        sum_axis(&mut out, a.slice(s![..;-1, ..;-1]), 1).unwrap();
        assert_eq!(out, array![15, 6]);
        // 1-d to 0-d.
        let mut o0 = Array0::<f64>::zeros(());
        sum_axis(&mut o0, array![1.5, 2.5].view(), 0).unwrap();
        assert_eq!(o0[()], 4.0);
        // 3-d, every axis, against a naive loop.
        let c = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 12 + j * 4 + k) as i64);
        for axis in 0..3 {
            let mut o = Array2::<i64>::zeros((0, 0));
            sum_axis(&mut o, c.view(), axis).unwrap();
            let naive = c.sum_axis(Axis(axis));
            assert_eq!(o, naive, "axis {axis}");
        }
    }

    #[test]
    fn sum_axis_empty_and_errors() {
        let e = Array2::<f64>::zeros((0, 3));
        let mut out = Array1::<f64>::from_elem(7, 1.0);
        sum_axis(&mut out, e.view(), 0).unwrap();
        assert_eq!(out, array![0.0, 0.0, 0.0]);
        sum_axis(&mut out, e.view(), 1).unwrap();
        assert_eq!(out.shape(), &[0]);
        let err = sum_axis(&mut out, e.view(), 2).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid `axis`: axis 2 is out of range for an array of rank 2"
        );
    }

    #[test]
    fn max_min_axis_values() {
        let a = array![[1.0, 9.0, 3.0], [4.0, 5.0, -6.0]];
        let mut out = Array1::<f64>::zeros(0);
        max_axis(&mut out, a.view(), 0, "max").unwrap();
        assert_eq!(out, array![4.0, 9.0, 3.0]);
        max_axis(&mut out, a.view(), 1, "max").unwrap();
        assert_eq!(out, array![9.0, 5.0]);
        min_axis(&mut out, a.view(), 0, "min").unwrap();
        assert_eq!(out, array![1.0, 5.0, -6.0]);
        min_axis(&mut out, a.t(), 0, "min").unwrap();
        assert_eq!(out, array![1.0, -6.0]);
        let n = array![[1.0, f64::NAN], [2.0, 0.0]];
        max_axis(&mut out, n.view(), 0, "max").unwrap();
        assert_eq!(out[0], 2.0);
        assert!(out[1].is_nan());
        min_axis(&mut out, n.view(), 1, "min").unwrap();
        assert!(out[0].is_nan());
        assert_eq!(out[1], 0.0);
        let i = array![[3i32, 1], [2, 8]];
        let mut oi = Array1::<i32>::zeros(0);
        max_axis(&mut oi, i.view(), 1, "max").unwrap();
        assert_eq!(oi, array![3, 8]);
    }

    #[test]
    fn max_min_axis_empty() {
        let e = Array2::<f32>::zeros((0, 3));
        let mut out = Array1::<f32>::zeros(0);
        let err = max_axis(&mut out, e.view(), 0, "max(x, 0)").unwrap_err();
        assert_eq!(
            err,
            Error::Empty {
                what: "max(x, 0)".into()
            }
        );
        assert!(min_axis(&mut out, e.view(), 0, "min(x, 0)").is_err());
        // Reducing a non-empty axis of an empty array is fine.
        max_axis(&mut out, e.view(), 1, "max(x, 1)").unwrap();
        assert_eq!(out.shape(), &[0]);
        let err = min_axis(&mut out, e.view(), 5, "min(x, 5)").unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { .. }));
    }

    #[test]
    fn mean_axis_values() {
        let a = array![[1.0f32, 2.0], [3.0, 6.0]];
        let mut out = Array1::<f32>::zeros(0);
        mean_axis(&mut out, a.view(), 0).unwrap();
        assert_eq!(out, array![2.0, 4.0]);
        mean_axis(&mut out, a.view(), 1).unwrap();
        assert_eq!(out, array![1.5, 4.5]);
        let e = Array2::<f64>::zeros((0, 2));
        let mut oe = Array1::<f64>::zeros(0);
        mean_axis(&mut oe, e.view(), 0).unwrap();
        assert!(oe.iter().all(|x| x.is_nan()) && oe.len() == 2);
        assert!(mean_axis(&mut oe, e.view(), 3).is_err());
    }

    #[test]
    fn axis_dyn() {
        let a = ArrayD::from_shape_fn(IxDyn(&[2, 2, 2]), |ix| {
            (ix[0] * 4 + ix[1] * 2 + ix[2]) as f64
        });
        let mut out = ArrayD::<f64>::zeros(IxDyn(&[]));
        sum_axis(&mut out, a.view(), 2).unwrap();
        assert_eq!(out.shape(), &[2, 2]);
        assert_eq!(
            out.iter().copied().collect::<Vec<_>>(),
            vec![1.0, 5.0, 9.0, 13.0]
        );
        max_axis(&mut out, a.view(), 0, "max").unwrap();
        assert_eq!(
            out.iter().copied().collect::<Vec<_>>(),
            vec![4.0, 5.0, 6.0, 7.0]
        );
    }

    /// `max`/`min` of a map, fused, against the map into an array and then `max_all`.
    #[test]
    fn extremes_of_maps_agree_with_the_map_then_the_reduction() {
        let f = |a: f64, b: f64| (a - b).abs();
        let unfused = |a: ndarray::ArrayView2<f64>, b: ndarray::ArrayView2<f64>| {
            let mut out: Array2<f64> = Array2::zeros((0, 0));
            crate::kernels::map2(&mut out, a, b, "map", f).unwrap();
            (
                max_all(out.view(), "max").unwrap(),
                min_all(out.view(), "min").unwrap(),
            )
        };
        let a = Array2::from_shape_fn((7, 13), |(i, j)| ((i * 13 + j) as f64 * 0.61).sin());
        let b = Array2::from_shape_fn((7, 13), |(i, j)| ((i * 5 + j) as f64 * 0.29).cos());
        let row = Array2::from_shape_fn((1, 13), |(_, j)| j as f64 * 0.1);
        let mut with_nan = a.clone();
        with_nan[[3, 9]] = f64::NAN;
        let cases = [
            (a.view(), b.view()),                           // slices: one pass in lanes
            (a.view(), row.view()),                         // a broadcast row
            (a.slice(s![.., ..;2]), b.slice(s![.., ..;2])), // strided
            (with_nan.view(), b.view()),                    // NaN propagates
        ];
        for (x, y) in cases {
            let (max, min) = unfused(x, y);
            let fused_max = max_of_map2(x, y, "map", "max", f).unwrap();
            let fused_min = min_of_map2(x, y, "map", "min", f).unwrap();
            assert_eq!(fused_max.to_bits(), max.to_bits(), "{x:?}");
            assert_eq!(fused_min.to_bits(), min.to_bits(), "{x:?}");
        }
        // One and three operands.
        let v = Array1::from_shape_fn(37, |i| (i as f64 * 1.7).sin());
        assert_eq!(
            max_of_map1(v.view(), "map", "max", |x| -x).unwrap(),
            -min_all(v.view(), "").unwrap()
        );
        let w = min_of_map3(v.view(), v.view(), v.view(), "map", "min", |x, y, z| {
            x * y + z
        })
        .unwrap();
        let want = v.iter().map(|&x| x * x + x).fold(f64::INFINITY, f64::min);
        assert_eq!(w, want);
    }

    #[test]
    fn arg_extremes_take_the_first_of_equals_and_the_first_nan() {
        let v = array![3.0, 7.0, 1.0, 7.0, 1.0];
        assert_eq!(argmax_all(v.view(), "a").unwrap(), 1);
        assert_eq!(argmin_all(v.view(), "a").unwrap(), 2);
        let n = array![3.0, f64::NAN, 9.0, f64::NAN];
        assert_eq!(argmax_all(n.view(), "a").unwrap(), 1);
        assert_eq!(argmin_all(n.view(), "a").unwrap(), 1);
        let m = array![[1i32, 9, 9], [4, 4, 2]];
        assert_eq!(
            argmax_all(m.view(), "a").unwrap(),
            1,
            "flattened, row-major"
        );
        assert_eq!(
            argmax_all(m.t(), "a").unwrap(),
            2,
            "a transposed view's logical order"
        );
        let mut out = Array1::<i64>::zeros(0);
        argmax_axis(&mut out, m.view(), 1, "a").unwrap();
        assert_eq!(out, array![1, 0]);
        argmin_axis(&mut out, m.view(), 0, "a").unwrap();
        assert_eq!(out, array![0, 1, 1]);
        let e = Array2::<f32>::zeros((3, 0));
        assert_eq!(
            argmax_axis(&mut out, e.view(), 1, "argmax(e)").unwrap_err(),
            Error::Empty {
                what: "argmax(e)".into()
            }
        );
        assert!(argmin_all(e.view(), "e").is_err());
    }

    #[test]
    fn var_std_and_a_stable_logsumexp() {
        let v = array![1.0f64, 2.0, 3.0, 4.0];
        assert_eq!(var_all(v.view()), 1.25);
        assert_eq!(std_all(v.view()), 1.25f64.sqrt());
        assert!(var_all(Array1::<f64>::zeros(0).view()).is_nan());
        let m = array![[1.0f64, 3.0], [2.0, 6.0]];
        let mut out = Array1::<f64>::zeros(0);
        var_axis(&mut out, m.view(), 0).unwrap();
        assert_eq!(out, array![0.25, 2.25]);
        std_axis(&mut out, m.view(), 1).unwrap();
        assert_eq!(out, array![1.0, 2.0]);
        // Magnitudes of 1e3: exp overflows, the stable form does not.
        let big = array![1000.0f64, 1000.0];
        assert_eq!(logsumexp_all(big.view()), 1000.0 + 2f64.ln());
        let small = array![-1000.0f32, -1000.0];
        assert_eq!(logsumexp_all(small.view()), -1000.0 + 2f32.ln());
        let ninf = array![f64::NEG_INFINITY, f64::NEG_INFINITY];
        assert_eq!(logsumexp_all(ninf.view()), f64::NEG_INFINITY);
        assert_eq!(
            logsumexp_all(Array1::<f64>::zeros(0).view()),
            f64::NEG_INFINITY
        );
        assert_eq!(
            logsumexp_all(array![1.0, f64::INFINITY].view()),
            f64::INFINITY
        );
        assert!(logsumexp_all(array![1.0, f64::NAN].view()).is_nan());
        logsumexp_axis(&mut out, array![[0.0, 0.0], [1e3, -1e3]].view(), 1).unwrap();
        assert_eq!(out, array![2f64.ln(), 1e3]);
    }

    #[test]
    fn running_sums_and_products_flattened_or_along_an_axis() {
        let m = array![[1i64, 2, 3], [4, 5, 6]];
        let mut flat = Array1::<i64>::zeros(0);
        cumulative_all(&mut flat, m.view(), false);
        assert_eq!(flat, array![1, 3, 6, 10, 15, 21]);
        cumulative_all(&mut flat, m.t(), true);
        assert_eq!(
            flat,
            array![1, 4, 8, 40, 120, 720],
            "a transposed view's logical order"
        );
        let mut out = Array2::<i64>::zeros((0, 0));
        cumulative_axis(&mut out, m.view(), 0, false).unwrap();
        assert_eq!(out, array![[1, 2, 3], [5, 7, 9]]);
        cumulative_axis(&mut out, m.view(), 1, true).unwrap();
        assert_eq!(out, array![[1, 2, 6], [4, 20, 120]]);
        assert!(cumulative_axis(&mut out, m.view(), 2, true).is_err());
    }

    #[test]
    fn products_and_logical_reductions_follow_numpy() {
        let m = array![[1i64, 2, 3], [4, 5, 6]];
        assert_eq!(prod_all(m.view()), 720);
        let mut out = Array1::<i64>::zeros(0);
        prod_axis(&mut out, m.view(), 0).unwrap();
        assert_eq!(out, array![4, 10, 18]);
        prod_axis(&mut out, m.t(), 0).unwrap(); // along the strided axis
        assert_eq!(out, array![6, 120]);
        assert_eq!(prod_all(Array1::<f64>::zeros(0).view()), 1.0);
        assert_eq!(prod_all(array![i32::MAX, 2].view()), -2, "wraps");
        let empty = Array2::<f32>::zeros((0, 3));
        let mut e = Array1::<f32>::zeros(0);
        prod_axis(&mut e, empty.view(), 0).unwrap();
        assert_eq!(e, array![1.0, 1.0, 1.0]);
        assert!(prod_axis(&mut out, m.view(), 2).is_err());

        let b = array![[true, false, true], [true, true, true]];
        assert!(!all_all(b.view()) && any_all(b.view()));
        let mut o = Array1::<bool>::default(0);
        all_axis(&mut o, b.view(), 0).unwrap();
        assert_eq!(o, array![true, false, true]);
        all_axis(&mut o, b.view(), 1).unwrap();
        assert_eq!(o, array![false, true]);
        any_axis(&mut o, b.view(), 1).unwrap();
        assert_eq!(o, array![true, true]);
        let none = Array2::<bool>::default((2, 0));
        all_axis(&mut o, none.view(), 1).unwrap();
        assert_eq!(o, array![true, true]);
        any_axis(&mut o, none.view(), 1).unwrap();
        assert_eq!(o, array![false, false]);
        assert!(all_all(none.view()) && !any_all(none.view()));
    }

    #[test]
    fn a_map_with_its_extreme_writes_the_map_and_agrees_with_the_two_passes() {
        // Newton's step and its largest change, at lengths around the lanes, NaN anywhere.
        let f = |a: f64, p: f64| 0.5 * (p + a / p);
        let g = |_: f64, p: f64, y: f64| (y - p).abs();
        for n in [1usize, 7, 8, 9, 33, 1000] {
            let a = Array1::from_shape_fn(n, |i| 1.5 + (i as f64 * 0.37).sin());
            let p0 = Array1::from_shape_fn(n, |i| 1.0 + (i as f64 * 0.11).cos().abs());
            for nan_at in [None, Some(0), Some(n / 2), Some(n - 1)] {
                let mut p = p0.clone();
                if let Some(i) = nan_at {
                    p[i] = f64::NAN;
                }
                let mut want_y: Array1<f64> = Array1::zeros(0);
                crate::kernels::map2(&mut want_y, a.view(), p.view(), "y", f).unwrap();
                let want_max = max_of_map3(a.view(), p.view(), want_y.view(), "y", "m", g).unwrap();
                let want_min = min_of_map3(a.view(), p.view(), want_y.view(), "y", "m", g).unwrap();
                let mut y: Array1<f64> = Array1::zeros(0);
                let got = map2_max(&mut y, a.view(), p.view(), "y", "m", f, g).unwrap();
                let bits = |v: &Array1<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&y),
                    bits(&want_y),
                    "n = {n}, NaN at {nan_at:?}: the map is written"
                );
                assert_eq!(
                    got.to_bits(),
                    want_max.to_bits(),
                    "n = {n}, NaN at {nan_at:?}"
                );
                let got = map2_min(&mut y, a.view(), p.view(), "y", "m", f, g).unwrap();
                assert_eq!(
                    got.to_bits(),
                    want_min.to_bits(),
                    "n = {n}, NaN at {nan_at:?}"
                );
                assert_eq!(nan_at.is_some(), got.is_nan());
            }
        }
        // One operand, f32, and a strided operand (the general path).
        let v = Array1::from_shape_fn(21, |i| (i as f32 * 0.7).sin());
        let mut out = Array1::<f32>::zeros(0);
        let m = map1_min(&mut out, v.view(), "2v", "min", |x| 2.0 * x, |x, y| y - x).unwrap();
        assert_eq!(out, v.mapv(|x| 2.0 * x));
        assert_eq!(m, v.iter().copied().fold(f32::INFINITY, f32::min));
        let w = Array1::from_shape_fn(42, |i| i as f64);
        let m = map1_max(
            &mut out.mapv(f64::from),
            w.slice(s![..;2]),
            "w",
            "max",
            |x| x,
            |_, y| y,
        )
        .unwrap();
        assert_eq!(m, 40.0);
        // Errors: the map's (operands that do not broadcast), then the reduction's (empty).
        let mut out = Array1::<f64>::zeros(0);
        let e = map2_max(
            &mut out,
            w.view(),
            v.mapv(f64::from).view(),
            "w + v",
            "max",
            |a, b| a + b,
            |_, _, y| y,
        );
        assert!(matches!(e, Err(Error::Broadcast { .. })), "{e:?}");
        let empty = Array1::<f64>::zeros(0);
        let e = map1_max(&mut out, empty.view(), "e", "max(e)", |x| x, |_, y| y).unwrap_err();
        assert_eq!(
            e,
            Error::Empty {
                what: "max(e)".into()
            }
        );
    }

    #[test]
    fn extremes_of_maps_report_the_map_and_the_reduction_errors() {
        let a = Array1::<f64>::zeros(3);
        let b = Array1::<f64>::zeros(4);
        assert_eq!(
            max_of_map2(a.view(), b.view(), "a - b", "max(a - b)", |x, y| x - y),
            Err(Error::Broadcast {
                what: "a - b".to_string(),
                shapes: vec![vec![3], vec![4]],
            })
        );
        let e = Array1::<f64>::zeros(0);
        assert_eq!(
            min_of_map2(e.view(), e.view(), "a - b", "min(a - b)", |x, y| x - y),
            Err(Error::Empty {
                what: "min(a - b)".to_string(),
            })
        );
    }
}
