//! `scan(step, sequences = [..], outputs_info = [..], non_sequences = [..], n_steps = k,
//! go_backwards = true, strict = true, name = "..", unroll = 4, truncate_gradient = k,
//! checkpoints = n)` and its views `map`, `reduce`, `foldl`, `foldr`. Arguments after the
//! step may also be positional, in PyTensor's order.

use proc_macro2::Span;
use syn::spanned::Spanned;

use super::expr::{block, expr};
use crate::ast::{Block, OutputInfo, ScanCall, ScanKind, StepFn, StepSource, Tapped};
use crate::diag::Diagnostics;
use crate::messages as msg;

/// Keywords each construct accepts, the positional ones first in PyTensor's order.
fn keywords(kind: ScanKind) -> (&'static [&'static str], &'static [&'static str]) {
    match kind {
        ScanKind::Scan => (
            &["sequences", "outputs_info", "non_sequences", "n_steps"],
            &[
                "go_backwards",
                "strict",
                "name",
                "unroll",
                "truncate_gradient",
                "checkpoints",
            ],
        ),
        ScanKind::Map => (
            &["sequences", "non_sequences"],
            &[
                "go_backwards",
                "strict",
                "name",
                "unroll",
                "truncate_gradient",
                "checkpoints",
            ],
        ),
        ScanKind::Reduce => (
            &["sequences", "outputs_info", "non_sequences"],
            &["go_backwards", "strict", "name", "unroll", "checkpoints"],
        ),
        ScanKind::Foldl | ScanKind::Foldr => (
            &["sequences", "outputs_info", "non_sequences"],
            &["strict", "name", "unroll", "checkpoints"],
        ),
    }
}

pub fn scan_call(kind: ScanKind, call: &syn::ExprCall, diag: &mut Diagnostics) -> Option<ScanCall> {
    let span = call.func.span();
    let mut args = call.args.iter();
    let Some(first) = args.next() else {
        diag.error(call.span(), msg::missing_step(kind.name()));
        return None;
    };
    let step = match first {
        syn::Expr::Path(p) if p.path.get_ident().is_some() && p.qself.is_none() => {
            let name = p.path.get_ident().expect("checked").clone();
            Some(StepSource::Name(name))
        }
        _ => step_fn(first, diag).map(|f| StepSource::Closure(std::rc::Rc::new(f))),
    };

    let (positional, extra) = keywords(kind);
    // Each argument: its keyword, the span to report it on, its value, and its position
    // after the step when it was given positionally.
    let mut given: Vec<(String, Span, &syn::Expr, Option<usize>)> = Vec::new();
    let mut position = 0;
    // An argument was lost to an error: what the step is passed is not known, so its
    // argument count and the number of steps are not checked (no follow-on errors).
    let mut incomplete = false;
    for arg in args {
        match arg {
            syn::Expr::Assign(a) => {
                let key = match &*a.left {
                    syn::Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
                    _ => None,
                };
                let Some(key) = key else {
                    diag.error_spanned(&a.left, msg::expected_keyword());
                    incomplete = true;
                    continue;
                };
                if !positional.contains(&key.as_str()) && !extra.contains(&key.as_str()) {
                    let all: Vec<&str> = positional.iter().chain(extra).copied().collect();
                    let close = crate::diag::closest(&key, all.iter().copied());
                    diag.error(
                        a.left.span(),
                        msg::unknown_keyword(&key, kind.name(), close, &all),
                    );
                    // Read on as if the likely keyword had been written, so that the
                    // typo is the only error.
                    match close {
                        Some(c) if !given.iter().any(|(k, ..)| k == c) => {
                            position = usize::MAX;
                            given.push((c.to_string(), a.left.span(), &a.right, None));
                        }
                        _ => incomplete = true,
                    }
                    continue;
                }
                position = usize::MAX;
                given.push((key, a.left.span(), &a.right, None));
            }
            syn::Expr::Call(c) if matches!(&*c.func, syn::Expr::Path(p) if p.path.is_ident("until")) =>
            {
                // Python's `return [a, b], until(c)` written without parentheses: the
                // comma ended the closure.
                diag.error(c.func.span(), msg::until_outside_step());
                incomplete = true;
            }
            other => {
                if position >= positional.len() {
                    diag.error(other.span(), msg::extra_positional(kind.name(), positional));
                    incomplete = true;
                    continue;
                }
                given.push((
                    positional[position].to_string(),
                    other.span(),
                    other,
                    Some(position + 1),
                ));
                position += 1;
            }
        }
    }

    let mut out = ScanCall {
        kind,
        span,
        step: step?,
        sequences: Vec::new(),
        outputs_info: None,
        non_sequences: Vec::new(),
        n_steps: None,
        go_backwards: kind == ScanKind::Foldr,
        backwards_flag: None,
        strict: false,
        name: None,
        unroll: 1,
        truncate_gradient: None,
        checkpoints: None,
        incomplete: false,
    };
    // Each keyword given, with its position when given positionally.
    let mut seen: Vec<(&str, Option<usize>)> = Vec::new();
    for (key, key_span, value, at) in given {
        if let Some((_, first_at)) = seen.iter().find(|(k, _)| *k == key) {
            diag.error(key_span, msg::keyword_twice(&key, *first_at));
            continue;
        }
        // A list's items; the failed ones are reported and make the call incomplete.
        let items = |key: &str, diag: &mut Diagnostics| -> Vec<&syn::Expr> {
            if let syn::Expr::Tuple(t) = value {
                // Python's `outputs_info=(a, None)`: read as the list it means.
                let labels: Vec<String> = t.elems.iter().map(super::label).collect();
                diag.error_spanned(value, msg::tuple_for_list(key, &labels.join(", ")));
                return t.elems.iter().collect();
            }
            list(value)
        };
        match key.as_str() {
            "sequences" => {
                seen.push(("sequences", at));
                let items = items("sequences", diag);
                out.sequences = items.iter().filter_map(|e| tapped(e, diag)).collect();
                incomplete |= out.sequences.len() != items.len();
            }
            "outputs_info" => {
                seen.push(("outputs_info", at));
                let items = items("outputs_info", diag);
                let infos: Vec<OutputInfo> =
                    items.iter().filter_map(|e| output_info(e, diag)).collect();
                incomplete |= infos.len() != items.len();
                out.outputs_info = Some((infos, value.span()));
            }
            "non_sequences" => {
                seen.push(("non_sequences", at));
                let items = items("non_sequences", diag);
                out.non_sequences = items.iter().filter_map(|e| expr(e, diag)).collect();
                incomplete |= out.non_sequences.len() != items.len();
            }
            "n_steps" => {
                seen.push(("n_steps", at));
                out.n_steps = expr(value, diag);
                incomplete |= out.n_steps.is_none();
            }
            "go_backwards" => {
                seen.push(("go_backwards", at));
                // A literal chooses when compiling; any other value is a run-time bool.
                match value {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Bool(b),
                        ..
                    }) => out.go_backwards = b.value,
                    other => {
                        out.backwards_flag = expr(other, diag);
                        incomplete |= out.backwards_flag.is_none();
                    }
                }
            }
            "strict" => {
                seen.push(("strict", at));
                out.strict = bool_literal("strict", value, diag).unwrap_or(false);
            }
            "unroll" => {
                seen.push(("unroll", at));
                out.unroll = unroll_factor(value, diag).unwrap_or(1);
            }
            "truncate_gradient" => {
                seen.push(("truncate_gradient", at));
                out.truncate_gradient = truncate_steps(value, diag).flatten();
            }
            "checkpoints" => {
                seen.push(("checkpoints", at));
                out.checkpoints = checkpoint_steps(value, diag).map(|n| (n, value.span()));
            }
            "name" => {
                seen.push(("name", at));
                match value {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }) => out.name = Some(s.value()),
                    other => diag.error_spanned(other, msg::name_not_string()),
                }
            }
            _ => unreachable!("keywords were checked above"),
        }
    }
    if let (Some((_, at)), Some(_)) = (out.checkpoints, out.truncate_gradient) {
        diag.error(at, msg::checkpoints_with_truncate());
        out.checkpoints = None;
    }
    out.incomplete = incomplete;
    Some(out)
}

/// `[a, b]` or a single `a`.
fn list(e: &syn::Expr) -> Vec<&syn::Expr> {
    match e {
        syn::Expr::Array(a) => a.elems.iter().collect(),
        syn::Expr::Group(g) => list(&g.expr),
        other => vec![other],
    }
}

/// Most copies of a step per loop trip: enough for any scalar recurrence to fill the
/// pipeline, few enough that a large step does not blow up the compile.
const MAX_UNROLL: usize = 64;

/// `unroll = k`: an integer literal from 1 to [`MAX_UNROLL`].
fn unroll_factor(e: &syn::Expr, diag: &mut Diagnostics) -> Option<usize> {
    let k = match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<usize>().ok(),
        _ => None,
    };
    match k {
        Some(k) if (1..=MAX_UNROLL).contains(&k) => Some(k),
        _ => {
            diag.error_spanned(e, msg::unroll(MAX_UNROLL, &super::label(e)));
            None
        }
    }
}

/// `truncate_gradient = k`: a positive integer literal, or PyTensor's `-1` (no truncation,
/// `Some(None)`).
fn truncate_steps(e: &syn::Expr, diag: &mut Diagnostics) -> Option<Option<usize>> {
    let k = match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<usize>().ok().filter(|&k| k > 0).map(Some),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) if matches!(&**expr, syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) if i.base10_digits() == "1") => {
            Some(None)
        }
        _ => None,
    };
    if k.is_none() {
        diag.error_spanned(e, msg::truncate_gradient(&super::label(e)));
    }
    k
}

/// `checkpoints = n`: a positive integer literal, the steps between two states the
/// gradient's forward pass stores.
fn checkpoint_steps(e: &syn::Expr, diag: &mut Diagnostics) -> Option<usize> {
    let n = match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<usize>().ok().filter(|&n| n > 0),
        _ => None,
    };
    if n.is_none() {
        diag.error_spanned(e, msg::checkpoints(&super::label(e)));
    }
    n
}

fn bool_literal(key: &str, e: &syn::Expr, diag: &mut Diagnostics) -> Option<bool> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        }) => Some(b.value),
        other => {
            diag.error_spanned(other, msg::flag_not_bool(key, &super::label(other)));
            None
        }
    }
}

fn int_literal(e: &syn::Expr) -> Option<i64> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => int_literal(expr).map(|v: i64| -v),
        syn::Expr::Group(g) => int_literal(&g.expr),
        syn::Expr::Paren(p) => int_literal(&p.expr),
        _ => None,
    }
}

/// `x` or `taps(x, [-4, 0])`.
fn tapped(e: &syn::Expr, diag: &mut Diagnostics) -> Option<Tapped> {
    if let syn::Expr::Call(c) = e {
        if matches!(&*c.func, syn::Expr::Path(p) if p.path.is_ident("taps")) {
            if c.args.len() != 2 {
                diag.error(c.span(), msg::taps_arity());
                return None;
            }
            let value = match &c.args[0] {
                // PyTensor's `dict(initial=None, taps=[-1])`.
                syn::Expr::Path(p) if p.path.is_ident("None") => {
                    diag.error(p.span(), msg::taps_without_init());
                    None
                }
                v => expr(v, diag),
            };
            let taps_expr = &c.args[1];
            let mut taps = Vec::new();
            let mut ok = true;
            for t in list(taps_expr) {
                match int_literal(t) {
                    Some(v) => taps.push((v, t.span())),
                    None => {
                        diag.error_spanned(t, msg::tap_not_literal(&super::label(t)));
                        ok = false;
                    }
                }
            }
            if !ok {
                return None;
            }
            return Some(Tapped {
                value: value?,
                taps: Some((taps, taps_expr.span())),
            });
        }
    }
    Some(Tapped {
        value: expr(e, diag)?,
        taps: None,
    })
}

fn output_info(e: &syn::Expr, diag: &mut Diagnostics) -> Option<OutputInfo> {
    if let syn::Expr::Path(p) = e {
        if p.path.is_ident("None") {
            return Some(OutputInfo::None(e.span()));
        }
    }
    tapped(e, diag).map(OutputInfo::Init)
}

/// A closure as a step function.
pub(super) fn step_fn(e: &syn::Expr, diag: &mut Diagnostics) -> Option<StepFn> {
    let syn::Expr::Closure(c) = e else {
        diag.error(e.span(), msg::expected_step_closure());
        return None;
    };
    let mut params = Vec::new();
    let mut annotations = Vec::new();
    for p in &c.inputs {
        let (p, annotation) = match p {
            syn::Pat::Type(t) => (&*t.pat, super::types::param_type(&t.ty, diag)),
            other => (other, None),
        };
        match p {
            syn::Pat::Ident(i) => {
                if let Some(m) = &i.mutability {
                    diag.error(m.span(), msg::mutable_binding());
                }
                params.push(i.ident.clone())
            }
            syn::Pat::Wild(w) => params.push(syn::Ident::new("_", w.span())),
            other => {
                diag.error_spanned(other, msg::parameter_name(&super::label(other)));
                // A placeholder keeps the count of arguments.
                params.push(syn::Ident::new("_", other.span()));
            }
        }
        annotations.push(annotation);
    }
    let params_span = if c.inputs.is_empty() {
        c.or1_token.span()
    } else {
        c.inputs.span()
    };
    let body = match &*c.body {
        syn::Expr::Block(b) => block(&b.block, diag)?,
        other => Block {
            stmts: Vec::new(),
            result: expr(other, diag)?,
        },
    };
    Some(StepFn {
        params,
        annotations,
        params_span,
        body,
    })
}
