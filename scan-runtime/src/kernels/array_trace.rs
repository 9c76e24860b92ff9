//! The trace of an array output, built row after row as the steps are taken.
//!
//! A trace allocated whole before the loop must be initialised whole (Rust gives no sound
//! way to hand a kernel memory it has not written), and zeroing it costs a pass over all of
//! it whenever the allocator hands back memory it had before. [`ArrayTrace`] instead grows a
//! vector by one row per step: a row computed elsewhere is appended by a copy (nothing
//! written before it), and a row that a step's kernel writes in place is given to it
//! uninitialised ([`ArrayTrace::next_slot`], a [`Slot`]) and joins the trace once written
//! ([`ArrayTrace::commit_row`]): a kernel that writes every element itself (a map over
//! contiguous operands) writes nothing twice, any other has the row zeroed first (one row,
//! in cache, no pass over memory). The vector is reserved for every step up front, or for
//! a few rows and doubled as an `until` loop goes on (a reallocation, which for a large
//! vector moves pages rather than copying).

use std::mem::MaybeUninit;

use ndarray::{Array, ArrayView, ArrayViewMut, Axis, Dimension, RemoveAxis};

use super::buffer::{standard_view, Destination, Prepared, Uninit};
use super::copy::append;
use crate::element::Element;
use crate::error::{Error, Result};

/// Rows written so far (`rows` of them, each of shape `dim[1..]`) and room for more.
pub struct ArrayTrace<T, D: Dimension> {
    /// `offset` elements of padding, then exactly the rows written, in order.
    data: Vec<T>,
    /// Elements before the first row: the rows start on a cache line
    /// (`buffer::ALIGN`), as the runtime's other buffers do.
    offset: usize,
    /// The row shape, after a first axis whose length is not kept (see `rows`).
    dim: D,
    /// Rows written. Not kept in `dim[0]`: the shape of the rows before a step's, read
    /// right after the step before it counted its row, would be a 16-byte load of memory
    /// just written in part, which stalls (store forwarding fails).
    rows: usize,
    /// Elements of one row.
    row_len: usize,
    /// The row shape is set ([`ArrayTrace::start`]).
    started: bool,
    /// The most rows the loop can write: room is never reserved beyond it.
    bound: usize,
    /// The row after the last one, handed out by [`Self::next_slot`], was written whole
    /// (set by the kernel that wrote it; cleared by every other change to the trace).
    filled: bool,
}

impl<T: Element, D: RemoveAxis> ArrayTrace<T, D> {
    /// An empty trace in the memory of `buf` (emptied; its capacity is kept, so a loop run
    /// again inside an enclosing loop reuses it). Its row shape is set by [`Self::start`].
    pub fn new(buf: &mut Array<T, D>) -> Self {
        ArrayTrace {
            data: super::take_rows(buf),
            offset: 0,
            // Rank 1 for `IxDyn` until the row shape is known: no element either way.
            dim: D::zeros(D::NDIM.unwrap_or(1)),
            rows: 0,
            row_len: 0,
            started: false,
            bound: 0,
            filled: false,
        }
    }

    /// Sets the row shape and reserves `first` rows; at most `bound` rows will be written.
    /// `Err(InvalidArgument)` naming `what` when the memory cannot be had.
    pub fn start(&mut self, what: &str, row: &[usize], first: usize, bound: usize) -> Result<()> {
        let mut dim = D::zeros(D::NDIM.unwrap_or(row.len() + 1));
        if dim.ndim() != row.len() + 1 {
            return Err(Error::InvalidArgument {
                what: what.to_string(),
                detail: format!(
                    "a trace of rank {} cannot hold rows of shape {row:?}",
                    dim.ndim()
                ),
            });
        }
        for (i, &n) in row.iter().enumerate() {
            dim[i + 1] = n;
        }
        self.row_len = row
            .iter()
            .try_fold(1usize, |a, &n| a.checked_mul(n))
            .ok_or_else(|| too_big(what, bound, row))?;
        self.dim = dim;
        self.rows = 0;
        self.filled = false;
        self.data.clear();
        self.offset = 0;
        self.bound = bound;
        self.started = true;
        self.pad();
        self.reserve_rows(what, first.min(bound))
    }

    /// The shape of one row (empty until [`Self::start`]).
    pub fn row_shape(&self) -> &[usize] {
        self.dim.slice().get(1..).unwrap_or(&[])
    }

    /// Pads the (empty) vector up to its first element on a cache line, when its
    /// allocation has room for that.
    fn pad(&mut self) {
        if self.data.len() != self.offset || self.offset != 0 {
            return;
        }
        let spare = super::buffer::align_elems::<T>();
        let skip = self.data.as_ptr().align_offset(super::buffer::ALIGN);
        if skip <= spare && self.data.capacity() >= skip {
            self.data.resize(skip, T::default());
            self.offset = skip;
        }
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The shape of the rows written so far.
    #[inline(always)]
    fn shape(&self) -> D {
        let mut dim = self.dim.clone();
        dim[0] = self.rows;
        dim
    }

    /// Appends rows (an output's initial rows) by copying them.
    pub fn push_rows(&mut self, what: &str, rows: ArrayView<'_, T, D>) -> Result<()> {
        self.check_started(what)?;
        self.filled = false;
        if rows.shape().get(1..) != Some(self.row_shape()) {
            return Err(Error::InvalidArgument {
                what: what.to_string(),
                detail: format!(
                    "rows of shape {:?} given to a trace of rows of shape {:?}",
                    &rows.shape()[1..],
                    self.row_shape()
                ),
            });
        }
        let n = rows.len_of(Axis(0));
        self.reserve_rows(what, self.rows() + n)?;
        match rows.as_slice() {
            Some(s) => append(&mut self.data, s),
            None => self.data.extend(rows.iter().copied()),
        }
        self.rows += n;
        Ok(())
    }

    /// Appends a step's result, computed elsewhere, by copying it: `Err(StepResultShape)`
    /// naming `output` and `result` when its shape is not the rows'.
    #[inline]
    pub fn push_row(
        &mut self,
        output: &str,
        result: &str,
        row: ArrayView<'_, T, D::Smaller>,
    ) -> Result<()> {
        self.check_started(output)?;
        self.filled = false;
        super::steps::check_step_shape(output, result, self.row_shape(), row.shape())?;
        self.reserve_rows("n_steps", self.rows() + 1)?;
        match row.as_slice() {
            Some(s) => append(&mut self.data, s),
            None => self.data.extend(row.iter().copied()),
        }
        self.rows += 1;
        Ok(())
    }

    /// The memory of the next row, not initialised, for a kernel to write in place (a
    /// [`Slot`]), and the rows before it. The row joins the trace with
    /// [`Self::commit_row`] once a kernel has written it.
    ///
    /// Inlined whole but for the checks and the growth (`room_for_row`): built in
    /// the caller, the views stay in registers, where returned through memory they cost a
    /// Kalman filter's step a stall on reading back what was just stored.
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    pub fn next_slot(
        &mut self,
        what: &str,
    ) -> Result<(ArrayView<'_, T, D>, Slot<'_, T, D::Smaller>)> {
        self.room_for_row(what)?;
        let (len, row_len) = (self.data.len(), self.row_len);
        let past_dim = self.shape();
        let row_dim = self.dim.remove_axis(Axis(0));
        let base = self.data.as_mut_ptr();
        // SAFETY: the first `len` elements of the vector are initialised (`offset <= len`:
        // the padding is part of them) and the `row_len` after them are within its capacity
        // (`room_for_row` just above), so the two slices are inside one allocation and do
        // not overlap. Both borrow `self` (the signature's `'_`), so the vector cannot
        // reallocate or change while they live.
        let (past, elems) = unsafe {
            (
                std::slice::from_raw_parts(base.add(self.offset), len - self.offset),
                std::slice::from_raw_parts_mut(base.add(len).cast::<MaybeUninit<T>>(), row_len),
            )
        };
        let past = standard_view(past_dim, past).ok_or_else(|| broken(what))?;
        let slot = Slot {
            elems,
            dim: row_dim,
            filled: &mut self.filled,
        };
        Ok((past, slot))
    }

    /// [`Self::next_slot`]'s checks: the trace is started, and has room for one more row
    /// (grown if not).
    #[inline]
    fn room_for_row(&mut self, what: &str) -> Result<()> {
        self.check_started(what)?;
        self.filled = false;
        self.reserve_rows(what, self.rows() + 1)
    }

    /// Makes the row given by [`Self::next_slot`] part of the trace, once a kernel wrote
    /// it. `Err` (an internal error) if none did: the row is not added.
    #[inline]
    pub fn commit_row(&mut self, what: &str) -> Result<()> {
        if !self.filled {
            return Err(Error::InvalidArgument {
                what: what.to_string(),
                detail: "internal error: a step's row was not written".to_string(),
            });
        }
        self.filled = false;
        let len = self.data.len() + self.row_len;
        // SAFETY: `filled` is only set by a kernel that wrote every element of the slot
        // handed out by `next_slot`, the `row_len` elements after `len` (within capacity),
        // and is cleared by every other change to the vector, so those elements are
        // initialised now.
        unsafe { self.data.set_len(len) };
        self.rows += 1;
        Ok(())
    }

    /// Row `i`, for a step to read (a tap).
    #[inline]
    pub fn row(&self, i: usize) -> Result<ArrayView<'_, T, D::Smaller>> {
        let rows = self
            .data
            .get(self.offset + i * self.row_len..self.offset + (i + 1) * self.row_len)
            .filter(|_| i < self.rows())
            .ok_or_else(|| Error::InvalidArgument {
                what: "n_steps".to_string(),
                detail: format!("row {i} of a trace of {} rows was read", self.rows()),
            })?;
        standard_view(self.dim.remove_axis(Axis(0)), rows).ok_or_else(|| broken("n_steps"))
    }

    /// Makes the trace `rows` rows long, the new rows zeroed, and returns all its elements
    /// (for a loop that writes the rows in another order: the interchanged loop).
    pub fn fill_rows(&mut self, what: &str, rows: usize) -> Result<&mut [T]> {
        self.check_started(what)?;
        self.filled = false;
        let len = rows
            .checked_mul(self.row_len)
            .ok_or_else(|| too_big(what, rows, self.row_shape()))?;
        if rows > self.rows() {
            self.reserve_rows(what, rows)?;
            self.data.resize(self.offset + len, T::default());
            self.rows = rows;
        }
        Ok(&mut self.data[self.offset..])
    }

    /// The rows written, as the output's buffer (shape all zeros if no row was).
    pub fn finish(self) -> Result<Array<T, D>> {
        let len = self.data.len() - self.offset;
        let shape = self.shape();
        ndarray::Array1::from_vec(self.data)
            .slice_move(ndarray::s![self.offset..self.offset + len])
            .into_shape_with_order(shape)
            .map_err(|e| broken_shape("n_steps", e))
    }

    #[inline]
    fn check_started(&self, what: &str) -> Result<()> {
        if self.started {
            Ok(())
        } else {
            Err(not_started(what))
        }
    }

    /// Room for at least `rows` rows: exactly `bound` when the vector is first reserved
    /// for it, else twice the rows (at most `bound`).
    #[inline]
    fn reserve_rows(&mut self, what: &str, rows: usize) -> Result<()> {
        let have = self.rows();
        let need = (rows.saturating_sub(have)).saturating_mul(self.row_len);
        if self.data.capacity() - self.data.len() >= need {
            return Ok(());
        }
        self.grow(what, rows)
    }

    #[cold]
    fn grow(&mut self, what: &str, rows: usize) -> Result<()> {
        let have = self.rows();
        let target = have.saturating_mul(2).min(self.bound).max(rows);
        let more = (target - have)
            .checked_mul(self.row_len)
            .ok_or_else(|| too_big(what, target, self.row_shape()))?;
        let spare = super::buffer::align_elems::<T>();
        let first = self.data.capacity() == 0;
        if first {
            // A large trace's memory kept from an earlier call (`pool`): its pages are
            // mapped already, where fresh memory faults in every page again. Padded to a
            // cache line when it has the room.
            if let Some(mut kept) = super::pool::take::<T>(more) {
                kept.clear();
                self.data = kept;
                if self.data.capacity() >= more.saturating_add(spare) {
                    self.pad();
                }
                return Ok(());
            }
        }
        // Room for the padding too: the first reservation pads; a later one, which moves
        // the rows to new memory, pads them again (`realign`).
        let more = more.saturating_add(spare).saturating_sub(self.offset);
        self.data
            .try_reserve_exact(more)
            .map_err(|_| too_big(what, target, self.row_shape()))?;
        if first {
            self.pad();
        } else {
            self.realign();
        }
        Ok(())
    }

    /// After the vector moved to new memory: the rows moved to the first element on a
    /// cache line (a copy, as the reallocation's own, once per doubling).
    fn realign(&mut self) {
        let spare = super::buffer::align_elems::<T>();
        let skip = self.data.as_ptr().align_offset(super::buffer::ALIGN);
        let (len, offset) = (self.data.len(), self.offset);
        let rows = len - offset;
        if skip == offset || skip > spare || self.data.capacity() < skip + rows {
            return;
        }
        if skip > offset {
            self.data.resize(skip + rows, T::default());
            self.data.copy_within(offset..offset + rows, skip);
        } else {
            self.data.copy_within(offset..len, skip);
            self.data.truncate(skip + rows);
        }
        self.offset = skip;
    }
}

/// A trace's next row, not initialised yet ([`ArrayTrace::next_slot`]).
pub struct Slot<'a, T, D> {
    elems: &'a mut [MaybeUninit<T>],
    dim: D,
    filled: &'a mut bool,
}

impl<'a, T: Element, D: Dimension> Slot<'a, T, D> {
    /// The row as a kernel's destination; `output` and `result` name them in a shape
    /// error (`StepResultShape`).
    #[inline]
    pub fn row<'s, 'w>(&'s mut self, output: &'w str, result: &'w str) -> SlotRow<'s, 'w, T, D> {
        SlotRow {
            elems: &mut *self.elems,
            dim: self.dim.clone(),
            filled: &mut *self.filled,
            output,
            result,
        }
    }

    /// The row, once a kernel wrote it, for the step's nodes that read it.
    #[inline]
    pub fn written(&self) -> Result<ArrayView<'_, T, D>> {
        if !*self.filled {
            return Err(Error::InvalidArgument {
                what: "n_steps".to_string(),
                detail: "internal error: a step's row was read before it was written".to_string(),
            });
        }
        // SAFETY: `filled` is set only by a kernel that initialised every element; the
        // slice is borrowed from `self` for the view's lifetime.
        let elems: &[T] = unsafe { &*(&*self.elems as *const [MaybeUninit<T>] as *const [T]) };
        standard_view(self.dim.clone(), elems).ok_or_else(|| broken("n_steps"))
    }
}

/// A [`Slot`] as a kernel's destination.
pub struct SlotRow<'a, 'w, T, D> {
    elems: &'a mut [MaybeUninit<T>],
    dim: D,
    filled: &'a mut bool,
    output: &'w str,
    result: &'w str,
}

impl<'a, T: Element, D: Dimension> Destination<'a, T, D> for SlotRow<'a, '_, T, D> {
    // Always inlined: a view returned through memory from a call is read back before its
    // stores have landed (measured in a Kalman step).
    #[inline(always)]
    fn prepare(self, shape: D, what: &str) -> Result<ArrayViewMut<'a, T, D>> {
        match self.prepare_elems(shape, what)? {
            Prepared::View(v) => Ok(v),
            Prepared::Elems(e) => e.into_view(),
        }
    }

    #[inline(always)]
    fn prepare_elems(self, shape: D, _what: &str) -> Result<Prepared<'a, T, D>> {
        // The row's shape copied, so that `self` stays out of the error's call (see
        // `dot::dot_error`).
        let have = self.dim.clone();
        super::steps::check_step_shape(self.output, self.result, have.slice(), shape.slice())?;
        Ok(Prepared::Elems(Uninit::new(
            self.elems,
            self.dim,
            self.filled,
        )))
    }
}

fn too_big(what: &str, rows: usize, row: &[usize]) -> Error {
    Error::InvalidArgument {
        what: what.to_string(),
        detail: format!("a trace of {rows} rows of shape {row:?} cannot be allocated"),
    }
}

/// A view that cannot be made of the trace's own rows: a bug of this file, reported rather
/// than panicking.
fn broken_shape(what: &str, e: ndarray::ShapeError) -> Error {
    Error::InvalidArgument {
        what: what.to_string(),
        detail: format!("internal error: a trace's rows do not match its shape ({e})"),
    }
}

/// A row written before the trace knew its row shape: a bug of the generated code.
#[cold]
fn not_started(what: &str) -> Error {
    Error::InvalidArgument {
        what: what.to_string(),
        detail: "a row was written to a trace whose row shape is not known".to_string(),
    }
}

/// [`broken_shape`] where the view's elements were not as many as its shape has.
#[cold]
fn broken(what: &str) -> Error {
    Error::InvalidArgument {
        what: what.to_string(),
        detail: "internal error: a trace's rows do not match its shape".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::ArrayTrace;
    use crate::error::Error;
    use ndarray::{array, aview0, Array2, Array3, Ix2, Ix3};

    #[test]
    fn a_large_trace_takes_memory_kept_from_an_earlier_call() {
        use crate::kernels::pool;
        pool::release();
        let (rows, row) = (1024usize, 4096usize); // 16 MB of f32
        let old = Array2::<f32>::from_elem((rows, row), 3.0);
        let ptr = old.as_ptr();
        pool::recycle(old);
        let mut buf = Array2::<f32>::zeros((0, 0));
        let mut trace = ArrayTrace::new(&mut buf);
        trace.start("n_steps", &[row], rows, rows).unwrap();
        let new_row = ndarray::Array1::<f32>::from_elem(row, 1.0);
        for _ in 0..rows {
            trace.push_row("0", "x", new_row.view()).unwrap();
        }
        let out = trace.finish().unwrap();
        assert_eq!(out.as_ptr(), ptr, "the kept memory, not fresh pages");
        assert_eq!(out.dim(), (rows, row));
        assert!(out.iter().all(|&x| x == 1.0), "every row the trace's own");
        assert_eq!(pool::kept(), 0);
    }

    #[test]
    fn rows_are_appended_copied_or_written_in_place() {
        use crate::kernels::map2;
        let mut buf = Array2::<f64>::zeros((0, 0));
        let mut tr = ArrayTrace::<f64, Ix2>::new(&mut buf);
        tr.start("n_steps", &[2], 1, 4).unwrap();
        tr.push_rows("x0", array![[1.0, 2.0]].view()).unwrap();
        {
            let (past, mut slot) = tr.next_slot("n_steps").unwrap();
            assert_eq!(past, array![[1.0, 2.0]]);
            let prev = past.row(0);
            map2(slot.row("`x0`", "x * 10"), prev, prev, "x * 10", |a, _| {
                a * 10.0
            })
            .unwrap();
        }
        tr.commit_row("n_steps").unwrap();
        tr.push_row("`x0`", "x * 2", array![5.0, 6.0].view())
            .unwrap();
        // A strided row is copied element by element.
        let m = array![[7.0, 9.0], [8.0, 9.0]];
        tr.push_row("`x0`", "x", m.column(0)).unwrap();
        assert_eq!(tr.row(1).unwrap(), array![10.0, 20.0]);
        assert!(tr.row(4).is_err(), "past the rows written");
        let out = tr.finish().unwrap();
        assert_eq!(
            out,
            array![[1.0, 2.0], [10.0, 20.0], [5.0, 6.0], [7.0, 8.0]]
        );
    }

    #[test]
    fn a_slot_is_written_uninitialised_then_committed() {
        use crate::kernels::{dot_mv, map2, map2_max};
        let mut buf = Array2::<f64>::zeros((0, 0));
        let mut tr = ArrayTrace::<f64, Ix2>::new(&mut buf);
        tr.start("n_steps", &[3], 1, 8).unwrap();
        tr.push_rows("x0", array![[1.0, 2.0, 4.0]].view()).unwrap();
        // A contiguous map writes the slot as it is.
        {
            let (past, mut slot) = tr.next_slot("n_steps").unwrap();
            assert!(slot.written().is_err(), "nothing written yet");
            let prev = past.row(0);
            map2(slot.row("`x`", "x * 3"), prev, prev, "x * 3", |a, b| {
                a + 2.0 * b
            })
            .unwrap();
            assert_eq!(slot.written().unwrap(), array![3.0, 6.0, 12.0]);
        }
        tr.commit_row("n_steps").unwrap();
        // The fused map and max, from the row just added.
        {
            let (past, mut slot) = tr.next_slot("n_steps").unwrap();
            let prev = past.row(1);
            let m = map2_max(
                slot.row("`x`", "x - 1"),
                prev,
                aview0(&1.0),
                "x - 1",
                "max(x)",
                |x, one| x - one,
                |x, _, y| (y - x).abs() * x,
            );
            assert_eq!(m.unwrap(), 12.0, "|(x - 1) - x| * x is largest at x = 12");
            assert_eq!(slot.written().unwrap(), array![2.0, 5.0, 11.0]);
        }
        tr.commit_row("n_steps").unwrap();
        // A kernel without an uninitialised path (a product) gets the slot zeroed first.
        {
            let (_, mut slot) = tr.next_slot("n_steps").unwrap();
            let m = array![[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]];
            dot_mv(
                slot.row("`x`", "m @ v"),
                m.view(),
                array![5.0, 7.0].view(),
                "m @ v",
            )
            .unwrap();
        }
        tr.commit_row("n_steps").unwrap();
        // A row not written is not committed, nor is a slot followed by another change.
        {
            let _ = tr.next_slot("n_steps").unwrap();
        }
        assert!(
            tr.commit_row("n_steps").is_err(),
            "the slot was never written"
        );
        {
            let (_, mut slot) = tr.next_slot("n_steps").unwrap();
            map2(
                slot.row("`x`", "0"),
                aview0(&0.0),
                aview0(&0.0),
                "0",
                |a: f64, b: f64| a + b,
            )
            .unwrap_err();
        }
        assert!(
            tr.commit_row("n_steps").is_err(),
            "a shape error writes nothing"
        );
        {
            let (_, mut slot) = tr.next_slot("n_steps").unwrap();
            map2(
                slot.row("`x`", "1"),
                array![1.0, 1.0, 1.0].view(),
                aview0(&0.0),
                "1",
                |a, b| a + b,
            )
            .unwrap();
        }
        tr.push_row("`x`", "r", array![9.0, 9.0, 9.0].view())
            .unwrap();
        assert!(
            tr.commit_row("n_steps").is_err(),
            "a push after the slot voids it"
        );
        let out = tr.finish().unwrap();
        assert_eq!(
            out,
            array![
                [1.0, 2.0, 4.0],
                [3.0, 6.0, 12.0],
                [2.0, 5.0, 11.0],
                [5.0, 7.0, 12.0],
                [9.0, 9.0, 9.0]
            ]
        );
    }

    #[test]
    fn a_result_of_another_shape_is_a_step_shape_error() {
        let mut buf = Array2::<f32>::default((0, 0));
        let mut tr = ArrayTrace::<f32, Ix2>::new(&mut buf);
        tr.start("n_steps", &[3], 2, 2).unwrap();
        let e = tr
            .push_row("`h0`", "tanh(h)", array![1.0f32, 2.0].view())
            .unwrap_err();
        assert_eq!(
            e,
            Error::StepResultShape {
                output: "`h0`".into(),
                result: "tanh(h)".into(),
                expected: vec![3],
                found: vec![2],
            }
        );
    }

    #[test]
    fn a_trace_reserved_whole_starts_its_rows_on_a_cache_line() {
        use crate::kernels::buffer::ALIGN;
        for rows in [1usize, 3, 100] {
            let mut buf = Array2::<f64>::zeros((0, 0));
            let mut tr = ArrayTrace::<f64, Ix2>::new(&mut buf);
            tr.start("n_steps", &[5], rows, rows).unwrap();
            for i in 0..rows {
                tr.push_row("0", "r", ndarray::Array1::from_elem(5, i as f64).view())
                    .unwrap();
            }
            assert_eq!(
                tr.row(rows - 1).unwrap().to_vec(),
                vec![(rows - 1) as f64; 5]
            );
            let out = tr.finish().unwrap();
            assert_eq!(out.as_ptr() as usize % ALIGN, 0, "{rows} rows");
            assert_eq!(out.dim(), (rows, 5));
            for (i, row) in out.rows().into_iter().enumerate() {
                assert!(row.iter().all(|&v| v == i as f64));
            }
        }
    }

    /// A trace that grows by reallocation (an `until` loop's) keeps its rows on a cache
    /// line and keeps their values, for every element size.
    #[test]
    fn a_growing_trace_stays_on_a_cache_line() {
        use crate::kernels::buffer::ALIGN;
        fn check<T: crate::element::Element + From<u8> + PartialEq + std::fmt::Debug>() {
            let mut buf = Array2::<T>::default((0, 0));
            let mut tr = ArrayTrace::<T, Ix2>::new(&mut buf);
            tr.start("n_steps", &[3], 1, 500).unwrap();
            for i in 0..300u16 {
                let v = T::from((i % 251) as u8);
                tr.push_row("0", "r", ndarray::Array1::from_elem(3, v).view())
                    .unwrap();
                let first = tr.row(0).unwrap();
                assert_eq!(first.as_ptr() as usize % ALIGN, 0, "after {} rows", i + 1);
            }
            let out = tr.finish().unwrap();
            assert_eq!(out.as_ptr() as usize % ALIGN, 0);
            for (i, row) in out.rows().into_iter().enumerate() {
                assert!(
                    row.iter().all(|&v| v == T::from((i % 251) as u8)),
                    "row {i}"
                );
            }
        }
        check::<f64>();
        check::<f32>();
        check::<u8>();
    }

    #[test]
    fn an_until_trace_grows_keeping_its_rows_and_stops_at_its_bound() {
        let mut buf = Array2::<i64>::zeros((0, 0));
        let mut tr = ArrayTrace::<i64, Ix2>::new(&mut buf);
        tr.start("n_steps", &[2], 1, 5).unwrap();
        for i in 0..5 {
            tr.push_row("0", "r", array![i, -i].view()).unwrap();
        }
        // The bound's rows and at most a cache line of padding before them.
        let padding = crate::kernels::buffer::ALIGN / std::mem::size_of::<i64>();
        assert!(tr.data.capacity() <= 10 + padding, "never beyond the bound");
        let out = tr.finish().unwrap();
        assert_eq!(out.column(0).to_vec(), vec![0, 1, 2, 3, 4]);
        assert_eq!(out.column(1).to_vec(), vec![0, -1, -2, -3, -4]);
    }

    #[test]
    fn memory_is_reused_and_an_unstarted_trace_is_empty() {
        let mut buf = Array3::<f64>::zeros((4, 2, 2));
        let cap = buf.len();
        let tr = ArrayTrace::<f64, Ix3>::new(&mut buf);
        assert!(tr.data.capacity() >= cap, "the buffer's memory is kept");
        let mut tr2 = ArrayTrace::<f64, Ix3>::new(&mut buf);
        assert!(tr2.next_slot("n_steps").is_err(), "no row shape yet");
        assert_eq!(tr2.finish().unwrap().shape(), &[0, 0, 0]);
        assert_eq!(tr.finish().unwrap().shape(), &[0, 0, 0]);
    }

    #[test]
    fn fill_rows_zeroes_the_rest_and_impossible_sizes_are_errors() {
        let mut buf = Array2::<f64>::zeros((0, 0));
        let mut tr = ArrayTrace::<f64, Ix2>::new(&mut buf);
        tr.start("n_steps", &[3], 1, 3).unwrap();
        tr.push_rows("x0", array![[1.0, 1.0, 1.0]].view()).unwrap();
        let all = tr.fill_rows("n_steps", 3).unwrap();
        assert_eq!(all.len(), 9);
        all[8] = 4.0;
        let out = tr.finish().unwrap();
        assert_eq!(
            out,
            array![[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [0.0, 0.0, 4.0]]
        );

        let mut tr = ArrayTrace::<f64, Ix2>::new(&mut buf);
        let e = tr.start("n_steps", &[usize::MAX / 2], 4, 4).unwrap_err();
        assert!(e.to_string().contains("cannot be allocated"), "{e}");
        let mut tr = ArrayTrace::<f64, Ix2>::new(&mut buf);
        assert!(tr.start("n_steps", &[2, 2], 1, 1).is_err(), "wrong rank");
    }
}
