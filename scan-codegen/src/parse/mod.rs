//! Stage 1: tokens -> surface AST (`crate::ast`), spans kept. Only syntax is checked here;
//! names and types are the business of `lower`.

pub mod depth;
mod expr;
mod rewrites;
mod scan_call;
pub(crate) mod types;

pub use expr::label;

use syn::spanned::Spanned;

use crate::ast::{FnDef, ParamDef, Program};
use crate::diag::Diagnostics;
use crate::messages as msg;

/// The items of a `scan!` block: inner attributes (`#![rewrites(..)]`), then one or more
/// `fn`s. Parse them with [`items`].
pub struct Items {
    pub attrs: Vec<syn::Attribute>,
    pub fns: Vec<syn::ItemFn>,
}

impl syn::parse::Parse for Items {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        let attrs = input.call(syn::Attribute::parse_inner)?;
        let mut fns = Vec::new();
        while !input.is_empty() {
            fns.push(input.parse()?);
        }
        Ok(Items { attrs, fns })
    }
}

/// Parses a block's tokens, after bounding how deeply they nest ([`depth::check`]) so that
/// no input overflows the stack of syn (whose `parse2` already recurses once per bracket to
/// buffer the tokens) or of the stages after it. Every door calls this.
pub fn items(tokens: proc_macro2::TokenStream) -> syn::Result<Items> {
    depth::check(&tokens)?;
    syn::parse2(tokens)
}

pub fn program(items: &Items, diag: &mut Diagnostics) -> Program {
    let rewrites = rewrites::config(&items.attrs, diag);
    let functions = items.fns.iter().filter_map(|f| function(f, diag)).collect();
    Program {
        functions,
        rewrites,
    }
}

fn function(f: &syn::ItemFn, diag: &mut Diagnostics) -> Option<FnDef> {
    let sig = &f.sig;
    if let Some(t) = sig
        .asyncness
        .as_ref()
        .map(|a| a.span())
        .or(sig.unsafety.as_ref().map(|u| u.span()))
        .or(sig.constness.as_ref().map(|c| c.span()))
    {
        diag.error(t, msg::qualifier());
    }
    if !sig.generics.params.is_empty() {
        diag.error_spanned(&sig.generics, msg::generic());
    }
    let mut params = Vec::new();
    let mut failed_params = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Typed(t) => {
                let name = match &*t.pat {
                    syn::Pat::Ident(i) => Some(i.ident.clone()),
                    other => {
                        diag.error_spanned(other, msg::parameter_name(&label(other)));
                        None
                    }
                };
                // One error for a pattern: its type is not checked on top.
                let ty = name.as_ref().and_then(|_| types::param_type(&t.ty, diag));
                match (name, ty) {
                    (Some(name), Some(ty)) => params.push(ParamDef { name, ty }),
                    _ => pattern_names(&t.pat, &mut failed_params),
                }
            }
            syn::FnArg::Receiver(r) => diag.error_spanned(r, msg::self_parameter()),
        }
    }
    let results = match &sig.output {
        // Spanned after the parameters, where `-> Result<T>` goes.
        syn::ReturnType::Default => {
            diag.error(sig.paren_token.span.close(), msg::missing_result());
            None
        }
        output => types::results(output, diag),
    };
    let body = expr::block(&f.block, diag);
    let results_ok = results.is_some();
    let (results, tuple_result) = results.unwrap_or_default();
    Some(FnDef {
        attrs: f.attrs.clone(),
        vis: f.vis.clone(),
        name: sig.ident.clone(),
        params,
        results,
        tuple_result,
        body: body?,
        sig: sig.clone(),
        failed_params,
        results_ok,
    })
}

/// The names a parameter's pattern binds (`x`, `(a, b)`, `(a, _)`).
fn pattern_names(p: &syn::Pat, out: &mut Vec<syn::Ident>) {
    match p {
        syn::Pat::Ident(i) => out.push(i.ident.clone()),
        syn::Pat::Tuple(t) => t.elems.iter().for_each(|e| pattern_names(e, out)),
        syn::Pat::Paren(q) => pattern_names(&q.pat, out),
        syn::Pat::Type(t) => pattern_names(&t.pat, out),
        _ => {}
    }
}
