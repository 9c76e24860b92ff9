//! Random numbers (docs/SEMANTICS.md, "Random numbers"): `rng_key`, `split`, and the draws
//! `uniform`, `normal`, `bernoulli`, `categorical`, `gamma`, `beta`. A key is an i64 scalar, an ordinary
//! value; a draw returns the tuple `(next_key, values)`, two nodes (`RandomOp::DeriveKey`
//! of the key and the draw itself), so no op has two results.

use super::{Lowered, Lowerer, Value};
use crate::ast::{Expr, ExprKind};
use crate::ir::{DType, Literal, NodeId, Op, RandomOp, Type};

/// The names this file lowers, for the "did you mean" of an unknown function.
pub(super) const RANDOM_FUNCTIONS: &[&str] = &[
    "rng_key",
    "split",
    "uniform",
    "normal",
    "bernoulli",
    "categorical",
    "gamma",
    "beta",
];

impl Lowerer<'_> {
    /// `name(args)` if `name` is a random function (`None` otherwise): its value, or `None`
    /// inside when it failed (reported).
    pub(super) fn random(
        &mut self,
        name: &syn::Ident,
        args: &[Expr],
        e: &Expr,
    ) -> Option<Option<Lowered>> {
        let n = name.to_string();
        if !RANDOM_FUNCTIONS.contains(&n.as_str()) {
            return None;
        }
        // Keyword arguments (`dtype = f32`) come after the positional ones.
        let (positional, keywords): (Vec<&Expr>, Vec<&Expr>) = args
            .iter()
            .partition(|a| !matches!(a.kind, ExprKind::Keyword(..)));
        let arity = |this: &mut Self, lo: usize, hi: usize| -> Option<()> {
            if positional.len() < lo || positional.len() > hi {
                let expected = if lo == hi {
                    format!("{lo}")
                } else {
                    format!("{lo} or {hi}")
                };
                this.diag.error(
                    e.span,
                    crate::messages::arity(&n, &expected, positional.len()),
                );
                return None;
            }
            Some(())
        };
        let draws_in = matches!(n.as_str(), "uniform" | "normal");
        let mut dtype = DType::F64;
        for k in &keywords {
            let ExprKind::Keyword(kw, value) = &k.kind else {
                continue;
            };
            let chosen = match &value.kind {
                ExprKind::Var(t) if t == "f32" => Some(DType::F32),
                ExprKind::Var(t) if t == "f64" => Some(DType::F64),
                _ => None,
            };
            match chosen {
                Some(d) if draws_in && kw == "dtype" => dtype = d,
                None if draws_in && kw == "dtype" => {
                    self.diag.error(value.span, crate::messages::draw_dtype());
                    return Some(None);
                }
                _ => {
                    self.diag
                        .error(k.span, crate::messages::draw_keyword(&n, draws_in));
                    return Some(None);
                }
            }
        }
        Some(self.random_call(&n, &positional, dtype, e, arity))
    }

    fn random_call(
        &mut self,
        n: &str,
        args: &[&Expr],
        dtype: DType,
        e: &Expr,
        arity: impl Fn(&mut Self, usize, usize) -> Option<()>,
    ) -> Option<Lowered> {
        let single = |id: NodeId| Lowered::Single(Value { id, weak: false });
        if n == "rng_key" {
            // A key from an integer seed: the seed as an i64 (every 64-bit value is a key).
            arity(self, 1, 1)?;
            let id = self.index_operand(args[0], "the seed of `rng_key`")?;
            return Some(single(id));
        }
        match n {
            "split" => arity(self, 1, 2)?,
            "beta" => arity(self, 3, 3)?,
            _ => arity(self, 2, 2)?,
        }
        let key = self.key(args[0])?;
        let random = |this: &mut Self, op: RandomOp, inputs: Vec<NodeId>, ty: Type| {
            this.add(Op::Random(op), inputs, ty, e)
        };
        let derived = |this: &mut Self, i: i64| {
            let i = this
                .graph()
                .add_const(Literal::Int(i.into()), DType::I64, e.span, &e.label);
            random(
                this,
                RandomOp::DeriveKey,
                vec![key, i],
                Type::scalar(DType::I64),
            )
        };
        let values = match n {
            "split" => {
                if let Some(count) = args.get(1) {
                    let count = self.index_operand(count, "the number of keys of `split`")?;
                    let keys = random(
                        self,
                        RandomOp::Split,
                        vec![key, count],
                        Type::new(DType::I64, 1),
                    );
                    return Some(single(keys));
                }
                let (a, b) = (derived(self, 0), derived(self, 1));
                return Some(Lowered::Tuple(vec![
                    Value { id: a, weak: false },
                    Value { id: b, weak: false },
                ]));
            }
            "uniform" | "normal" => {
                let mut inputs = vec![key];
                inputs.extend(self.shape_operands(args[1])?);
                let op = if n == "uniform" {
                    RandomOp::Uniform
                } else {
                    RandomOp::Normal
                };
                let rank = inputs.len() - 1;
                random(self, op, inputs, Type::new(dtype, rank))
            }
            "bernoulli" => {
                let p = self.float_operand(args[1], "the probability of `bernoulli`")?;
                let rank = self.graph().ty(p).rank;
                random(
                    self,
                    RandomOp::Bernoulli,
                    vec![key, p],
                    Type::new(DType::Bool, rank),
                )
            }
            "gamma" => {
                let a = self.float_operand(args[1], "the shape parameter of `gamma`")?;
                let t = self.graph().ty(a);
                random(self, RandomOp::Gamma, vec![key, a], t)
            }
            "beta" => {
                let a = self.float_operand(args[1], "the parameter `a` of `beta`")?;
                let b = self.float_operand(args[2], "the parameter `b` of `beta`")?;
                // One float dtype for both (numpy's promotion), the larger rank.
                let (ta, tb) = (self.graph().ty(a), self.graph().ty(b));
                let dtype = DType::promote(ta.dtype, tb.dtype);
                let (a, b) = (
                    self.cast(Value { id: a, weak: false }, dtype, args[1]),
                    self.cast(Value { id: b, weak: false }, dtype, args[2]),
                );
                let rank = ta.rank.max(tb.rank);
                random(
                    self,
                    RandomOp::Beta,
                    vec![key, a, b],
                    Type::new(dtype, rank),
                )
            }
            _ => {
                let logits = self.float_operand(args[1], "the logits of `categorical`")?;
                let rank = self.graph().ty(logits).rank;
                if rank == 0 {
                    self.diag
                        .error(args[1].span, crate::messages::scalar_logits());
                    return None;
                }
                random(
                    self,
                    RandomOp::Categorical,
                    vec![key, logits],
                    Type::new(DType::I64, rank - 1),
                )
            }
        };
        let next = derived(self, 0);
        Some(Lowered::Tuple(vec![
            Value {
                id: next,
                weak: false,
            },
            Value {
                id: values,
                weak: false,
            },
        ]))
    }

    /// A key argument: an i64 scalar (an untyped integer literal is one).
    fn key(&mut self, a: &Expr) -> Option<NodeId> {
        let v = self.value(a)?;
        let t = self.ty(v);
        if t == Type::scalar(DType::I64) || (v.weak && t.rank == 0 && t.dtype.is_int()) {
            return Some(self.cast(v, DType::I64, a));
        }
        self.diag.error(a.span, crate::messages::not_a_key(t));
        None
    }

    /// A float operand (an integer or bool one computed in f64, as `exp` takes it).
    fn float_operand(&mut self, a: &Expr, what: &str) -> Option<NodeId> {
        let v = self.value(a)?;
        let t = self.ty(v);
        if t.dtype.is_float() {
            return Some(v.id);
        }
        if t.dtype == DType::Bool {
            self.diag
                .error(a.span, crate::messages::float_parameter(what, t));
            return None;
        }
        Some(self.cast(v, DType::F64, a))
    }
}
