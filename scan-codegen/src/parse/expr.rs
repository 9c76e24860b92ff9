//! syn expressions -> surface AST expressions. Only the step language is accepted; anything
//! else is an error spanned on the offending token.

use quote::ToTokens;
use syn::spanned::Spanned;

use super::scan_call;
use crate::ast::{Block, Expr, ExprKind, IndexItem, Lit, Pattern, ScanKind, Stmt};
use crate::diag::Diagnostics;
use crate::ir::DType;
use crate::messages as msg;

/// The user's text for an expression, compacted for messages (`x_tm1.dot(w)`).
pub fn label(e: &impl ToTokens) -> String {
    let raw = e.to_token_stream().to_string();
    let mut s = raw;
    for (from, to) in [
        (" . ", "."),
        (" (", "("),
        ("( ", "("),
        (" )", ")"),
        (" [", "["),
        ("[ ", "["),
        (" ]", "]"),
        (" ,", ","),
        ("- ", "-"),
        (" ..", ".."),
        (".. ", ".."),
    ] {
        s = s.replace(from, to);
    }
    s
}

fn literal_dtype(suffix: &str, span: proc_macro2::Span, diag: &mut Diagnostics) -> Option<DType> {
    if suffix.is_empty() {
        return None;
    }
    let d = DType::from_rust_name(suffix);
    if d.is_none() {
        diag.error(span, msg::literal_suffix(suffix));
    }
    d
}

pub fn expr(e: &syn::Expr, diag: &mut Diagnostics) -> Option<Expr> {
    let span = e.span();
    let kind = match e {
        syn::Expr::Paren(p) => return expr(&p.expr, diag),
        syn::Expr::Group(g) => return expr(&g.expr, diag),
        syn::Expr::Lit(l) => ExprKind::Lit(match &l.lit {
            syn::Lit::Int(i) => {
                let dtype = literal_dtype(i.suffix(), span, diag);
                // Range-checked against its dtype by lowering (after a unary minus).
                match i.base10_parse::<i128>() {
                    Ok(v) if dtype.is_some_and(|d| d.is_float()) => Lit::Float(v as f64, dtype),
                    Ok(v) => Lit::Int(v, dtype),
                    Err(err) => {
                        diag.error(span, msg::integer_out_of_range(err));
                        return None;
                    }
                }
            }
            syn::Lit::Float(f) => {
                let dtype = literal_dtype(f.suffix(), span, diag);
                if dtype.is_some_and(|d| !d.is_float()) {
                    diag.error(span, msg::float_with_integer_suffix());
                }
                Lit::Float(f.base10_parse::<f64>().ok()?, dtype)
            }
            syn::Lit::Bool(b) => Lit::Bool(b.value),
            syn::Lit::Str(text) => Lit::Str(text.value()),
            other => {
                diag.error(other.span(), msg::unsupported_literal());
                return None;
            }
        }),
        syn::Expr::Path(p) => match p.path.get_ident() {
            Some(ident) if p.qself.is_none() => ExprKind::Var(ident.clone()),
            _ => match rust_constant(p) {
                // Rust's own constants, typed as Rust types them (`f32::INFINITY` is f32).
                Some(lit) => ExprKind::Lit(lit),
                None => {
                    diag.error_spanned(p, msg::unsupported_path());
                    return None;
                }
            },
        },
        syn::Expr::Binary(b) => {
            let op: &'static str = match b.op {
                syn::BinOp::Add(_) => "+",
                syn::BinOp::Sub(_) => "-",
                syn::BinOp::Mul(_) => "*",
                syn::BinOp::Div(_) => "/",
                syn::BinOp::Rem(_) => "%",
                syn::BinOp::Lt(_) => "<",
                syn::BinOp::Le(_) => "<=",
                syn::BinOp::Gt(_) => ">",
                syn::BinOp::Ge(_) => ">=",
                syn::BinOp::Eq(_) => "==",
                syn::BinOp::Ne(_) => "!=",
                syn::BinOp::And(_) => "&&",
                syn::BinOp::Or(_) => "||",
                // numpy's spellings of the logical operations on bool arrays.
                syn::BinOp::BitAnd(_) => "&",
                syn::BinOp::BitOr(_) => "|",
                syn::BinOp::BitXor(_) => "^",
                other if is_assign(&other) => {
                    diag.error_spanned(e, msg::assignment(&label(&b.left)));
                    return None;
                }
                other => {
                    diag.error(
                        other.span(),
                        msg::unsupported_binary_operator(&label(&other)),
                    );
                    return None;
                }
            };
            let left = expr(&b.left, diag);
            let right = expr(&b.right, diag);
            ExprKind::Binary(op, Box::new(left?), Box::new(right?))
        }
        syn::Expr::Unary(u) => {
            let op = match u.op {
                syn::UnOp::Neg(_) => "-",
                syn::UnOp::Not(_) => "!",
                other => {
                    diag.error(
                        other.span(),
                        msg::unsupported_unary_operator(&label(&other)),
                    );
                    return None;
                }
            };
            ExprKind::Unary(op, Box::new(expr(&u.expr, diag)?))
        }
        syn::Expr::Call(c) => {
            let name = match &*c.func {
                syn::Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                    p.path.get_ident().cloned()
                }
                _ => None,
            };
            let Some(name) = name else {
                diag.error_spanned(&c.func, msg::expected_function_name());
                return None;
            };
            let n = name.to_string();
            if let Some(kind) = ScanKind::from_name(&n) {
                ExprKind::Scan(Box::new(scan_call::scan_call(kind, c, diag)?))
            } else if n == "until" || n == "Ok" {
                if c.args.len() != 1 {
                    diag.error(c.span(), msg::one_argument(&n, c.args.len()));
                    return None;
                }
                let inner = Box::new(expr(&c.args[0], diag)?);
                if n == "until" {
                    ExprKind::Until(inner)
                } else {
                    ExprKind::Ok(inner)
                }
            } else if n == "taps" {
                diag.error(name.span(), msg::taps_outside_spec());
                return None;
            } else {
                let args: Vec<Option<Expr>> = c.args.iter().map(|a| argument(a, diag)).collect();
                ExprKind::Call(name, args.into_iter().collect::<Option<Vec<_>>>()?)
            }
        }
        syn::Expr::MethodCall(m) => {
            if let Some(t) = &m.turbofish {
                diag.error(t.span(), msg::turbofish());
            }
            let mut args = vec![expr(&m.receiver, diag)];
            args.extend(m.args.iter().map(|a| argument(a, diag)));
            ExprKind::Call(
                m.method.clone(),
                args.into_iter().collect::<Option<Vec<_>>>()?,
            )
        }
        syn::Expr::Index(i) => {
            // numpy's `x.shape[i]` (and ndarray's `x.shape()[i]`): `shape(x, i)`.
            let shape_of = match &*i.expr {
                syn::Expr::Field(f) => match &f.member {
                    syn::Member::Named(m) if m == "shape" => Some((&*f.base, m.clone())),
                    _ => None,
                },
                syn::Expr::MethodCall(m) if m.method == "shape" && m.args.is_empty() => {
                    Some((&*m.receiver, m.method.clone()))
                }
                _ => None,
            };
            if let Some((x, name)) = shape_of {
                let args = vec![expr(x, diag)?, expr(&i.index, diag)?];
                return Some(Expr {
                    kind: ExprKind::Call(name, args),
                    span: e.span(),
                    label: label(e),
                });
            }
            let base = Box::new(expr(&i.expr, diag)?);
            if let syn::Expr::Tuple(t) = &*i.index {
                // numpy's `x[i, a:b, :, None]`, spelled `x[(i, a..b, .., None)]`.
                let items: Vec<Option<IndexItem>> =
                    t.elems.iter().map(|item| index_item(item, diag)).collect();
                return Some(Expr {
                    kind: ExprKind::MultiIndex(base, items.into_iter().collect::<Option<_>>()?),
                    span,
                    label: label(e),
                });
            }
            if let Some(c) = python_slice_call(&i.index) {
                // Python's `x[slice(a, b, s)]`: one item on axis 0.
                return Some(Expr {
                    kind: ExprKind::MultiIndex(base, vec![python_slice(c, diag)?]),
                    span,
                    label: label(e),
                });
            }
            match &*i.index {
                syn::Expr::Range(r) => {
                    if matches!(r.limits, syn::RangeLimits::Closed(_)) {
                        diag.error(r.span(), msg::inclusive_range());
                    }
                    let start = match &r.start {
                        Some(s) => Some(Box::new(expr(s, diag)?)),
                        None => None,
                    };
                    let end = match &r.end {
                        Some(s) => Some(Box::new(expr(s, diag)?)),
                        None => None,
                    };
                    ExprKind::Slice(base, start, end)
                }
                idx => ExprKind::Index(base, Box::new(expr(idx, diag)?)),
            }
        }
        syn::Expr::Cast(c) => {
            let inner = expr(&c.expr, diag);
            let dtype = super::types::param_type(&c.ty, &mut Diagnostics::default())
                .filter(|t| t.ty.rank == 0 && t.kind != crate::ir::ParamKind::Usize)
                .map(|t| t.ty.dtype);
            let Some(dtype) = dtype else {
                diag.error_spanned(&c.ty, msg::cast_target(&label(&c.ty)));
                return None;
            };
            ExprKind::Cast(Box::new(inner?), dtype)
        }
        syn::Expr::Tuple(t) => {
            let items: Vec<Option<Expr>> = t.elems.iter().map(|a| expr(a, diag)).collect();
            ExprKind::Tuple(items.into_iter().collect::<Option<Vec<_>>>()?)
        }
        syn::Expr::Array(a) => {
            let items: Vec<Option<Expr>> = a.elems.iter().map(|x| expr(x, diag)).collect();
            ExprKind::List(items.into_iter().collect::<Option<Vec<_>>>()?)
        }
        syn::Expr::Closure(_) => {
            ExprKind::Closure(std::rc::Rc::new(super::scan_call::step_fn(e, diag)?))
        }
        // What the step language does not have: each says what to write instead, and
        // where the intent is clear the rest is still read (`scan(..)?`, `&x`).
        syn::Expr::Try(t) => {
            diag.error(t.question_token.span(), msg::unsupported_expression("?"));
            return expr(&t.expr, diag);
        }
        syn::Expr::Reference(r) => {
            diag.error(r.and_token.span(), msg::unsupported_expression("&"));
            return expr(&r.expr, diag);
        }
        syn::Expr::Assign(a) => {
            diag.error_spanned(e, msg::assignment(&label(&a.left)));
            return None;
        }
        syn::Expr::Field(f) => {
            let name = match &f.member {
                syn::Member::Named(n) => n.to_string(),
                syn::Member::Unnamed(i) => i.index.to_string(),
            };
            diag.error(f.member.span(), msg::field(&label(&f.base), &name));
            return None;
        }
        other => {
            let kind = match other {
                syn::Expr::If(_) | syn::Expr::Let(_) => "if",
                syn::Expr::Match(_) => "match",
                syn::Expr::Return(_) => "return",
                syn::Expr::ForLoop(_) => "for",
                syn::Expr::While(_) => "while",
                syn::Expr::Loop(_) => "loop",
                syn::Expr::Break(_) => "break",
                syn::Expr::Continue(_) => "continue",
                syn::Expr::Macro(_) => "macro",
                syn::Expr::Block(_) => "block",
                _ => "",
            };
            diag.error(other.span(), msg::unsupported_expression(kind));
            return None;
        }
    };
    Some(Expr {
        kind,
        span,
        label: label(e),
    })
}

/// One argument of a call: an expression, or a keyword argument `name = value`.
fn argument(a: &syn::Expr, diag: &mut Diagnostics) -> Option<Expr> {
    let syn::Expr::Assign(assign) = a else {
        return expr(a, diag);
    };
    let name = match &*assign.left {
        syn::Expr::Path(p) if p.qself.is_none() => p.path.get_ident().cloned(),
        _ => None,
    };
    let Some(name) = name else {
        diag.error(assign.left.span(), crate::messages::keyword_without_name());
        return None;
    };
    let value = expr(&assign.right, diag)?;
    Some(Expr {
        kind: ExprKind::Keyword(name, Box::new(value)),
        span: a.span(),
        label: label(a),
    })
}

/// `f64::INFINITY`, `f32::NAN`, `std::f64::consts::PI`, `i64::MAX` and kin (an optional
/// `std::`/`core::` first), as a literal of that type.
fn rust_constant(p: &syn::ExprPath) -> Option<Lit> {
    if p.qself.is_some() {
        return None;
    }
    let names: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let names = match names.as_slice() {
        ["std" | "core", rest @ ..] => rest,
        all => all,
    };
    macro_rules! floats {
        ($t:ident, $d:expr, $name:expr, $consts:expr) => {{
            let v: Option<$t> = match ($consts, $name) {
                (false, "INFINITY") => Some($t::INFINITY),
                (false, "NEG_INFINITY") => Some($t::NEG_INFINITY),
                (false, "NAN") => Some($t::NAN),
                (false, "MAX") => Some($t::MAX),
                (false, "MIN") => Some($t::MIN),
                (false, "MIN_POSITIVE") => Some($t::MIN_POSITIVE),
                (false, "EPSILON") => Some($t::EPSILON),
                (true, "PI") => Some(std::$t::consts::PI),
                (true, "TAU") => Some(std::$t::consts::TAU),
                (true, "E") => Some(std::$t::consts::E),
                (true, "LN_2") => Some(std::$t::consts::LN_2),
                (true, "LN_10") => Some(std::$t::consts::LN_10),
                (true, "LOG2_E") => Some(std::$t::consts::LOG2_E),
                (true, "LOG10_E") => Some(std::$t::consts::LOG10_E),
                (true, "SQRT_2") => Some(std::$t::consts::SQRT_2),
                (true, "FRAC_1_SQRT_2") => Some(std::$t::consts::FRAC_1_SQRT_2),
                (true, "FRAC_PI_2") => Some(std::$t::consts::FRAC_PI_2),
                _ => None,
            };
            v.map(|v| Lit::Float(f64::from(v), Some($d)))
        }};
    }
    match names {
        ["f64", name] => floats!(f64, DType::F64, *name, false),
        ["f32", name] => floats!(f32, DType::F32, *name, false),
        ["f64", "consts", name] => floats!(f64, DType::F64, *name, true),
        ["f32", "consts", name] => floats!(f32, DType::F32, *name, true),
        [int, bound @ ("MAX" | "MIN")] => {
            let d = DType::from_rust_name(int).filter(|d| d.is_int())?;
            let (lo, hi) = d.int_range()?;
            Some(Lit::Int(if *bound == "MAX" { hi } else { lo }, Some(d)))
        }
        _ => None,
    }
}

/// One item of `x[(..)]`: `..`, a range, `None` or an index expression.
fn index_item(item: &syn::Expr, diag: &mut Diagnostics) -> Option<IndexItem> {
    match item {
        syn::Expr::Range(r) => {
            if matches!(r.limits, syn::RangeLimits::Closed(_)) {
                diag.error(r.span(), msg::inclusive_range());
            }
            if r.start.is_none() && r.end.is_none() {
                return Some(IndexItem::Full);
            }
            let bound = |b: &Option<Box<syn::Expr>>, diag: &mut Diagnostics| match b {
                Some(b) => expr(b, diag).map(|e| Some(Box::new(e))),
                None => Some(None),
            };
            let start = bound(&r.start, diag);
            let end = bound(&r.end, diag);
            Some(IndexItem::Range(start?, end?))
        }
        syn::Expr::Path(p) if p.path.is_ident("None") => Some(IndexItem::NewAxis),
        other => match python_slice_call(other) {
            Some(c) => python_slice(c, diag),
            None => expr(other, diag).map(|e| IndexItem::Index(Box::new(e))),
        },
    }
}

/// `slice(..)` as an index: Python's slice object.
fn python_slice_call(e: &syn::Expr) -> Option<&syn::ExprCall> {
    match e {
        syn::Expr::Call(c) => match &*c.func {
            syn::Expr::Path(p) if p.qself.is_none() && p.path.is_ident("slice") => Some(c),
            _ => None,
        },
        _ => None,
    }
}

/// Python's `slice(stop)`, `slice(start, stop)`, `slice(start, stop, step)` (numpy's
/// `x[start:stop:step]`), each `None` when absent: a range, or a stepped slice when a step
/// is given.
fn python_slice(c: &syn::ExprCall, diag: &mut Diagnostics) -> Option<IndexItem> {
    let args: Vec<&syn::Expr> = c.args.iter().collect();
    let (start, stop, step) = match args.as_slice() {
        [stop] => (None, Some(*stop), None),
        [start, stop] => (Some(*start), Some(*stop), None),
        [start, stop, step] => (Some(*start), Some(*stop), Some(*step)),
        _ => {
            diag.error(c.span(), msg::slice_arity(args.len()));
            return None;
        }
    };
    let bound = |b: Option<&syn::Expr>, diag: &mut Diagnostics| -> Option<Option<Box<Expr>>> {
        match b {
            None => Some(None),
            Some(syn::Expr::Path(p)) if p.path.is_ident("None") => Some(None),
            Some(b) => expr(b, diag).map(|e| Some(Box::new(e))),
        }
    };
    let start = bound(start, diag);
    let stop = bound(stop, diag);
    let step = bound(step, diag);
    let (start, stop, step) = (start?, stop?, step?);
    if let Some(s) = &step {
        if matches!(s.kind, ExprKind::Lit(Lit::Int(0, _))) {
            diag.error(s.span, msg::slice_step_zero());
            return None;
        }
    }
    Some(match (start, stop, step) {
        (None, None, None) => IndexItem::Full,
        (start, stop, None) => IndexItem::Range(start, stop),
        (start, stop, Some(step)) => IndexItem::Stepped(start, stop, step),
    })
}

fn pattern(p: &syn::Pat, diag: &mut Diagnostics) -> Option<Pattern> {
    match p {
        syn::Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => {
            if let Some(m) = &i.mutability {
                diag.error(m.span(), msg::mutable_binding());
            }
            Some(Pattern::Name(i.ident.clone()))
        }
        syn::Pat::Wild(w) => Some(Pattern::Wild(w.span())),
        syn::Pat::Tuple(t) => {
            let items: Vec<Option<Pattern>> = t.elems.iter().map(|e| pattern(e, diag)).collect();
            Some(Pattern::Tuple(
                items.into_iter().collect::<Option<Vec<_>>>()?,
                t.span(),
            ))
        }
        syn::Pat::Type(t) => {
            diag.error_spanned(&t.ty, msg::type_annotation());
            pattern(&t.pat, diag)
        }
        syn::Pat::Paren(p) => pattern(&p.pat, diag),
        other => {
            diag.error(other.span(), msg::pattern());
            None
        }
    }
}

/// Whether `op` assigns (`+=`, `-=`, ..): values are immutable.
fn is_assign(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitXorAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}

/// Whether `e` is a statement form the step language does not have (an assignment, a
/// loop, ..), which `expr` reports with its own message.
fn is_statement_form(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Binary(b) => is_assign(&b.op),
        syn::Expr::Assign(_)
        | syn::Expr::ForLoop(_)
        | syn::Expr::While(_)
        | syn::Expr::Loop(_)
        | syn::Expr::If(_)
        | syn::Expr::Match(_)
        | syn::Expr::Break(_)
        | syn::Expr::Continue(_)
        | syn::Expr::Macro(_) => true,
        _ => false,
    }
}

/// `{ let a = ..; let (b, c) = ..; result }`
pub fn block(b: &syn::Block, diag: &mut Diagnostics) -> Option<Block> {
    let mut stmts = Vec::new();
    let mut result = None;
    let mut has_result = false;
    let n = b.stmts.len();
    for (i, stmt) in b.stmts.iter().enumerate() {
        let last = i + 1 == n;
        match stmt {
            syn::Stmt::Local(local) => {
                let pat = pattern(&local.pat, diag);
                let value = match &local.init {
                    Some(init) => {
                        if let Some((_, diverge)) = &init.diverge {
                            diag.error(diverge.span(), msg::let_else());
                        }
                        expr(&init.expr, diag)
                    }
                    None => {
                        diag.error(local.span(), msg::let_without_value());
                        None
                    }
                };
                match (pat, value) {
                    (Some(pattern), Some(value)) => stmts.push(Stmt::Let { pattern, value }),
                    // Its names are known, so their uses are not reported again.
                    (Some(pattern), None) => stmts.push(Stmt::Failed(pattern)),
                    _ => {}
                }
            }
            // `return x;` (or `return x` last): reported, and read as the final value.
            syn::Stmt::Expr(syn::Expr::Return(r), _) => {
                diag.error(r.return_token.span(), msg::unsupported_expression("return"));
                if last {
                    has_result = true;
                    result = r.expr.as_ref().and_then(|v| expr(v, diag));
                }
            }
            syn::Stmt::Expr(e, None) if last => {
                has_result = true;
                result = expr(e, diag);
            }
            syn::Stmt::Expr(e, _) if is_statement_form(e) => {
                // `expr` says what to write instead.
                let _ = expr(e, diag);
                has_result |= last;
            }
            syn::Stmt::Expr(e, Some(semi)) if last => {
                // The final value with a `;` after it: the `;` is the one mistake.
                diag.error(semi.span(), msg::trailing_semicolon());
                has_result = true;
                result = expr(e, diag);
            }
            syn::Stmt::Expr(e, _) => {
                diag.error(e.span(), msg::statement_with_semicolon());
            }
            other => {
                diag.error(other.span(), msg::statement());
            }
        }
    }
    if !has_result {
        diag.error(b.span(), msg::no_final_value());
    }
    Some(Block {
        stmts,
        result: result?,
    })
}
