//! The linear algebra functions (`Op::Linalg`): numpy's `inv det slogdet eigh qr svd`,
//! scipy's and PyTensor's `cholesky cho_solve solve solve_triangular svdvals`. Their
//! options are keyword arguments with compile-time values (`lower = false`,
//! `assume_a = "pos"`, `on_error = "nan"`, `UPLO = "U"`), or positional in numpy's or
//! scipy's order; `slogdet`, `eigh`, `qr` and `svd` return a tuple: one node computing
//! every result, read through `Op::Part` nodes.

use super::{Lowered, Lowerer, Value};
use crate::ast::{Expr, ExprKind, Lit};
use crate::ir::{Assume, DType, LinalgOp, Op, QrMode, Type};

/// The functions of this file, for `is_linalg` and the "did you mean" of unknown names.
pub const FUNCTIONS: &[&str] = &[
    "cholesky",
    "cho_solve",
    "solve",
    "solve_triangular",
    "inv",
    "det",
    "slogdet",
    "eigh",
    "qr",
    "svd",
    "svdvals",
];

pub fn is_linalg(name: &str) -> bool {
    FUNCTIONS.contains(&name)
}

/// A call's arguments sorted out: the positional ones, then each keyword with its value.
struct Args<'a> {
    positional: Vec<&'a Expr>,
    keywords: Vec<(String, &'a Expr, &'a Expr)>,
}

impl Lowerer<'_> {
    pub(super) fn linalg(&mut self, name: &syn::Ident, args: &[Expr], e: &Expr) -> Option<Lowered> {
        let n = name.to_string();
        let mut sorted = Args {
            positional: Vec::new(),
            keywords: Vec::new(),
        };
        for a in args {
            match &a.kind {
                ExprKind::Keyword(k, v) => {
                    sorted.keywords.push((k.to_string(), &**v, a));
                }
                _ if !sorted.keywords.is_empty() => {
                    self.diag
                        .error(a.span, crate::messages::positional_after_keyword());
                    return None;
                }
                _ => sorted.positional.push(a),
            }
        }
        // Every option by name, in scipy's positional order after the arrays.
        let (arrays, options): (usize, &[&str]) = match n.as_str() {
            "cholesky" => (1, &["lower", "on_error"]),
            "cho_solve" => (2, &[]),
            "solve" => (2, &["assume_a", "lower"]),
            "solve_triangular" => (2, &["trans", "lower", "unit_diagonal"]),
            "eigh" => (1, &["UPLO"]),
            "qr" => (1, &["mode"]),
            "svd" => (1, &["full_matrices", "compute_uv", "hermitian"]),
            _ => (1, &[]),
        };
        if sorted.positional.len() < arrays || sorted.positional.len() > arrays + options.len() {
            let expected = if options.is_empty() {
                format!("{arrays}")
            } else {
                format!("{arrays} (and up to {} options)", options.len())
            };
            self.diag.error(
                e.span,
                crate::messages::linalg_positional(&n, &expected, sorted.positional.len()),
            );
            return None;
        }
        // Option name -> its expression.
        let mut given: Vec<(&str, &Expr)> = Vec::new();
        for (k, p) in sorted.positional[arrays..].iter().enumerate() {
            given.push((options[k], *p));
        }
        let mut ok = true;
        for (k, v, whole) in &sorted.keywords {
            match options.iter().find(|o| **o == k.as_str()) {
                Some(o) if given.iter().any(|(g, _)| g == o) => {
                    self.diag
                        .error(whole.span, crate::messages::linalg_keyword_twice(&n, k));
                    ok = false;
                }
                Some(o) => given.push((o, v)),
                None => {
                    let close = crate::diag::closest(k, options.iter().copied());
                    self.diag.error(
                        whole.span,
                        crate::messages::linalg_unknown_keyword(&n, k, close, options),
                    );
                    ok = false;
                }
            }
        }
        let option = |name: &str| given.iter().find(|(g, _)| *g == name).map(|(_, v)| *v);
        let lower_default = n == "cholesky";
        let lower = match option("lower") {
            Some(v) => self.bool_option(v, &n, "lower"),
            None => Some(lower_default),
        };
        let op = match n.as_str() {
            "cholesky" => {
                let nan_on_error = match option("on_error") {
                    None => Some(false),
                    Some(v) => self
                        .string_option(v, &n, "on_error", &["raise", "nan"])
                        .map(|s| s == "nan"),
                };
                LinalgOp::Cholesky {
                    lower: lower?,
                    nan_on_error: nan_on_error?,
                }
            }
            "cho_solve" => {
                // scipy's `cho_solve((c, lower), b)`; a bare `c` is a lower factor.
                let first = sorted.positional[0];
                let (c_lower, c) = match &first.kind {
                    ExprKind::Tuple(items) if items.len() == 2 => {
                        (self.bool_option(&items[1], &n, "lower"), &items[0])
                    }
                    ExprKind::Tuple(_) => {
                        self.diag
                            .error(first.span, crate::messages::cho_solve_factor());
                        return None;
                    }
                    _ => (Some(true), first),
                };
                sorted.positional[0] = c;
                LinalgOp::ChoSolve { lower: c_lower? }
            }
            "solve" => {
                let assume = match option("assume_a") {
                    None => Some(Assume::General),
                    Some(v) => self
                        .string_option(v, &n, "assume_a", &["gen", "pos", "sym"])
                        .map(|s| match s.as_str() {
                            "pos" => Assume::Positive,
                            "sym" => Assume::Symmetric,
                            _ => Assume::General,
                        }),
                };
                LinalgOp::Solve {
                    assume: assume?,
                    lower: lower?,
                }
            }
            "solve_triangular" => {
                let trans = match option("trans") {
                    None => Some(false),
                    Some(v) => self.trans_option(v),
                };
                let unit = match option("unit_diagonal") {
                    None => Some(false),
                    Some(v) => self.bool_option(v, &n, "unit_diagonal"),
                };
                LinalgOp::SolveTriangular {
                    lower: lower?,
                    trans: trans?,
                    unit_diagonal: unit?,
                }
            }
            "inv" => LinalgOp::Inv,
            "det" => LinalgOp::Det,
            "eigh" => {
                let lower = match option("UPLO") {
                    None => Some(true),
                    Some(v) => self
                        .string_option(v, &n, "UPLO", &["L", "U"])
                        .map(|s| s == "L"),
                };
                LinalgOp::Eigh { lower: lower? }
            }
            "qr" => {
                let mode = match option("mode") {
                    None => QrMode::Reduced,
                    // numpy's "raw" (LAPACK's reflectors) is not provided.
                    Some(v) => match self
                        .string_option(v, &n, "mode", &["reduced", "complete", "r"])?
                        .as_str()
                    {
                        "complete" => QrMode::Complete,
                        "r" => QrMode::R,
                        _ => QrMode::Reduced,
                    },
                };
                LinalgOp::Qr { mode }
            }
            "svd" => {
                // numpy's defaults: full_matrices and compute_uv true. `hermitian` only
                // chooses numpy's algorithm: a symmetric matrix's SVD is the same.
                let mut flags = [true, true, false];
                for (flag, name) in flags.iter_mut().zip(options) {
                    if let Some(v) = option(name) {
                        *flag = self.bool_option(v, &n, name)?;
                    }
                }
                let [full_matrices, uv, _] = flags;
                if uv {
                    LinalgOp::Svd { full_matrices }
                } else {
                    LinalgOp::SvdVals
                }
            }
            "svdvals" => LinalgOp::SvdVals,
            _ => LinalgOp::SlogDet,
        };
        if !ok {
            return None;
        }
        // The arrays: a float matrix, then (solves) a vector or matrix of right-hand sides.
        let values: Vec<Option<Value>> = sorted.positional[..arrays]
            .iter()
            .map(|a| self.value(a))
            .collect();
        let values: Vec<Value> = values.into_iter().collect::<Option<_>>()?;
        let mut dtype: Option<DType> = None;
        for (k, (v, a)) in values.iter().zip(&sorted.positional).enumerate() {
            let t = self.ty(*v);
            if k == 0 && t.rank != 2 {
                self.diag
                    .error(a.span, crate::messages::linalg_matrix_rank(&n, t));
                return None;
            }
            if k > 0 && !(t.rank == 1 || t.rank == 2) {
                self.diag
                    .error(a.span, crate::messages::linalg_rhs_rank(&n, t));
                return None;
            }
            if !t.dtype.is_float() {
                self.diag
                    .error(a.span, crate::messages::linalg_float(&n, t, &a.label));
                return None;
            }
            dtype = Some(match dtype {
                None => t.dtype,
                Some(d) => DType::promote(d, t.dtype),
            });
        }
        let dtype = dtype?;
        let inputs: Vec<_> = values.iter().map(|v| self.cast(*v, dtype, e)).collect();
        let result = |rank| Type::new(dtype, rank);
        let single = |this: &mut Self, op: LinalgOp, rank: usize| {
            let id = this.add(Op::Linalg(op), inputs.clone(), result(rank), e);
            Value { id, weak: false }
        };
        if let Some(ranks) = op.parts() {
            // One node computes every result (one factorisation); each is read by a part.
            let whole = self.add(Op::Linalg(op), inputs, result(0), e);
            let parts = ranks
                .iter()
                .enumerate()
                .map(|(index, &rank)| Value {
                    id: self.add(Op::Part { index }, vec![whole], result(rank), e),
                    weak: false,
                })
                .collect();
            return Some(Lowered::Tuple(parts));
        }
        Some(match op {
            LinalgOp::Det => Lowered::Single(single(self, op, 0)),
            LinalgOp::SvdVals => Lowered::Single(single(self, op, 1)),
            LinalgOp::Cholesky { .. } | LinalgOp::Inv | LinalgOp::Qr { .. } => {
                Lowered::Single(single(self, op, 2))
            }
            _ => {
                let rank = self.ty(values[1]).rank;
                Lowered::Single(single(self, op, rank))
            }
        })
    }

    /// A keyword's value that must be `true` or `false`, written as such.
    fn bool_option(&mut self, v: &Expr, f: &str, name: &str) -> Option<bool> {
        match &v.kind {
            ExprKind::Lit(Lit::Bool(b)) => Some(*b),
            _ => {
                self.diag
                    .error(v.span, crate::messages::linalg_bool_option(f, name));
                None
            }
        }
    }

    /// A keyword's value that must be one of the strings `allowed`.
    fn string_option(&mut self, v: &Expr, f: &str, name: &str, allowed: &[&str]) -> Option<String> {
        let list = allowed
            .iter()
            .map(|a| format!("\"{a}\""))
            .collect::<Vec<_>>()
            .join(", ");
        match &v.kind {
            ExprKind::Lit(Lit::Str(s)) if allowed.contains(&s.as_str()) => Some(s.clone()),
            ExprKind::Lit(Lit::Str(s)) => {
                self.diag.error(
                    v.span,
                    crate::messages::linalg_string_option(f, name, &list, Some(s)),
                );
                None
            }
            _ => {
                self.diag.error(
                    v.span,
                    crate::messages::linalg_string_option(f, name, &list, None),
                );
                None
            }
        }
    }

    /// scipy's `trans`: 0 or "N" (a), 1 or "T" (a transposed), 2 or "C" (a conjugated and
    /// transposed: for real matrices, transposed).
    fn trans_option(&mut self, v: &Expr) -> Option<bool> {
        match &v.kind {
            ExprKind::Lit(Lit::Int(0, _)) => Some(false),
            ExprKind::Lit(Lit::Int(1 | 2, _)) => Some(true),
            ExprKind::Lit(Lit::Str(s)) if s == "N" => Some(false),
            ExprKind::Lit(Lit::Str(s)) if s == "T" || s == "C" => Some(true),
            _ => {
                self.diag.error(v.span, crate::messages::trans_option());
                None
            }
        }
    }
}
