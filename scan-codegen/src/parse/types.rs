//! Rust types in a `scan!` signature -> IR types.
//!
//! Parameters: `ArrayView1<T>` .. `ArrayView4<T>` (optionally with a lifetime), scalars
//! `f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool`, and `usize` for counts. Results: `Array0<T>` .. `Array4<T>` or
//! scalars, alone or in a tuple, inside `Result<...>`.

use syn::spanned::Spanned;

use crate::ast::TypeDef;
use crate::diag::Diagnostics;
use crate::ir::{DType, ParamKind, Type};
use crate::messages::{self as msg, ParamHint};

const MAX_RANK: usize = 4;

fn last_segment(ty: &syn::Type) -> Option<&syn::PathSegment> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        _ => None,
    }
}

/// The single type argument of `Name<T>` (lifetimes skipped).
fn type_argument(seg: &syn::PathSegment) -> Option<&syn::Type> {
    match &seg.arguments {
        syn::PathArguments::AngleBracketed(args) => {
            let mut types = args.args.iter().filter_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            });
            let first = types.next();
            if types.next().is_some() {
                None
            } else {
                first
            }
        }
        _ => None,
    }
}

fn scalar_dtype(ty: &syn::Type) -> Option<DType> {
    let seg = last_segment(ty)?;
    if !seg.arguments.is_none() {
        return None;
    }
    DType::from_rust_name(&seg.ident.to_string())
}

/// `Prefix<N><T>` with N a rank digit, e.g. `ArrayView2<f64>` -> (2, f64).
fn array_type(ty: &syn::Type, prefix: &str) -> Option<Type> {
    let seg = last_segment(ty)?;
    let name = seg.ident.to_string();
    let rank: usize = name.strip_prefix(prefix)?.parse().ok()?;
    let dtype = scalar_dtype(type_argument(seg)?)?;
    (rank <= MAX_RANK).then_some(Type::new(dtype, rank))
}

pub fn param_type(ty: &syn::Type, diag: &mut Diagnostics) -> Option<TypeDef> {
    let span = ty.span();
    if let Some(t) = array_type(ty, "ArrayView").filter(|t| t.rank >= 1) {
        return Some(TypeDef {
            ty: t,
            kind: ParamKind::View,
            span,
        });
    }
    if let Some(seg) = last_segment(ty) {
        if seg.ident == "usize" && seg.arguments.is_none() {
            return Some(TypeDef {
                ty: Type::scalar(DType::I64),
                kind: ParamKind::Usize,
                span,
            });
        }
    }
    if let Some(d) = scalar_dtype(ty) {
        return Some(TypeDef {
            ty: Type::scalar(d),
            kind: ParamKind::Scalar,
            span,
        });
    }
    diag.error_spanned(
        ty,
        msg::unsupported_param_type(&type_label(ty), param_hint(ty)),
    );
    None
}

/// A type as the user wrote it, for messages (`Vec<f64>`, `&ArrayView1<f64>`).
fn type_label(ty: &syn::Type) -> String {
    let mut s = quote::ToTokens::to_token_stream(ty).to_string();
    for (from, to) in [
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        ("& ", "&"),
        (" ,", ","),
    ] {
        s = s.replace(from, to);
    }
    s
}

/// What a parameter of an unsupported type should have been written as.
fn param_hint(ty: &syn::Type) -> ParamHint {
    if let syn::Type::Reference(r) = ty {
        return match &*r.elem {
            syn::Type::Slice(_) => ParamHint::Sequence,
            _ => ParamHint::Reference,
        };
    }
    let Some(seg) = last_segment(ty) else {
        return ParamHint::None;
    };
    let name = seg.ident.to_string();
    if name == "Vec" {
        return ParamHint::Sequence;
    }
    if let Some(rank) = name.strip_prefix("ArrayView") {
        if rank.parse::<usize>().is_ok_and(|r| r > MAX_RANK) {
            return ParamHint::RankTooHigh;
        }
    }
    if let Some(rank) = name.strip_prefix("Array") {
        if let Ok(r) = rank.parse::<usize>() {
            if r > MAX_RANK {
                return ParamHint::RankTooHigh;
            }
            if r >= 1 {
                let dtype = type_argument(seg).map_or("T".to_string(), type_label);
                return ParamHint::Owned {
                    rank: rank.to_string(),
                    dtype,
                };
            }
        }
    }
    let numbers = ["u128", "i128", "isize", "f16", "f128"];
    if numbers.contains(&name.as_str()) && seg.arguments.is_none() {
        return ParamHint::Number;
    }
    ParamHint::None
}

fn result_type(ty: &syn::Type, diag: &mut Diagnostics) -> Option<TypeDef> {
    let span = ty.span();
    if let Some(t) = array_type(ty, "Array") {
        return Some(TypeDef {
            ty: t,
            kind: ParamKind::View,
            span,
        });
    }
    if let Some(d) = scalar_dtype(ty) {
        return Some(TypeDef {
            ty: Type::scalar(d),
            kind: ParamKind::Scalar,
            span,
        });
    }
    let view =
        last_segment(ty).and_then(|s| s.ident.to_string().strip_prefix("ArrayView")?.parse().ok());
    diag.error_spanned(ty, msg::unsupported_result_type(&type_label(ty), view));
    None
}

/// `-> Result<T>` or `-> Result<(T1, T2, ..)>`: the result types and whether it is a tuple.
pub fn results(output: &syn::ReturnType, diag: &mut Diagnostics) -> Option<(Vec<TypeDef>, bool)> {
    let ty = match output {
        syn::ReturnType::Type(_, ty) => ty,
        syn::ReturnType::Default => {
            diag.error(output.span(), msg::missing_result());
            return None;
        }
    };
    let inner = last_segment(ty)
        .filter(|s| s.ident == "Result")
        .and_then(type_argument);
    let Some(inner) = inner else {
        diag.error_spanned(ty, msg::result_not_result(&type_label(ty)));
        return None;
    };
    match inner {
        syn::Type::Tuple(t) => {
            let mut out = Vec::new();
            for elem in &t.elems {
                out.push(result_type(elem, diag)?);
            }
            Some((out, true))
        }
        other => Some((vec![result_type(other, diag)?], false)),
    }
}
