//! Static types of scan-graph values: an element dtype and a rank. Sizes are only known at
//! run time, so they are not part of the type.

use std::fmt;

/// Element type of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I32,
    I64,
    F32,
    F64,
}

impl DType {
    pub const ALL: [DType; 5] = [DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64];

    /// The Rust spelling, also the spelling used in `scan!` signatures and casts.
    pub fn rust_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    pub fn from_rust_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.rust_name() == name)
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    pub fn is_int(self) -> bool {
        matches!(self, DType::I32 | DType::I64)
    }

    pub fn is_number(self) -> bool {
        self != DType::Bool
    }

    /// numpy's promotion of two strongly typed operands (bool < ints < floats; an int
    /// mixed with f32 goes to f64 as numpy does, since f32 cannot hold every i32).
    pub fn promote(a: DType, b: DType) -> DType {
        use DType::*;
        match (a, b) {
            (x, y) if x == y => x,
            (Bool, x) | (x, Bool) => x,
            (I32, I64) | (I64, I32) => I64,
            (F32, F64) | (F64, F32) => F64,
            (I32 | I64, F32) | (F32, I32 | I64) => F64,
            (I32 | I64, F64) | (F64, I32 | I64) => F64,
            _ => F64,
        }
    }

    /// The float type an operation that needs floats (division, exp, ...) computes in.
    pub fn to_float(self) -> DType {
        if self == DType::F32 {
            DType::F32
        } else {
            DType::F64
        }
    }

    /// Whether every value of `self` is exactly representable in `to` (no implicit downcast).
    pub fn casts_safely_to(self, to: DType) -> bool {
        use DType::*;
        self == to || matches!((self, to), (Bool, _) | (I32, I64) | (I32, F64) | (F32, F64))
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rust_name())
    }
}

/// The static type of a value: dtype and rank (0 = scalar).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Type {
    pub dtype: DType,
    pub rank: usize,
}

impl Type {
    pub fn new(dtype: DType, rank: usize) -> Type {
        Type { dtype, rank }
    }

    pub fn scalar(dtype: DType) -> Type {
        Type { dtype, rank: 0 }
    }

    pub fn with_dtype(self, dtype: DType) -> Type {
        Type { dtype, ..self }
    }

    pub fn with_rank(self, rank: usize) -> Type {
        Type { rank, ..self }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.rank {
            0 => write!(f, "scalar {}", self.dtype),
            1 => write!(f, "vector of {}", self.dtype),
            2 => write!(f, "matrix of {}", self.dtype),
            r => write!(f, "rank-{} array of {}", r, self.dtype),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotion_follows_numpy() {
        assert_eq!(DType::promote(DType::I32, DType::I64), DType::I64);
        assert_eq!(DType::promote(DType::F32, DType::I32), DType::F64);
        assert_eq!(DType::promote(DType::F32, DType::F32), DType::F32);
        assert_eq!(DType::promote(DType::Bool, DType::F32), DType::F32);
    }

    #[test]
    fn downcasts_are_not_safe() {
        assert!(DType::I32.casts_safely_to(DType::I64));
        assert!(!DType::I64.casts_safely_to(DType::I32));
        assert!(!DType::F64.casts_safely_to(DType::F32));
        assert!(!DType::I64.casts_safely_to(DType::F32));
    }
}
