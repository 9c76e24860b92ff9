//! `#![rewrites(..)]` at the top of a `scan!` block: which rewrite passes run.
//!
//! - `#![rewrites(all)]` (the default) or `#![rewrites(none)]`;
//! - `#![rewrites(save_mem, cse)]`: only these;
//! - `#![rewrites(all_except(save_mem))]`: all but these.

use syn::spanned::Spanned;

use crate::diag::Diagnostics;
use crate::messages as msg;
use crate::rewrite::{Config, Pass, ORDER};

pub fn config(attrs: &[syn::Attribute], diag: &mut Diagnostics) -> Config {
    let mut config = Config::all();
    for attr in attrs {
        if !attr.path().is_ident("rewrites") {
            diag.error(attr.span(), msg::inner_attribute());
            continue;
        }
        let list = match attr.parse_args_with(
            syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
        ) {
            Ok(list) => list,
            Err(e) => {
                diag.push(e);
                continue;
            }
        };
        let metas: Vec<&syn::Meta> = list.iter().collect();
        config = match metas.as_slice() {
            [syn::Meta::Path(p)] if p.is_ident("all") => Config::all(),
            [syn::Meta::Path(p)] if p.is_ident("none") => Config::none(),
            [syn::Meta::List(l)] if l.path.is_ident("all_except") => {
                match l.parse_args_with(
                    syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
                ) {
                    Ok(names) => Config::all_except(&passes(names.iter(), diag)),
                    Err(e) => {
                        diag.push(e);
                        continue;
                    }
                }
            }
            _ => {
                let mut paths = Vec::new();
                for m in &metas {
                    match m {
                        syn::Meta::Path(p) => paths.push(p),
                        other => diag.error(other.span(), msg::rewrite_item(&names())),
                    }
                }
                Config::only(&passes(paths.into_iter(), diag))
            }
        };
    }
    config
}

fn passes<'a>(paths: impl Iterator<Item = &'a syn::Path>, diag: &mut Diagnostics) -> Vec<Pass> {
    let mut out = Vec::new();
    for p in paths {
        let name = p.get_ident().map(|i| i.to_string()).unwrap_or_default();
        match Pass::from_name(&name) {
            Some(pass) => out.push(pass),
            None => diag.error(p.span(), msg::unknown_rewrite(&names())),
        }
    }
    out
}

fn names() -> String {
    ORDER
        .iter()
        .map(|p| p.name())
        .collect::<Vec<_>>()
        .join(", ")
}
