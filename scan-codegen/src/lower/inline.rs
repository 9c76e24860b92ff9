//! Calls of the block's own functions: `fn`s of the same `scan!` block called from a step
//! or from another `fn` are inlined into the caller's graph, their parameters bound to the
//! arguments (types checked at the call) and their body lowered in a scope of its own (it
//! sees its parameters and its own `let`s, nothing of the caller's). Each function is also
//! emitted on its own, callable from Rust as before.

use super::{Lowered, Lowerer, Value};
use crate::ast::{Expr, ExprKind, FnDef};
use crate::messages as msg;

impl<'d> Lowerer<'d> {
    /// The block's function called `name`, if there is one.
    pub(super) fn own_function(&self, name: &syn::Ident) -> Option<&'d FnDef> {
        let functions: &'d [FnDef] = self.functions;
        functions.iter().find(|f| f.name == *name)
    }

    /// `f(args)` inlined: its result (one value, or a tuple as its signature says).
    pub(super) fn inline(&mut self, f: &FnDef, args: &[Expr], e: &Expr) -> Option<Lowered> {
        let name = f.name.to_string();
        if self.inlining.contains(&name) {
            self.diag.error(e.span, msg::own_function_recursion(&name));
            return None;
        }
        if f.signature_failed() {
            // Reported on the signature; the arguments are still checked.
            for a in args {
                let _ = self.expr(a);
            }
            return None;
        }
        if args.len() != f.params.len() {
            let names: Vec<String> = f.params.iter().map(|p| p.name.to_string()).collect();
            self.diag
                .error(e.span, msg::own_function_arity(&name, &names, args.len()));
            return None;
        }
        // The arguments, in the caller's scope, fitted to the declared parameter types: an
        // untyped literal takes the parameter's dtype; anything else must match (as in Rust).
        let mut bound = Vec::new();
        let mut ok = true;
        for (p, a) in f.params.iter().zip(args) {
            let Some(v) = self.value(a) else {
                ok = false;
                continue;
            };
            let (found, declared) = (self.ty(v), p.ty.ty);
            let id = if v.weak && found.rank == declared.rank {
                self.cast(v, declared.dtype, a)
            } else {
                v.id
            };
            let found = self.graph().ty(id);
            if found != declared {
                self.diag.error(
                    a.span,
                    msg::own_function_argument(&name, &p.name.to_string(), declared, found),
                );
                ok = false;
                continue;
            }
            bound.push((p, Value { id, weak: false }));
        }
        if !ok {
            return None;
        }
        // The callee's own scope in the caller's frame.
        let frame = self.frames.last_mut().expect("open frame");
        let saved = (
            std::mem::take(&mut frame.names),
            std::mem::take(&mut frame.poisoned),
            std::mem::replace(&mut frame.opaque, true),
        );
        for (p, v) in bound {
            self.bind(&p.name, v);
        }
        self.inlining.push(name);
        self.statements(&f.body);
        let result = match &f.body.result.kind {
            ExprKind::Ok(inner) => self.function_results(f, inner),
            _ => {
                self.diag.error(f.body.result.span, msg::function_end());
                None
            }
        };
        self.inlining.pop();
        let frame = self.frames.last_mut().expect("open frame");
        (frame.names, frame.poisoned, frame.opaque) = saved;
        let values: Vec<Value> = result?
            .into_iter()
            .map(|id| Value { id, weak: false })
            .collect();
        Some(match values.as_slice() {
            [one] if !f.tuple_result => Lowered::Single(*one),
            _ => Lowered::Tuple(values),
        })
    }
}
