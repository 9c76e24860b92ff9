//! The trace of a scalar output, written once per step, in step order, into memory that
//! is not filled with zeros first.
//!
//! A scalar recurrence reads its past from registers, so its trace is only ever written,
//! row after row. Allocating it with zeros (`calloc`) costs a pass over the whole buffer
//! whenever the allocator hands back memory it had before (a loop called again and again):
//! a third of a cumulative sum's time. [`ScalarTrace`] writes into a vector's spare
//! capacity instead and sets its length to the rows written at the end, like `Vec::push`
//! without `push`'s loads and stores of the vector on every step. Only for loops without
//! `until`, whose rows are all known before the loop (an `until` trace grows as steps are
//! taken: `buffer::grow_rows`).

use ndarray::Array1;

use crate::error::{Error, Result};

/// Rows of a scalar trace being written: owns the vector that will hold them (a local of
/// the generated loop, kept in registers: no call takes it by reference on the way).
pub struct ScalarTrace<T: Copy> {
    /// Length 0 while rows are written into its spare capacity.
    rows: Vec<T>,
    /// Rows written so far: the first `written` elements of the capacity.
    written: usize,
}

/// The memory of `buf`, emptied, for a [`ScalarTrace`] to fill (its capacity is kept, so a
/// loop run again in an enclosing loop reuses it).
pub fn take_rows<T: Copy>(buf: &mut Array1<T>) -> Vec<T> {
    let (mut rows, _) =
        std::mem::replace(buf, Array1::from_vec(Vec::new())).into_raw_vec_and_offset();
    rows.clear();
    rows
}

impl<T: Copy> ScalarTrace<T> {
    /// Room for `rows` rows in `memory` (from [`take_rows`]). `Err(InvalidArgument)` naming
    /// `what` when the memory cannot be had.
    pub fn new(what: &str, mut memory: Vec<T>, rows: usize) -> Result<Self> {
        memory.clear();
        memory
            .try_reserve_exact(rows)
            .map_err(|_| too_many(what, rows))?;
        Ok(ScalarTrace {
            rows: memory,
            written: 0,
        })
    }

    /// Writes the next row. `Err` past the rows reserved (generated loops reserve a row
    /// per step, so they never see it).
    #[inline(always)]
    pub fn push(&mut self, x: T) -> Result<()> {
        match self.rows.spare_capacity_mut().get_mut(self.written) {
            Some(slot) => {
                slot.write(x);
                self.written += 1;
                Ok(())
            }
            None => Err(too_many("n_steps", self.written + 1)),
        }
    }

    /// The rows written, as the output's buffer.
    pub fn finish(self) -> Array1<T> {
        let mut rows = self.rows;
        // SAFETY: the first `written` elements of the capacity were each written by `push`
        // before being counted (and `written` never exceeds the capacity: `push` only
        // counts a slot it found in the spare capacity). Nothing else wrote the vector.
        unsafe { rows.set_len(self.written) };
        Array1::from_vec(rows)
    }
}

fn too_many(what: &str, rows: usize) -> Error {
    Error::InvalidArgument {
        what: what.to_string(),
        detail: format!("a trace of {rows} rows cannot be allocated"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_the_values_pushed_in_order_in_the_memory_taken() {
        let mut buf = Array1::from(vec![7i64; 5]);
        let memory = take_rows(&mut buf);
        assert!(
            memory.is_empty() && memory.capacity() >= 5,
            "memory kept, emptied"
        );
        let mut t = ScalarTrace::new("n_steps", memory, 3).unwrap();
        for x in [1, 2, 3] {
            t.push(x).unwrap();
        }
        assert_eq!(t.finish().to_vec(), vec![1, 2, 3]);
    }

    #[test]
    fn fewer_rows_than_reserved_and_too_many() {
        let mut t = ScalarTrace::new("n_steps", Vec::new(), 4).unwrap();
        t.push(0.5f64).unwrap();
        assert_eq!(t.finish().to_vec(), vec![0.5]);
        let mut t = ScalarTrace::new("n_steps", Vec::with_capacity(0), 0).unwrap();
        let mut pushed = 0;
        while t.push(1u8).is_ok() {
            pushed += 1;
        }
        // The capacity may exceed what was asked (never less): every row counted is there.
        assert_eq!(t.finish().len(), pushed);
    }

    #[test]
    fn an_impossible_size_is_an_error_naming_it() {
        let e = ScalarTrace::<u64>::new("n_steps", Vec::new(), usize::MAX / 2)
            .err()
            .expect("cannot reserve");
        assert!(
            matches!(e, Error::InvalidArgument { ref what, .. } if what == "n_steps"),
            "{e}"
        );
    }
}
