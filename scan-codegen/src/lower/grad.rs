//! `grad(cost, wrt)`: the gradient of a float scalar with respect to names of the current
//! frame (function parameters, `let` bindings, step arguments), built by `grad::reverse`
//! into the graph being lowered (the function body's, or the step's).

use std::collections::HashMap;

use super::{Lowered, Lowerer, Value};
use crate::ast::{Expr, ExprKind};
use crate::grad::GradError;
use crate::ir::NodeId;
use crate::messages as msg;

impl Lowerer<'_> {
    /// `grad(cost, x)` is x's gradient; `grad(cost, [a, b])` a tuple of theirs.
    pub(super) fn grad(&mut self, args: &[Expr], e: &Expr) -> Option<Lowered> {
        if let Some(k) = args
            .iter()
            .find(|a| matches!(a.kind, ExprKind::Keyword(..)))
        {
            self.diag.error(k.span, msg::no_keyword_arguments("grad"));
            return None;
        }
        if args.len() != 2 {
            self.diag.error(e.span, msg::arity("grad", "2", args.len()));
            return None;
        }
        let cost = self.value(&args[0]);
        let (names, listed) = match &args[1].kind {
            ExprKind::List(items) => (items.iter().collect::<Vec<_>>(), true),
            _ => (vec![&args[1]], false),
        };
        // Each name resolved after the cost, so a value the cost captured into a step is
        // the same step argument.
        let mut wrt = Vec::new();
        for item in &names {
            let ExprKind::Var(name) = &item.kind else {
                self.diag
                    .error(item.span, msg::grad_wrt_not_a_name(&item.label));
                wrt.push(None);
                continue;
            };
            let v = self.value(item);
            if let Some(v) = v {
                let t = self.ty(v);
                if !t.dtype.is_float() {
                    self.diag
                        .error(item.span, msg::grad_wrt_not_float(&name.to_string(), t));
                    wrt.push(None);
                    continue;
                }
            }
            wrt.push(v);
        }
        let cost = cost?;
        let ct = self.ty(cost);
        if ct.rank != 0 || !ct.dtype.is_float() {
            self.diag.error(args[0].span, msg::grad_cost(ct));
            return None;
        }
        let wrt: Vec<Value> = wrt.into_iter().collect::<Option<_>>()?;
        let ids: Vec<_> = wrt.iter().map(|v| v.id).collect();
        let known = self.names_of_values();
        let grads = match crate::grad::reverse(self.graph(), cost.id, &ids, e.span, known) {
            Ok(grads) => grads,
            Err(GradError::Disconnected(k)) => {
                self.diag
                    .error(names[k].span, msg::grad_disconnected(&names[k].label));
                return None;
            }
            Err(GradError::Message(m)) => {
                self.diag.error(e.span, m);
                return None;
            }
        };
        let values = grads.into_iter().map(|id| Value { id, weak: false });
        Some(if listed {
            Lowered::Tuple(values.collect())
        } else {
            Lowered::Single(values.into_iter().next()?)
        })
    }

    /// The user's names of the current graph's values, which the gradient's labels use: of
    /// a value bound to several names, the first in alphabetical order (a label must not
    /// depend on a map's order).
    fn names_of_values(&self) -> HashMap<NodeId, String> {
        let mut out: HashMap<NodeId, String> = HashMap::new();
        let Some(frame) = self.frames.last() else {
            return out;
        };
        for (name, v) in &frame.names {
            let slot = out.entry(v.id).or_insert_with(|| name.clone());
            if name < slot {
                *slot = name.clone();
            }
        }
        out
    }
}
