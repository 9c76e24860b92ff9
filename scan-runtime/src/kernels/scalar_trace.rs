//! The trace of a scalar output, written once per step, in step order, into memory that
//! is not filled with zeros first.
//!
//! A scalar recurrence reads its past from registers, so its trace is only ever written,
//! row after row. Allocating it with zeros (`calloc`) costs a pass over the whole buffer
//! whenever the allocator hands back memory it had before (a loop called again and again).
//! [`ScalarTrace`] writes into a vector's spare capacity instead and sets its length to the
//! rows written at the end, like `Vec::push` without `push`'s loads and stores of the
//! vector on every step. The rows of every step are reserved before the loop; an `until`
//! loop, which may stop long before its bound, reserves a few and doubles them as it goes.

use ndarray::{Array, Array1, Dimension};

use crate::error::{Error, Result};

/// Rows of a scalar trace being written: owns the vector that will hold them (a local of
/// the generated loop, kept in registers: no call takes it by reference on the way).
pub struct ScalarTrace<T: Copy> {
    /// Length 0 while rows are written into its spare capacity.
    rows: Vec<T>,
    /// Rows written so far: the first `written` elements of the capacity.
    written: usize,
    /// The most rows the loop can write: room is never reserved beyond it.
    bound: usize,
}

/// The memory of `buf`, emptied, for a trace to fill ([`ScalarTrace`], or
/// `ArrayTrace`): its capacity is kept, so a loop run again in an enclosing loop reuses it.
pub fn take_rows<T: Default, D: Dimension>(buf: &mut Array<T, D>) -> Vec<T> {
    let (mut rows, _) = std::mem::take(buf).into_raw_vec_and_offset();
    rows.clear();
    rows
}

impl<T: Copy> ScalarTrace<T> {
    /// Room for `rows` rows in `memory` (from [`take_rows`]; emptied), growing up to `bound`
    /// rows. `Err(InvalidArgument)` naming `what` when the memory cannot be had.
    pub fn new(what: &str, mut memory: Vec<T>, rows: usize, bound: usize) -> Result<Self> {
        let rows = rows.min(bound);
        memory.clear();
        memory
            .try_reserve_exact(rows)
            .map_err(|_| too_many(what, rows))?;
        Ok(ScalarTrace {
            rows: memory,
            written: 0,
            bound,
        })
    }

    /// Writes the next row. `Err` past the bound (generated loops never write more rows
    /// than they have steps, so they never see it).
    #[inline(always)]
    pub fn push(&mut self, x: T) -> Result<()> {
        if let Some(slot) = self.rows.spare_capacity_mut().get_mut(self.written) {
            slot.write(x);
        } else {
            // The room is used up (an `until` loop going on). The vector goes to the
            // growing function by value, so no call ever takes the trace's address and it
            // stays in registers on the common path.
            let rows = std::mem::take(&mut self.rows);
            let (rows, pushed) = grown_with(rows, self.written, self.bound, x);
            self.rows = rows;
            pushed?;
        }
        self.written += 1;
        Ok(())
    }

    /// The rows written, as the output's buffer.
    /// Writes `f(0), .., f(n - 1)` as the next rows, stopping at the first `Err`: the
    /// loop of `n` steps, with room made once before it (no check per row).
    #[inline(always)]
    pub fn fill(&mut self, n: usize, mut f: impl FnMut(usize) -> Result<T>) -> Result<()> {
        let end = self.written + n;
        // The trace of a loop of known length was made with room for all its rows.
        let Some(slots) = self.rows.spare_capacity_mut().get_mut(self.written..end) else {
            return Err(too_many("n_steps", end));
        };
        for (t, slot) in slots.iter_mut().enumerate() {
            match f(t) {
                Ok(x) => {
                    slot.write(x);
                }
                Err(e) => {
                    self.written += t;
                    return Err(e);
                }
            }
        }
        self.written = end;
        Ok(())
    }

    pub fn finish(self) -> Array1<T> {
        let mut rows = self.rows;
        // SAFETY: the first `written` elements of the capacity were each written by `push`
        // before being counted (and `written` never exceeds the capacity: `push` only
        // counts a slot it found in the spare capacity). Nothing else wrote the vector.
        unsafe { rows.set_len(self.written) };
        Array1::from_vec(rows)
    }
}

/// `rows` (empty, its first `written` spare elements written) with room for twice the rows
/// (at most `bound`; at least one more) and `x` written after them; or as it was, with the
/// `Err`, when it cannot have the room.
#[cold]
#[inline(never)]
fn grown_with<T: Copy>(
    mut rows: Vec<T>,
    written: usize,
    bound: usize,
    x: T,
) -> (Vec<T>, Result<()>) {
    let more = written.max(1).min(bound.saturating_sub(written));
    let full = || Err(too_many("n_steps", written + 1));
    if more == 0 {
        return (rows, full());
    }
    // SAFETY: the first `written` elements of the capacity were each written by `push`
    // before being counted; they become the vector's elements, so the reallocation keeps
    // them. (`written` <= capacity: `push` only counts a slot it found.)
    unsafe { rows.set_len(written) };
    let room = rows.try_reserve_exact(more);
    // Written rows go back to the spare capacity: a shorter length only forgets elements,
    // which need no drop (`T: Copy`).
    rows.clear();
    if room.is_err() {
        return (rows, Err(too_many("n_steps", written + more)));
    }
    match rows.spare_capacity_mut().get_mut(written) {
        Some(slot) => {
            slot.write(x);
            (rows, Ok(()))
        }
        None => (rows, full()),
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
        let mut t = ScalarTrace::new("n_steps", memory, 3, 3).unwrap();
        for x in [1, 2, 3] {
            t.push(x).unwrap();
        }
        assert_eq!(t.finish().to_vec(), vec![1, 2, 3]);
    }

    #[test]
    fn fewer_rows_than_reserved_and_too_many() {
        let mut t = ScalarTrace::new("n_steps", Vec::new(), 4, 4).unwrap();
        t.push(0.5f64).unwrap();
        assert_eq!(t.finish().to_vec(), vec![0.5]);
        let mut t = ScalarTrace::new("n_steps", Vec::with_capacity(0), 0, 0).unwrap();
        assert!(t.push(1u8).is_err(), "nothing beyond the bound");
        assert_eq!(t.finish().len(), 0);
    }

    #[test]
    fn fill_writes_the_steps_and_stops_at_an_error_keeping_the_rows_before() {
        let mut t = ScalarTrace::new("n_steps", Vec::new(), 6, 6).unwrap();
        t.push(-1i64).unwrap();
        t.fill(5, |s| Ok(s as i64 * 10)).unwrap();
        assert_eq!(t.finish().to_vec(), vec![-1, 0, 10, 20, 30, 40]);

        let mut t = ScalarTrace::new("n_steps", Vec::new(), 6, 6).unwrap();
        let stop = Error::Empty {
            what: "x".to_string(),
        };
        let r = t.fill(6, |s| {
            if s == 3 {
                Err(stop.clone())
            } else {
                Ok(s as f32)
            }
        });
        assert_eq!(r, Err(stop));
        assert_eq!(t.finish().to_vec(), vec![0.0, 1.0, 2.0]);

        // More rows than the trace has room for: an error, nothing written.
        let mut t = ScalarTrace::new("n_steps", Vec::new(), 2, 2).unwrap();
        assert_eq!(t.fill(3, |s| Ok(s as u8)), Err(too_many("n_steps", 3)));
        assert_eq!(t.finish().to_vec(), Vec::<u8>::new());
    }

    #[test]
    fn an_until_trace_grows_keeping_its_rows_up_to_its_bound() {
        let mut t = ScalarTrace::new("n_steps", vec![9i32; 3], 2, 37).unwrap();
        for x in 0..37 {
            t.push(x * x).unwrap();
        }
        assert!(t.push(0).is_err(), "the bound");
        assert!(t.rows.capacity() >= 37, "rows kept after the error");
        let rows = t.finish();
        assert_eq!(rows.to_vec(), (0..37).map(|x| x * x).collect::<Vec<_>>());
    }

    #[test]
    fn an_impossible_size_is_an_error_naming_it() {
        let e = ScalarTrace::<u64>::new("n_steps", Vec::new(), usize::MAX / 2, usize::MAX)
            .err()
            .expect("cannot reserve");
        assert!(
            matches!(e, Error::InvalidArgument { ref what, .. } if what == "n_steps"),
            "{e}"
        );
    }
}
