//! Expressions: literals, names, operators, indexing, casts, tuples. Named functions are in
//! `call.rs`, loops in `scan.rs`.

use super::{Lowered, Lowerer, Value};
use crate::ast::{Expr, ExprKind, IndexItem, Lit};
use crate::ir::{DType, ElemOp, Literal, NodeId, Op, PathStep, Type};
use crate::messages as msg;

/// An indexing path: each step with its operands.
pub(super) type Path = Vec<(PathStep, Vec<NodeId>)>;

impl Lowerer<'_> {
    pub(super) fn expr(&mut self, e: &Expr) -> Option<Lowered> {
        let v = match &e.kind {
            ExprKind::Lit(Lit::Str(_)) => {
                self.diag
                    .error(e.span, crate::messages::string_out_of_place());
                return None;
            }
            ExprKind::Keyword(name, _) => {
                self.diag
                    .error(e.span, crate::messages::keyword_out_of_place(name));
                return None;
            }
            ExprKind::Lit(lit) => self.literal(lit, e, e.span),
            ExprKind::Var(name) => {
                let level = self.frames.len() - 1;
                match self.lookup(level, name) {
                    Some(v) => v,
                    None if self.is_poisoned(name) => return None,
                    None => match named_constant(&name.to_string()) {
                        // numpy's constants, untyped like a float literal (`x * pi`
                        // stays f32); a binding of the same name hides them.
                        Some(v) => self.literal(&Lit::Float(v, None), e, e.span),
                        None if self.closure(name).is_some() => {
                            self.diag
                                .error(name.span(), msg::step_function_as_value(&name.to_string()));
                            return None;
                        }
                        None => {
                            let n = name.to_string();
                            let names = self.visible_names();
                            let close = crate::diag::closest(&n, names.iter().map(String::as_str));
                            self.diag.error(name.span(), msg::unknown_name(&n, close));
                            return None;
                        }
                    },
                }
            }
            ExprKind::Binary(op, a, b) => {
                let elem = match *op {
                    "+" => ElemOp::Add,
                    "-" => ElemOp::Sub,
                    "*" => ElemOp::Mul,
                    "/" => ElemOp::Div,
                    "%" => ElemOp::Rem,
                    "<" => ElemOp::Lt,
                    "<=" => ElemOp::Le,
                    ">" => ElemOp::Gt,
                    ">=" => ElemOp::Ge,
                    "==" => ElemOp::Eq,
                    "!=" => ElemOp::Ne,
                    "&&" | "&" => ElemOp::And,
                    "||" | "|" => ElemOp::Or,
                    _ => ElemOp::Xor,
                };
                let a = self.value(a);
                let b = self.value(b);
                self.elemwise(elem, vec![a?, b?], e)?
            }
            ExprKind::Unary(op, inner) => {
                if *op == "-" {
                    // A range error of `-1u32` goes on the literal (a span cannot join the
                    // two tokens on stable Rust).
                    if let ExprKind::Lit(Lit::Int(v, d)) = &inner.kind {
                        let lit = Lit::Int(-v, *d);
                        return Some(Lowered::Single(self.literal(&lit, e, inner.span)));
                    }
                    if let ExprKind::Lit(Lit::Float(v, d)) = &inner.kind {
                        let lit = Lit::Float(-v, *d);
                        return Some(Lowered::Single(self.literal(&lit, e, inner.span)));
                    }
                }
                let x = self.value(inner)?;
                let elem = if *op == "-" { ElemOp::Neg } else { ElemOp::Not };
                self.elemwise(elem, vec![x], e)?
            }
            ExprKind::Call(name, args) => {
                if let Some(f) = self.own_function(name) {
                    return self.inline(f, args, e);
                }
                if *name == "grad" {
                    return self.grad(args, e);
                }
                if super::linalg::is_linalg(&name.to_string()) {
                    return self.linalg(name, args, e);
                }
                if let Some(lowered) = self.random(name, args, e) {
                    return lowered;
                }
                return self.call(name, args, e).map(Lowered::Single);
            }
            ExprKind::Index(..) | ExprKind::Slice(..) | ExprKind::MultiIndex(..) => {
                let (base, path) = self.path(e, false)?;
                if path.is_empty() {
                    // A gather (`x[idx]`) made the value; nothing left to view.
                    return Some(Lowered::Single(base));
                }
                let ty = self.subtensor_type(base, &path, e)?;
                let mut inputs = vec![base.id];
                inputs.extend(path.iter().flat_map(|(_, ops)| ops.iter().copied()));
                let steps = path.iter().map(|(s, _)| s.clone()).collect();
                let id = self.add(Op::Subtensor { path: steps }, inputs, ty, e);
                Value { id, weak: false }
            }
            ExprKind::Cast(inner, dtype) => {
                // `300 as u8` wraps, as Rust's `as` does: the literal is cast as typed.
                let x = Value {
                    weak: false,
                    ..self.value(inner)?
                };
                Value {
                    id: self.cast(x, *dtype, e),
                    weak: false,
                }
            }
            ExprKind::Tuple(items) => {
                let values: Vec<Option<Value>> = items.iter().map(|i| self.value(i)).collect();
                return Some(Lowered::Tuple(
                    values.into_iter().collect::<Option<Vec<_>>>()?,
                ));
            }
            ExprKind::List(items) => {
                // numpy's `np.array([a, b, c])`: the items stacked on a new leading axis.
                return self.join(items, true, None, e).map(Lowered::Single);
            }
            ExprKind::Scan(call) => return self.scan(call),
            ExprKind::Closure(_) => {
                self.diag.error(e.span, msg::closure_as_value());
                return None;
            }
            ExprKind::Until(_) => {
                self.diag.error(e.span, msg::until_not_last());
                return None;
            }
            ExprKind::Ok(_) => {
                self.diag.error(e.span, msg::ok_not_last());
                return None;
            }
        };
        Some(Lowered::Single(v))
    }

    /// An expression that must be one value (not a tuple).
    pub(super) fn value(&mut self, e: &Expr) -> Option<Value> {
        match self.expr(e)? {
            Lowered::Single(v) => Some(v),
            Lowered::Tuple(vs) => {
                self.diag.error(e.span, msg::expected_one_value(vs.len()));
                None
            }
        }
    }

    /// The constant of `lit`, written as `e`; a range error is reported at `at`.
    fn literal(&mut self, lit: &Lit, e: &Expr, at: proc_macro2::Span) -> Value {
        let (value, dtype, weak) = match *lit {
            Lit::Int(v, d) => {
                let dtype = d.unwrap_or(DType::I64);
                if !dtype.holds(v) {
                    let how = if d.is_some() {
                        msg::LiteralDType::Suffix
                    } else {
                        msg::LiteralDType::Default
                    };
                    self.diag
                        .error(at, msg::literal_out_of_range(v, dtype, how));
                    // Kept as written, not wrapped, so that `cast` sees it was reported
                    // (the program is not emitted).
                    let id = self
                        .graph()
                        .add_const(Literal::Int(v), dtype, e.span, &e.label);
                    return Value {
                        id,
                        weak: d.is_none(),
                    };
                }
                (Literal::Int(v), dtype, d.is_none())
            }
            Lit::Float(v, d) => (Literal::Float(v), d.unwrap_or(DType::F64), d.is_none()),
            Lit::Bool(b) => (Literal::Bool(b), DType::Bool, false),
            // Refused by `expr` before it gets here.
            Lit::Str(_) => (Literal::Bool(false), DType::Bool, false),
        };
        let id = self
            .graph()
            .add_const(convert(value, dtype), dtype, e.span, &e.label);
        Value { id, weak }
    }

    /// `v` as `dtype`: itself, a retyped constant, or a `Cast` node. An untyped integer
    /// literal taking an integer dtype that does not hold it is an error on the literal
    /// (numpy 2's OverflowError); an explicit `as` wraps instead (the caller passes the
    /// value as typed).
    pub(super) fn cast(&mut self, v: Value, dtype: DType, e: &Expr) -> NodeId {
        let node = self.graph().node(v.id).clone();
        if node.ty.dtype == dtype {
            return v.id;
        }
        if let Op::Const(lit) = node.op {
            if let Literal::Int(x) = lit {
                // (Not again for a literal already out of its own dtype's range.)
                if v.weak && dtype.is_int() && !dtype.holds(x) && node.ty.dtype.holds(x) {
                    self.diag.error(
                        node.span,
                        msg::literal_out_of_range(x, dtype, msg::LiteralDType::Adapted),
                    );
                }
            }
            return self
                .graph()
                .add_const(convert(lit, dtype), dtype, node.span, &node.label);
        }
        self.add(Op::Cast, vec![v.id], node.ty.with_dtype(dtype), e)
    }

    /// Applies an elementwise operation: promotes the operands (weak literals adapt),
    /// casts them to the operand dtype, and broadcasts ranks.
    pub(super) fn elemwise(&mut self, op: ElemOp, args: Vec<Value>, e: &Expr) -> Option<Value> {
        let (cond, data) = if op == ElemOp::Where {
            args.split_at(1)
        } else {
            args.split_at(0)
        };
        if let Some(c) = cond.first() {
            let ct = self.ty(*c);
            if ct.dtype != DType::Bool {
                self.diag.error(e.span, msg::where_condition(ct));
                return None;
            }
        }
        let promoted = self.promote(data);
        let Some(operand) = op.operand_dtype(promoted) else {
            let expected = if op.rule() == crate::ir::TypeRule::Logical {
                "bool"
            } else {
                "numbers"
            };
            self.diag.error(
                e.span,
                msg::elemwise_operands(op.name(), expected, promoted),
            );
            return None;
        };
        let mut inputs: Vec<NodeId> = cond.iter().map(|c| c.id).collect();
        for v in data {
            inputs.push(self.cast(*v, operand, e));
        }
        let rank = args.iter().map(|v| self.ty(*v).rank).max().unwrap_or(0);
        let weak = data.iter().all(|v| v.weak) && cond.is_empty();
        let ty = Type::new(op.result_dtype(operand), rank);
        Some(Value {
            id: self.add(Op::Elemwise(op), inputs, ty, e),
            weak,
        })
    }

    /// numpy's promotion with weak literals: a literal takes the dtype of the typed operands
    /// unless it is a float among integers (then f64).
    pub(super) fn promote(&self, values: &[Value]) -> DType {
        let strong: Vec<DType> = values
            .iter()
            .filter(|v| !v.weak)
            .map(|v| self.ty(*v).dtype)
            .collect();
        let weak: Vec<DType> = values
            .iter()
            .filter(|v| v.weak)
            .map(|v| self.ty(*v).dtype)
            .collect();
        let fold = |ds: &[DType]| ds.iter().copied().reduce(DType::promote);
        match (fold(&strong), fold(&weak)) {
            (Some(s), Some(w)) if w.is_float() && !s.is_float() => DType::promote(s, DType::F64),
            (Some(s), _) => s,
            (None, Some(w)) => w,
            (None, None) => DType::F64,
        }
    }

    /// A scalar integer operand (an index, a bound, a count) as i64.
    pub(super) fn index_operand(&mut self, e: &Expr, what: &str) -> Option<NodeId> {
        let v = self.value(e)?;
        self.scalar_index(v, e, what)
    }

    /// `v`, lowered from `e`, as a scalar integer operand (i64).
    pub(super) fn scalar_index(&mut self, v: Value, e: &Expr, what: &str) -> Option<NodeId> {
        let t = self.ty(v);
        if t.rank != 0 || !t.dtype.is_int() {
            self.diag.error(e.span, msg::scalar_integer(what, t));
            return None;
        }
        Some(self.cast(v, DType::I64, e))
    }

    /// Whether `v` is an index array (an integer array: a gather, numpy's `x[idx]`); an
    /// error spanned on `e` for a boolean or float array (a mask read alone is the caller's),
    /// or when `writing` (the target of `set_subtensor`).
    pub(super) fn is_index_array(&mut self, v: Value, e: &Expr, writing: bool) -> Option<bool> {
        let t = self.ty(v);
        if t.rank == 0 {
            return Some(false);
        }
        if t.dtype == DType::Bool {
            self.diag.error(e.span, msg::boolean_mask_read(&e.label));
            return None;
        }
        if !t.dtype.is_int() {
            self.diag.error(e.span, msg::index_array_type(t));
            return None;
        }
        if writing {
            self.diag.error(e.span, msg::index_array_write_nested());
            return None;
        }
        Some(true)
    }

    /// The value `base` viewed through `path` (itself when the path is empty).
    fn view_of(&mut self, base: Value, path: Path, e: &Expr) -> Option<Value> {
        if path.is_empty() {
            return Some(base);
        }
        let ty = self.subtensor_type(base, &path, e)?;
        let mut inputs = vec![base.id];
        inputs.extend(path.iter().flat_map(|(_, ops)| ops.iter().copied()));
        let steps = path.into_iter().map(|(s, _)| s).collect();
        let id = self.add(Op::Subtensor { path: steps }, inputs, ty, e);
        Some(Value {
            id,
            weak: base.weak,
        })
    }

    /// numpy's `take(x, idx, axis)` of an integer array `idx` (any integer dtype, read as
    /// i64): x's rows along `axis` at those indices, negative from the end, idx's axes in
    /// place of `axis`; one out of range is an `Err` naming the expression `e`.
    pub(super) fn gather(&mut self, x: Value, idx: Value, axis: usize, e: &Expr) -> Option<Value> {
        let (t, it) = (self.ty(x), self.ty(idx));
        let rank = t.rank + it.rank - 1;
        if rank > super::call::MAX_RANK {
            self.diag
                .error(e.span, msg::gather_rank(t, it, super::call::MAX_RANK));
            return None;
        }
        let idx = self.cast(idx, DType::I64, e);
        let id = self.add(Op::Take { axis }, vec![x.id, idx], t.with_rank(rank), e);
        Some(Value { id, weak: x.weak })
    }

    /// numpy's `x[mask]` read: `mask` (a bool array, lowered from `m`) covers x's leading
    /// axes; the elements or rows where it is true, `[count, x's other axes]`.
    fn mask_take(
        &mut self,
        x: Value,
        mask: Value,
        m: &Expr,
        base: &Expr,
        e: &Expr,
    ) -> Option<Value> {
        let (t, mt) = (self.ty(x), self.ty(mask));
        if mt.rank > t.rank {
            self.diag.error(m.span, msg::mask_rank(mt, &base.label, t));
            return None;
        }
        let ty = t.with_rank(1 + t.rank - mt.rank);
        let id = self.add(Op::MaskTake, vec![x.id, mask.id], ty, e);
        Some(Value { id, weak: false })
    }

    /// `x[i][a..b]...` -> the base value and each step with its operands. A gather
    /// (`x[idx]`, an index array) is computed here: the path after it starts from its value.
    /// `writing`: the target of `set_subtensor`, where a gather is an error.
    pub(super) fn path(&mut self, e: &Expr, writing: bool) -> Option<(Value, Path)> {
        match &e.kind {
            ExprKind::Index(base, idx) => {
                let (b, mut path) = self.path(base, writing)?;
                let v = self.value(idx)?;
                let vt = self.ty(v);
                let mask = vt.dtype == DType::Bool && vt.rank > 0 && !writing;
                if mask || self.is_index_array(v, idx, writing)? {
                    let x = self.view_of(b, path, base)?;
                    if self.ty(x).rank == 0 {
                        self.diag
                            .error(e.span, msg::too_many_indices_scalar(&base.label));
                        return None;
                    }
                    let read = if mask {
                        self.mask_take(x, v, idx, base, e)?
                    } else {
                        self.gather(x, v, 0, e)?
                    };
                    return Some((read, Vec::new()));
                }
                let i = self.scalar_index(v, idx, "an index")?;
                path.push((PathStep::Index, vec![i]));
                Some((b, path))
            }
            ExprKind::Slice(base, start, end) => {
                let (b, mut path) = self.path(base, writing)?;
                let mut ops = Vec::new();
                if let Some(s) = start {
                    ops.push(self.index_operand(s, "a slice bound")?);
                }
                if let Some(s) = end {
                    ops.push(self.index_operand(s, "a slice bound")?);
                }
                path.push((
                    PathStep::Slice {
                        start: start.is_some(),
                        end: end.is_some(),
                    },
                    ops,
                ));
                Some((b, path))
            }
            ExprKind::MultiIndex(base, items) => {
                let (b, mut path) = self.path(base, writing)?;
                // Each item acts on the axis after the ones kept before it (`At`), and
                // chained indexing after it starts again at axis 0.
                let mut axis = 0usize;
                // An index array (`x[(.., idx)]`): gathered on its axis after the rest.
                let mut gather: Option<(usize, Value)> = None;
                for item in items {
                    let at = |path: &mut Path, axis: usize| {
                        if path.last().map(|(s, _)| s) != Some(&PathStep::At(axis)) {
                            path.push((PathStep::At(axis), Vec::new()));
                        }
                    };
                    match item {
                        IndexItem::Full => axis += 1,
                        IndexItem::Index(i) => {
                            let v = self.value(i)?;
                            if self.is_index_array(v, i, writing)? {
                                // numpy moves the axes of several index arrays (or one
                                // beside integers or None) elsewhere: one, among slices.
                                let mixed = gather.is_some()
                                    || items.iter().any(|it| {
                                        matches!(it, IndexItem::NewAxis)
                                            || matches!(it, IndexItem::Index(j) if !std::ptr::eq(&**j, &**i))
                                    });
                                if mixed {
                                    self.diag.error(i.span, msg::index_array_mixed());
                                    return None;
                                }
                                gather = Some((axis, v));
                                axis += 1;
                                continue;
                            }
                            let i = self.scalar_index(v, i, "an index")?;
                            at(&mut path, axis);
                            path.push((PathStep::Index, vec![i]));
                        }
                        IndexItem::Range(start, end) => {
                            let mut ops = Vec::new();
                            if let Some(s) = start {
                                ops.push(self.index_operand(s, "a slice bound")?);
                            }
                            if let Some(s) = end {
                                ops.push(self.index_operand(s, "a slice bound")?);
                            }
                            at(&mut path, axis);
                            path.push((
                                PathStep::Slice {
                                    start: start.is_some(),
                                    end: end.is_some(),
                                },
                                ops,
                            ));
                            axis += 1;
                        }
                        IndexItem::Stepped(start, end, step) => {
                            let mut ops = Vec::new();
                            for b in [start, end].into_iter().flatten() {
                                ops.push(self.index_operand(b, "a slice bound")?);
                            }
                            ops.push(self.index_operand(step, "a slice step")?);
                            at(&mut path, axis);
                            path.push((
                                PathStep::Stepped {
                                    start: start.is_some(),
                                    end: end.is_some(),
                                },
                                ops,
                            ));
                            axis += 1;
                        }
                        IndexItem::NewAxis => {
                            at(&mut path, axis);
                            path.push((PathStep::NewAxis, Vec::new()));
                            axis += 1;
                        }
                    }
                }
                if path
                    .iter()
                    .any(|(s, _)| matches!(s, PathStep::At(a) if *a > 0))
                {
                    path.push((PathStep::At(0), Vec::new()));
                }
                if let Some((axis, idx)) = gather {
                    let x = self.view_of(b, path, base)?;
                    if axis >= self.ty(x).rank {
                        let t = self.ty(b);
                        self.diag.error(e.span, msg::too_many_indices(t));
                        return None;
                    }
                    return Some((self.gather(x, idx, axis, e)?, Vec::new()));
                }
                Some((b, path))
            }
            _ => Some((self.value(e)?, Vec::new())),
        }
    }

    /// The type of `base` after `path`; an error if it indexes more axes than there are.
    pub(super) fn subtensor_type(
        &mut self,
        base: Value,
        path: &[(PathStep, Vec<NodeId>)],
        e: &Expr,
    ) -> Option<Type> {
        let t = self.ty(base);
        let mut rank = t.rank;
        // The axis the steps act on (`PathStep::At`).
        let mut at = 0usize;
        for (step, _) in path {
            match step {
                PathStep::At(a) => at = *a,
                PathStep::NewAxis if at <= rank => rank += 1,
                PathStep::Check(_) => {}
                _ if at >= rank => {
                    self.diag.error(e.span, msg::too_many_indices(t));
                    return None;
                }
                PathStep::Index => rank -= 1,
                _ => {}
            }
        }
        Some(t.with_rank(rank))
    }
}

/// The value of numpy's constant `name` (`np.inf`, `np.nan`, `np.pi`, `np.e`).
fn named_constant(name: &str) -> Option<f64> {
    Some(match name {
        "inf" => f64::INFINITY,
        "nan" => f64::NAN,
        "pi" => std::f64::consts::PI,
        "e" => std::f64::consts::E,
        _ => return None,
    })
}

/// A literal converted to `dtype` the way a cast would (Rust's `as`: an integer wraps to
/// a narrower integer and rounds to the nearest float, a float truncates toward zero and
/// saturates, NaN giving 0; bool is 0 or 1; a number is true when not 0).
pub(crate) fn convert(value: Literal, dtype: DType) -> Literal {
    macro_rules! ints {
        ($($d:ident => $t:ty),*) => {
            match (dtype, value) {
                $((DType::$d, Literal::Int(v)) => Some(v as $t as i128),)*
                $((DType::$d, Literal::Float(x)) => Some(x as $t as i128),)*
                _ => None,
            }
        };
    }
    let int = ints!(I8 => i8, I16 => i16, I32 => i32, I64 => i64, U8 => u8, U16 => u16,
        U32 => u32, U64 => u64);
    match (value, dtype) {
        (Literal::Bool(b), DType::Bool) => Literal::Bool(b),
        (Literal::Int(v), DType::Bool) => Literal::Bool(v != 0),
        (Literal::Float(x), DType::Bool) => Literal::Bool(x != 0.0),
        (Literal::Bool(b), d) if d.is_int() => Literal::Int(i128::from(b)),
        (Literal::Bool(b), _) => Literal::Float(f64::from(u8::from(b))),
        (Literal::Int(v), DType::F32) => Literal::Float(f64::from(v as f32)),
        (Literal::Int(v), DType::F64) => Literal::Float(v as f64),
        (Literal::Float(x), DType::F32) => Literal::Float(f64::from(x as f32)),
        (Literal::Float(x), DType::F64) => Literal::Float(x),
        (_, _) => Literal::Int(int.unwrap_or(0)),
    }
}
