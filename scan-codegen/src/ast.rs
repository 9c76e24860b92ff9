//! The surface AST of a `scan!` block: what the user wrote, with spans, before any name
//! resolution or typing. Built by `parse`, consumed by `lower`.

use proc_macro2::Span;
use std::rc::Rc;

use crate::ir::Type;

pub struct Program {
    pub functions: Vec<FnDef>,
    /// Which rewrites run (`#![rewrites(..)]`; all by default).
    pub rewrites: crate::rewrite::Config,
}

pub struct FnDef {
    pub attrs: Vec<syn::Attribute>,
    pub vis: syn::Visibility,
    pub name: syn::Ident,
    pub params: Vec<ParamDef>,
    pub results: Vec<TypeDef>,
    pub tuple_result: bool,
    pub body: Block,
    /// The user's signature, kept to emit a well-typed stub when compilation fails.
    pub sig: syn::Signature,
    /// The names of parameters whose pattern or type was in error (reported): poisoned in
    /// the body, so their uses are not reported again.
    pub failed_params: Vec<syn::Ident>,
    /// Whether the result types parsed; when not (reported), the body is still checked but
    /// its value is not matched against them.
    pub results_ok: bool,
}

impl FnDef {
    /// Whether the signature had an error: a call of the function is not checked against
    /// it (the error was reported on the signature).
    pub fn signature_failed(&self) -> bool {
        !self.failed_params.is_empty() || !self.results_ok
    }
}

pub struct ParamDef {
    pub name: syn::Ident,
    pub ty: TypeDef,
}

#[derive(Clone, Copy)]
pub struct TypeDef {
    pub ty: Type,
    pub kind: crate::ir::ParamKind,
    pub span: Span,
}

pub struct Block {
    pub stmts: Vec<Stmt>,
    pub result: Expr,
}

pub enum Stmt {
    Let {
        pattern: Pattern,
        value: Expr,
    },
    /// A `let` whose value had an error (reported): its names are poisoned, so that their
    /// uses are not reported again as unknown.
    Failed(Pattern),
}

pub enum Pattern {
    Name(syn::Ident),
    Wild(Span),
    Tuple(Vec<Pattern>, Span),
}

impl Pattern {
    pub fn span(&self) -> Span {
        match self {
            Pattern::Name(i) => i.span(),
            Pattern::Wild(s) | Pattern::Tuple(_, s) => *s,
        }
    }
}

pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// The user's source text, for run-time messages.
    pub label: String,
}

pub enum Lit {
    /// The value (i128: every u64 and i64 fits) and the suffix's dtype.
    Int(i128, Option<crate::ir::DType>),
    Float(f64, Option<crate::ir::DType>),
    Bool(bool),
    /// `"pos"`: only as the value of a keyword argument (`assume_a = "pos"`).
    Str(String),
}

pub enum ExprKind {
    Lit(Lit),
    Var(syn::Ident),
    /// `a op b`, with the operator's surface spelling ("+", "<", "&&", ...).
    Binary(&'static str, Box<Expr>, Box<Expr>),
    /// "-" or "!".
    Unary(&'static str, Box<Expr>),
    /// `f(args)` and `a.f(args)` (the receiver is the first argument).
    Call(syn::Ident, Vec<Expr>),
    /// `name = value` among a call's arguments: a keyword argument (`lower = false`), read
    /// by the functions that take it (the linear algebra, the random draws' `dtype = f32`);
    /// an error anywhere else.
    Keyword(syn::Ident, Box<Expr>),
    Index(Box<Expr>, Box<Expr>),
    /// `x[a..b]`: bounds as expressions.
    Slice(Box<Expr>, Option<Box<Expr>>, Option<Box<Expr>>),
    /// `x[(i, a..b, .., None)]`: numpy's `x[i, a:b, :, None]`, one item per axis.
    MultiIndex(Box<Expr>, Vec<IndexItem>),
    Cast(Box<Expr>, crate::ir::DType),
    Tuple(Vec<Expr>),
    /// `[a, b, c]`: numpy's `np.array([a, b, c])`, the items stacked on a new leading axis
    /// (also the list argument of `concatenate` and `stack`).
    List(Vec<Expr>),
    /// A closure, valid as the value of `let name = |..| ..;` (a step function for later
    /// scans) and as a scan's step.
    Closure(Rc<StepFn>),
    Scan(Box<ScanCall>),
    /// `until(cond)`, only valid as the last value a step returns.
    Until(Box<Expr>),
    /// `Ok(e)`: only as a function's result.
    Ok(Box<Expr>),
}

/// Which loop construct a call spelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanKind {
    Scan,
    Map,
    Reduce,
    Foldl,
    Foldr,
}

impl ScanKind {
    pub fn from_name(name: &str) -> Option<ScanKind> {
        Some(match name {
            "scan" => ScanKind::Scan,
            "map" => ScanKind::Map,
            "reduce" => ScanKind::Reduce,
            "foldl" => ScanKind::Foldl,
            "foldr" => ScanKind::Foldr,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            ScanKind::Scan => "scan",
            ScanKind::Map => "map",
            ScanKind::Reduce => "reduce",
            ScanKind::Foldl => "foldl",
            ScanKind::Foldr => "foldr",
        }
    }
}

pub struct Tapped {
    pub value: Expr,
    /// Explicit taps with their spans, or `None` for the default.
    pub taps: Option<(Vec<(i64, Span)>, Span)>,
}

pub enum OutputInfo {
    Init(Tapped),
    /// `None`: a map output.
    None(Span),
}

pub struct StepFn {
    pub params: Vec<syn::Ident>,
    /// A type the user wrote on a parameter (`|x: ArrayView1<f64>|`), checked, not needed.
    pub annotations: Vec<Option<TypeDef>>,
    pub params_span: Span,
    pub body: Block,
}

/// A scan's step: a closure written in the call, or the name of one bound by
/// `let step = |..| ..;` (PyTensor code passes one step function to several scans).
pub enum StepSource {
    Closure(Rc<StepFn>),
    Name(syn::Ident),
}

pub struct ScanCall {
    pub kind: ScanKind,
    pub span: Span,
    pub step: StepSource,
    pub sequences: Vec<Tapped>,
    /// `None` when outputs_info was not given.
    pub outputs_info: Option<(Vec<OutputInfo>, Span)>,
    pub non_sequences: Vec<Expr>,
    pub n_steps: Option<Expr>,
    pub go_backwards: bool,
    /// `go_backwards = flag` with anything but a literal: a scalar bool computed where the
    /// scan is called, which chooses the direction at run time (`go_backwards` is then
    /// false).
    pub backwards_flag: Option<Expr>,
    pub strict: bool,
    /// `unroll = k` (1 when not given).
    pub unroll: usize,
    /// `truncate_gradient = k`: gradients backpropagate through the last k steps only.
    pub truncate_gradient: Option<usize>,
    /// `checkpoints = n` (PyTensor's `scan_checkpoints(.., save_every_N = n)`): a gradient
    /// through the scan stores every n-th state and recomputes the steps between them; the
    /// span of the value, for errors of combinations.
    pub checkpoints: Option<(usize, Span)>,
    pub name: Option<String>,
    /// An argument was lost to a reported error (a sequence that did not parse, an
    /// unknown keyword): the step's argument count and the number of steps are not
    /// checked, so that the one mistake gives one error.
    pub incomplete: bool,
}

/// One item of a multi-axis index (`ExprKind::MultiIndex`).
pub enum IndexItem {
    /// `..`: the whole axis.
    Full,
    /// `a..b` (either bound may be absent): a slice of the axis.
    Range(Option<Box<Expr>>, Option<Box<Expr>>),
    /// Python's `slice(start, stop, step)` with a step (`None` for an absent bound): numpy's
    /// `a:b:s`, a slice that may step and go backwards.
    Stepped(Option<Box<Expr>>, Option<Box<Expr>>, Box<Expr>),
    /// An integer: the axis is indexed away.
    Index(Box<Expr>),
    /// `None`: a new axis of length 1.
    NewAxis,
}
