//! The evaluator's forward mode: Jacobian-vector products by dual numbers, written
//! independently of the compiler's reverse mode so that tests can compare the two.
//!
//! Every value is paired with its tangent (`None`: a zero tangent; integer and bool values
//! never have one). A node's primal value is the evaluator's own (`eval_node`);
//! its tangent follows from the tangents of its inputs by the op's derivative rule, one
//! rule per op in `rule`, computed exactly in the op's float dtype (no finite
//! differences). Ops that are linear in an operand (indexing, joins, transposes, sums,
//! `set_subtensor`, ...) are applied to the tangents by the evaluator's own functions. A
//! scan runs its step's JVP at every step, its sequences, outputs (with their initial
//! states) and non-sequences followed by their tangents through the evaluator's own loop
//! (`scan::run_scan`), so taps, directions, `n_steps` and `until` (the steps
//! actually taken) are the primal loop's. [`gradient_by_jvp`] assembles a full gradient
//! from one JVP per element: what tests compare the compiler's reverse mode with.
//!
//! Conventions where a function is not differentiable (PyTensor's, `scalar/basic.py` and
//! `tensor/math.py`, so that the reverse mode, which follows PyTensor, agrees):
//! - `abs'(0) = 0` (`sign(x)`); `sign`, `floor`, `ceil`, `round`, `trunc` and `//` have
//!   zero derivatives; `x % y` has `1` and `-(x // y)`.
//! - `maximum(x, y)` passes x's tangent where `x >= y` (ties included), else y's;
//!   `minimum(x, y)` x's where `x <= y`. `relu(x) = maximum(x, 0)`: `relu'(0) = 1`.
//! - `clip(x, lo, hi)`: x's tangent where `lo <= x <= hi`, lo's where `x < lo`, hi's where
//!   `x > hi`.
//! - `pow(x, y)`: `y x^(y-1)` for x, and `x^y ln x` for y except 0 where `x == 0`.
//! - `where_(c, a, b)` selects the branches' tangents.
//! - `max`/`min` reductions: the sum of the tangents of every element equal to the
//!   result (the forward form of PyTensor's rule, which routes the gradient to each of
//!   them).
//! - A tangent element that is exactly zero contributes nothing to an elementwise result,
//!   even where the derivative is infinite or NaN (a basis tangent, one element at a time,
//!   does not spread another element's NaN); reverse mode's zero cotangents agree.
//! - Random draws have no tangent; `gamma` and `beta` reached by one are an `Err`.
//! - `det`, `slogdet` and the solves of a singular matrix are the solve's `Err`. `eigh`
//!   follows the textbook rule (distinct eigenvalues), `svd` too (distinct nonzero singular
//!   values; `svdvals` has `ds_i = u_iᵀ dA v_i` everywhere), `qr` with an invertible
//!   leading block of `r` (`jvp/spectral.rs`); the arbitrary columns of a full `svd` or a
//!   complete `qr` of a non-square matrix have no rule (an `Err` naming them), asked for
//!   only when the program reads them (a result of several that no live `Part` reads
//!   gets no tangent: a full `svd`'s values, a complete `qr`'s `r`, from the thin factors).
//!
//! An op is asked for its rule only when a tangent reaches it: a value computed from
//! values without tangents has none, whatever the op. The rewrite-only ops (`Fused`,
//! `DotSum`, `ZeroStepShape`, `LastOr`) do not appear in the IR before rewrites, which is what the
//! forward mode reads (`compile_to_ir`); reached by a tangent they are an `Err`.

use std::collections::HashSet;
use std::ops::Range;

use ndarray::{arr0, Array1, ArrayD, ArrayViewD, Axis, Dimension, IxDyn, Zip};

use super::num::Float;
use super::value::{same_dtype, Element, Value};
use super::{assemble, elemwise, linalg, ops, Slot};
use crate::ir::{
    Assume, DType, ElemOp, Function, Graph, LinalgOp, Literal, NodeId, Op, RandomOp, ReduceOp,
    ScanOp,
};

/// Runs `f` on `args` with `tangents` (one per argument: `None` is a zero tangent, and
/// the only one an integer or bool argument may have; a tangent has its argument's dtype
/// and shape). Returns the results and their tangents (`None` for a zero tangent and for
/// integer and bool results).
pub fn jvp_function(
    f: &Function,
    args: Vec<Value>,
    tangents: Vec<Option<Value>>,
) -> Result<(Vec<Value>, Vec<Option<Value>>), String> {
    super::check_arguments(f, &args)?;
    if tangents.len() != args.len() {
        return Err(format!(
            "`{}` takes {} arguments, given {} tangents",
            f.name,
            args.len(),
            tangents.len()
        ));
    }
    for ((param, arg), tangent) in f.params.iter().zip(&args).zip(&tangents) {
        let Some(t) = tangent else { continue };
        if !arg.dtype().is_float() {
            return Err(format!(
                "argument `{}` of `{}` is a {}: it has no tangent (give None)",
                param.name,
                f.name,
                arg.describe()
            ));
        }
        if t.dtype() != arg.dtype() || t.shape() != arg.shape() {
            return Err(format!(
                "the tangent of argument `{}` of `{}` should be a {}, got a {}",
                param.name,
                f.name,
                arg.describe(),
                t.describe()
            ));
        }
    }
    let (values, dots) = jvp_graph(&f.graph, &args, &tangents)?;
    super::check_results(f, &values)?;
    Ok((values, dots))
}

/// Compiles `source` without rewrites and runs [`jvp_function`] on its function named
/// `function`.
pub fn jvp(
    source: &str,
    function: &str,
    args: Vec<Value>,
    tangents: Vec<Option<Value>>,
) -> Result<(Vec<Value>, Vec<Option<Value>>), String> {
    jvp_function(&super::compile_function(source, function)?, args, tangents)
}

/// The gradient of result `output` (a float scalar) of `function` in `source` with
/// respect to argument `wrt` (a float array or scalar), at `args`: one JVP per element of
/// the argument, its tangent that element's basis vector. Of the argument's dtype and
/// shape.
pub fn gradient_by_jvp(
    source: &str,
    function: &str,
    args: Vec<Value>,
    wrt: usize,
    output: usize,
) -> Result<Value, String> {
    let f = super::compile_function(source, function)?;
    super::check_arguments(&f, &args)?;
    let x = args.get(wrt).ok_or_else(|| {
        format!(
            "`{function}` has no argument {wrt} (it takes {})",
            args.len()
        )
    })?;
    if !x.dtype().is_float() {
        return Err(format!(
            "argument {wrt} of `{function}` is a {}: only a float argument has a gradient",
            x.describe()
        ));
    }
    match f.results.get(output) {
        Some(ty) if ty.rank == 0 && ty.dtype.is_float() => {}
        Some(ty) => {
            return Err(format!(
                "result {output} of `{function}` is a {ty}: a gradient is of a float scalar"
            ))
        }
        None => {
            return Err(format!(
                "`{function}` has no result {output} (it has {})",
                f.results.len()
            ))
        }
    }
    let shape = x.shape().to_vec();
    let n: usize = shape.iter().product();
    let mut grad = Vec::with_capacity(n);
    for i in 0..n {
        let mut basis = ArrayD::<f64>::zeros(IxDyn(&shape));
        if let Some(e) = basis.iter_mut().nth(i) {
            *e = 1.0;
        }
        let mut tangents = vec![None; args.len()];
        tangents[wrt] = Some(Value::F64(basis).cast(x.dtype()));
        let (_, dots) = jvp_function(&f, args.clone(), tangents)?;
        let g = match dots.get(output) {
            Some(Some(t)) => t
                .cast(DType::F64)
                .array::<f64>()
                .and_then(|a| a.iter().next().copied()),
            _ => Some(0.0),
        };
        grad.push(g.ok_or_else(|| {
            format!("internal error: the tangent of result {output} is not a scalar")
        })?);
    }
    let grad =
        ArrayD::from_shape_vec(IxDyn(&shape), grad).map_err(|e| format!("internal error: {e}"))?;
    Ok(Value::F64(grad).cast(x.dtype()))
}

/// A node's tangent: of its value, or of each result of a scan (or of a linear-algebra
/// node with several results); `None` is zero.
enum Tangent {
    One(Option<Value>),
    Several(Vec<Option<Value>>),
}

impl Tangent {
    fn value(&self) -> Option<&Value> {
        match self {
            Tangent::One(t) => t.as_ref(),
            Tangent::Several(_) => None,
        }
    }
}

/// Evaluates `graph` on `inputs` and their `tangents`: the outputs' values and tangents.
pub fn jvp_graph(
    graph: &Graph,
    inputs: &[Value],
    tangents: &[Option<Value>],
) -> Result<(Vec<Value>, Vec<Option<Value>>), String> {
    if inputs.len() != graph.inputs.len() || tangents.len() != inputs.len() {
        return Err(format!(
            "IR error: the graph has {} inputs, given {} values and {} tangents",
            graph.inputs.len(),
            inputs.len(),
            tangents.len()
        ));
    }
    let mut slots: Vec<Option<Slot>> = (0..graph.nodes.len()).map(|_| None).collect();
    let mut dots: Vec<Tangent> = (0..graph.nodes.len()).map(|_| Tangent::One(None)).collect();
    let live = graph.live_nodes();
    // The results of each node of several that a live `Part` reads: one nobody reads
    // needs no tangent (svd's arbitrary columns when only its values are read).
    let read: HashSet<(usize, usize)> = live
        .iter()
        .filter_map(
            |&id| match (&graph.node(id).op, graph.node(id).inputs.first()) {
                (Op::Part { index }, Some(whole)) => Some((whole.0, *index)),
                _ => None,
            },
        )
        .collect();
    for id in live {
        let node = graph.node(id);
        let targs: Vec<Option<Value>> = node
            .inputs
            .iter()
            .map(|i| dots[i.0].value().cloned())
            .collect();
        let (slot, dot) = match &node.op {
            // The primal loop and the tangents' in one (the step's primal values are needed).
            Op::Scan(op) if targs.iter().any(Option::is_some) => {
                let args = primal_args(graph, &slots, &node.inputs)?;
                let (values, dots) = jvp_scan(op, &args, &targs, &node.label)?;
                (Slot::Scan(values), Tangent::Several(dots))
            }
            _ => {
                let slot = super::eval_node(graph, id, &slots, inputs)?;
                let dot = node_tangent(graph, id, &slots, &dots, &slot, &targs, tangents, &read)?;
                (slot, dot)
            }
        };
        check_tangent(id, &node.label, &slot, &dot)?;
        slots[id.0] = Some(slot);
        dots[id.0] = dot;
    }
    let values = primal_args(graph, &slots, &graph.outputs)?;
    let dots = graph
        .outputs
        .iter()
        .map(|o| dots[o.0].value().cloned())
        .collect();
    Ok((values, dots))
}

fn primal_args(
    graph: &Graph,
    slots: &[Option<Slot>],
    ids: &[NodeId],
) -> Result<Vec<Value>, String> {
    ids.iter()
        .map(|&i| super::value_of(graph, slots, i).cloned())
        .collect()
}

/// A tangent has its value's dtype and shape (a wrong rule shows up here, not as a wrong
/// number).
fn check_tangent(id: NodeId, label: &str, slot: &Slot, dot: &Tangent) -> Result<(), String> {
    let pairs: Vec<(&Value, &Value)> = match (slot, dot) {
        (Slot::Value(v), Tangent::One(Some(t))) => vec![(v, t)],
        (Slot::Scan(vs), Tangent::Several(ts)) => vs
            .iter()
            .zip(ts)
            .filter_map(|(v, t)| t.as_ref().map(|t| (v, t)))
            .collect(),
        _ => vec![],
    };
    for (v, t) in pairs {
        if t.dtype() != v.dtype() || t.shape() != v.shape() {
            return Err(format!(
                "internal error: node {} (`{label}`) is a {} but its tangent a {}",
                id.0,
                v.describe(),
                t.describe()
            ));
        }
    }
    Ok(())
}

/// The tangent of node `id`, whose value is `slot`, from its inputs' tangents `targs`;
/// `read` holds the `(node, index)` of the results of several that are read.
#[allow(clippy::too_many_arguments)]
fn node_tangent(
    graph: &Graph,
    id: NodeId,
    slots: &[Option<Slot>],
    dots: &[Tangent],
    slot: &Slot,
    targs: &[Option<Value>],
    input_tangents: &[Option<Value>],
    read: &HashSet<(usize, usize)>,
) -> Result<Tangent, String> {
    let node = graph.node(id);
    match &node.op {
        Op::Input { index, .. } => {
            return Ok(Tangent::One(input_tangents.get(*index).cloned().flatten()))
        }
        Op::ScanOutput { index } | Op::Part { index } => {
            let t = match node.inputs.first().map(|i| &dots[i.0]) {
                Some(Tangent::Several(ts)) => ts.get(*index).cloned().flatten(),
                _ => None,
            };
            return Ok(Tangent::One(t));
        }
        _ => {}
    }
    if targs.iter().all(Option::is_none) {
        return Ok(Tangent::One(None));
    }
    let args = primal_args(graph, slots, &node.inputs)?;
    let label = node.label.as_str();
    match slot {
        Slot::Scan(parts) => match &node.op {
            Op::Linalg(op) => {
                let wanted: Vec<bool> = (0..parts.len())
                    .map(|k| read.contains(&(id.0, k)))
                    .collect();
                linalg_parts(*op, &args, targs, parts, &wanted, node.ty.dtype, label)
                    .map(Tangent::Several)
            }
            _ => Err(format!(
                "internal error: `{label}` has several results but is not a linear-algebra node"
            )),
        },
        Slot::Value(out) if !out.dtype().is_float() => Ok(Tangent::One(None)),
        Slot::Value(out) => rule(&node.op, &args, targs, out, label).map(Tangent::One),
    }
}

fn zeros_like(v: &Value) -> Value {
    ops::fill_like(v, Literal::zero(v.dtype()), v.dtype())
}

/// `a + b` of two tangents, either of which may be zero.
fn add(a: Option<Value>, b: Option<Value>, label: &str) -> Result<Option<Value>, String> {
    match (a, b) {
        (Some(a), Some(b)) => elemwise::eval_elemwise(ElemOp::Add, &[a, b], label).map(Some),
        (a, None) => Ok(a),
        (None, b) => Ok(b),
    }
}

fn elem(op: ElemOp, args: &[Value], label: &str) -> Result<Value, String> {
    elemwise::eval_elemwise(op, args, label)
}

/// The derivative rule of each op: the tangent of a float value `out` computed by `op`
/// from `args`, whose tangents are `targs` (at least one is not zero).
fn rule(
    op: &Op,
    args: &[Value],
    targs: &[Option<Value>],
    out: &Value,
    label: &str,
) -> Result<Option<Value>, String> {
    let dtype = out.dtype();
    let t = |k: usize| targs.get(k).and_then(Option::as_ref);
    // The tangent of operand k, zeros when it has none.
    let tz = |k: usize| -> Result<Value, String> {
        match (t(k), args.get(k)) {
            (Some(t), _) => Ok(t.clone()),
            (None, Some(a)) => Ok(zeros_like(a)),
            (None, None) => Err(format!("IR error: `{label}` has no operand {k}")),
        }
    };
    // An op linear in its first operand, the others (indices, lengths) fixed.
    let linear = |f: &dyn Fn(&Value) -> Result<Value, String>| t(0).map(f).transpose();
    match op {
        Op::Input { .. } | Op::ScanOutput { .. } | Op::Part { .. } | Op::Scan(_) => Err(format!(
            "internal error: `{label}`: inputs, scans and their results are not differentiated \
             by a rule"
        )),
        // Constants and values made from lengths and shapes alone.
        Op::Const(_)
        | Op::FillLike { .. }
        | Op::Arange
        | Op::Shape { .. }
        | Op::Eye
        | Op::IdentityLike => Ok(None),
        Op::Cast => linear(&|t| Ok(t.cast(dtype))),
        Op::Elemwise(op) => elemwise_tangent(*op, args, targs, out, label).map(Some),
        Op::Dot => product(args, targs, label, &|a, b| ops::dot(a, b, label)),
        Op::MatMul => product(args, targs, label, &|a, b| ops::matmul(a, b, label)),
        Op::Reduce { op, axis } => match t(0) {
            Some(t0) => reduce_tangent(*op, *axis, &args[0], t0, out, label),
            None => Ok(None),
        },
        Op::Full => linear(&|t| ops::full(t, &args[1..], label)),
        Op::Reshape => linear(&|t| ops::reshape(t, &args[1..], label)),
        Op::Concatenate { axis } => {
            let parts = (0..args.len()).map(tz).collect::<Result<Vec<_>, _>>()?;
            assemble::concatenate(&parts, *axis, label).map(Some)
        }
        Op::Stack { axis } => {
            let parts = (0..args.len()).map(tz).collect::<Result<Vec<_>, _>>()?;
            assemble::stack(&parts, *axis, label).map(Some)
        }
        Op::Squeeze { axis } => linear(&|t| assemble::squeeze(t, *axis, label)),
        Op::BroadcastTo => linear(&|t| assemble::broadcast_to(t, &args[1..], label)),
        // Linear in input `index`, the others giving only their shapes.
        Op::BroadcastArrays { index } => {
            let shapes: Vec<&[usize]> = args.iter().map(|a| a.shape()).collect();
            t(*index)
                .map(|t| assemble::broadcast_arrays(t, &shapes, label))
                .transpose()
        }
        Op::Diag => linear(&|t| assemble::diag(t, &args[1], label)),
        Op::Tri { upper } => linear(&|t| assemble::tri(t, &args[1], *upper, label)),
        Op::Take { axis } => linear(&|t| assemble::take(t, &args[1], *axis, label)),
        Op::MaskTake => linear(&|t| assemble::mask_take(t, &args[1], label)),
        Op::Scatter { axis, inc } => {
            assemble::scatter(&tz(0)?, &tz(1)?, &args[2], *axis, *inc, label).map(Some)
        }
        Op::MaskSet { inc } => {
            assemble::mask_set(&tz(0)?, &tz(1)?, &args[2], *inc, label).map(Some)
        }
        Op::Linalg(op) => linalg_tangent(*op, args, targs, out, label).map(Some),
        Op::Random(op) => match op {
            RandomOp::Gamma | RandomOp::Beta => Err(format!(
                "`{label}`: the forward mode has no derivative of {} draws with respect to \
                 their parameters",
                op.name()
            )),
            RandomOp::DeriveKey
            | RandomOp::Split
            | RandomOp::Uniform
            | RandomOp::Normal
            | RandomOp::Bernoulli
            | RandomOp::Categorical => Ok(None),
        },
        Op::Cumulative {
            product: false,
            axis,
        } => linear(&|t| ops::cumulative(t, false, *axis, dtype, label)),
        Op::Cumulative {
            product: true,
            axis,
        } => match t(0) {
            Some(t0) => {
                let (x, t0) = (args[0].cast(dtype), t0.cast(dtype));
                same_dtype!([F32, F64], (&x, &t0), (x, t) => Element::into_value(cumprod_tangent(x, t, *axis)))
                    .map(Some)
                    .ok_or_else(|| format!("IR error: `{label}`: cumprod of {}", x.describe()))
            }
            None => Ok(None),
        },
        Op::Subtensor { path } => linear(&|t| ops::subtensor(t, path, &args[1..], label)),
        Op::SetSubtensor { path, inc } => {
            ops::set_subtensor(&tz(0)?, &tz(1)?, path, *inc, &args[2..], label).map(Some)
        }
        Op::Transpose => linear(&|t| Ok(ops::transpose(t))),
        // A sum back to a shape is linear in the summed value.
        Op::Unbroadcast => match t(0) {
            Some(t0) => assemble::sum_to_shape(t0, &args[1], label).map(Some),
            None => Ok(None),
        },
        Op::Permute { axes } => linear(&|t| Ok(ops::permute(t, axes))),
        Op::ZeroStepShape
        | Op::LastOr
        | Op::DotSum { .. }
        | Op::DotAdd { .. }
        | Op::StackRows
        | Op::StackedDot { .. }
        | Op::JoinSlices { .. }
        | Op::Fused(_) => Err(format!(
            "`{label}`: the forward mode differentiates the IR before rewrites, which has no \
             node made by them (compile with `compile_to_ir`)"
        )),
    }
}

/// The tangent of a product bilinear in its two operands: `f(da, b) + f(a, db)`.
fn product(
    args: &[Value],
    targs: &[Option<Value>],
    label: &str,
    f: &dyn Fn(&Value, &Value) -> Result<Value, String>,
) -> Result<Option<Value>, String> {
    let (Some(a), Some(b)) = (args.first(), args.get(1)) else {
        return Err(format!("IR error: `{label}` needs two operands"));
    };
    let da = targs
        .first()
        .cloned()
        .flatten()
        .map(|t| f(&t, b))
        .transpose()?;
    let db = targs
        .get(1)
        .cloned()
        .flatten()
        .map(|t| f(a, &t))
        .transpose()?;
    add(da, db, label)
}

// ---------------------------------------------------------------------------------------
// Elementwise

fn elemwise_tangent(
    op: ElemOp,
    args: &[Value],
    targs: &[Option<Value>],
    out: &Value,
    label: &str,
) -> Result<Value, String> {
    if op == ElemOp::Where {
        let branch = |k: usize| match (targs.get(k).cloned().flatten(), args.get(k)) {
            (Some(t), _) => Ok(t),
            (None, Some(a)) => Ok(zeros_like(a)),
            (None, None) => Err(format!("IR error: `{label}`: where without operand {k}")),
        };
        return elem(
            ElemOp::Where,
            &[args[0].clone(), branch(1)?, branch(2)?],
            label,
        );
    }
    fn go<T: Float>(
        op: ElemOp,
        args: &[Value],
        targs: &[Option<Value>],
        out: &ArrayD<T>,
        label: &str,
    ) -> Result<ArrayD<T>, String> {
        let shape = out.shape();
        fn view<'a, T: Element>(
            v: &'a Value,
            shape: &[usize],
            label: &str,
        ) -> Result<ArrayViewD<'a, T>, String> {
            T::array(v)
                .and_then(|a| a.broadcast(IxDyn(shape)))
                .ok_or_else(|| {
                    format!(
                        "IR error: `{label}`: an operand {} of a {} result of shape {shape:?}",
                        v.describe(),
                        T::DTYPE
                    )
                })
        }
        let view = |v| view::<T>(v, shape, label);
        let xs = args.iter().map(view).collect::<Result<Vec<_>, _>>()?;
        let ts = targs
            .iter()
            .map(|t| t.as_ref().map(view).transpose())
            .collect::<Result<Vec<_>, _>>()?;
        if xs.len() > 3 {
            return Err(format!("IR error: `{label}` has {} operands", xs.len()));
        }
        Ok(ArrayD::from_shape_fn(IxDyn(shape), |ix| {
            let ix = ix.slice();
            let mut x = [T::zero(); 3];
            for (k, a) in xs.iter().enumerate() {
                x[k] = a[ix];
            }
            let mut acc = T::zero();
            for (k, t) in ts.iter().enumerate() {
                if let Some(t) = t {
                    let dt = t[ix];
                    if dt != T::zero() {
                        acc = acc.add(partial(op, k, x, out[ix]).mul(dt));
                    }
                }
            }
            acc
        }))
    }
    match out {
        Value::F32(o) => go(op, args, targs, o, label).map(Value::F32),
        Value::F64(o) => go(op, args, targs, o, label).map(Value::F64),
        _ => Err(format!(
            "IR error: `{label}`: a tangent of {}",
            out.describe()
        )),
    }
}

/// `∂ op(x) / ∂ x[k]` at the operands `x` (unused ones 0), the result being `r`.
fn partial<T: Float>(op: ElemOp, k: usize, x: [T; 3], r: T) -> T {
    let c = T::from_f64;
    let (zero, one) = (T::zero(), T::one());
    let pick = |yes: bool| if yes { one } else { zero };
    let [a, b, z] = x;
    match op {
        ElemOp::Add => one,
        ElemOp::Sub => pick(k == 0).sub(pick(k == 1)),
        ElemOp::Mul => [b, a][k.min(1)],
        ElemOp::Div if k == 0 => one.div(b),
        ElemOp::Div => a.div(b.mul(b)).neg(),
        ElemOp::Rem if k == 0 => one,
        ElemOp::Rem => a.floor_div(b).neg(),
        ElemOp::Neg => one.neg(),
        ElemOp::Abs => a.sign(),
        // Piecewise constant.
        ElemOp::FloorDiv
        | ElemOp::Sign
        | ElemOp::Floor
        | ElemOp::Ceil
        | ElemOp::Round
        | ElemOp::Trunc => zero,
        // Bool results, and `where` (its branches' tangents are selected): never asked.
        ElemOp::Not
        | ElemOp::And
        | ElemOp::Or
        | ElemOp::Xor
        | ElemOp::Lt
        | ElemOp::Le
        | ElemOp::Gt
        | ElemOp::Ge
        | ElemOp::Eq
        | ElemOp::Ne
        | ElemOp::IsNan
        | ElemOp::IsInf
        | ElemOp::IsFinite
        | ElemOp::Where => zero,
        ElemOp::Exp => r,
        ElemOp::Log => one.div(a),
        ElemOp::Tanh => one.sub(r.mul(r)),
        ElemOp::Sigmoid => r.mul(one.sub(r)),
        ElemOp::Sqrt => c(0.5).div(r),
        ElemOp::Pow if k == 0 => b.mul(a.powf(b.sub(one))),
        ElemOp::Pow if a == zero => zero,
        ElemOp::Pow => r.mul(a.ln()),
        ElemOp::Powi(0) => zero,
        // x^(n-1), with no overflow of n - 1 at i32::MIN.
        ElemOp::Powi(n) => c(f64::from(n)).mul(match n.checked_sub(1) {
            Some(m) => a.powi(m),
            None => a.powi(n).div(a),
        }),
        ElemOp::Maximum => pick((k == 0) == (a >= b)),
        ElemOp::Minimum => pick((k == 0) == (a <= b)),
        ElemOp::Relu => pick(a >= zero),
        ElemOp::Clip => match k {
            0 => pick(a >= b && a <= z),
            1 => pick(a < b),
            _ => pick(a > z),
        },
        ElemOp::Sin => a.cos(),
        ElemOp::Cos => a.sin().neg(),
        ElemOp::Tan => one.div(a.cos().mul(a.cos())),
        ElemOp::Arcsin => one.div(one.sub(a.mul(a)).sqrt()),
        ElemOp::Arccos => one.div(one.sub(a.mul(a)).sqrt()).neg(),
        ElemOp::Arctan => one.div(one.add(a.mul(a))),
        ElemOp::Sinh => a.cosh(),
        ElemOp::Cosh => a.sinh(),
        ElemOp::Arcsinh => one.div(a.mul(a).add(one).sqrt()),
        ElemOp::Arccosh => one.div(a.mul(a).sub(one).sqrt()),
        ElemOp::Arctanh => one.div(one.sub(a.mul(a))),
        ElemOp::Log1p => one.div(one.add(a)),
        ElemOp::Expm1 => a.exp(),
        ElemOp::Log2 => one.div(a.mul(c(std::f64::consts::LN_2))),
        ElemOp::Log10 => one.div(a.mul(c(std::f64::consts::LN_10))),
        ElemOp::Exp2 => r.mul(c(std::f64::consts::LN_2)),
        ElemOp::Square => c(2.0).mul(a),
        ElemOp::Reciprocal => one.div(a.mul(a)).neg(),
        ElemOp::Softplus => a.sigmoid(),
        ElemOp::LogSigmoid => a.neg().sigmoid(),
        // arctan2(a, b) = the angle of (b, a).
        ElemOp::Arctan2 if k == 0 => b.div(a.mul(a).add(b.mul(b))),
        ElemOp::Arctan2 => a.neg().div(a.mul(a).add(b.mul(b))),
        ElemOp::LogAddExp => [a, b][k.min(1)].sub(r).exp(),
        ElemOp::Erf => c(std::f64::consts::FRAC_2_SQRT_PI).mul(a.mul(a).neg().exp()),
        ElemOp::Erfc => c(std::f64::consts::FRAC_2_SQRT_PI)
            .mul(a.mul(a).neg().exp())
            .neg(),
        ElemOp::Erfcx => c(2.0)
            .mul(a)
            .mul(r)
            .sub(c(std::f64::consts::FRAC_2_SQRT_PI)),
        ElemOp::Erfinv => c(std::f64::consts::PI.sqrt() / 2.0).mul(r.mul(r).exp()),
        // d/dx log(1 - e^x) = -e^x / (1 - e^x) = -1 / expm1(-x).
        ElemOp::Log1mexp => one.div(a.neg().exp_m1()).neg(),
        ElemOp::Gammaln => a.digamma(),
        ElemOp::Digamma => trigamma(a),
    }
}

/// The trigamma function `ψ'(x)`, digamma's derivative: reflection below 1/2, the
/// recurrence `ψ'(x) = ψ'(x + 1) + 1/x²` up to 10, then the asymptotic series (its first
/// omitted term is below 1e-14 there). Infinite at the poles 0, -1, -2, ...
fn trigamma<T: Float>(x: T) -> T {
    let c = T::from_f64;
    let one = T::one();
    if x <= T::zero() && x == x.floor() {
        return c(f64::INFINITY);
    }
    if x < c(0.5) {
        // ψ'(1 - x) + ψ'(x) = π² / sin²(πx)
        let s = c(std::f64::consts::PI).mul(x).sin();
        return c(std::f64::consts::PI * std::f64::consts::PI)
            .div(s.mul(s))
            .sub(trigamma(one.sub(x)));
    }
    let mut acc = T::zero();
    let mut x = x;
    while x < c(10.0) {
        acc = acc.add(one.div(x.mul(x)));
        x = x.add(one);
    }
    let z = one.div(x);
    let z2 = z.mul(z);
    // 1/x + 1/(2x²) + Σ B_2k / x^(2k+1), k = 1..7
    let series = [
        7.0 / 6.0,
        -691.0 / 2730.0,
        5.0 / 66.0,
        -1.0 / 30.0,
        1.0 / 42.0,
        -1.0 / 30.0,
        1.0 / 6.0,
    ]
    .iter()
    .fold(T::zero(), |s, &b| s.mul(z2).add(c(b)));
    acc.add(z).add(z2.mul(c(0.5))).add(series.mul(z2).mul(z))
}

// ---------------------------------------------------------------------------------------
// Reductions and running products

fn reduce_tangent(
    op: ReduceOp,
    axis: Option<usize>,
    x: &Value,
    t: &Value,
    out: &Value,
    label: &str,
) -> Result<Option<Value>, String> {
    let dtype = out.dtype();
    match op {
        ReduceOp::Sum | ReduceOp::Mean => ops::reduce(op, axis, t, dtype, label).map(Some),
        ReduceOp::All | ReduceOp::Any | ReduceOp::ArgMax | ReduceOp::ArgMin => Ok(None),
        ReduceOp::Max
        | ReduceOp::Min
        | ReduceOp::Prod
        | ReduceOp::Var
        | ReduceOp::Std
        | ReduceOp::LogSumExp => {
            let (x, t) = (x.cast(dtype), t.cast(dtype));
            if axis.is_some_and(|a| a >= x.rank()) {
                return Err(format!("IR error: `{label}`: an axis past the rank"));
            }
            same_dtype!([F32, F64], (&x, &t, out), (x, t, r) => Element::into_value(lanes_tangent(op, x, t, r, axis)))
                .map(Some)
                .ok_or_else(|| format!("IR error: `{label}`: {} of {}", op.name(), x.describe()))
        }
    }
}

/// The tangent of a reduction of each lane (of all elements when `axis` is `None`): `x`
/// the lane, `t` its tangent, `r` the lane's result.
fn lanes_tangent<T: Float>(
    op: ReduceOp,
    x: &ArrayD<T>,
    t: &ArrayD<T>,
    r: &ArrayD<T>,
    axis: Option<usize>,
) -> ArrayD<T> {
    let f = |x: &[T], t: &[T], r: T| -> T {
        let dot = |w: &dyn Fn(T) -> T| {
            x.iter()
                .zip(t)
                .fold(T::zero(), |acc, (&x, &t)| acc.add(w(x).mul(t)))
        };
        match op {
            // Every element equal to the extreme (PyTensor's rule at ties).
            ReduceOp::Max | ReduceOp::Min => dot(&|x| if x == r { T::one() } else { T::zero() }),
            // The product rule, step by step: exact with zeros among the factors.
            ReduceOp::Prod => {
                let (mut p, mut dp) = (T::one(), T::zero());
                for (&x, &t) in x.iter().zip(t) {
                    dp = dp.mul(x).add(p.mul(t));
                    p = p.mul(x);
                }
                dp
            }
            ReduceOp::Var | ReduceOp::Std => {
                let mean = x
                    .iter()
                    .fold(T::zero(), |s, &x| s.add(x))
                    .div_count(x.len());
                let dvar = dot(&|x| x.sub(mean))
                    .mul(T::from_f64(2.0))
                    .div_count(x.len());
                if op == ReduceOp::Var {
                    dvar
                } else {
                    dvar.div(r.mul(T::from_f64(2.0)))
                }
            }
            ReduceOp::LogSumExp => dot(&|x| x.sub(r).exp()),
            // Linear or not float: the caller's.
            ReduceOp::Sum
            | ReduceOp::Mean
            | ReduceOp::All
            | ReduceOp::Any
            | ReduceOp::ArgMax
            | ReduceOp::ArgMin => T::zero(),
        }
    };
    match axis {
        None => {
            let xs: Vec<T> = x.iter().copied().collect();
            let ts: Vec<T> = t.iter().copied().collect();
            let r = r.iter().next().copied().unwrap_or_else(T::zero);
            arr0(f(&xs, &ts, r)).into_dyn()
        }
        Some(a) => Zip::from(x.lanes(Axis(a)))
            .and(t.lanes(Axis(a)))
            .and(r)
            .map_collect(|x, t, &r| f(&x.to_vec(), &t.to_vec(), r)),
    }
}

/// The tangent of `cumprod`: `dy_k = dy_(k-1) x_k + y_(k-1) dx_k` along each lane.
fn cumprod_tangent<T: Float>(x: &ArrayD<T>, t: &ArrayD<T>, axis: Option<usize>) -> ArrayD<T> {
    let walk = |x: Vec<T>, t: Vec<T>| -> Vec<T> {
        let (mut p, mut dp) = (T::one(), T::zero());
        x.into_iter()
            .zip(t)
            .map(|(x, t)| {
                dp = dp.mul(x).add(p.mul(t));
                p = p.mul(x);
                dp
            })
            .collect()
    };
    match axis {
        None => Array1::from(walk(
            x.iter().copied().collect(),
            t.iter().copied().collect(),
        ))
        .into_dyn(),
        Some(a) => {
            let mut out = t.clone();
            Zip::from(x.lanes(Axis(a)))
                .and(out.lanes_mut(Axis(a)))
                .for_each(|x, mut o| {
                    let d = walk(x.to_vec(), o.to_vec());
                    for (o, d) in o.iter_mut().zip(d) {
                        *o = d;
                    }
                });
            out
        }
    }
}

// ---------------------------------------------------------------------------------------
// Linear algebra

/// The matrix of a's triangle (`lower`, else upper) mirrored: what the Cholesky, `eigh`
/// and the symmetric solves read of `a`.
fn symmetric(a: &Value, lower: bool, label: &str) -> Result<Value, String> {
    let tri = |k: i64| assemble::tri(a, &Value::from(k), !lower, label);
    let strict = if lower { -1 } else { 1 };
    elem(
        ElemOp::Add,
        &[tri(0)?, ops::transpose(&tri(strict)?)],
        label,
    )
}

fn scaled(a: &Value, s: f64, label: &str) -> Result<Value, String> {
    elem(
        ElemOp::Mul,
        &[a.clone(), Value::from(s).cast(a.dtype())],
        label,
    )
}

/// `tr(a⁻¹ da)`: the tangent of `log|det a|` (LU solve: singular is an `Err`).
fn log_det_tangent(a: &Value, da: &Value, label: &str) -> Result<Value, String> {
    let solve = LinalgOp::Solve {
        assume: Assume::General,
        lower: false,
    };
    let m = linalg::linalg(solve, &[a.clone(), da.clone()], a.dtype(), label)?;
    let diagonal = assemble::diag(&m, &Value::from(0i64), label)?;
    ops::reduce(ReduceOp::Sum, None, &diagonal, a.dtype(), label)
}

/// The tangent of a linear-algebra function of one result `out`.
fn linalg_tangent(
    op: LinalgOp,
    args: &[Value],
    targs: &[Option<Value>],
    out: &Value,
    label: &str,
) -> Result<Value, String> {
    let dtype = out.dtype();
    let mm = |a: &Value, b: &Value| ops::dot(a, b, label);
    let tr = ops::transpose;
    let t = |k: usize| targs.get(k).cloned().flatten();
    let a = args
        .first()
        .ok_or_else(|| format!("IR error: `{label}` has no operand"))?;
    // A solve's right-hand side `db - da x`, solved by the op itself with the same matrix:
    // d(a⁻¹ b) = a⁻¹ (db - da x).
    let solve = |da: Option<Value>| -> Result<Value, String> {
        let b = args
            .get(1)
            .ok_or_else(|| format!("IR error: `{label}` has no right-hand side"))?;
        let mut rhs = t(1).unwrap_or_else(|| zeros_like(b));
        if let Some(da) = da {
            rhs = elem(ElemOp::Sub, &[rhs, mm(&da, out)?], label)?;
        }
        linalg::linalg(op, &[a.clone(), rhs], dtype, label)
    };
    let tri = |x: &Value, k: i64, upper: bool| assemble::tri(x, &Value::from(k), upper, label);
    match op {
        // dL = L Φ(L⁻¹ dS L⁻ᵀ), Φ the lower triangle with its diagonal halved; U = Lᵀ.
        LinalgOp::Cholesky { lower, .. } => {
            let Some(da) = t(0) else {
                return Ok(zeros_like(out));
            };
            let l = if lower { out.clone() } else { tr(out) };
            let s = symmetric(&da, lower, label)?;
            let lower_solve = LinalgOp::SolveTriangular {
                lower: true,
                trans: false,
                unit_diagonal: false,
            };
            let l_solve =
                |m: &Value| linalg::linalg(lower_solve, &[l.clone(), m.clone()], dtype, label);
            let m = l_solve(&tr(&l_solve(&s)?))?;
            let phi = scaled(
                &elem(
                    ElemOp::Add,
                    &[tri(&m, 0, false)?, tri(&m, -1, false)?],
                    label,
                )?,
                0.5,
                label,
            )?;
            let dl = mm(&l, &phi)?;
            Ok(if lower { dl } else { tr(&dl) })
        }
        // a = F Fᵀ (lower, F = L) or Fᵀ F (upper, F = U), F the factor's triangle.
        LinalgOp::ChoSolve { lower } => {
            let da = match t(0) {
                Some(dc) => {
                    let f = tri(a, 0, !lower)?;
                    let df = tri(&dc, 0, !lower)?;
                    let (p, q) = if lower {
                        (mm(&df, &tr(&f))?, mm(&f, &tr(&df))?)
                    } else {
                        (mm(&tr(&df), &f)?, mm(&tr(&f), &df)?)
                    };
                    Some(elem(ElemOp::Add, &[p, q], label)?)
                }
                None => None,
            };
            solve(da)
        }
        LinalgOp::Solve { assume, lower } => {
            let da = match (t(0), assume) {
                (Some(da), Assume::General) => Some(da),
                (Some(da), Assume::Positive | Assume::Symmetric) => {
                    Some(symmetric(&da, lower, label)?)
                }
                (None, _) => None,
            };
            solve(da)
        }
        // The triangle read, without the diagonal when it is taken as ones.
        LinalgOp::SolveTriangular {
            lower,
            trans,
            unit_diagonal,
        } => {
            let da = match t(0) {
                Some(da) => {
                    let k = match (lower, unit_diagonal) {
                        (_, false) => 0,
                        (true, true) => -1,
                        (false, true) => 1,
                    };
                    let dt = tri(&da, k, !lower)?;
                    Some(if trans { tr(&dt) } else { dt })
                }
                None => None,
            };
            solve(da)
        }
        // d(a⁻¹) = -a⁻¹ da a⁻¹
        LinalgOp::Inv => match t(0) {
            Some(da) => elem(ElemOp::Neg, &[mm(&mm(out, &da)?, out)?], label),
            None => Ok(zeros_like(out)),
        },
        // d det a = det a · tr(a⁻¹ da)
        LinalgOp::Det => match t(0) {
            Some(da) => elem(
                ElemOp::Mul,
                &[out.clone(), log_det_tangent(a, &da, label)?],
                label,
            ),
            None => Ok(zeros_like(out)),
        },
        // Mode "r" and the singular values, from the factors with their vectors.
        LinalgOp::Qr { .. } => {
            let reduced = LinalgOp::Qr {
                mode: crate::ir::QrMode::Reduced,
            };
            let qr = linalg::several(reduced, std::slice::from_ref(a), dtype, label)?;
            match t(0) {
                Some(da) => Ok(spectral::qr(&qr[0], &qr[1], &da, false, label)?.1),
                None => Ok(zeros_like(out)),
            }
        }
        LinalgOp::SvdVals => {
            let thin = LinalgOp::Svd {
                full_matrices: false,
            };
            match t(0) {
                Some(da) => {
                    let usv = linalg::several(thin, std::slice::from_ref(a), dtype, label)?;
                    Ok(spectral::svd(&usv[0], &usv[1], &usv[2], &da, true, label)?.1)
                }
                None => Ok(zeros_like(out)),
            }
        }
        LinalgOp::SlogDet | LinalgOp::Eigh { .. } | LinalgOp::Svd { .. } => Err(format!(
            "IR error: `{label}`: {} has several results",
            op.name()
        )),
    }
}

/// The tangents of the results of a linear-algebra function of several (`parts`); those
/// not `read` may be left out (`None`), and are where they have no rule.
fn linalg_parts(
    op: LinalgOp,
    args: &[Value],
    targs: &[Option<Value>],
    parts: &[Value],
    read: &[bool],
    dtype: DType,
    label: &str,
) -> Result<Vec<Option<Value>>, String> {
    let read = |k: usize| read.get(k).copied().unwrap_or(true);
    let (Some(a), Some(Some(da))) = (args.first(), targs.first()) else {
        return Ok(vec![None; parts.len()]);
    };
    match (op, parts) {
        // The sign is piecewise constant.
        (LinalgOp::SlogDet, [_, _]) => Ok(vec![None, Some(log_det_tangent(a, da, label)?)]),
        // With k = Vᵀ dS V: dw = diag(k), dV = V (F ∘ k), F_ij = 1 / (w_j - w_i) off the
        // diagonal, 0 on it.
        (LinalgOp::Eigh { lower }, [w, v]) => {
            let s = symmetric(da, lower, label)?;
            let k = ops::dot(&ops::dot(&ops::transpose(v), &s, label)?, v, label)?;
            let dw = assemble::diag(&k, &Value::from(0i64), label)?;
            let (Value::F64(k64), Value::F64(w64)) = (k.cast(DType::F64), w.cast(DType::F64))
            else {
                return Err(format!("IR error: `{label}`: eigh of {}", a.describe()));
            };
            let fk = ArrayD::from_shape_fn(k64.raw_dim(), |ix| {
                let (i, j) = (ix[0], ix[1]);
                if i == j {
                    0.0
                } else {
                    k64[[i, j]] / (w64[[j]] - w64[[i]])
                }
            });
            let dv = ops::dot(v, &Value::F64(fk).cast(dtype), label)?;
            Ok(vec![Some(dw), Some(dv)])
        }
        // Only `r` read: from the reduced factors (a complete `r`'s rows past min(m, n)
        // are zeros, and so are their tangents).
        (LinalgOp::Qr { .. }, [_, r]) if !read(0) => {
            let reduced = LinalgOp::Qr {
                mode: crate::ir::QrMode::Reduced,
            };
            let qr = linalg::several(reduced, std::slice::from_ref(a), dtype, label)?;
            let dr = spectral::qr(&qr[0], &qr[1], da, false, label)?.1;
            let rows = r.shape().first().copied().unwrap_or(0);
            let missing = rows.saturating_sub(dr.shape().first().copied().unwrap_or(0));
            let dr = if missing == 0 {
                dr
            } else {
                let mut shape = r.shape().to_vec();
                shape[0] = missing;
                let zeros = Value::F64(ArrayD::zeros(IxDyn(&shape))).cast(dtype);
                assemble::concatenate(&[dr, zeros], 0, label)?
            };
            Ok(vec![None, Some(dr)])
        }
        (LinalgOp::Qr { .. }, [q, r]) => {
            let (dq, dr) = spectral::qr(q, r, da, true, label)?;
            Ok(vec![dq, Some(dr)])
        }
        (LinalgOp::Svd { .. }, [u, s, vh]) => {
            let values_only = !read(0) && !read(2);
            let (du, ds, dvh) = spectral::svd(u, s, vh, da, values_only, label)?;
            Ok(vec![du, Some(ds), dvh])
        }
        _ => Err(format!(
            "IR error: `{label}`: {} with {} results",
            op.name(),
            parts.len()
        )),
    }
}

// ---------------------------------------------------------------------------------------
// Scan

/// Which nodes of `graph` may have a tangent when the inputs flagged in `inputs` have one:
/// float values (and scans, and nodes of several results) computed from such a node.
fn varying_nodes(graph: &Graph, inputs: &[bool]) -> Vec<bool> {
    let mut varying = vec![false; graph.nodes.len()];
    for id in graph.live_nodes() {
        let node = graph.node(id);
        varying[id.0] = match node.op {
            Op::Input { index, .. } => inputs.get(index).copied().unwrap_or(false),
            _ => {
                node.inputs.iter().any(|i| varying[i.0])
                    && (node.ty.dtype.is_float()
                        || matches!(node.op, Op::Scan(_))
                        || node.op.has_parts())
            }
        };
    }
    varying
}

/// Per step input of `op` (sequence taps, output taps, non-sequences), whether it has a
/// tangent, given which sequences, outputs and non-sequences do.
fn step_flags(
    op: &ScanOp,
    sequences: &[bool],
    outputs: &[bool],
    non_sequences: &[bool],
) -> Vec<bool> {
    let seq = op
        .sequences
        .iter()
        .zip(sequences)
        .flat_map(|(s, &t)| s.taps.iter().map(move |_| t));
    let out = op
        .outputs
        .iter()
        .zip(outputs)
        .flat_map(|(o, &t)| o.taps.iter().map(move |_| t));
    seq.chain(out)
        .chain(non_sequences.iter().copied())
        .collect()
}

/// Runs the scan `op` on its outer inputs `args` with their tangents `targs`: its results
/// and their tangents. The loop is the evaluator's, on a scan whose sequences, recurrent
/// outputs and non-sequences are followed by their tangents (those that have one: an
/// output has one when its initial state has, or its step result depends on a value
/// that has, found by iterating to a fixed point), each step running the step's JVP.
fn jvp_scan(
    op: &ScanOp,
    args: &[Value],
    targs: &[Option<Value>],
    label: &str,
) -> Result<(Vec<Value>, Vec<Option<Value>>), String> {
    let n_out = op.outputs.len();
    let n_results = n_out + op.has_until as usize;
    if args.len() != op.n_outer_inputs()
        || targs.len() != args.len()
        || op.step.outputs.len() != n_results
        || op.step.inputs.len() != op.first_non_sequence_step_input() + op.non_sequences.len()
    {
        return Err(format!(
            "IR error: `{label}`: a scan of {} outer inputs, given {}, whose step has {} \
             inputs and {} outputs",
            op.n_outer_inputs(),
            args.len(),
            op.step.inputs.len(),
            op.step.outputs.len()
        ));
    }
    let n_seq = op.sequences.len();
    let first_ns = op.first_non_sequence_input();
    let n_ns = op.non_sequences.len();
    let seq_t: Vec<bool> = targs[..n_seq].iter().map(Option::is_some).collect();
    let ns_t: Vec<bool> = targs[first_ns..first_ns + n_ns]
        .iter()
        .map(Option::is_some)
        .collect();
    let mut out_t: Vec<bool> = (0..n_out)
        .map(|o| op.init_input(o).is_some_and(|i| targs[i].is_some()))
        .collect();
    loop {
        let varying = varying_nodes(&op.step, &step_flags(op, &seq_t, &out_t, &ns_t));
        let mut changed = false;
        for (o, has) in out_t.iter_mut().enumerate() {
            if !*has && varying[op.step.outputs[o].0] {
                *has = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let flags = step_flags(op, &seq_t, &out_t, &ns_t);

    // The doubled step's arguments, group by group (sequence taps, output taps,
    // non-sequences): the primal ones, then the tangents of those that have one.
    let n_in = op.step.inputs.len();
    let mut primal_pos = vec![0; n_in];
    let mut tangent_pos = vec![None; n_in];
    let mut next = 0;
    let groups: [Range<usize>; 3] = [
        0..op.first_output_tap_input(0),
        op.first_output_tap_input(0)..op.first_non_sequence_step_input(),
        op.first_non_sequence_step_input()..n_in,
    ];
    for group in groups {
        for k in group.clone() {
            primal_pos[k] = next;
            next += 1;
        }
        for k in group.filter(|&k| flags[k]) {
            tangent_pos[k] = Some(next);
            next += 1;
        }
    }

    let mut doubled = op.clone();
    let with = |flags: &[bool], k: usize| flags[k];
    doubled.sequences.extend(
        (0..n_seq)
            .filter(|&i| with(&seq_t, i))
            .map(|i| op.sequences[i].clone()),
    );
    doubled.outputs.extend(
        (0..n_out)
            .filter(|&o| with(&out_t, o))
            .map(|o| op.outputs[o].clone()),
    );
    doubled.non_sequences.extend(
        (0..n_ns)
            .filter(|&j| with(&ns_t, j))
            .map(|j| op.non_sequences[j].clone()),
    );
    // The step graph gives the results' types only (for zero steps): a tangent has its
    // value's.
    doubled.step.outputs = op.step.outputs[..n_out]
        .iter()
        .copied()
        .chain((0..n_out).filter(|&o| out_t[o]).map(|o| op.step.outputs[o]))
        .chain(op.has_until.then(|| op.step.outputs[n_out]))
        .collect();

    let mut inputs: Vec<Value> = args[..n_seq].to_vec();
    inputs.extend(targs[..n_seq].iter().flatten().cloned());
    inputs.extend(args[n_seq..first_ns].iter().cloned());
    for o in (0..n_out).filter(|&o| out_t[o]) {
        if let Some(i) = op.init_input(o) {
            inputs.push(targs[i].clone().unwrap_or_else(|| zeros_like(&args[i])));
        }
    }
    inputs.extend(args[first_ns..first_ns + n_ns].iter().cloned());
    inputs.extend(targs[first_ns..first_ns + n_ns].iter().flatten().cloned());
    inputs.extend(args[first_ns + n_ns..].iter().cloned());

    let step = |dargs: &[Value]| -> Result<Vec<Value>, String> {
        let arg = |p: usize| {
            dargs
                .get(p)
                .cloned()
                .ok_or_else(|| format!("internal error: `{label}`: no step argument {p}"))
        };
        let pargs = primal_pos
            .iter()
            .map(|&p| arg(p))
            .collect::<Result<Vec<_>, _>>()?;
        let targs = tangent_pos
            .iter()
            .map(|p| p.map(arg).transpose())
            .collect::<Result<Vec<_>, _>>()?;
        let (values, dots) = jvp_graph(&op.step, &pargs, &targs)?;
        if values.len() != n_results {
            return Err(format!(
                "IR error: `{label}`: the step returns {} values, expected {n_results}",
                values.len()
            ));
        }
        let mut results = values[..n_out].to_vec();
        for o in 0..n_out {
            match (out_t[o], &dots[o]) {
                (true, Some(t)) => results.push(t.clone()),
                (true, None) => results.push(zeros_like(&values[o])),
                (false, Some(_)) => {
                    return Err(format!(
                        "internal error: `{label}`: output `{}` has a tangent not foreseen",
                        op.outputs[o].label
                    ))
                }
                (false, None) => {}
            }
        }
        results.extend(values.get(n_out).cloned());
        Ok(results)
    };
    let mut results = super::scan::run_scan(&doubled, &inputs, label, step)?;
    let mut tangents = results.split_off(n_out).into_iter();
    let dots = out_t
        .iter()
        .map(|&has| if has { tangents.next() } else { None })
        .collect();
    Ok((results, dots))
}

mod spectral;
#[cfg(test)]
mod tests;
