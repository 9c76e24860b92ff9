//! Zeros incremented at slices that tile an axis (the join_slices rewrite): a gradient's
//! adjoint of a value read through slices of one axis, an LSTM's four gate blocks
//! `z[:, ..n]`, `z[:, n..2n]`, `z[:, 2n..3n]`, `z[:, 3n..]`, is `zeros_like(z)` with each
//! block's adjoint added in. When the slices tile the axis (disjoint, covering it) and each
//! increment has exactly its slice's shape, every element of the result is one increment's
//! element: each is written into its slice, with no zero-fill and no pass that adds
//! ([`JoinSlices`]; a map kernel computing an increment writes it there directly through
//! [`Part`]). Otherwise (the bounds clamp, leave part of the axis out or overlap, an
//! increment broadcasts) the result is made as the increments made it: zeros, then each
//! added in order, with their errors.
//!
//! The result is numpy's exactly: an increment written into its slice is `0 + v` (for
//! floats -0.0 becomes +0.0, as adding to zeros makes it), and every element of the
//! result is written whatever the buffer held before.

use std::ops::Range;

use ndarray::{Array, ArrayView, ArrayViewMut, Axis, Dimension, Slice};

use crate::element::{Element, Number};
use crate::error::Result;
use crate::kernels::buffer::{ensure_shape, same_dims, try_ensure_shape, Destination};
use crate::kernels::index::{assign_add, clamp_range, zip_broadcast};

/// The plan of one result of `N` slices, kept from step to step (no allocation): the
/// result's shape, each slice's range on the axis, whether they tile it, and which
/// increments were written into their slices.
#[derive(Clone, Debug)]
pub struct JoinSlices<D, const N: usize> {
    shape: D,
    axis: usize,
    ranges: [Range<usize>; N],
    tiles: bool,
    written: [bool; N],
}

impl<D: Dimension, const N: usize> Default for JoinSlices<D, N> {
    fn default() -> Self {
        JoinSlices {
            shape: D::default(),
            axis: 0,
            ranges: std::array::from_fn(|_| 0..0),
            tiles: false,
            written: [false; N],
        }
    }
}

impl<D: Dimension, const N: usize> JoinSlices<D, N> {
    /// Before the increments are computed: each slice `start..end` on `axis` of `like`'s
    /// shape, clamped as numpy clamps it (negative bounds from the end), and whether the
    /// slices tile the axis. When they do, `out` gets `like`'s shape, its contents left as
    /// they are: each element will be written by exactly one increment. `axis` is an axis
    /// of `like` (the rewrite checked the ranks).
    pub fn plan<T: Element, A>(
        &mut self,
        out: &mut Array<T, D>,
        like: ArrayView<'_, A, D>,
        axis: usize,
        bounds: [(Option<i64>, Option<i64>); N],
    ) {
        self.shape = like.raw_dim();
        self.axis = axis;
        let len = like.len_of(Axis(axis));
        for (range, (start, end)) in self.ranges.iter_mut().zip(bounds) {
            let s = clamp_range(len, start, end);
            // Bounds within 0..=len, start <= end (`clamp_range`).
            *range = s.start as usize..s.end.map_or(len, |e| e as usize);
        }
        self.tiles = tile(&self.ranges, len);
        self.written = [false; N];
        if self.tiles {
            ensure_shape(out, self.shape.clone());
        }
    }

    /// Where increment `i` is written by the kernel that computes it: its slice of `out`
    /// when the slices tile the axis and the increment has exactly the slice's shape, else
    /// `own`, a buffer of its own that [`Self::finish`] reads.
    #[inline]
    pub fn part<'a, T>(
        &'a mut self,
        out: &'a mut Array<T, D>,
        own: &'a mut Array<T, D>,
        i: usize,
    ) -> Part<'a, T, D> {
        let slice = self.tiles.then(|| {
            out.view_mut()
                .slice_axis_move(Axis(self.axis), Slice::from(self.ranges[i].clone()))
        });
        Part {
            slice,
            own,
            written: &mut self.written[i],
        }
    }

    /// After the increments: `out` made `zeros_like(like)` incremented by `parts[i]` at
    /// slice `i`, in order, where [`Self::part`] did not write increment `i` into its
    /// slice (`parts[i]` is then the increment). An increment that does not broadcast to
    /// its slice is `Err(Broadcast)` naming `labels[i]`, the first in order, as its
    /// `inc_subtensor` was.
    pub fn finish<T: Number>(
        &mut self,
        out: &mut Array<T, D>,
        parts: [ArrayView<'_, T, D>; N],
        labels: [&str; N],
    ) -> Result<()> {
        let axis = Axis(self.axis);
        if self.tiles {
            // Disjoint slices covering the axis: each increment alone in its slice.
            for (i, part) in parts.into_iter().enumerate() {
                if !self.written[i] {
                    let range = Slice::from(self.ranges[i].clone());
                    let dst = out.view_mut().slice_axis_move(axis, range);
                    zip_broadcast(dst, part, labels[i], |d, x| *d = T::ZERO.num_add(x))?;
                }
            }
        } else {
            ensure_shape(out, self.shape.clone());
            out.fill(T::ZERO);
            for (i, part) in parts.into_iter().enumerate() {
                let range = Slice::from(self.ranges[i].clone());
                assign_add(out.view_mut().slice_axis_move(axis, range), part, labels[i])?;
            }
        }
        Ok(())
    }
}

/// `zeros_like(like)` incremented by `parts[i]` at slice `bounds[i]` of `axis`, in order
/// ([`JoinSlices`] with no increment written in place): each increment copied into its
/// slice when the slices tile the axis and the shapes fit, else zeros and additions.
pub fn join_slices<T: Number, A, D: Dimension, const N: usize>(
    out: &mut Array<T, D>,
    like: ArrayView<'_, A, D>,
    axis: usize,
    bounds: [(Option<i64>, Option<i64>); N],
    parts: [ArrayView<'_, T, D>; N],
    labels: [&str; N],
) -> Result<()> {
    let mut join = JoinSlices::<D, N>::default();
    join.plan(out, like, axis, bounds);
    join.finish(out, parts, labels)
}

/// Whether `ranges` (each `start <= end <= len`) tile `0..len`: the non-empty ones end to
/// end from 0 to `len`, none overlapping. Empty ones may be anywhere.
fn tile(ranges: &[Range<usize>], len: usize) -> bool {
    let nonempty = ranges.iter().filter(|r| !r.is_empty()).count();
    let (mut at, mut used) = (0, 0);
    while at < len {
        let mut next = ranges.iter().filter(|r| !r.is_empty() && r.start == at);
        match (next.next(), next.next()) {
            (Some(r), None) => {
                at = r.end;
                used += 1;
            }
            // Nothing starts here (a gap), or two slices do (an overlap).
            _ => return false,
        }
    }
    used == nonempty
}

/// The destination of an increment ([`JoinSlices::part`]): its slice of the result when
/// the plan allows and the increment has the slice's shape (the kernel then writes it
/// there), else its own buffer.
pub struct Part<'a, T, D> {
    slice: Option<ArrayViewMut<'a, T, D>>,
    own: &'a mut Array<T, D>,
    written: &'a mut bool,
}

impl<'a, T: Element, D: Dimension> Destination<'a, T, D> for Part<'a, T, D> {
    #[inline]
    fn prepare(self, shape: D, what: &str) -> Result<ArrayViewMut<'a, T, D>> {
        if let Some(slice) = self.slice {
            if same_dims(slice.shape(), shape.slice()) {
                *self.written = true;
                return Ok(slice);
            }
        }
        *self.written = false;
        try_ensure_shape(what, self.own, shape)?;
        Ok(self.own.view_mut())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::kernels::map2;
    use ndarray::{array, s, Array1, Array2, Ix1, Ix2};

    /// The reference: zeros, then each increment added at its slice, as `inc_subtensor`s.
    fn by_increments(
        shape: (usize, usize),
        bounds: &[(Option<i64>, Option<i64>)],
        parts: &[Array2<f64>],
    ) -> Result<Array2<f64>> {
        let mut out = Array2::<f64>::zeros(shape);
        for (&(a, b), v) in bounds.iter().zip(parts) {
            let dst = crate::kernels::slice_at_mut(out.view_mut(), 1, a, b);
            assign_add(dst, v.view(), "inc")?;
        }
        Ok(out)
    }

    fn matrix(rows: usize, cols: usize, seed: f64) -> Array2<f64> {
        Array2::from_shape_fn((rows, cols), |(i, j)| {
            ((i * cols + j) as f64 * 0.37 + seed).sin()
        })
    }

    fn same_bits(a: &Array2<f64>, b: &Array2<f64>) {
        assert_eq!(a.shape(), b.shape());
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x.to_bits(), y.to_bits(), "{a} vs {b}");
        }
    }

    #[test]
    fn tiling_is_exact_cover_without_overlap() {
        assert!(tile(&[0..2, 2..5, 5..8], 8));
        assert!(tile(&[5..8, 0..2, 2..5], 8), "in any order");
        assert!(tile(&[0..8, 3..3, 8..8], 8), "empty slices anywhere");
        assert!(tile(&[0..0, 0..0], 0));
        assert!(!tile(&[0..2, 3..8], 8), "a gap");
        assert!(!tile(&[0..2, 2..6], 8), "short of the end");
        assert!(!tile(&[0..5, 3..8], 8), "an overlap");
        assert!(!tile(&[0..8, 3..5], 8), "one inside another");
        assert!(!tile(&[0..4, 0..4, 4..8], 8), "the same slice twice");
    }

    #[test]
    fn slices_that_tile_are_copied_and_others_added_to_zeros() {
        let n = 3i64;
        let gates = [
            (None, Some(n)),
            (Some(n), Some(2 * n)),
            (Some(2 * n), Some(3 * n)),
            (Some(3 * n), None),
        ];
        // A leftover buffer: the result must not read it.
        let stale = || Array2::<f64>::from_elem((2, 5), f64::NAN);
        let parts: Vec<Array2<f64>> = (0..4).map(|k| matrix(2, 3, k as f64)).collect();
        fn views(p: &[Array2<f64>]) -> [ArrayView<'_, f64, Ix2>; 4] {
            [p[0].view(), p[1].view(), p[2].view(), p[3].view()]
        }
        let labels = ["a", "b", "c", "d"];
        let like = Array2::<f32>::zeros((2, 12));

        let mut out = stale();
        join_slices(&mut out, like.view(), 1, gates, views(&parts), labels).unwrap();
        same_bits(&out, &by_increments((2, 12), &gates, &parts).unwrap());
        assert_eq!(out.slice(s![.., 3..6]), parts[1]);

        // The chain's order (the gradient's: last gate first) changes nothing.
        let reversed = [gates[3], gates[2], gates[1], gates[0]];
        let rparts = [&parts[3], &parts[2], &parts[1], &parts[0]].map(|p| p.view());
        let mut again = stale();
        join_slices(&mut again, like.view(), 1, reversed, rparts, labels).unwrap();
        same_bits(&again, &out);

        // An increment of one column broadcasts over its slice (copied, broadcast).
        let mut bparts = parts.clone();
        bparts[2] = matrix(2, 1, 9.0);
        let mut out = stale();
        join_slices(&mut out, like.view(), 1, gates, views(&bparts), labels).unwrap();
        same_bits(&out, &by_increments((2, 12), &gates, &bparts).unwrap());
        assert_eq!(out[[1, 8]], bparts[2][[1, 0]]);

        // A longer axis (16) with the last slice closed at 4n: its end is left out,
        // zeros (not the stale NaN).
        let closed = [gates[0], gates[1], gates[2], (Some(3 * n), Some(4 * n))];
        let like16 = Array2::<f32>::zeros((2, 16));
        let mut out = stale();
        join_slices(&mut out, like16.view(), 1, closed, views(&parts), labels).unwrap();
        same_bits(&out, &by_increments((2, 16), &closed, &parts).unwrap());
        assert!(out.slice(s![.., 12..]).iter().all(|&x| x.to_bits() == 0));

        // The last slice open on that axis has 7 columns, the increment 3: numpy's
        // broadcast error, named by its increment.
        let e = join_slices(&mut out, like16.view(), 1, gates, views(&parts), labels).unwrap_err();
        assert_eq!(
            e,
            Error::Broadcast {
                what: "d".into(),
                shapes: vec![vec![2, 7], vec![2, 3]],
            }
        );
        assert!(by_increments((2, 16), &gates, &parts).is_err());
    }

    #[test]
    fn clamped_and_overlapping_slices_add_in_order() {
        // `..4`, `2..` overlap on a length of 6: zeros, then both added (the overlap holds
        // their sum); negative bounds count from the end; a start past the end clamps.
        let like = Array2::<f64>::zeros((1, 6));
        let cases: [[(Option<i64>, Option<i64>); 2]; 3] = [
            [(None, Some(4)), (Some(2), None)],
            [(None, Some(-2)), (Some(-2), None)],
            [(None, Some(6)), (Some(9), None)],
        ];
        let shapes = [[(1, 4), (1, 4)], [(1, 4), (1, 2)], [(1, 6), (1, 0)]];
        for (bounds, [sa, sb]) in cases.into_iter().zip(shapes) {
            let parts = [matrix(sa.0, sa.1, 1.0), matrix(sb.0, sb.1, 2.0)];
            let mut out = Array2::<f64>::from_elem((3, 3), 7.0);
            join_slices(
                &mut out,
                like.view(),
                1,
                bounds,
                [parts[0].view(), parts[1].view()],
                ["a", "b"],
            )
            .unwrap();
            same_bits(&out, &by_increments((1, 6), &bounds, &parts).unwrap());
        }
    }

    #[test]
    fn negative_zero_becomes_positive_as_added_to_zeros() {
        let like = Array1::<f64>::zeros(4);
        let mut out = Array1::<f64>::from_elem(4, 1.0);
        let (a, b) = (array![-0.0, 1.0], array![2.0, -0.0]);
        join_slices(
            &mut out,
            like.view(),
            0,
            [(None, Some(2)), (Some(2), None)],
            [a.view(), b.view()],
            ["a", "b"],
        )
        .unwrap();
        let bits: Vec<u64> = out.iter().map(|x| x.to_bits()).collect();
        assert_eq!(bits, [0.0, 1.0, 2.0, 0.0].map(f64::to_bits));
    }

    #[test]
    fn kernels_write_the_parts_into_their_slices_or_their_own_buffers() {
        // Two increments made by map kernels through `part`: in place when the slices
        // tile and the shapes fit; one that broadcasts (one column) goes to its own
        // buffer and `finish` copies it; a plan that does not tile (the slices stop at 4
        // of 5 columns) sends both there and adds them to zeros.
        let x = matrix(3, 2, 1.0);
        let col = matrix(3, 1, 2.0);
        let open = [(None, Some(2)), (Some(2), None)];
        let closed = [(None, Some(2)), (Some(2), Some(4))];
        for (len, second, bounds, in_place) in [
            (4usize, 2usize, open, [true, true]),
            (4, 1, open, [true, false]),
            (5, 2, closed, [false, false]),
        ] {
            let like = Array2::<f64>::zeros((3, len));
            let y = matrix(3, second, 3.0);
            let mut join = JoinSlices::<Ix2, 2>::default();
            let mut out = Array2::<f64>::from_elem((3, len), f64::NAN);
            let (mut own0, mut own1) = (Array2::<f64>::default((0, 0)), Array2::default((0, 0)));
            join.plan(&mut out, like.view(), 1, bounds);
            let p0 = join.part(&mut out, &mut own0, 0);
            map2(p0, x.view(), col.view(), "p0", |a, b| 0.0 + a * b).unwrap();
            let p1 = join.part(&mut out, &mut own1, 1);
            crate::kernels::map1(p1, y.view(), "p1", |v| 0.0 - v).unwrap();
            assert_eq!(join.written, in_place, "{len} columns, {second}");
            join.finish(&mut out, [own0.view(), own1.view()], ["a", "b"])
                .unwrap();
            let parts = [&x * &col, y.mapv(|v| 0.0 - v)];
            same_bits(&out, &by_increments((3, len), &bounds, &parts).unwrap());
        }
        // 5 columns and open slices: the second slice has 3 columns, its increment 2;
        // written to its own buffer, then numpy's error.
        let like = Array2::<f64>::zeros((3, 5));
        let mut join = JoinSlices::<Ix2, 2>::default();
        let mut out = Array2::<f64>::default((0, 0));
        let (mut own0, mut own1) = (Array2::<f64>::default((0, 0)), Array2::default((0, 0)));
        join.plan(&mut out, like.view(), 1, open);
        map2(
            join.part(&mut out, &mut own0, 0),
            x.view(),
            col.view(),
            "p0",
            |a, b| a * b,
        )
        .unwrap();
        map2(
            join.part(&mut out, &mut own1, 1),
            x.view(),
            col.view(),
            "p1",
            |a, b| a - b,
        )
        .unwrap();
        assert_eq!(join.written, [true, false]);
        let e = join
            .finish(&mut out, [own0.view(), own1.view()], ["a", "b"])
            .unwrap_err();
        assert_eq!(
            e,
            Error::Broadcast {
                what: "b".into(),
                shapes: vec![vec![3, 3], vec![3, 2]],
            }
        );
    }

    #[test]
    fn vectors_and_an_empty_axis() {
        let like = Array1::<f64>::zeros(0);
        let mut out = Array1::<f64>::from_elem(3, 1.0);
        let empty = Array1::<f64>::zeros(0);
        join_slices::<f64, f64, Ix1, 2>(
            &mut out,
            like.view(),
            0,
            [(None, Some(2)), (Some(2), None)],
            [empty.view(), empty.view()],
            ["a", "b"],
        )
        .unwrap();
        assert_eq!(out.shape(), [0]);
    }
}
