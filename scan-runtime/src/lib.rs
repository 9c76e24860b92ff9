//! Runtime of the `scan` compiler.
//!
//! The [`scan!`](scan) macro turns a PyTensor-style `scan` loop into plain Rust that calls
//! the kernels of this crate. A user needs only the prelude:
//!
//! ```
//! use scan_runtime::prelude::*;
//! ```
//!
//! which brings the macro, the [`Error`]/[`Result`] types every generated function returns,
//! and the ndarray types its signatures use. Errors are values with a one-sentence message:
//!
//! ```
//! use scan_runtime::prelude::*;
//!
//! fn first_state(h0: ArrayView1<f64>) -> Result<f64> {
//!     h0.first().copied().ok_or_else(|| Error::Empty { what: "h0".into() })
//! }
//!
//! let err = first_state(Array1::zeros(0).view()).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "`h0` got an empty array, which has no element or row to take"
//! );
//! assert_eq!(first_state(array![2.0, 3.0].view()), Ok(2.0));
//! ```
//!
//! Design rules the kernels follow:
//! - no panic on user data: every size problem (bad broadcast, short sequence, index out of
//!   range, ...) is an [`Error`] naming the user's argument or expression and the sizes;
//! - no allocation per loop step: kernels write into caller-provided buffers and reallocate
//!   them only when their shape changes;
//! - numpy semantics: integer arithmetic wraps, `%` takes the divisor's sign, NaN propagates
//!   through `max`/`min`, indices may be negative and slices clamp.

pub mod element;
pub mod error;
pub mod kernels;
pub mod math;

pub use error::{Error, Result};
pub use ndarray;
pub use scan_macros::scan;

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
