//! Static types of scan-graph values: an element dtype and a rank. Sizes are only known at
//! run time, so they are not part of the type.

use std::fmt;

/// Element type of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
}

impl DType {
    pub const ALL: [DType; 11] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F32,
        DType::F64,
    ];

    /// The Rust spelling, also the spelling used in `scan!` signatures and casts.
    pub fn rust_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
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

    /// Any integer dtype, signed or unsigned.
    pub fn is_int(self) -> bool {
        self.int_bits().is_some()
    }

    pub fn is_unsigned(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }

    pub fn is_number(self) -> bool {
        self != DType::Bool
    }

    /// The width of an integer dtype in bits.
    pub fn int_bits(self) -> Option<u32> {
        use DType::*;
        match self {
            I8 | U8 => Some(8),
            I16 | U16 => Some(16),
            I32 | U32 => Some(32),
            I64 | U64 => Some(64),
            Bool | F32 | F64 => None,
        }
    }

    /// The signed or unsigned integer dtype of `bits` bits.
    fn int_of(unsigned: bool, bits: u32) -> DType {
        use DType::*;
        match (unsigned, bits) {
            (false, 8) => I8,
            (false, 16) => I16,
            (false, 32) => I32,
            (false, 64) => I64,
            (true, 8) => U8,
            (true, 16) => U16,
            (true, 32) => U32,
            _ => U64,
        }
    }

    /// The smallest and largest value of an integer dtype.
    pub fn int_range(self) -> Option<(i128, i128)> {
        let bits = self.int_bits()?;
        Some(if self.is_unsigned() {
            (0, (1i128 << bits) - 1)
        } else {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        })
    }

    /// Whether the integer `v` is a value of this integer dtype (false for other dtypes).
    pub fn holds(self, v: i128) -> bool {
        self.int_range().is_some_and(|(lo, hi)| lo <= v && v <= hi)
    }

    /// numpy's promotion of two strongly typed operands (NEP 50, numpy 2): bool < numbers;
    /// two integers of one signedness give the wider; a signed and an unsigned integer give
    /// the narrowest signed integer holding both (u8 with i8 is i16, u32 with i32 is i64),
    /// and u64 with any signed integer is f64; an integer with f32 is f32 up to 16 bits
    /// (f32 holds every i16 and u16), else f64; f32 with f64 is f64.
    pub fn promote(a: DType, b: DType) -> DType {
        use DType::*;
        match (a, b) {
            (x, y) if x == y => x,
            (Bool, x) | (x, Bool) => x,
            (F32, F64) | (F64, F32) => F64,
            (F64, _) | (_, F64) => F64,
            (F32, i) | (i, F32) => {
                if i.int_bits().is_some_and(|b| b <= 16) {
                    F32
                } else {
                    F64
                }
            }
            (x, y) => {
                let (bx, by) = (x.int_bits().unwrap_or(64), y.int_bits().unwrap_or(64));
                match (x.is_unsigned(), y.is_unsigned()) {
                    (ux, uy) if ux == uy => DType::int_of(ux, bx.max(by)),
                    (ux, _) => {
                        let (signed, unsigned) = if ux { (by, bx) } else { (bx, by) };
                        if signed > unsigned {
                            DType::int_of(false, signed)
                        } else if unsigned < 64 {
                            DType::int_of(false, 2 * unsigned)
                        } else {
                            F64
                        }
                    }
                }
            }
        }
    }

    /// The dtype numpy's `sum`, `prod`, `cumsum` and `cumprod` accumulate in: bools and
    /// signed integers narrower than 64 bits in i64 (the platform integer), unsigned ones
    /// in u64; others in themselves.
    pub fn accumulator(self) -> DType {
        use DType::*;
        match self {
            Bool | I8 | I16 | I32 => I64,
            U8 | U16 | U32 => U64,
            d => d,
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

    /// Whether every value of `self` is exactly representable in `to` (no implicit
    /// downcast): bool to anything; an integer to a wider integer of its signedness, an
    /// unsigned one to a wider signed one (never signed to unsigned); an integer of at most
    /// 16 bits to f32, of at most 32 bits to f64; f32 to f64.
    pub fn casts_safely_to(self, to: DType) -> bool {
        use DType::*;
        if self == to || self == Bool {
            return true;
        }
        match (self.int_bits(), to.int_bits()) {
            (Some(from_bits), Some(to_bits)) => match (self.is_unsigned(), to.is_unsigned()) {
                (false, true) => false,
                (true, false) => to_bits > from_bits,
                _ => to_bits >= from_bits,
            },
            (Some(bits), None) => match to {
                F32 => bits <= 16,
                F64 => bits <= 32,
                _ => false,
            },
            (None, _) => self == F32 && to == F64,
        }
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

    /// Every pair of dtypes, with numpy 2's `np.result_type(a, b)` (NEP 50), as printed by
    /// tools/int_dtypes.py (numpy 2.4.6).
    const NUMPY_PROMOTION: [(&str, &str, &str); 66] = [
        ("bool", "bool", "bool"),
        ("bool", "i8", "i8"),
        ("bool", "i16", "i16"),
        ("bool", "i32", "i32"),
        ("bool", "i64", "i64"),
        ("bool", "u8", "u8"),
        ("bool", "u16", "u16"),
        ("bool", "u32", "u32"),
        ("bool", "u64", "u64"),
        ("bool", "f32", "f32"),
        ("bool", "f64", "f64"),
        ("i8", "i8", "i8"),
        ("i8", "i16", "i16"),
        ("i8", "i32", "i32"),
        ("i8", "i64", "i64"),
        ("i8", "u8", "i16"),
        ("i8", "u16", "i32"),
        ("i8", "u32", "i64"),
        ("i8", "u64", "f64"),
        ("i8", "f32", "f32"),
        ("i8", "f64", "f64"),
        ("i16", "i16", "i16"),
        ("i16", "i32", "i32"),
        ("i16", "i64", "i64"),
        ("i16", "u8", "i16"),
        ("i16", "u16", "i32"),
        ("i16", "u32", "i64"),
        ("i16", "u64", "f64"),
        ("i16", "f32", "f32"),
        ("i16", "f64", "f64"),
        ("i32", "i32", "i32"),
        ("i32", "i64", "i64"),
        ("i32", "u8", "i32"),
        ("i32", "u16", "i32"),
        ("i32", "u32", "i64"),
        ("i32", "u64", "f64"),
        ("i32", "f32", "f64"),
        ("i32", "f64", "f64"),
        ("i64", "i64", "i64"),
        ("i64", "u8", "i64"),
        ("i64", "u16", "i64"),
        ("i64", "u32", "i64"),
        ("i64", "u64", "f64"),
        ("i64", "f32", "f64"),
        ("i64", "f64", "f64"),
        ("u8", "u8", "u8"),
        ("u8", "u16", "u16"),
        ("u8", "u32", "u32"),
        ("u8", "u64", "u64"),
        ("u8", "f32", "f32"),
        ("u8", "f64", "f64"),
        ("u16", "u16", "u16"),
        ("u16", "u32", "u32"),
        ("u16", "u64", "u64"),
        ("u16", "f32", "f32"),
        ("u16", "f64", "f64"),
        ("u32", "u32", "u32"),
        ("u32", "u64", "u64"),
        ("u32", "f32", "f64"),
        ("u32", "f64", "f64"),
        ("u64", "u64", "u64"),
        ("u64", "f32", "f64"),
        ("u64", "f64", "f64"),
        ("f32", "f32", "f32"),
        ("f32", "f64", "f64"),
        ("f64", "f64", "f64"),
    ];

    #[test]
    fn promotion_follows_numpy() {
        let d = |name: &str| DType::from_rust_name(name).unwrap();
        for (a, b, r) in NUMPY_PROMOTION {
            assert_eq!(DType::promote(d(a), d(b)), d(r), "{a} with {b}");
            assert_eq!(DType::promote(d(b), d(a)), d(r), "{b} with {a}");
        }
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
        use DType::*;
        let safe = [
            (U8, I16),
            (U8, U16),
            (U8, F32),
            (I8, I16),
            (I16, F32),
            (U16, F32),
            (U16, I32),
            (U32, I64),
            (U32, F64),
            (I32, F64),
            (Bool, U8),
        ];
        for (a, b) in safe {
            assert!(a.casts_safely_to(b), "{a} -> {b}");
        }
        let unsafe_ = [
            (I8, U8),
            (I8, U64),
            (U8, I8),
            (U16, I16),
            (U32, I32),
            (U64, I64),
            (I32, F32),
            (U32, F32),
            (I64, F64),
            (U64, F64),
            (I16, I8),
            (F32, I64),
            (U8, Bool),
        ];
        for (a, b) in unsafe_ {
            assert!(!a.casts_safely_to(b), "{a} -> {b}");
        }
        // numpy's `can_cast(a, b, "safe")` agrees with every pair but i64/u64 -> f64,
        // which numpy calls safe though not every value is exact (tools/int_dtypes.py).
        for a in DType::ALL {
            for b in DType::ALL {
                let (ia, ib) = (a.int_range(), b.int_range());
                if let (Some((alo, ahi)), Some((blo, bhi))) = (ia, ib) {
                    assert_eq!(a.casts_safely_to(b), blo <= alo && ahi <= bhi, "{a} -> {b}");
                }
            }
        }
    }

    #[test]
    fn integer_ranges_and_accumulators() {
        assert_eq!(DType::U8.int_range(), Some((0, 255)));
        assert_eq!(DType::I8.int_range(), Some((-128, 127)));
        assert_eq!(DType::U64.int_range(), Some((0, u64::MAX.into())));
        assert_eq!(
            DType::I64.int_range(),
            Some((i64::MIN.into(), i64::MAX.into()))
        );
        assert!(DType::U16.holds(65535) && !DType::U16.holds(65536) && !DType::U16.holds(-1));
        assert_eq!(DType::F32.int_range(), None);
        // numpy 2: sum of i8/i16/i32/bool is int64, of u8/u16/u32 uint64.
        for (d, acc) in [
            (DType::Bool, DType::I64),
            (DType::I8, DType::I64),
            (DType::I16, DType::I64),
            (DType::I32, DType::I64),
            (DType::I64, DType::I64),
            (DType::U8, DType::U64),
            (DType::U16, DType::U64),
            (DType::U32, DType::U64),
            (DType::U64, DType::U64),
            (DType::F32, DType::F32),
        ] {
            assert_eq!(d.accumulator(), acc, "{d}");
        }
    }
}
