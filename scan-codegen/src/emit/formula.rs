//! The scalar formula of each elementwise operation, as Rust tokens over scalar operands.
//! Arrays apply the same formula inside a runtime `map` kernel, so there is one formula per
//! operation whatever the ranks.

use proc_macro2::TokenStream;
use quote::quote;

use super::rt;
use crate::ir::ElemOp;

pub fn scalar(op: ElemOp, args: &[TokenStream]) -> TokenStream {
    let rt = rt();
    let m = quote!(#rt::math);
    match (op, args) {
        (ElemOp::Add, [a, b]) => quote!(#m::add(#a, #b)),
        (ElemOp::Sub, [a, b]) => quote!(#m::sub(#a, #b)),
        (ElemOp::Mul, [a, b]) => quote!(#m::mul(#a, #b)),
        (ElemOp::Div, [a, b]) => quote!(#m::div(#a, #b)),
        (ElemOp::Rem, [a, b]) => quote!(#m::rem(#a, #b)),
        (ElemOp::FloorDiv, [a, b]) => quote!(#m::floor_div(#a, #b)),
        (ElemOp::Neg, [a]) => quote!(#m::neg(#a)),
        (ElemOp::Not, [a]) => quote!((!#a)),
        (ElemOp::And, [a, b]) => quote!((#a && #b)),
        (ElemOp::Or, [a, b]) => quote!((#a || #b)),
        (ElemOp::Xor, [a, b]) => quote!((#a ^ #b)),
        (ElemOp::Lt, [a, b]) => quote!((#a < #b)),
        (ElemOp::Le, [a, b]) => quote!((#a <= #b)),
        (ElemOp::Gt, [a, b]) => quote!((#a > #b)),
        (ElemOp::Ge, [a, b]) => quote!((#a >= #b)),
        (ElemOp::Eq, [a, b]) => quote!((#a == #b)),
        (ElemOp::Ne, [a, b]) => quote!((#a != #b)),
        (ElemOp::Abs, [a]) => quote!(#m::abs(#a)),
        (ElemOp::Exp, [a]) => quote!(#m::exp(#a)),
        (ElemOp::Log, [a]) => quote!(#m::log(#a)),
        (ElemOp::Tanh, [a]) => quote!(#m::tanh(#a)),
        (ElemOp::Sigmoid, [a]) => quote!(#m::sigmoid(#a)),
        (ElemOp::Sqrt, [a]) => quote!(#m::sqrt(#a)),
        (ElemOp::Pow, [a, b]) => quote!(#m::pow(#a, #b)),
        (ElemOp::Powi(k), [a]) => quote!(#m::powi(#a, #k)),
        (ElemOp::Maximum, [a, b]) => quote!(#m::maximum(#a, #b)),
        (ElemOp::Minimum, [a, b]) => quote!(#m::minimum(#a, #b)),
        (ElemOp::Where, [c, a, b]) => quote!(#m::select(#c, #a, #b)),
        (ElemOp::Sin, [a]) => quote!(#m::sin(#a)),
        (ElemOp::Cos, [a]) => quote!(#m::cos(#a)),
        (ElemOp::Tan, [a]) => quote!(#m::tan(#a)),
        (ElemOp::Arcsin, [a]) => quote!(#m::arcsin(#a)),
        (ElemOp::Arccos, [a]) => quote!(#m::arccos(#a)),
        (ElemOp::Arctan, [a]) => quote!(#m::arctan(#a)),
        (ElemOp::Sinh, [a]) => quote!(#m::sinh(#a)),
        (ElemOp::Cosh, [a]) => quote!(#m::cosh(#a)),
        (ElemOp::Arcsinh, [a]) => quote!(#m::arcsinh(#a)),
        (ElemOp::Arccosh, [a]) => quote!(#m::arccosh(#a)),
        (ElemOp::Arctanh, [a]) => quote!(#m::arctanh(#a)),
        (ElemOp::Log1p, [a]) => quote!(#m::log1p(#a)),
        (ElemOp::Expm1, [a]) => quote!(#m::expm1(#a)),
        (ElemOp::Log2, [a]) => quote!(#m::log2(#a)),
        (ElemOp::Log10, [a]) => quote!(#m::log10(#a)),
        (ElemOp::Exp2, [a]) => quote!(#m::exp2(#a)),
        (ElemOp::Square, [a]) => quote!(#m::square(#a)),
        (ElemOp::Reciprocal, [a]) => quote!(#m::reciprocal(#a)),
        (ElemOp::Sign, [a]) => quote!(#m::sign(#a)),
        (ElemOp::Floor, [a]) => quote!(#m::floor(#a)),
        (ElemOp::Ceil, [a]) => quote!(#m::ceil(#a)),
        (ElemOp::Round, [a]) => quote!(#m::round(#a)),
        (ElemOp::Trunc, [a]) => quote!(#m::trunc(#a)),
        (ElemOp::IsNan, [a]) => quote!(#m::isnan(#a)),
        (ElemOp::IsInf, [a]) => quote!(#m::isinf(#a)),
        (ElemOp::IsFinite, [a]) => quote!(#m::isfinite(#a)),
        (ElemOp::Softplus, [a]) => quote!(#m::softplus(#a)),
        (ElemOp::LogSigmoid, [a]) => quote!(#m::log_sigmoid(#a)),
        (ElemOp::Relu, [a]) => quote!(#m::relu(#a)),
        (ElemOp::Arctan2, [a, b]) => quote!(#m::arctan2(#a, #b)),
        (ElemOp::LogAddExp, [a, b]) => quote!(#m::logaddexp(#a, #b)),
        (ElemOp::Clip, [x, lo, hi]) => quote!(#m::clip(#x, #lo, #hi)),
        (ElemOp::Erf, [a]) => quote!(#m::erf(#a)),
        (ElemOp::Erfc, [a]) => quote!(#m::erfc(#a)),
        (ElemOp::Erfcx, [a]) => quote!(#m::erfcx(#a)),
        (ElemOp::Erfinv, [a]) => quote!(#m::erfinv(#a)),
        (ElemOp::Log1mexp, [a]) => quote!(#m::log1mexp(#a)),
        (ElemOp::Gammaln, [a]) => quote!(#m::gammaln(#a)),
        (ElemOp::Digamma, [a]) => quote!(#m::digamma(#a)),
        (op, args) => unreachable!(
            "{} applied to {} operands; lowering checks arity",
            op.name(),
            args.len()
        ),
    }
}

/// Tokens of a constant of `dtype` (the same spelling as the graph emitter's constants:
/// NaN and infinities by name, finite floats as `(v as f64)`).
pub fn literal(value: crate::ir::Literal, dtype: crate::ir::DType) -> TokenStream {
    use crate::ir::{DType, Literal};
    let float = |v: f64, ty: TokenStream| {
        if v.is_nan() {
            quote!(#ty::NAN)
        } else if v.is_infinite() {
            if v > 0.0 {
                quote!(#ty::INFINITY)
            } else {
                quote!(#ty::NEG_INFINITY)
            }
        } else {
            let lit = proc_macro2::Literal::f64_unsuffixed(v);
            quote!((#lit as #ty))
        }
    };
    fn int(v: impl quote::ToTokens) -> TokenStream {
        quote!(#v)
    }
    match (value, dtype) {
        (Literal::Bool(b), _) => quote!(#b),
        // Lowering keeps an integer constant within its dtype; `as` only picks the suffix.
        (Literal::Int(v), DType::I8) => int(v as i8),
        (Literal::Int(v), DType::I16) => int(v as i16),
        (Literal::Int(v), DType::I32) => int(v as i32),
        (Literal::Int(v), DType::U8) => int(v as u8),
        (Literal::Int(v), DType::U16) => int(v as u16),
        (Literal::Int(v), DType::U32) => int(v as u32),
        (Literal::Int(v), DType::U64) => int(v as u64),
        (Literal::Int(v), _) => int(v as i64),
        (Literal::Float(v), DType::F32) => float(v as f32 as f64, quote!(f32)),
        (Literal::Float(v), _) => float(v, quote!(f64)),
    }
}
