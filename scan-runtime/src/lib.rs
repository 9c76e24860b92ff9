//! `scan`: PyTensor-style scan loops compiled ahead of time, and the runtime they call.
//!
//! The [`scan!`](scan) macro turns a `scan` loop into plain Rust that calls the kernels of
//! this crate; a user depends on this crate alone and needs only the prelude:
//!
//! ```
//! use scan_runtime::prelude::*;
//!
//! scan! {
//!     /// Fibonacci: an output with taps [-2, -1], stopped by `until`, bounded by n_steps.
//!     pub fn fibonacci(init: ArrayView1<i64>, limit: i64) -> Result<Array1<i64>> {
//!         let f = scan(
//!             |a, b, limit| (a + b, until(a + b > limit)),
//!             outputs_info = taps(init, [-2, -1]),
//!             non_sequences = limit,
//!             n_steps = 100,
//!         );
//!         Ok(f)
//!     }
//! }
//!
//! assert_eq!(fibonacci(array![0, 1].view(), 20)?.to_vec(), vec![1, 2, 3, 5, 8, 13, 21]);
//! // Sizes only known at run time are errors, never panics.
//! let err = fibonacci(array![1].view(), 20).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "initial state `init` has 1 row but taps [-2, -1] need 2 (init[0] is output[t-2])"
//! );
//! # Ok::<(), scan_runtime::Error>(())
//! ```
//!
//! docs/SEMANTICS.md in the repository lists the language and every rule of the loop.
//!
//! Design rules the kernels follow:
//! - no panic on user data: every size problem (bad broadcast, short sequence, index out of
//!   range, ...) is an [`Error`] naming the user's argument or expression and the sizes;
//! - no allocation per loop step: kernels write into caller-provided buffers and reallocate
//!   them only when their shape changes (a float matrix product allocates nothing after the
//!   first on a thread; one split over threads may add an allocation of rayon's job queue
//!   once per 63 splits, see [`threads`]);
//! - threads: matrix products large enough to pay are split over threads, as many as
//!   [`set_num_threads`] or the environment variable `SCAN_NUM_THREADS` say (default: every
//!   core; see [`threads`]);
//! - numpy semantics: integer arithmetic wraps, `%` takes the divisor's sign, NaN propagates
//!   through `max`/`min`, indices may be negative and slices clamp.

pub mod approx;
pub mod element;
pub mod error;
pub mod kernels;
pub mod math;
pub mod threads;

pub use error::{Error, Result};
pub use ndarray;
pub use scan_macros::scan;
pub use threads::{num_threads, set_num_threads};

/// Everything a user of `scan!` needs: `use scan_runtime::prelude::*;`.
pub mod prelude {
    pub use crate::error::{Error, Result};
    pub use ndarray::{
        array, s, Array, Array0, Array1, Array2, Array3, ArrayD, ArrayView, ArrayView1, ArrayView2,
        ArrayView3, Axis,
    };
    pub use scan_macros::scan;
}

/// Paths used by generated code (`::scan_runtime::__private::kernels::map2`, ...). Not a
/// stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::element::{self, Cast, Element, Float, Number};
    pub use crate::error::{Error, Result};
    pub use crate::{kernels, math};
    pub use ndarray;
}
