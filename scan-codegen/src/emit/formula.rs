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
        (ElemOp::Neg, [a]) => quote!(#m::neg(#a)),
        (ElemOp::Not, [a]) => quote!((!#a)),
        (ElemOp::And, [a, b]) => quote!((#a && #b)),
        (ElemOp::Or, [a, b]) => quote!((#a || #b)),
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
    match (value, dtype) {
        (Literal::Bool(b), _) => quote!(#b),
        (Literal::Int(v), DType::I32) => {
            let v = v as i32;
            quote!(#v)
        }
        (Literal::Int(v), _) => quote!(#v),
        (Literal::Float(v), DType::F32) => float(v as f32 as f64, quote!(f32)),
        (Literal::Float(v), _) => float(v, quote!(f64)),
    }
}
