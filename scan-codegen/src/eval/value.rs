//! The evaluator's values: an n-dimensional array of one of the IR's dtypes, conversions
//! from ndarray arrays and Rust scalars, dtype casts, and the comparison helper for tests.

use std::fmt;

use ndarray::{arr0, ArrayBase, ArrayD, Axis, Data, Dimension, IxDyn};

use crate::ir::{DType, Literal, Type};

/// A run-time value: an array of any rank (0 for scalars) of one of the IR's dtypes.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(ArrayD<bool>),
    I8(ArrayD<i8>),
    I16(ArrayD<i16>),
    I32(ArrayD<i32>),
    I64(ArrayD<i64>),
    U8(ArrayD<u8>),
    U16(ArrayD<u16>),
    U32(ArrayD<u32>),
    U64(ArrayD<u64>),
    F32(ArrayD<f32>),
    F64(ArrayD<f64>),
}

/// Evaluates `$body` with `$a` bound to the array inside `$value`, whatever its dtype.
/// `$body` must have the same type for every dtype.
macro_rules! with_array {
    ($value:expr, $a:ident => $body:expr) => {
        match $value {
            $crate::eval::value::Value::Bool($a) => $body,
            $crate::eval::value::Value::I8($a) => $body,
            $crate::eval::value::Value::I16($a) => $body,
            $crate::eval::value::Value::I32($a) => $body,
            $crate::eval::value::Value::I64($a) => $body,
            $crate::eval::value::Value::U8($a) => $body,
            $crate::eval::value::Value::U16($a) => $body,
            $crate::eval::value::Value::U32($a) => $body,
            $crate::eval::value::Value::U64($a) => $body,
            $crate::eval::value::Value::F32($a) => $body,
            $crate::eval::value::Value::F64($a) => $body,
        }
    };
}

pub(crate) use with_array;

/// Like [`with_array`], but `$body` yields an array of the same dtype, wrapped back into a
/// value of that dtype.
macro_rules! map_array {
    ($value:expr, $a:ident => $body:expr) => {
        match $value {
            $crate::eval::value::Value::Bool($a) => $crate::eval::value::Value::Bool($body),
            $crate::eval::value::Value::I8($a) => $crate::eval::value::Value::I8($body),
            $crate::eval::value::Value::I16($a) => $crate::eval::value::Value::I16($body),
            $crate::eval::value::Value::I32($a) => $crate::eval::value::Value::I32($body),
            $crate::eval::value::Value::I64($a) => $crate::eval::value::Value::I64($body),
            $crate::eval::value::Value::U8($a) => $crate::eval::value::Value::U8($body),
            $crate::eval::value::Value::U16($a) => $crate::eval::value::Value::U16($body),
            $crate::eval::value::Value::U32($a) => $crate::eval::value::Value::U32($body),
            $crate::eval::value::Value::U64($a) => $crate::eval::value::Value::U64($body),
            $crate::eval::value::Value::F32($a) => $crate::eval::value::Value::F32($body),
            $crate::eval::value::Value::F64($a) => $crate::eval::value::Value::F64($body),
        }
    };
}
pub(crate) use map_array;

/// Evaluates `$body` with the type name `$t` standing for the Rust type of `$dtype`.
macro_rules! with_dtype {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            $crate::ir::DType::Bool => {
                type $t = bool;
                $body
            }
            $crate::ir::DType::I8 => {
                type $t = i8;
                $body
            }
            $crate::ir::DType::I16 => {
                type $t = i16;
                $body
            }
            $crate::ir::DType::I32 => {
                type $t = i32;
                $body
            }
            $crate::ir::DType::I64 => {
                type $t = i64;
                $body
            }
            $crate::ir::DType::U8 => {
                type $t = u8;
                $body
            }
            $crate::ir::DType::U16 => {
                type $t = u16;
                $body
            }
            $crate::ir::DType::U32 => {
                type $t = u32;
                $body
            }
            $crate::ir::DType::U64 => {
                type $t = u64;
                $body
            }
            $crate::ir::DType::F32 => {
                type $t = f32;
                $body
            }
            $crate::ir::DType::F64 => {
                type $t = f64;
                $body
            }
        }
    };
}
pub(crate) use with_dtype;

/// `Some($body)` with the idents bound to the arrays inside the values when all of them
/// have one dtype among the listed variants; `None` otherwise. `$body` is written once per
/// dtype, so it may be generic (`Element::into_value(..)`).
macro_rules! same_dtype {
    ([$($v:ident),*], $es:tt, $xs:tt => $body:expr) => {
        $crate::eval::value::same_dtype!(@arms [$($v),*] $es $xs $body ;)
    };
    (@arms [] ($($e:expr),+) $xs:tt $body:expr ; $($arms:tt)*) => {
        match ($($e,)+) {
            $($arms)*
            #[allow(unreachable_patterns)]
            _ => None,
        }
    };
    (@arms [$v:ident $(, $rest:ident)*] $es:tt ($($x:ident),+) $body:expr ; $($arms:tt)*) => {
        $crate::eval::value::same_dtype!(
            @arms [$($rest),*] $es ($($x),+) $body ;
            $($arms)* ($($crate::eval::value::Value::$v($x),)+) => Some($body),
        )
    };
}
pub(crate) use same_dtype;

/// [`same_dtype`] over the integer dtypes.
macro_rules! same_int {
    (($($e:expr),+), ($($x:ident),+) => $body:expr) => {
        $crate::eval::value::same_dtype!(
            [I8, I16, I32, I64, U8, U16, U32, U64], ($($e),+), ($($x),+) => $body
        )
    };
}
pub(crate) use same_int;

/// [`same_dtype`] over the number dtypes (integers and floats).
macro_rules! same_number {
    (($($e:expr),+), ($($x:ident),+) => $body:expr) => {
        $crate::eval::value::same_dtype!(
            [I8, I16, I32, I64, U8, U16, U32, U64, F32, F64], ($($e),+), ($($x),+) => $body
        )
    };
}
pub(crate) use same_number;

/// [`same_dtype`] over every dtype.
macro_rules! same_any {
    (($($e:expr),+), ($($x:ident),+) => $body:expr) => {
        $crate::eval::value::same_dtype!(
            [Bool, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64], ($($e),+), ($($x),+) => $body
        )
    };
}
pub(crate) use same_any;

/// `Some($body)` with `$a` bound to the array inside `$value` when it has an integer dtype.
macro_rules! with_int {
    ($value:expr, $a:ident => $body:expr) => {
        $crate::eval::value::same_int!(($value), ($a) => $body)
    };
}
pub(crate) use with_int;

/// The Rust element types of the IR's dtypes, with Rust-`as`-like conversions from each of
/// them (bool -> number is 0/1, number -> bool is `!= 0`; an integer of any dtype converts
/// through i128, which holds it exactly, so `as` from i128 is `as` from the integer).
pub trait Element: Copy + PartialEq + PartialOrd + fmt::Debug + 'static {
    const DTYPE: DType;
    fn into_value(array: ArrayD<Self>) -> Value;
    /// The array inside `value` when it has this dtype.
    fn array(value: &Value) -> Option<&ArrayD<Self>>;
    fn from_bool(x: bool) -> Self;
    /// An integer of any dtype, with `as`: wrapping to a narrower integer, rounding to the
    /// nearest float.
    fn from_i128(x: i128) -> Self;
    fn from_f32(x: f32) -> Self;
    fn from_f64(x: f64) -> Self;
}

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn into_value(array: ArrayD<bool>) -> Value {
        Value::Bool(array)
    }
    fn array(value: &Value) -> Option<&ArrayD<bool>> {
        match value {
            Value::Bool(a) => Some(a),
            _ => None,
        }
    }
    fn from_bool(x: bool) -> bool {
        x
    }
    fn from_i128(x: i128) -> bool {
        x != 0
    }
    fn from_f32(x: f32) -> bool {
        x != 0.0
    }
    fn from_f64(x: f64) -> bool {
        x != 0.0
    }
}

macro_rules! numeric_element {
    ($t:ty, $variant:ident) => {
        #[allow(clippy::unnecessary_cast)]
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            fn into_value(array: ArrayD<$t>) -> Value {
                Value::$variant(array)
            }
            fn array(value: &Value) -> Option<&ArrayD<$t>> {
                match value {
                    Value::$variant(a) => Some(a),
                    _ => None,
                }
            }
            fn from_bool(x: bool) -> $t {
                u8::from(x) as $t
            }
            fn from_i128(x: i128) -> $t {
                x as $t
            }
            fn from_f32(x: f32) -> $t {
                x as $t
            }
            fn from_f64(x: f64) -> $t {
                x as $t
            }
        }
    };
}

numeric_element!(i8, I8);
numeric_element!(i16, I16);
numeric_element!(i32, I32);
numeric_element!(i64, I64);
numeric_element!(u8, U8);
numeric_element!(u16, U16);
numeric_element!(u32, U32);
numeric_element!(u64, U64);
numeric_element!(f32, F32);
numeric_element!(f64, F64);

/// Any ndarray array or view of one of the element types, of any dimensionality.
impl<A: Element, S: Data<Elem = A>, D: Dimension> From<ArrayBase<S, D>> for Value {
    fn from(array: ArrayBase<S, D>) -> Value {
        A::into_value(array.into_owned().into_dyn())
    }
}

impl<A: Element, S: Data<Elem = A>, D: Dimension> From<&ArrayBase<S, D>> for Value {
    fn from(array: &ArrayBase<S, D>) -> Value {
        A::into_value(array.to_owned().into_dyn())
    }
}

macro_rules! scalar_from {
    ($($t:ty),*) => {$(
        /// A 0-d value.
        impl From<$t> for Value {
            fn from(x: $t) -> Value {
                <$t as Element>::into_value(arr0(x).into_dyn())
            }
        }
    )*};
}
scalar_from!(bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

impl Value {
    pub fn dtype(&self) -> DType {
        match self {
            Value::Bool(_) => DType::Bool,
            Value::I8(_) => DType::I8,
            Value::I16(_) => DType::I16,
            Value::I32(_) => DType::I32,
            Value::I64(_) => DType::I64,
            Value::U8(_) => DType::U8,
            Value::U16(_) => DType::U16,
            Value::U32(_) => DType::U32,
            Value::U64(_) => DType::U64,
            Value::F32(_) => DType::F32,
            Value::F64(_) => DType::F64,
        }
    }

    pub fn shape(&self) -> &[usize] {
        with_array!(self, a => a.shape())
    }

    pub fn rank(&self) -> usize {
        self.shape().len()
    }

    /// The static type this value would have in the IR.
    pub fn ty(&self) -> Type {
        Type::new(self.dtype(), self.rank())
    }

    /// The array inside, when the value has dtype `A`.
    pub fn array<A: Element>(&self) -> Option<&ArrayD<A>> {
        A::array(self)
    }

    /// An array of `shape` filled with `x`.
    pub fn full<A: Element>(shape: &[usize], x: A) -> Value {
        A::into_value(ArrayD::from_elem(IxDyn(shape), x))
    }

    /// The integer inside a 0-d value of an integer dtype (a u64 above i64::MAX saturates).
    pub fn scalar_int(&self) -> Option<i64> {
        let x =
            with_int!(self, a => a.iter().next().filter(|_| a.ndim() == 0).map(|&x| x as i128))??;
        Some(i64::try_from(x).unwrap_or(i64::MAX))
    }

    /// The bool inside a 0-d bool value.
    pub fn scalar_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(a) if a.ndim() == 0 => a.iter().next().copied(),
            _ => None,
        }
    }

    /// Row `index` of the leading axis (a copy). The caller checks the bounds.
    pub fn row(&self, index: usize) -> Value {
        map_array!(self, a => a.index_axis(Axis(0), index).to_owned())
    }

    /// The first `n` rows of the leading axis (a copy). The caller checks `n` <= the rows.
    pub fn leading_rows(&self, n: usize) -> Value {
        map_array!(self, a => a.slice_axis(Axis(0), ndarray::Slice::from(..n)).to_owned())
    }

    /// The value converted to `to`, element by element, like Rust's `as` (float -> int
    /// saturates and maps NaN to 0; bool -> number is 0/1; number -> bool is `!= 0`).
    pub fn cast(&self, to: DType) -> Value {
        with_dtype!(to, T => T::into_value(cast_array::<T>(self)))
    }

    /// "scalar f64 [3, 4]"-style description for error messages.
    pub fn describe(&self) -> String {
        let shape = self.shape();
        let kind = match shape.len() {
            0 => "scalar",
            1 => "vector",
            2 => "matrix",
            _ => "array",
        };
        format!("{kind} of {} with shape {shape:?}", self.dtype())
    }
}

fn cast_array<T: Element>(value: &Value) -> ArrayD<T> {
    match value {
        Value::Bool(a) => a.mapv(T::from_bool),
        Value::F32(a) => a.mapv(T::from_f32),
        Value::F64(a) => a.mapv(T::from_f64),
        int => with_int!(int, a => a.mapv(|x| T::from_i128(x as i128)))
            .unwrap_or_else(|| unreachable!("bool and floats are matched above")),
    }
}

/// A literal converted to element type `T` (the same conversion as a cast).
pub fn literal_as<T: Element>(literal: Literal) -> T {
    match literal {
        Literal::Bool(b) => T::from_bool(b),
        Literal::Int(i) => T::from_i128(i),
        Literal::Float(x) => T::from_f64(x),
    }
}

/// A 0-d value of dtype `dtype` holding `literal`.
pub fn literal_value(literal: Literal, dtype: DType) -> Value {
    with_dtype!(dtype, T => Value::full::<T>(&[], literal_as::<T>(literal)))
}

/// Compares a computed value with the expected one: same dtype, same shape, and equal
/// elements; floats may differ by `atol + rtol * |expected|` (rtol 1e-5 and atol 1e-8 for
/// f32, 1e-12 and 1e-12 for f64), and NaN equals NaN. The error describes the first
/// difference.
pub fn assert_close(actual: &Value, expected: &Value) -> Result<(), String> {
    if actual.dtype() != expected.dtype() {
        return Err(format!(
            "dtype differs: actual is {}, expected {}",
            actual.describe(),
            expected.describe()
        ));
    }
    if actual.shape() != expected.shape() {
        return Err(format!(
            "shape differs: actual is {}, expected {}",
            actual.describe(),
            expected.describe()
        ));
    }
    if let Some(r) = same_dtype!([Bool, I8, I16, I32, I64, U8, U16, U32, U64], (actual, expected), (a, e) => first_difference(a, e, |x, y| x == y))
    {
        return r;
    }
    match (actual, expected) {
        (Value::F32(a), Value::F32(e)) => first_difference(a, e, |x, y| {
            floats_close(f64::from(x), f64::from(y), 1e-5, 1e-8)
        }),
        (Value::F64(a), Value::F64(e)) => {
            first_difference(a, e, |x, y| floats_close(x, y, 1e-12, 1e-12))
        }
        _ => unreachable!("dtypes were compared above"),
    }
}

fn floats_close(actual: f64, expected: f64, rtol: f64, atol: f64) -> bool {
    if actual.is_nan() || expected.is_nan() {
        return actual.is_nan() && expected.is_nan();
    }
    // Equal infinities are close; an infinity is not close to anything else.
    actual == expected || (actual - expected).abs() <= atol + rtol * expected.abs()
}

fn first_difference<T: Element>(
    actual: &ArrayD<T>,
    expected: &ArrayD<T>,
    close: impl Fn(T, T) -> bool,
) -> Result<(), String> {
    for ((index, &a), &e) in actual.indexed_iter().zip(expected.iter()) {
        if !close(a, e) {
            return Err(format!(
                "element {:?} of {} differs: actual {a:?}, expected {e:?}",
                index.slice(),
                T::DTYPE
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array1};

    #[test]
    fn conversions_from_arrays_views_and_scalars() {
        let m = array![[1.0f64, 2.0], [3.0, 4.0]];
        let v = Value::from(m.view());
        assert_eq!(v.dtype(), DType::F64);
        assert_eq!(v.shape(), &[2, 2]);
        assert_eq!(Value::from(&m), Value::from(m.clone()));
        assert_eq!(Value::from(3i32).shape(), &[] as &[usize]);
        assert_eq!(Value::from(true).dtype(), DType::Bool);
        assert_eq!(Value::from(Array1::<i64>::zeros(3)).shape(), &[3]);
        assert_eq!(Value::from(7i64).scalar_int(), Some(7));
    }

    #[test]
    fn casts_follow_rust_as() {
        let x = Value::from(array![-1.5f64, f64::NAN, 1e20, 0.0]);
        assert_eq!(
            x.cast(DType::I32),
            Value::from(array![-1i32, 0, i32::MAX, 0])
        );
        assert_eq!(
            x.cast(DType::Bool),
            Value::from(array![true, true, true, false])
        );
        let b = Value::from(array![true, false]);
        assert_eq!(b.cast(DType::F32), Value::from(array![1.0f32, 0.0]));
        assert_eq!(
            Value::from(array![300i64]).cast(DType::I32),
            Value::from(array![300i32])
        );
        assert_eq!(
            literal_value(Literal::Float(2.7), DType::I64),
            Value::from(2i64)
        );
    }

    #[test]
    fn assert_close_reports_differences() {
        let a = Value::from(array![1.0f32, f32::NAN]);
        let b = Value::from(array![1.000001f32, f32::NAN]);
        assert!(assert_close(&a, &b).is_ok());
        let c = Value::from(array![1.1f32, f32::NAN]);
        let err = assert_close(&a, &c).unwrap_err();
        assert!(err.contains("element [0]"), "{err}");
        assert!(assert_close(&a, &Value::from(array![1.0f64, f64::NAN])).is_err());
        assert!(assert_close(&a, &Value::from(array![1.0f32])).is_err());
        assert!(assert_close(&Value::from(1i32), &Value::from(2i32)).is_err());
        let inf = Value::from(f64::INFINITY);
        assert!(assert_close(&inf, &inf).is_ok());
        assert!(assert_close(&inf, &Value::from(1e300)).is_err());
    }
}
