//! Elementwise operations: numpy broadcasting of the operands, then the scalar formula of
//! the operation for the operands' dtype (see [`super::num`]).

use ndarray::{ArrayD, ArrayViewD, IxDyn, Zip};

use super::num::{Float, Number};
use super::value::{same_any, same_int, same_number, with_int, Element, Value};
use crate::ir::ElemOp;

/// numpy's broadcast shape: trailing axes aligned, a size-1 axis stretches to the other
/// size. `None` when two sizes differ and neither is 1.
pub fn broadcast_shape(shapes: &[&[usize]]) -> Option<Vec<usize>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut result = vec![1; rank];
    for shape in shapes {
        let offset = rank - shape.len();
        for (axis, &size) in shape.iter().enumerate() {
            let r = &mut result[offset + axis];
            if *r == 1 {
                *r = size;
            } else if size != 1 && size != *r {
                return None;
            }
        }
    }
    Some(result)
}

/// The broadcast shape of an elementwise operation's operands, `Err` naming `label` when
/// they do not broadcast.
pub fn operands_shape(shapes: &[&[usize]], label: &str) -> Result<Vec<usize>, String> {
    broadcast_shape(shapes).ok_or_else(|| {
        let list: Vec<String> = shapes.iter().map(|s| format!("{s:?}")).collect();
        format!(
            "`{label}`: operands of shapes {} cannot be broadcast together",
            list.join(" and ")
        )
    })
}

/// A view of `a` stretched to `shape` (which must be a broadcast of `a`'s shape).
fn stretch<'a, T>(a: &'a ArrayD<T>, shape: &[usize]) -> Result<ArrayViewD<'a, T>, String> {
    a.broadcast(IxDyn(shape)).ok_or_else(|| {
        format!(
            "internal error: cannot broadcast {:?} to {shape:?}",
            a.shape()
        )
    })
}

fn map3<T: Copy, R>(
    a: &ArrayD<T>,
    b: &ArrayD<T>,
    c: &ArrayD<T>,
    shape: &[usize],
    f: impl Fn(T, T, T) -> R,
) -> Result<ArrayD<R>, String> {
    let a = stretch(a, shape)?;
    let b = stretch(b, shape)?;
    let c = stretch(c, shape)?;
    Ok(Zip::from(&a)
        .and(&b)
        .and(&c)
        .map_collect(|&x, &y, &z| f(x, y, z)))
}

fn map2<A: Copy, B: Copy, R>(
    a: &ArrayD<A>,
    b: &ArrayD<B>,
    shape: &[usize],
    f: impl Fn(A, B) -> R,
) -> Result<ArrayD<R>, String> {
    let a = stretch(a, shape)?;
    let b = stretch(b, shape)?;
    Ok(Zip::from(&a).and(&b).map_collect(|&x, &y| f(x, y)))
}

/// Applies `op` to `args` (already of the operation's operand dtype; the condition of
/// `where` is bool). `label` names the node in errors.
pub fn eval_elemwise(op: ElemOp, args: &[Value], label: &str) -> Result<Value, String> {
    if args.len() != op.arity() {
        return Err(format!(
            "IR error: `{label}`: {} takes {} operands, got {}",
            op.name(),
            op.arity(),
            args.len()
        ));
    }
    let shapes: Vec<&[usize]> = args.iter().map(|a| a.shape()).collect();
    let shape = operands_shape(&shapes, label)?;
    let result = match args {
        [x] => unary(op, x),
        [a, b] => binary(op, a, b, &shape)?,
        [x, lo, hi] if op == ElemOp::Clip => clip(x, lo, hi, &shape)?,
        [c, a, b] => select(c, a, b, &shape)?,
        _ => None,
    };
    result.ok_or_else(|| {
        let dtypes: Vec<String> = args.iter().map(|a| a.dtype().to_string()).collect();
        format!(
            "IR error: `{label}`: {} is not defined on operands of dtype {}",
            op.name(),
            dtypes.join(", ")
        )
    })
}

fn unary(op: ElemOp, x: &Value) -> Option<Value> {
    match x {
        Value::Bool(a) => match op {
            ElemOp::Not => Some(Value::Bool(a.mapv(|x| !x))),
            _ => None,
        },
        Value::F32(a) => float_test(op, a).map(Value::Bool).or_else(|| {
            number_unary(op, a)
                .or_else(|| float_unary(op, a))
                .map(Value::F32)
        }),
        Value::F64(a) => float_test(op, a).map(Value::Bool).or_else(|| {
            number_unary(op, a)
                .or_else(|| float_unary(op, a))
                .map(Value::F64)
        }),
        int => with_int!(int, a => number_unary(op, a).map(Element::into_value)).flatten(),
    }
}

/// `isnan`, `isinf`, `isfinite`: floats in, bools out.
fn float_test<T: Float>(op: ElemOp, a: &ArrayD<T>) -> Option<ArrayD<bool>> {
    let f: fn(T) -> bool = match op {
        ElemOp::IsNan => T::is_nan,
        ElemOp::IsInf => T::is_inf,
        ElemOp::IsFinite => T::is_finite,
        _ => return None,
    };
    Some(a.mapv(f))
}

fn number_unary<T: Number>(op: ElemOp, a: &ArrayD<T>) -> Option<ArrayD<T>> {
    let f: fn(T) -> T = match op {
        ElemOp::Neg => T::neg,
        ElemOp::Abs => T::abs,
        ElemOp::Square => |x| x.mul(x),
        ElemOp::Sign => T::sign,
        ElemOp::Relu => |x| x.maximum(T::zero()),
        ElemOp::Powi(n) => return Some(a.mapv(|x| x.powi(n))),
        _ => return None,
    };
    Some(a.mapv(f))
}

fn float_unary<T: Float>(op: ElemOp, a: &ArrayD<T>) -> Option<ArrayD<T>> {
    let f: fn(T) -> T = match op {
        ElemOp::Exp => T::exp,
        ElemOp::Log => T::ln,
        ElemOp::Tanh => T::tanh,
        ElemOp::Sqrt => T::sqrt,
        ElemOp::Sigmoid => T::sigmoid,
        ElemOp::Sin => T::sin,
        ElemOp::Cos => T::cos,
        ElemOp::Tan => T::tan,
        ElemOp::Arcsin => T::asin,
        ElemOp::Arccos => T::acos,
        ElemOp::Arctan => T::atan,
        ElemOp::Sinh => T::sinh,
        ElemOp::Cosh => T::cosh,
        ElemOp::Arcsinh => T::asinh,
        ElemOp::Arccosh => T::acosh,
        ElemOp::Arctanh => T::atanh,
        ElemOp::Log1p => T::ln_1p,
        ElemOp::Expm1 => T::exp_m1,
        ElemOp::Log2 => T::log2,
        ElemOp::Log10 => T::log10,
        ElemOp::Exp2 => T::exp2,
        ElemOp::Reciprocal => T::recip,
        ElemOp::Floor => T::floor,
        ElemOp::Ceil => T::ceil,
        ElemOp::Round => T::round,
        ElemOp::Trunc => T::trunc,
        ElemOp::Softplus => T::softplus,
        ElemOp::LogSigmoid => T::log_sigmoid,
        ElemOp::Erf => T::erf,
        ElemOp::Erfc => T::erfc,
        ElemOp::Erfcx => T::erfcx,
        ElemOp::Erfinv => T::erfinv,
        ElemOp::Log1mexp => T::log1mexp,
        ElemOp::Gammaln => T::gammaln,
        ElemOp::Digamma => T::digamma,
        _ => return None,
    };
    Some(a.mapv(f))
}

fn binary(op: ElemOp, a: &Value, b: &Value, shape: &[usize]) -> Result<Option<Value>, String> {
    if comparison::<bool>(op).is_some() {
        // Comparisons are the only binary operations on every dtype; they return bools.
        return compare(op, a, b, shape);
    }
    Ok(match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => match op {
            ElemOp::And => Some(Value::Bool(map2(x, y, shape, |p, q| p && q)?)),
            ElemOp::Or => Some(Value::Bool(map2(x, y, shape, |p, q| p || q)?)),
            ElemOp::Xor => Some(Value::Bool(map2(x, y, shape, |p, q| p ^ q)?)),
            _ => None,
        },
        (Value::F32(x), Value::F32(y)) => match number_binary(op, x, y, shape)? {
            Some(r) => Some(Value::F32(r)),
            None => float_binary(op, x, y, shape)?.map(Value::F32),
        },
        (Value::F64(x), Value::F64(y)) => match number_binary(op, x, y, shape)? {
            Some(r) => Some(Value::F64(r)),
            None => float_binary(op, x, y, shape)?.map(Value::F64),
        },
        _ => same_int!((a, b), (x, y) => {
            number_binary(op, x, y, shape).map(|r| r.map(Element::into_value))
        })
        .transpose()?
        .flatten(),
    })
}

fn number_binary<T: Number>(
    op: ElemOp,
    a: &ArrayD<T>,
    b: &ArrayD<T>,
    shape: &[usize],
) -> Result<Option<ArrayD<T>>, String> {
    let f: fn(T, T) -> T = match op {
        ElemOp::Add => T::add,
        ElemOp::Sub => T::sub,
        ElemOp::Mul => T::mul,
        ElemOp::Rem => T::rem,
        ElemOp::FloorDiv => T::floor_div,
        ElemOp::Maximum => T::maximum,
        ElemOp::Minimum => T::minimum,
        _ => return Ok(None),
    };
    map2(a, b, shape, f).map(Some)
}

fn float_binary<T: Float>(
    op: ElemOp,
    a: &ArrayD<T>,
    b: &ArrayD<T>,
    shape: &[usize],
) -> Result<Option<ArrayD<T>>, String> {
    let f: fn(T, T) -> T = match op {
        ElemOp::Div => T::div,
        ElemOp::Pow => T::powf,
        ElemOp::Arctan2 => T::atan2,
        ElemOp::LogAddExp => T::logaddexp,
        _ => return Ok(None),
    };
    map2(a, b, shape, f).map(Some)
}

/// The comparison function of `op` on elements of type `T`, when `op` is a comparison.
fn comparison<T: Element>(op: ElemOp) -> Option<fn(T, T) -> bool> {
    Some(match op {
        ElemOp::Lt => |x, y| x < y,
        ElemOp::Le => |x, y| x <= y,
        ElemOp::Gt => |x, y| x > y,
        ElemOp::Ge => |x, y| x >= y,
        ElemOp::Eq => |x, y| x == y,
        ElemOp::Ne => |x, y| x != y,
        _ => return None,
    })
}

fn compare(op: ElemOp, a: &Value, b: &Value, shape: &[usize]) -> Result<Option<Value>, String> {
    fn go<T: Element>(
        op: ElemOp,
        x: &ArrayD<T>,
        y: &ArrayD<T>,
        shape: &[usize],
    ) -> Result<Option<Value>, String> {
        match comparison::<T>(op) {
            Some(f) => Ok(Some(Value::Bool(map2(x, y, shape, f)?))),
            None => Ok(None),
        }
    }
    same_any!((a, b), (x, y) => go(op, x, y, shape)).unwrap_or(Ok(None))
}

/// `clip(x, lo, hi)`: `x` raised to `lo`, then lowered to `hi`, NaN propagating.
fn clip(x: &Value, lo: &Value, hi: &Value, shape: &[usize]) -> Result<Option<Value>, String> {
    fn go<T: Number>(
        x: &ArrayD<T>,
        lo: &ArrayD<T>,
        hi: &ArrayD<T>,
        shape: &[usize],
    ) -> Result<Option<Value>, String> {
        let r = map3(x, lo, hi, shape, |x, lo, hi| x.maximum(lo).minimum(hi))?;
        Ok(Some(T::into_value(r)))
    }
    same_number!((x, lo, hi), (x, l, h) => go(x, l, h, shape)).unwrap_or(Ok(None))
}

/// `where(c, a, b)`: `a` where `c`, else `b`.
fn select(c: &Value, a: &Value, b: &Value, shape: &[usize]) -> Result<Option<Value>, String> {
    fn go<T: Element>(
        c: &ArrayD<bool>,
        x: &ArrayD<T>,
        y: &ArrayD<T>,
        shape: &[usize],
    ) -> Result<Option<Value>, String> {
        let c = stretch(c, shape)?;
        let x = stretch(x, shape)?;
        let y = stretch(y, shape)?;
        let r = Zip::from(&c)
            .and(&x)
            .and(&y)
            .map_collect(|&c, &x, &y| if c { x } else { y });
        Ok(Some(T::into_value(r)))
    }
    let Value::Bool(c) = c else {
        return Ok(None);
    };
    same_any!((a, b), (x, y) => go(c, x, y, shape)).unwrap_or(Ok(None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn ev(op: ElemOp, args: &[Value]) -> Result<Value, String> {
        eval_elemwise(op, args, "expr")
    }

    #[test]
    fn broadcast_shapes() {
        assert_eq!(broadcast_shape(&[&[2, 1], &[3]]), Some(vec![2, 3]));
        assert_eq!(broadcast_shape(&[&[], &[4]]), Some(vec![4]));
        assert_eq!(broadcast_shape(&[&[0], &[1]]), Some(vec![0]));
        assert_eq!(broadcast_shape(&[&[2, 3], &[2]]), None);
        assert_eq!(broadcast_shape(&[&[0], &[3]]), None);
    }

    #[test]
    fn arithmetic_broadcasts() {
        let m = Value::from(array![[1.0f64, 2.0], [3.0, 4.0]]);
        let col = Value::from(array![[10.0f64], [20.0]]);
        assert_eq!(
            ev(ElemOp::Add, &[m.clone(), col]).unwrap(),
            Value::from(array![[11.0f64, 12.0], [23.0, 24.0]])
        );
        assert_eq!(
            ev(ElemOp::Mul, &[m, Value::from(2.0f64)]).unwrap(),
            Value::from(array![[2.0f64, 4.0], [6.0, 8.0]])
        );
        assert_eq!(
            ev(
                ElemOp::Sub,
                &[Value::from(array![i32::MIN]), Value::from(1i32)]
            )
            .unwrap(),
            Value::from(array![i32::MAX])
        );
    }

    #[test]
    fn broadcast_error_names_label_and_shapes() {
        let err = eval_elemwise(
            ElemOp::Add,
            &[
                Value::from(array![1.0f32, 2.0, 3.0]),
                Value::from(array![1.0f32, 2.0]),
            ],
            "a + b",
        )
        .unwrap_err();
        assert!(err.contains("`a + b`"), "{err}");
        assert!(err.contains("[3]") && err.contains("[2]"), "{err}");
    }

    #[test]
    fn comparisons_logic_and_where() {
        let a = Value::from(array![1i64, 5, 3]);
        let b = Value::from(3i64);
        let lt = ev(ElemOp::Lt, &[a.clone(), b.clone()]).unwrap();
        assert_eq!(lt, Value::from(array![true, false, false]));
        let ne = ev(ElemOp::Ne, &[a.clone(), b]).unwrap();
        assert_eq!(
            ev(ElemOp::Or, &[lt.clone(), ne]).unwrap(),
            Value::from(array![true, true, false])
        );
        assert_eq!(
            ev(ElemOp::Not, std::slice::from_ref(&lt)).unwrap(),
            Value::from(array![false, true, true])
        );
        assert_eq!(
            ev(ElemOp::Where, &[lt, a, Value::from(0i64)]).unwrap(),
            Value::from(array![1i64, 0, 0])
        );
        let nan = Value::from(f64::NAN);
        assert_eq!(
            ev(ElemOp::Eq, &[nan.clone(), nan.clone()]).unwrap(),
            Value::from(false)
        );
        assert_eq!(
            ev(ElemOp::Ne, &[nan.clone(), nan]).unwrap(),
            Value::from(true)
        );
    }

    #[test]
    fn float_functions() {
        let x = Value::from(array![0.0f64, 1.0]);
        assert_eq!(
            ev(ElemOp::Exp, std::slice::from_ref(&x)).unwrap(),
            Value::from(array![1.0f64, 1f64.exp()])
        );
        assert_eq!(
            ev(ElemOp::Sigmoid, std::slice::from_ref(&x)).unwrap(),
            Value::from(array![0.5f64, 1.0 / (1.0 + (-1f64).exp())])
        );
        assert_eq!(
            ev(
                ElemOp::Pow,
                &[Value::from(array![2.0f32, 9.0]), Value::from(0.5f32)]
            )
            .unwrap(),
            Value::from(array![2f32.sqrt(), 3.0])
        );
        assert_eq!(
            ev(ElemOp::Div, &[x, Value::from(0.0f64)]).unwrap().shape(),
            &[2]
        );
        assert_eq!(
            ev(ElemOp::Powi(-1), &[Value::from(array![1i32, -1, 2])]).unwrap(),
            Value::from(array![1i32, -1, 0])
        );
        assert_eq!(
            ev(
                ElemOp::Maximum,
                &[Value::from(array![1.0f32, f32::NAN]), Value::from(2.0f32)]
            )
            .unwrap()
            .array::<f32>()
            .map(|a| (a[[0]], a[[1]].is_nan())),
            Some((2.0, true))
        );
    }

    #[test]
    fn numpy_functions() {
        let x = Value::from(array![-2.5f64, -0.0, 0.5, 1.5, f64::NAN]);
        let one = |op: ElemOp| -> Vec<f64> {
            let v = ev(op, std::slice::from_ref(&x)).unwrap();
            v.array::<f64>().unwrap().iter().copied().collect()
        };
        let bits = |v: &[f64]| -> Vec<u64> { v.iter().map(|x| x.to_bits()).collect() };
        // Half-way cases to even, -0 keeps its sign; sign(-0) is +0; NaN stays NaN.
        let round = one(ElemOp::Round);
        assert_eq!(bits(&round[..4]), bits(&[-2.0, -0.0, 0.0, 2.0]));
        let sign = one(ElemOp::Sign);
        assert_eq!(bits(&sign[..4]), bits(&[-1.0, 0.0, 1.0, 1.0]));
        assert!(round[4].is_nan() && sign[4].is_nan());
        assert_eq!(
            ev(ElemOp::IsNan, std::slice::from_ref(&x)).unwrap(),
            Value::from(array![false, false, false, false, true])
        );
        assert_eq!(
            ev(
                ElemOp::IsInf,
                &[Value::from(array![
                    f32::INFINITY,
                    -f32::INFINITY,
                    1.0,
                    f32::NAN
                ])]
            )
            .unwrap(),
            Value::from(array![true, true, false, false])
        );
        assert_eq!(
            ev(ElemOp::Sign, &[Value::from(array![-3i32, 0, 7])]).unwrap(),
            Value::from(array![-1i32, 0, 1])
        );
        assert_eq!(
            ev(ElemOp::Square, &[Value::from(array![-3i64, 1 << 32])]).unwrap(),
            Value::from(array![9i64, 0])
        );
        assert_eq!(
            ev(ElemOp::Relu, &[Value::from(array![-3i32, 4])]).unwrap(),
            Value::from(array![0i32, 4])
        );
        assert_eq!(
            ev(
                ElemOp::Clip,
                &[
                    Value::from(array![-5i64, 2, 9]),
                    Value::from(0i64),
                    Value::from(array![3i64, 3, 3])
                ]
            )
            .unwrap(),
            Value::from(array![0i64, 2, 3])
        );
        // Stable at large magnitudes.
        assert_eq!(
            ev(
                ElemOp::Softplus,
                &[Value::from(array![1000.0f64, -1000.0, 0.0])]
            )
            .unwrap()
            .array::<f64>()
            .map(|a| (
                a[[0]],
                a[[1]],
                (a[[2]] - std::f64::consts::LN_2).abs() < 1e-16
            )),
            Some((1000.0, 0.0, true))
        );
        assert_eq!(
            ev(
                ElemOp::LogAddExp,
                &[
                    Value::from(array![f64::NEG_INFINITY, 1000.0, f64::NEG_INFINITY]),
                    Value::from(array![f64::NEG_INFINITY, -1000.0, 2.0])
                ]
            )
            .unwrap(),
            Value::from(array![f64::NEG_INFINITY, 1000.0, 2.0])
        );
        // The inverse hyperbolic functions do not overflow.
        let big = ev(ElemOp::Arccosh, &[Value::from(1e308f64)]).unwrap();
        let big = big.array::<f64>().map(|a| a.iter().copied().sum::<f64>());
        assert!(big.is_some_and(|v| (v - 709.889_355_822_726).abs() < 1e-12));
        // clip of bools, isnan of ints: not operand dtypes the lowering produces.
        assert!(ev(
            ElemOp::Clip,
            &[Value::from(true), Value::from(false), Value::from(true)]
        )
        .is_err());
        assert!(ev(ElemOp::IsNan, &[Value::from(1i32)]).is_err());
    }

    #[test]
    fn wrong_dtypes_are_ir_errors() {
        let err = ev(ElemOp::Exp, &[Value::from(1i32)]).unwrap_err();
        assert!(err.starts_with("IR error"), "{err}");
        let err = ev(ElemOp::Add, &[Value::from(1i32), Value::from(1i64)]).unwrap_err();
        assert!(err.starts_with("IR error"), "{err}");
    }
}
