//! `scan!`: compiles PyTensor-style scan loops ahead of time. A thin shell: the compiler is
//! scan-codegen; this crate only moves tokens in and out. Use it through `scan-runtime`,
//! which re-exports it.

use proc_macro::TokenStream;

/// Compiles the `fn`s inside into specialized Rust. See the scan-runtime docs and
/// docs/SEMANTICS.md for the language.
#[proc_macro]
pub fn scan(input: TokenStream) -> TokenStream {
    scan_codegen::expand(input.into()).into()
}
