//! Rust types in a `scan!` signature -> IR types.
//!
//! Parameters: `ArrayView1<T>` .. `ArrayView4<T>` (optionally with a lifetime), scalars
//! `f32 f64 i32 i64 bool`, and `usize` for counts. Results: `Array0<T>` .. `Array4<T>` or
//! scalars, alone or in a tuple, inside `Result<...>`.

use syn::spanned::Spanned;

use crate::ast::TypeDef;
use crate::diag::Diagnostics;
use crate::ir::{DType, ParamKind, Type};

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
    diag.error(
        span,
        format!(
            "unsupported parameter type: expected `ArrayView1<T>` .. `ArrayView{MAX_RANK}<T>`, a scalar `f32`, `f64`, `i32`, `i64` or `bool`, or `usize`, with T one of f32, f64, i32, i64, bool"
        ),
    );
    None
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
    diag.error(
        span,
        format!("unsupported result type: expected `Array0<T>` .. `Array{MAX_RANK}<T>` or a scalar, with T one of f32, f64, i32, i64, bool"),
    );
    None
}

/// `-> Result<T>` or `-> Result<(T1, T2, ..)>`: the result types and whether it is a tuple.
pub fn results(output: &syn::ReturnType, diag: &mut Diagnostics) -> Option<(Vec<TypeDef>, bool)> {
    let ty = match output {
        syn::ReturnType::Type(_, ty) => ty,
        syn::ReturnType::Default => {
            diag.error(
                output.span(),
                "a scan! function returns `Result<...>`: expected `-> Result<T>` or `-> Result<(T1, T2)>`",
            );
            return None;
        }
    };
    let inner = last_segment(ty)
        .filter(|s| s.ident == "Result")
        .and_then(type_argument);
    let Some(inner) = inner else {
        diag.error(
            ty.span(),
            "a scan! function returns `Result<...>` (scan_runtime::Result): expected `Result<T>` or `Result<(T1, T2)>`",
        );
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
