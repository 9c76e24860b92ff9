//! What `expand` emits for each function of a block that has errors: the errors, then the
//! function with the signature the emitter would have given it and a body that never runs,
//! so that the rest of the user's crate still type-checks against it and rustc reports only
//! the `scan!` errors, not "cannot find function" or type mismatches at every call.
//!
//! The signature is the emitter's own (`emit::function`): fully qualified types
//! (`::scan_runtime::__private::ndarray::ArrayView<'_, f64, Ix1>`,
//! `::scan_runtime::Result<..>`), so the stub, like the real function, depends neither on
//! the user's imports nor on what the user's names shadow (`Result`, `ndarray`). Where the
//! signature itself is in error (an unsupported type, generics, `self`), the user's
//! signature is emitted as written: those errors are reported, and the caller's code was
//! written against that signature.
//!
//! When the block does not even parse (a syntax error, or nesting past
//! `parse::depth::MAX_DEPTH`), [`recover`] finds the `fn`s whose signatures parse on their
//! own, with their bodies left out, so a syntax error inside a body still leaves the
//! function declared.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::quote;

use crate::diag::Diagnostics;
use crate::emit::{nd, owned_type, scalar_type};
use crate::ir::ParamKind;
use crate::parse::{depth, types};

/// A stub of each function.
pub fn stubs(fns: &[syn::ItemFn]) -> TokenStream {
    fns.iter().map(stub).collect()
}

fn stub(f: &syn::ItemFn) -> TokenStream {
    let attrs = &f.attrs;
    let vis = &f.vis;
    let sig = match emitted_signature(&f.sig) {
        Some(sig) => sig,
        None => {
            let sig = &f.sig;
            quote!(#sig)
        }
    };
    quote! {
        #(#attrs)*
        #[allow(unused_variables, clippy::all)]
        #vis #sig {
            ::core::unimplemented!("scan! reported errors for this function")
        }
    }
}

/// `fn name(params) -> ::scan_runtime::Result<..>` with the emitter's types, when every
/// part of the signature is one the compiler accepts.
fn emitted_signature(sig: &syn::Signature) -> Option<TokenStream> {
    if sig.constness.is_some()
        || sig.asyncness.is_some()
        || sig.unsafety.is_some()
        || sig.abi.is_some()
        || sig.variadic.is_some()
        || !sig.generics.params.is_empty()
        || sig.generics.where_clause.is_some()
    {
        return None;
    }
    // The signature's errors were reported when the block was compiled.
    let mut ignored = Diagnostics::default();
    let nd = nd();
    let mut params = Vec::new();
    for input in &sig.inputs {
        let syn::FnArg::Typed(t) = input else {
            return None;
        };
        let syn::Pat::Ident(name) = &*t.pat else {
            return None;
        };
        let name = &name.ident;
        let def = types::param_type(&t.ty, &mut ignored)?;
        let s = scalar_type(def.ty.dtype);
        let ty = match def.kind {
            ParamKind::View => {
                let d = crate::emit::dim_type(def.ty.rank);
                quote!(#nd::ArrayView<'_, #s, #d>)
            }
            ParamKind::Scalar => s,
            ParamKind::Usize => quote!(usize),
        };
        params.push(quote!(#name: #ty));
    }
    let (results, tuple) = types::results(&sig.output, &mut ignored)?;
    let results: Vec<TokenStream> = results
        .iter()
        .map(|r| {
            if r.ty.rank == 0 && r.kind == ParamKind::View {
                let s = scalar_type(r.ty.dtype);
                quote!(#nd::Array0<#s>)
            } else {
                owned_type(r.ty)
            }
        })
        .collect();
    let result = if tuple {
        quote!((#(#results,)*))
    } else {
        quote!(#(#results)*)
    };
    let name = &sig.ident;
    Some(quote!(fn #name(#(#params),*) -> ::scan_runtime::Result<#result>))
}

/// The `fn`s of a block that did not parse, each with an empty body, from the signatures
/// that parse on their own: at the top level, each `{ .. }` ends an item (inner attributes
/// `#![..]` skipped).
pub fn recover(tokens: TokenStream) -> Vec<syn::ItemFn> {
    let mut fns = Vec::new();
    let mut item: Vec<TokenTree> = Vec::new();
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < trees.len() {
        if item.is_empty() && is_inner_attribute(&trees[i..]) {
            i += 3;
            continue;
        }
        match &trees[i] {
            TokenTree::Group(body) if body.delimiter() == Delimiter::Brace => {
                let mut empty = Group::new(Delimiter::Brace, TokenStream::new());
                empty.set_span(body.span());
                item.push(TokenTree::Group(empty));
                let tokens: TokenStream = std::mem::take(&mut item).into_iter().collect();
                // The signature alone may nest too deeply for syn, as a body may.
                if depth::check(&tokens).is_ok() {
                    if let Ok(f) = syn::parse2::<syn::ItemFn>(tokens) {
                        fns.push(f);
                    }
                }
            }
            other => item.push(other.clone()),
        }
        i += 1;
    }
    fns
}

fn is_inner_attribute(trees: &[TokenTree]) -> bool {
    matches!(
        trees,
        [TokenTree::Punct(hash), TokenTree::Punct(bang), TokenTree::Group(g), ..]
            if hash.as_char() == '#' && bang.as_char() == '!' && g.delimiter() == Delimiter::Bracket
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recovered(src: &str) -> Vec<String> {
        recover(src.parse().expect("lexes"))
            .iter()
            .map(|f| f.sig.ident.to_string())
            .collect()
    }

    #[test]
    fn signatures_survive_errors_in_bodies() {
        let src = "#![rewrites(none)]
            /// doc
            pub fn a(x: f64) -> Result<f64> { let y = ; Ok(y) }
            fn b(x: ArrayView1<f64>) -> Result<Array1<f64>> { Ok(x + ) }
            fn (broken) -> { }
            pub(crate) fn c() -> Result<(f64, i64)> { ((( x y ))) + }";
        assert_eq!(recovered(src), ["a", "b", "c"]);
    }

    #[test]
    fn the_stub_has_the_emitted_signature() {
        let f: syn::ItemFn = syn::parse_quote! {
            pub fn f(a: ArrayView2<f32>, n: usize, s: bool) -> Result<(Array0<f64>, i64, Array1<i32>)> {}
        };
        let out = stubs(&[f]).to_string();
        let expected = quote! {
            pub fn f(
                a: ::scan_runtime::__private::ndarray::ArrayView<'_, f32, ::scan_runtime::__private::ndarray::Ix2>,
                n: usize,
                s: bool
            ) -> ::scan_runtime::Result<(
                ::scan_runtime::__private::ndarray::Array0<f64>,
                i64,
                ::scan_runtime::__private::ndarray::Array<i32, ::scan_runtime::__private::ndarray::Ix1>,
            )>
        }
        .to_string();
        assert!(out.contains(&expected), "{out}");
    }

    #[test]
    fn a_signature_in_error_is_kept_as_written() {
        let f: syn::ItemFn = syn::parse_quote! {
            fn g(v: Vec<f64>) -> Result<f64> {}
        };
        let out = stubs(&[f]).to_string();
        assert!(
            out.contains("fn g (v : Vec < f64 >) -> Result < f64 >"),
            "{out}"
        );
    }
}
