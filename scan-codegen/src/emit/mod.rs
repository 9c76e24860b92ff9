pub fn program(_: &crate::ast::Program, _: &[crate::ir::Function]) -> proc_macro2::TokenStream { todo!() } pub fn stubs(_: &crate::parse::Items) -> proc_macro2::TokenStream { todo!() }
