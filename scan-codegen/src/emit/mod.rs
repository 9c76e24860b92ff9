//! Stage 4: IR -> Rust tokens. Each function becomes one specialized Rust function that
//! calls scan-runtime through absolute paths (`::scan_runtime::__private`), so generated
//! code never depends on what the user imported.
//!
//! Every array-valued node of a graph owns a buffer declared once in the graph's *setup*;
//! the graph's *body* refills it (kernels reallocate only when a shape changes). A step's
//! setup is hoisted out of its loop, so a loop step allocates nothing.

mod formula;
mod fused_pair;
mod graph;
mod interchange;
mod lanes;
mod scan;

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};

use crate::ast::{FnDef, Program};
use crate::ir::{DType, Function, ParamKind, Type};

pub(crate) fn rt() -> TokenStream {
    quote!(::scan_runtime::__private)
}

pub(crate) fn nd() -> TokenStream {
    quote!(::scan_runtime::__private::ndarray)
}

pub(crate) fn scalar_type(d: DType) -> TokenStream {
    let ident = format_ident!("{}", d.rust_name());
    quote!(#ident)
}

pub(crate) fn dim_type(rank: usize) -> TokenStream {
    let nd = nd();
    let ident = format_ident!("Ix{}", rank);
    quote!(#nd::#ident)
}

/// The owned Rust type of a value: the scalar itself, or `Array<T, IxN>`.
pub(crate) fn owned_type(t: Type) -> TokenStream {
    let s = scalar_type(t.dtype);
    if t.rank == 0 {
        return s;
    }
    let nd = nd();
    let d = dim_type(t.rank);
    quote!(#nd::Array<#s, #d>)
}

pub fn program(program: &Program, functions: &[Function]) -> TokenStream {
    program
        .functions
        .iter()
        .zip(functions)
        .map(|(def, f)| function(def, f))
        .collect()
}

fn function(def: &FnDef, f: &Function) -> TokenStream {
    let nd = nd();
    let attrs = &def.attrs;
    let vis = &def.vis;
    let name = &def.name;
    let params = f.params.iter().map(|p| {
        let ident = format_ident!("{}", p.name, span = p.span);
        let ty = match p.kind {
            ParamKind::View => {
                let s = scalar_type(p.ty.dtype);
                let d = dim_type(p.ty.rank);
                quote!(#nd::ArrayView<'_, #s, #d>)
            }
            ParamKind::Scalar => scalar_type(p.ty.dtype),
            ParamKind::Usize => quote!(usize),
        };
        quote!(#ident: #ty)
    });
    // `Array0<T>` results are 0-d arrays; everything of rank 0 is a scalar inside.
    let as_array0: Vec<bool> = def
        .results
        .iter()
        .map(|r| r.ty.rank == 0 && r.kind == ParamKind::View)
        .collect();
    let result_types: Vec<TokenStream> = f
        .results
        .iter()
        .zip(&as_array0)
        .map(|(t, &array0)| {
            if array0 {
                let s = scalar_type(t.dtype);
                quote!(#nd::Array0<#s>)
            } else {
                owned_type(*t)
            }
        })
        .collect();
    let result_type = if f.tuple_result {
        quote!((#(#result_types,)*))
    } else {
        quote!(#(#result_types)*)
    };
    // Generated locals are named `__scan_..`, `__x..`: a parameter named like one would be
    // shadowed by it before it is read. Such parameters are first moved, all at once, to
    // `__scan_argN` (a tuple reads every parameter before binding any name).
    let clash = f.params.iter().any(|p| p.name.starts_with("__"));
    let arg = |i: usize, p: &crate::ir::Param| {
        if clash {
            format_ident!("__scan_arg{}", i)
        } else {
            format_ident!("{}", p.name, span = p.span)
        }
    };
    let rebind = if clash {
        let args = f.params.iter().enumerate().map(|(i, p)| arg(i, p));
        let names = f
            .params
            .iter()
            .map(|p| format_ident!("{}", p.name, span = p.span));
        quote!(let (#(#args,)*) = (#(#names,)*);)
    } else {
        TokenStream::new()
    };
    let inputs: Vec<graph::Input> = f
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let ident = arg(i, p);
            match p.kind {
                // Counts beyond i64 saturate; the loop then reports them as unallocatable.
                ParamKind::Usize => graph::Input::Expr(
                    quote!(<i64 as ::core::convert::TryFrom<usize>>::try_from(#ident).unwrap_or(i64::MAX)),
                ),
                _ => graph::Input::Expr(quote!(#ident)),
            }
        })
        .collect();
    let code = graph::emit(&f.graph, "__scan_", &inputs);
    let (setup, body) = (&code.setup, &code.body);
    let values: Vec<TokenStream> = code
        .outputs
        .iter()
        .zip(&as_array0)
        .enumerate()
        .map(|(i, (r, &array0))| {
            // A buffer is moved out unless a later result still reads it (the same buffer,
            // or a view, which may borrow any buffer); then it is copied.
            let used_later = code.outputs[i + 1..].iter().any(|later| {
                matches!(later, graph::Repr::View(_))
                    || (later.buffer().is_some() && later.buffer() == r.buffer())
            });
            let v = if used_later { r.owned() } else { r.moved() };
            if array0 {
                quote!(#nd::arr0(#v))
            } else {
                v
            }
        })
        .collect();
    let ret = if f.tuple_result {
        quote!((#(#values,)*))
    } else {
        quote!(#(#values)*)
    };
    // The buffers not returned go to the runtime's pool, so that a large one (a hoisted
    // input projection) keeps its pages for the next call (`kernels::pool`).
    let returned: Vec<&proc_macro2::Ident> =
        code.outputs.iter().filter_map(|r| r.buffer()).collect();
    let rt = rt();
    let recycle = code
        .buffers
        .iter()
        .filter(|b| !returned.contains(b))
        .map(|b| quote!(#rt::kernels::pool::recycle(#b);));
    let ok = quote_spanned!(def.name.span()=> ::core::result::Result::Ok);
    quote! {
        #(#attrs)*
        #[allow(unused_mut, unused_variables, unused_parens, unused_labels, non_snake_case, clippy::all)]
        #vis fn #name(#(#params),*) -> ::scan_runtime::Result<#result_type> {
            #rebind
            #setup
            #body
            let __scan_result = #ret;
            #(#recycle)*
            #ok(__scan_result)
        }
    }
}
