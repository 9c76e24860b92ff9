//! The scan compiler: `scan! { ... }` source in, specialized Rust out.
//!
//! The pipeline, one module per stage: [`parse`] (syn -> surface [`ast`] with spans),
//! [`lower`] (AST -> typed scan-graph [`ir`], calling the rules in [`check`] as it goes),
//! [`rewrite`] (passes over the IR), [`emit`] (IR -> tokens that call scan-runtime). Errors are collected in a
//! [`diag::Diagnostics`] and reported together. The proc macro (scan-macros) and the tests
//! are thin doors into [`expand`] and [`compile_to_ir`].

pub mod ast;
pub mod builder;
pub mod check;
pub mod diag;
pub mod emit;
pub mod grad;
pub mod ir;
pub mod lower;
pub mod messages;
pub mod parse;
pub mod report;
pub mod rewrite;
mod stub;

#[cfg(feature = "evaluator")]
pub mod eval;

pub use builder::{generate, BuildError, Builder};
pub use report::Errors;

use proc_macro2::TokenStream;

/// Front end: tokens -> checked IR functions (before any rewrite) and the block's
/// `#![rewrites(..)]` setting, or every error found.
pub fn front_end(tokens: TokenStream) -> Result<(Vec<ir::Function>, rewrite::Config), syn::Error> {
    let items = parse::items(tokens)?;
    let mut diag = diag::Diagnostics::default();
    let program = parse::program(&items, &mut diag);
    let functions = lower::program(&program, &mut diag);
    diag.into_result()?;
    Ok((functions, program.rewrites))
}

/// The whole compiler: `scan!` tokens in, Rust items out. On errors, the output holds the
/// errors plus a stub of each function with its signature (as the emitter writes it) and a
/// body that never runs, so the rest of the user's crate still type-checks and only the
/// real mistakes are reported; when the block does not parse, of each function whose
/// signature does (`stub.rs`).
pub fn expand(tokens: TokenStream) -> TokenStream {
    let items = match parse::items(tokens.clone()) {
        Ok(items) => items,
        Err(e) => {
            let mut out = e.to_compile_error();
            out.extend(stub::stubs(&stub::recover(tokens)));
            return out;
        }
    };
    let mut diag = diag::Diagnostics::default();
    let program = parse::program(&items, &mut diag);
    let mut functions = lower::program(&program, &mut diag);
    match diag.into_result() {
        Ok(()) => {
            for f in &mut functions {
                rewrite::run(f, &program.rewrites);
            }
            emit::program(&program, &functions)
        }
        Err(e) => {
            let mut out = e.to_compile_error();
            out.extend(stub::stubs(&items.fns));
            out
        }
    }
}

/// Source text -> checked IR, before any rewrite (the reference for the evaluator).
pub fn compile_to_ir(source: &str) -> Result<Vec<ir::Function>, String> {
    Ok(compile_with(source, &rewrite::Config::none())?.0)
}

/// Source text -> IR after the rewrites `config` enables (the source's own
/// `#![rewrites(..)]` is ignored), with what fired.
pub fn compile_with(
    source: &str,
    config: &rewrite::Config,
) -> Result<(Vec<ir::Function>, Vec<rewrite::Fired>), String> {
    let tokens: TokenStream = source.parse().map_err(|e| format!("{e}"))?;
    let (mut functions, _) = front_end(tokens).map_err(|e| {
        e.into_iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    let mut fired = Vec::new();
    for f in &mut functions {
        fired.extend(rewrite::run(f, config));
    }
    Ok((functions, fired))
}

/// The generated code for `source`, pretty-printed (expansion snapshots, debugging).
pub fn expand_to_string(source: &str) -> Result<String, String> {
    let tokens: TokenStream = source.parse().map_err(|e| format!("{e}"))?;
    let out = expand(tokens);
    let file: syn::File = syn::parse2(out).map_err(|e| e.to_string())?;
    Ok(prettyplease::unparse(&file))
}

/// The IR of every function in `source`, printed with each scan's taps and output kinds
/// (PyTensor's `debugprint(print_op_info=True)`): before the rewrites, the rewrites that
/// fired in order, and after them (as the source's `#![rewrites(..)]` says).
pub fn explain(source: &str) -> Result<String, String> {
    let tokens: TokenStream = source.parse().map_err(|e| format!("{e}"))?;
    let (functions, config) = front_end(tokens).map_err(|e| e.to_string())?;
    let mut out = String::new();
    for f in functions {
        let mut after = f.clone();
        let fired = rewrite::run(&mut after, &config);
        out.push_str("-- before rewrites\n");
        out.push_str(&ir::print::function(&f));
        out.push_str("-- rewrites fired\n");
        if fired.is_empty() {
            out.push_str("  (none)\n");
        }
        for line in &fired {
            out.push_str(&format!("  {line}\n"));
        }
        out.push_str("-- after rewrites\n");
        out.push_str(&ir::print::function(&after));
    }
    Ok(out)
}
