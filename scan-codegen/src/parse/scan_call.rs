//! `scan(step, sequences = [..], outputs_info = [..], non_sequences = [..], n_steps = k,
//! go_backwards = true, strict = true, name = "..", unroll = 4)` and its views `map`, `reduce`, `foldl`,
//! `foldr`. Arguments after the step may also be positional, in PyTensor's order.

use proc_macro2::Span;
use syn::spanned::Spanned;

use super::expr::{block, expr};
use crate::ast::{Block, OutputInfo, ScanCall, ScanKind, StepFn, StepSource, Tapped};
use crate::diag::Diagnostics;

/// Keywords each construct accepts, the positional ones first in PyTensor's order.
fn keywords(kind: ScanKind) -> (&'static [&'static str], &'static [&'static str]) {
    match kind {
        ScanKind::Scan => (
            &["sequences", "outputs_info", "non_sequences", "n_steps"],
            &["go_backwards", "strict", "name", "unroll"],
        ),
        ScanKind::Map => (
            &["sequences", "non_sequences"],
            &["go_backwards", "strict", "name", "unroll"],
        ),
        ScanKind::Reduce => (
            &["sequences", "outputs_info", "non_sequences"],
            &["go_backwards", "strict", "name", "unroll"],
        ),
        ScanKind::Foldl | ScanKind::Foldr => (
            &["sequences", "outputs_info", "non_sequences"],
            &["strict", "name", "unroll"],
        ),
    }
}

pub fn scan_call(kind: ScanKind, call: &syn::ExprCall, diag: &mut Diagnostics) -> Option<ScanCall> {
    let span = call.func.span();
    let mut args = call.args.iter();
    let Some(first) = args.next() else {
        diag.error(
            call.span(),
            format!(
                "`{}` needs a step function: `{}(|x_tm1| ..., ...)`",
                kind.name(),
                kind.name()
            ),
        );
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
    let mut given: Vec<(String, Span, &syn::Expr)> = Vec::new();
    let mut position = 0;
    for arg in args {
        match arg {
            syn::Expr::Assign(a) => {
                let key = match &*a.left {
                    syn::Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
                    _ => None,
                };
                let Some(key) = key else {
                    diag.error(a.left.span(), "expected a keyword such as `sequences`");
                    continue;
                };
                if !positional.contains(&key.as_str()) && !extra.contains(&key.as_str()) {
                    let all: Vec<&str> = positional.iter().chain(extra).copied().collect();
                    let close = crate::diag::closest(&key, all.iter().copied());
                    let hint = match close {
                        Some(c) => format!("did you mean `{c}`? "),
                        None => String::new(),
                    };
                    diag.error(
                        a.left.span(),
                        format!(
                            "unknown keyword `{key}` for {}: {hint}expected one of {}",
                            kind.name(),
                            all.join(", ")
                        ),
                    );
                    // Read on as if the likely keyword had been written, so that the
                    // typo is the only error.
                    match close {
                        Some(c) if !given.iter().any(|(k, _, _)| k == c) => {
                            position = usize::MAX;
                            given.push((c.to_string(), a.left.span(), &a.right));
                        }
                        _ => {}
                    }
                    continue;
                }
                position = usize::MAX;
                given.push((key, a.left.span(), &a.right));
            }
            other => {
                if position >= positional.len() {
                    diag.error(
                        other.span(),
                        "unexpected positional argument: after the step, pass arguments as `keyword = value`",
                    );
                    continue;
                }
                given.push((positional[position].to_string(), other.span(), other));
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
        strict: false,
        name: None,
        unroll: 1,
    };
    let mut seen: Vec<&str> = Vec::new();
    for (key, key_span, value) in given {
        if seen.contains(&key.as_str()) {
            diag.error(key_span, format!("`{key}` is given twice"));
            continue;
        }
        match key.as_str() {
            "sequences" => {
                seen.push("sequences");
                out.sequences = list(value).iter().filter_map(|e| tapped(e, diag)).collect();
            }
            "outputs_info" => {
                seen.push("outputs_info");
                let items: Vec<OutputInfo> = list(value)
                    .iter()
                    .filter_map(|e| output_info(e, diag))
                    .collect();
                out.outputs_info = Some((items, value.span()));
            }
            "non_sequences" => {
                seen.push("non_sequences");
                out.non_sequences = list(value).iter().filter_map(|e| expr(e, diag)).collect();
            }
            "n_steps" => {
                seen.push("n_steps");
                out.n_steps = expr(value, diag);
            }
            "go_backwards" => {
                seen.push("go_backwards");
                out.go_backwards = bool_literal(value, diag).unwrap_or(false);
            }
            "strict" => {
                seen.push("strict");
                out.strict = bool_literal(value, diag).unwrap_or(false);
            }
            "unroll" => {
                seen.push("unroll");
                out.unroll = unroll_factor(value, diag).unwrap_or(1);
            }
            "name" => {
                seen.push("name");
                match value {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }) => out.name = Some(s.value()),
                    other => diag.error(other.span(), "expected a string literal for `name`"),
                }
            }
            _ => unreachable!("keywords were checked above"),
        }
    }
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
            diag.error(
                e.span(),
                format!("`unroll` takes an integer literal from 1 to {MAX_UNROLL}: the copies of the step per loop trip"),
            );
            None
        }
    }
}

fn bool_literal(e: &syn::Expr, diag: &mut Diagnostics) -> Option<bool> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        }) => Some(b.value),
        other => {
            diag.error(other.span(), "expected `true` or `false`");
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
                diag.error(c.span(), "expected `taps(value, [tap, ..])`");
                return None;
            }
            let value = expr(&c.args[0], diag);
            let taps_expr = &c.args[1];
            let mut taps = Vec::new();
            for t in list(taps_expr) {
                match int_literal(t) {
                    Some(v) => taps.push((v, t.span())),
                    None => diag.error(t.span(), "a tap is an integer literal, such as -1"),
                }
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
        diag.error(
            e.span(),
            "expected the step function as a closure, `|x_tm1, a| x_tm1 * a`, or the name of one bound by `let step = |..| ..;`",
        );
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
            syn::Pat::Ident(i) => params.push(i.ident.clone()),
            syn::Pat::Wild(w) => params.push(syn::Ident::new("_", w.span())),
            other => {
                diag.error(other.span(), "expected a parameter name");
                continue;
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
