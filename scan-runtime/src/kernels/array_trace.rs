//! The trace of an array output, built row after row as the steps are taken.
//!
//! A trace allocated whole before the loop must be initialised whole (Rust gives no sound
//! way to hand a kernel memory it has not written), and zeroing it costs a pass over all of
//! it whenever the allocator hands back memory it had before. [`ArrayTrace`] instead grows a
//! vector by one row per step: a row computed elsewhere is appended by a copy (nothing
//! written before it), and a row that a step's kernel writes in place is zeroed just before
//! (one row, in cache, which the kernel then overwrites: no pass over memory). The vector
//! is reserved for every step up front, or for a few rows and doubled as an `until` loop
//! goes on (a reallocation, which for a large vector moves pages rather than copying).

use ndarray::{Array, ArrayView, ArrayViewMut, Axis, Dimension, RemoveAxis};

use crate::element::Element;
use crate::error::{Error, Result};

/// Rows written so far (`dim[0]` of them, each of shape `dim[1..]`) and room for more.
pub struct ArrayTrace<T, D: Dimension> {
    /// Exactly the rows written, in order.
    data: Vec<T>,
    /// The trace's shape so far: rows written, then the row shape.
    dim: D,
    /// Elements of one row.
    row_len: usize,
    /// The row shape is set ([`ArrayTrace::start`]).
    started: bool,
    /// The most rows the loop can write: room is never reserved beyond it.
    bound: usize,
}

impl<T: Element, D: RemoveAxis> ArrayTrace<T, D> {
    /// An empty trace in the memory of `buf` (emptied; its capacity is kept, so a loop run
    /// again inside an enclosing loop reuses it). Its row shape is set by [`Self::start`].
    pub fn new(buf: &mut Array<T, D>) -> Self {
        ArrayTrace {
            data: super::take_rows(buf),
            // Rank 1 for `IxDyn` until the row shape is known: no element either way.
            dim: D::zeros(D::NDIM.unwrap_or(1)),
            row_len: 0,
            started: false,
            bound: 0,
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
        self.data.clear();
        self.bound = bound;
        self.started = true;
        self.reserve_rows(what, first.min(bound))
    }

    /// The shape of one row (empty until [`Self::start`]).
    pub fn row_shape(&self) -> &[usize] {
        self.dim.slice().get(1..).unwrap_or(&[])
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.dim.slice().first().copied().unwrap_or(0)
    }

    /// Appends rows (an output's initial rows) by copying them.
    pub fn push_rows(&mut self, what: &str, rows: ArrayView<'_, T, D>) -> Result<()> {
        self.check_started(what)?;
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
            Some(s) => self.data.extend_from_slice(s),
            None => self.data.extend(rows.iter().copied()),
        }
        self.dim[0] += n;
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
        super::steps::check_step_shape(output, result, self.row_shape(), row.shape())?;
        self.reserve_rows("n_steps", self.rows() + 1)?;
        match row.as_slice() {
            Some(s) => self.data.extend_from_slice(s),
            None => self.data.extend(row.iter().copied()),
        }
        self.dim[0] += 1;
        Ok(())
    }

    /// Appends a row for a kernel to write in place (zeroed: every element of it is
    /// initialised memory), and returns the rows before it with it.
    #[inline]
    #[allow(clippy::type_complexity)]
    pub fn next_row(
        &mut self,
        what: &str,
    ) -> Result<(ArrayView<'_, T, D>, ArrayViewMut<'_, T, D::Smaller>)> {
        self.check_started(what)?;
        self.reserve_rows(what, self.rows() + 1)?;
        let before = self.data.len();
        self.data.resize(before + self.row_len, T::default());
        let past_dim = self.dim.clone();
        let row_dim = self.dim.remove_axis(Axis(0));
        self.dim[0] += 1;
        let (past, row) = self.data.split_at_mut(before);
        let past = ArrayView::from_shape(past_dim, past).map_err(|e| broken(what, e))?;
        let row = ArrayViewMut::from_shape(row_dim, row).map_err(|e| broken(what, e))?;
        Ok((past, row))
    }

    /// Row `i`, for a step to read (a tap).
    #[inline]
    pub fn row(&self, i: usize) -> Result<ArrayView<'_, T, D::Smaller>> {
        let rows = self
            .data
            .get(i * self.row_len..(i + 1) * self.row_len)
            .filter(|_| i < self.rows())
            .ok_or_else(|| Error::InvalidArgument {
                what: "n_steps".to_string(),
                detail: format!("row {i} of a trace of {} rows was read", self.rows()),
            })?;
        ArrayView::from_shape(self.dim.remove_axis(Axis(0)), rows).map_err(|e| broken("n_steps", e))
    }

    /// Makes the trace `rows` rows long, the new rows zeroed, and returns all its elements
    /// (for a loop that writes the rows in another order: the interchanged loop).
    pub fn fill_rows(&mut self, what: &str, rows: usize) -> Result<&mut [T]> {
        self.check_started(what)?;
        let len = rows
            .checked_mul(self.row_len)
            .ok_or_else(|| too_big(what, rows, self.row_shape()))?;
        if rows > self.rows() {
            self.reserve_rows(what, rows)?;
            self.data.resize(len, T::default());
            self.dim[0] = rows;
        }
        Ok(&mut self.data)
    }

    /// The rows written, as the output's buffer (shape all zeros if no row was).
    pub fn finish(self) -> Result<Array<T, D>> {
        Array::from_shape_vec(self.dim, self.data).map_err(|e| broken("n_steps", e))
    }

    fn check_started(&self, what: &str) -> Result<()> {
        if self.started {
            Ok(())
        } else {
            Err(Error::InvalidArgument {
                what: what.to_string(),
                detail: "a row was written to a trace whose row shape is not known".to_string(),
            })
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
        self.data
            .try_reserve_exact(more)
            .map_err(|_| too_big(what, target, self.row_shape()))
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
fn broken(what: &str, e: ndarray::ShapeError) -> Error {
    Error::InvalidArgument {
        what: what.to_string(),
        detail: format!("internal error: a trace's rows do not match its shape ({e})"),
    }
}

#[cfg(test)]
mod tests {
    use super::ArrayTrace;
    use crate::error::Error;
    use ndarray::{array, Array2, Array3, Ix2, Ix3};

    #[test]
    fn rows_are_appended_copied_or_written_in_place() {
        let mut buf = Array2::<f64>::zeros((0, 0));
        let mut tr = ArrayTrace::<f64, Ix2>::new(&mut buf);
        tr.start("n_steps", &[2], 1, 4).unwrap();
        tr.push_rows("x0", array![[1.0, 2.0]].view()).unwrap();
        {
            let (past, mut row) = tr.next_row("n_steps").unwrap();
            assert_eq!(past, array![[1.0, 2.0]]);
            assert_eq!(row, array![0.0, 0.0], "a new row is zeroed");
            row.assign(&(&past.row(0) * 10.0));
        }
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
    fn an_until_trace_grows_keeping_its_rows_and_stops_at_its_bound() {
        let mut buf = Array2::<i64>::zeros((0, 0));
        let mut tr = ArrayTrace::<i64, Ix2>::new(&mut buf);
        tr.start("n_steps", &[2], 1, 5).unwrap();
        for i in 0..5 {
            tr.push_row("0", "r", array![i, -i].view()).unwrap();
        }
        assert!(tr.data.capacity() <= 10, "never beyond the bound");
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
        assert!(tr2.next_row("n_steps").is_err(), "no row shape yet");
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
