//! The reference evaluator: a plain, slow interpreter of the scan-graph IR over ndarray
//! values, written independently of the emitter so that tests can compare the two.
//!
//! [`eval_function`] runs a lowered [`Function`] on [`Value`]s; [`run`] compiles source
//! first. Every node is evaluated in graph order (dead nodes are skipped), each into a fresh
//! array; a scan node runs its step graph once per step (see [`scan`]). After every node
//! the value's dtype and rank are checked against the node's type, so an inconsistent IR
//! shows up as an error starting with "IR error" rather than as a wrong number. Run-time
//! problems (sizes, indices, empty reductions) are `Err` messages naming the user's text
//! (`label`) of the node at fault and the sizes involved.

pub mod assemble;
pub mod elemwise;
pub mod jvp;
pub mod linalg;
pub mod num;
pub mod ops;
pub mod random;
pub mod scan;
mod special;
pub mod value;

#[cfg(test)]
mod tests;

pub use jvp::{gradient_by_jvp, jvp, jvp_function};
use std::rc::Rc;
use value::map_array;
pub use value::{assert_close, Element, Value};

use crate::ir::{ElemOp, Function, Graph, Literal, NodeId, Op, ParamKind, PathStep};

/// Runs function `f` on `args` (one per parameter, in order; scalars as 0-d values; a
/// `usize` parameter as a 0-d i64 value). Returns one value per declared result.
pub fn eval_function(f: &Function, args: Vec<Value>) -> Result<Vec<Value>, String> {
    check_arguments(f, &args)?;
    let results = eval_graph(&f.graph, &args)?;
    check_results(f, &results)?;
    Ok(results)
}

/// That `args` fit `f`'s parameters (count, types, usize values) and its graph's inputs;
/// shared with the forward mode ([`jvp::jvp_function`]).
fn check_arguments(f: &Function, args: &[Value]) -> Result<(), String> {
    if args.len() != f.params.len() {
        let names: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
        return Err(format!(
            "`{}` takes {} arguments ({}), got {}",
            f.name,
            f.params.len(),
            names.join(", "),
            args.len()
        ));
    }
    for (param, arg) in f.params.iter().zip(args) {
        if arg.ty() != param.ty {
            let usize_note = if param.kind == ParamKind::Usize {
                " (a usize parameter takes a 0-d i64 value)"
            } else {
                ""
            };
            return Err(format!(
                "argument `{}` of `{}` should be a {}{usize_note}, got a {}",
                param.name,
                f.name,
                param.ty,
                arg.describe()
            ));
        }
        if param.kind == ParamKind::Usize {
            if let Some(n) = arg.scalar_int().filter(|&n| n < 0) {
                return Err(format!(
                    "argument `{}` of `{}` is a usize, got {n}",
                    param.name, f.name
                ));
            }
        }
    }
    if f.graph.inputs.len() != f.params.len() {
        return Err(format!(
            "IR error: `{}` has {} parameters but its graph has {} inputs",
            f.name,
            f.params.len(),
            f.graph.inputs.len()
        ));
    }
    Ok(())
}

/// That the graph's `results` are the ones `f` declares.
fn check_results(f: &Function, results: &[Value]) -> Result<(), String> {
    if results.len() != f.results.len() {
        return Err(format!(
            "IR error: `{}` declares {} results but its graph returns {}",
            f.name,
            f.results.len(),
            results.len()
        ));
    }
    for (i, (ty, value)) in f.results.iter().zip(results).enumerate() {
        if value.ty() != *ty {
            return Err(format!(
                "IR error: result {i} of `{}` is declared a {ty} but is a {}",
                f.name,
                value.describe()
            ));
        }
    }
    Ok(())
}

/// Compiles `source` (a `scan!` block's contents) to IR, then evaluates its function named
/// `function` on `args` (see [`eval_function`]).
pub fn run(source: &str, function: &str, args: Vec<Value>) -> Result<Vec<Value>, String> {
    eval_function(&compile_function(source, function)?, args)
}

/// The function named `function` of `source`, compiled without rewrites.
fn compile_function(source: &str, function: &str) -> Result<Function, String> {
    Ok(compiled_function(source, function, &crate::rewrite::Config::none())?.0)
}

/// The function named `function` of `source` after the rewrites `config` enables, and
/// what they did to it.
fn compiled_function(
    source: &str,
    function: &str,
    config: &crate::rewrite::Config,
) -> Result<(Function, Vec<crate::rewrite::Fired>), String> {
    let functions = compiled(source, config)?;
    let found = functions.iter().find(|(f, _)| f.name == function);
    found.cloned().ok_or_else(|| {
        let names: Vec<&str> = functions.iter().map(|(f, _)| f.name.as_str()).collect();
        format!(
            "no function `{function}` in the source (it has: {})",
            names.join(", ")
        )
    })
}

/// Each function of `source` after the rewrites `config` enables, with what fired on it.
type Compiled = Vec<(Function, Vec<crate::rewrite::Fired>)>;

/// [`Compiled`], made once per thread and configuration: a test evaluates one source
/// many times (each function, each size, each rewrite pass), and compiling it, gradients
/// and all, was most of its time. (Per thread, not per process: the IR holds spans, which
/// cannot cross threads; the test harness runs each test on a thread of its own.)
fn compiled(source: &str, config: &crate::rewrite::Config) -> Result<Rc<Compiled>, String> {
    use crate::rewrite::Config;
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static CACHE: RefCell<HashMap<(String, Config), Rc<Compiled>>> =
            RefCell::new(HashMap::new());
    }
    let key = (source.to_string(), config.clone());
    if let Some(hit) = CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(hit);
    }
    let fresh: Compiled = if *config == Config::none() {
        let functions = crate::compile_to_ir(source)?;
        functions.into_iter().map(|f| (f, Vec::new())).collect()
    } else {
        let plain = compiled(source, &Config::none())?;
        plain
            .iter()
            .map(|(f, _)| {
                let mut f = f.clone();
                let fired = crate::rewrite::run(&mut f, config);
                (f, fired)
            })
            .collect()
    };
    let fresh = Rc::new(fresh);
    CACHE.with(|c| c.borrow_mut().insert(key, fresh.clone()));
    Ok(fresh)
}

/// Checks that the rewrites leave what `function` of `source` computes unchanged: evaluated
/// after each pass alone and after all of them, the results are bit-identical to those
/// without rewrites (`{:?}` prints floats exactly, and NaN matches NaN), or both are errors;
/// where push_out_dot or running_sum fired (they sum in another order) or reuse_cholesky
/// (a determinant from another factorisation), floats agree within
/// the tolerance of [`assert_close`] and integers exactly.
/// It checks `args` and the same program at other loop lengths (see `length_variants`),
/// so that every test program is also tried at 0, 1, 2 and an odd number of steps. `Err`
/// says which rewrites changed what, on which arguments.
pub fn rewrites_agree(source: &str, function: &str, args: &[Value]) -> Result<(), String> {
    use crate::rewrite::{Config, Pass, ORDER};
    let mut configs: Vec<(&str, Config)> = ORDER
        .iter()
        .map(|p| (p.name(), Config::only(&[*p])))
        .collect();
    configs.push(("all", Config::all()));
    // A function, and whether a pass that reassociates float sums fired on it.
    let compile = |config: &Config| -> Result<(Function, bool), String> {
        let (f, fired) = compiled_function(source, function, config)
            .map_err(|e| format!("`{function}` does not compile: {e}"))?;
        let reassociated = fired.iter().any(|f| {
            [
                Pass::PushOutDot,
                Pass::RunningSum,
                Pass::ReuseCholesky,
                Pass::StackDots,
                Pass::GroupProjections,
            ]
            .iter()
            .any(|p| f.pass == p.name())
        });
        Ok((f, reassociated))
    };
    let (reference, _) = compile(&Config::none())?;
    let rewritten: Vec<(&str, (Function, bool))> = configs
        .iter()
        .map(|(name, config)| Ok((*name, compile(config)?)))
        .collect::<Result<_, String>>()?;
    for args in std::iter::once(args.to_vec()).chain(length_variants(args)) {
        let expected = eval_function(&reference, args.clone());
        for (name, (f, reassociated)) in &rewritten {
            let got = eval_function(f, args.clone());
            match (&expected, &got) {
                (Ok(r), Ok(g)) if bits(g) == bits(r) => {}
                // Sums in another order: within the tolerance of `assert_close`.
                (Ok(r), Ok(g))
                    if *reassociated
                        && r.len() == g.len()
                        && r.iter().zip(g).all(|(r, g)| assert_close(g, r).is_ok()) => {}
                (Err(_), Err(_)) => {}
                // Hoisted work runs before the loop, over all its rows at once, so a shape
                // error the loop would meet at its first step is met even when no step
                // runs: allowed only when the loop's results are all empty.
                (Ok(r), Err(_)) if r.iter().all(|v| v.shape().contains(&0)) => {}
                _ => {
                    return Err(format!(
                        "`{function}`: rewrites `{name}` change the results: {got:?}; without \
                         rewrites: {expected:?}; arguments {args:?}"
                    ))
                }
            }
        }
    }
    Ok(())
}

/// Values as their shapes and elements print them (the elements in order, whatever their
/// strides, so a view and a copy of the same elements are the same): equal when bit for
/// bit equal, NaNs too.
fn bits(values: &[Value]) -> String {
    let standard: Vec<Value> = values
        .iter()
        .map(|v| map_array!(v, a => ndarray::Array::from_iter(a.iter().cloned()).into_dyn()))
        .collect();
    let shapes: Vec<&[usize]> = values.iter().map(|v| v.shape()).collect();
    format!("{shapes:?} {standard:?}")
}

/// The loop lengths every program is also checked at.
const CHECKED_LENGTHS: [usize; 4] = [0, 1, 2, 5];

/// `args` at other loop lengths, for [`rewrites_agree`]: every integer scalar (counts such
/// as `n_steps`) set to each of [`CHECKED_LENGTHS`]; and each array argument in turn cut to
/// that many leading rows (a sequence run for fewer steps). Variants the program rejects
/// (a weight matrix cut short) must be rejected with and without rewrites alike.
fn length_variants(args: &[Value]) -> Vec<Vec<Value>> {
    let mut variants = Vec::new();
    for n in CHECKED_LENGTHS {
        if args.iter().any(|a| a.scalar_int().is_some()) {
            variants.push(
                args.iter()
                    .map(|a| match a {
                        int if int.rank() == 0 && int.dtype().is_int() => {
                            Value::from(n as i64).cast(int.dtype())
                        }
                        other => other.clone(),
                    })
                    .collect(),
            );
        }
        for (i, a) in args.iter().enumerate() {
            if a.rank() >= 1 && a.shape()[0] > n {
                let mut cut = args.to_vec();
                cut[i] = a.leading_rows(n);
                variants.push(cut);
            }
        }
    }
    variants
}

/// What a node evaluated to: a value, or all the results of a scan node (or of a
/// linear-algebra node with several results).
pub(crate) enum Slot {
    Value(Value),
    Scan(Vec<Value>),
}

/// Evaluates `graph` with `inputs` as its inputs (function arguments or step arguments) and
/// returns the values of its outputs.
pub fn eval_graph(graph: &Graph, inputs: &[Value]) -> Result<Vec<Value>, String> {
    if inputs.len() != graph.inputs.len() {
        return Err(format!(
            "IR error: the graph has {} inputs, given {}",
            graph.inputs.len(),
            inputs.len()
        ));
    }
    let mut slots: Vec<Option<Slot>> = (0..graph.nodes.len()).map(|_| None).collect();
    for id in graph.live_nodes() {
        let slot = eval_node(graph, id, &slots, inputs)?;
        slots[id.0] = Some(slot);
    }
    graph
        .outputs
        .iter()
        .map(|&id| value_of(graph, &slots, id).cloned())
        .collect()
}

/// The value computed for node `id`.
pub(crate) fn value_of<'a>(
    graph: &Graph,
    slots: &'a [Option<Slot>],
    id: NodeId,
) -> Result<&'a Value, String> {
    match slots.get(id.0) {
        Some(Some(Slot::Value(v))) => Ok(v),
        Some(Some(Slot::Scan(_))) => Err(format!(
            "IR error: node {} (`{}`) is a scan, used as a value",
            id.0,
            graph.node(id).label
        )),
        _ => Err(format!(
            "IR error: node {} is used before it is computed",
            id.0
        )),
    }
}

/// The value of node `id` from the values of the nodes before it (`slots`); the forward
/// mode (`jvp.rs`) computes its primal values through it.
pub(crate) fn eval_node(
    graph: &Graph,
    id: NodeId,
    slots: &[Option<Slot>],
    inputs: &[Value],
) -> Result<Slot, String> {
    let node = graph.node(id);
    let label = node.label.as_str();
    let dtype = node.ty.dtype;

    if let Op::ScanOutput { index } | Op::Part { index } = node.op {
        // The nodes whose input is a scan (or a linear-algebra node with several results)
        // rather than a value.
        let results = match node.inputs.as_slice() {
            [scan] => match slots.get(scan.0) {
                Some(Some(Slot::Scan(results))) => results,
                _ => {
                    return Err(ir_error(
                        id,
                        label,
                        "reads a node that is not a computed scan or several results",
                    ))
                }
            },
            _ => return Err(ir_error(id, label, "needs exactly one input")),
        };
        let value = results
            .get(index)
            .ok_or_else(|| ir_error(id, label, "reads a scan output that does not exist"))?;
        return check_type(id, node, value.clone()).map(Slot::Value);
    }

    let args: Vec<Value> = node
        .inputs
        .iter()
        .map(|&i| value_of(graph, slots, i).cloned())
        .collect::<Result<_, _>>()?;
    let arity = |n: usize| -> Result<(), String> {
        if args.len() == n {
            Ok(())
        } else {
            Err(ir_error(
                id,
                label,
                &format!("has {} inputs, expected {n}", args.len()),
            ))
        }
    };
    let value = match &node.op {
        Op::Input { index, .. } => inputs
            .get(*index)
            .cloned()
            .ok_or_else(|| ir_error(id, label, "reads an input that does not exist"))?,
        Op::Const(literal) => value::literal_value(*literal, dtype),
        Op::Cast => {
            arity(1)?;
            args[0].cast(dtype)
        }
        Op::Elemwise(op) => elemwise::eval_elemwise(*op, &args, label)?,
        Op::Dot => {
            arity(2)?;
            ops::dot(&args[0], &args[1], label)?
        }
        Op::MatMul => {
            arity(2)?;
            ops::matmul(&args[0], &args[1], label)?
        }
        Op::Reduce { op, axis } => {
            arity(1)?;
            ops::reduce(*op, *axis, &args[0], dtype, label)?
        }
        Op::FillLike { value } => {
            arity(1)?;
            ops::fill_like(&args[0], *value, dtype)
        }
        Op::Arange => {
            arity(1)?;
            ops::arange(&args[0], label)?
        }
        Op::Full => {
            if args.is_empty() {
                return Err(ir_error(id, label, "has no inputs"));
            }
            ops::full(&args[0], &args[1..], label)?
        }
        Op::Reshape => {
            if args.is_empty() {
                return Err(ir_error(id, label, "has no inputs"));
            }
            ops::reshape(&args[0], &args[1..], label)?
        }
        Op::Concatenate { axis } => assemble::concatenate(&args, *axis, label)?,
        Op::Stack { axis } => assemble::stack(&args, *axis, label)?,
        Op::Squeeze { axis } => {
            arity(1)?;
            assemble::squeeze(&args[0], *axis, label)?
        }
        Op::Diag => {
            arity(2)?;
            assemble::diag(&args[0], &args[1], label)?
        }
        Op::Tri { upper } => {
            arity(2)?;
            assemble::tri(&args[0], &args[1], *upper, label)?
        }
        Op::Take { axis } => {
            arity(2)?;
            assemble::take(&args[0], &args[1], *axis, label)?
        }
        Op::MaskTake => {
            arity(2)?;
            assemble::mask_take(&args[0], &args[1], label)?
        }
        Op::Scatter { axis, inc } => {
            arity(3)?;
            assemble::scatter(&args[0], &args[1], &args[2], *axis, *inc, label)?
        }
        Op::MaskSet { inc } => {
            arity(3)?;
            assemble::mask_set(&args[0], &args[1], &args[2], *inc, label)?
        }
        Op::IdentityLike => {
            arity(1)?;
            assemble::identity_like(&args[0], label)?
        }
        Op::Linalg(op) if !op.takes(args.len()) => {
            let expected = format!("has {} inputs, expected {}", args.len(), op.arity());
            return Err(ir_error(id, label, &expected));
        }
        Op::Linalg(op) if op.parts().is_some() => {
            return linalg::several(*op, &args, dtype, label).map(Slot::Scan);
        }
        Op::Linalg(op) => linalg::linalg(*op, &args, dtype, label)?,
        Op::BroadcastTo => {
            if args.is_empty() {
                return Err(ir_error(id, label, "has no inputs"));
            }
            assemble::broadcast_to(&args[0], &args[1..], label)?
        }
        Op::BroadcastArrays { index } => {
            let shapes: Vec<&[usize]> = args.iter().map(|a| a.shape()).collect();
            let x = args
                .get(*index)
                .ok_or_else(|| ir_error(id, label, "has no such input"))?;
            assemble::broadcast_arrays(x, &shapes, label)?
        }
        Op::Unbroadcast => {
            arity(2)?;
            assemble::sum_to_shape(&args[0], &args[1], label)?
        }
        Op::Eye => {
            arity(1)?;
            ops::eye(&args[0], label)?
        }
        Op::Random(op) => random::eval(*op, &args, dtype, label)?,
        Op::Cumulative { product, axis } => {
            arity(1)?;
            ops::cumulative(&args[0], *product, *axis, dtype, label)?
        }
        Op::Shape { axis } => {
            arity(1)?;
            let n = args[0].shape().get(*axis).copied().ok_or_else(|| {
                ir_error(
                    id,
                    label,
                    &format!("reads axis {axis} of {}", args[0].describe()),
                )
            })?;
            Value::I64(ndarray::ArrayD::from_elem(ndarray::IxDyn(&[]), n as i64))
        }
        Op::Subtensor { path } => {
            if args.is_empty() {
                return Err(ir_error(id, label, "has no inputs"));
            }
            ops::subtensor(&args[0], path, &args[1..], label)?
        }
        Op::SetSubtensor { path, inc } => {
            if args.len() < 2 {
                return Err(ir_error(id, label, "needs at least two inputs"));
            }
            ops::set_subtensor(&args[0], &args[1], path, *inc, &args[2..], label)?
        }
        Op::Transpose => {
            arity(1)?;
            ops::transpose(&args[0])
        }
        Op::Permute { axes } => {
            arity(1)?;
            if args[0].rank() != axes.len() {
                return Err(ir_error(id, label, "permutes another rank"));
            }
            ops::permute(&args[0], axes)
        }
        Op::ZeroStepShape => {
            arity(1)?;
            ops::zero_step_shape(&args[0])
        }
        // Its definition, the concatenation read at its last row.
        Op::LastOr => {
            arity(2)?;
            let head = ops::subtensor(&args[0], &[PathStep::NewAxis], &[], label)?;
            let both = assemble::concatenate(&[head, args[1].clone()], 0, label)?;
            ops::subtensor(&both, &[PathStep::Index], &[Value::from(-1i64)], label)?
        }
        Op::DotSum {
            transpose,
            output,
            result,
        } => {
            arity(3)?;
            let names = ops::DotSumNames {
                product: label,
                output,
                result,
            };
            ops::dot_sum(&args[0], &args[1], &args[2], *transpose, &names)?
        }
        // The product, then the addition, as before the gemm rewrite.
        Op::DotAdd { subtract } => {
            arity(3)?;
            let product = ops::dot(&args[1], &args[2], label)?;
            let op = if *subtract { ElemOp::Sub } else { ElemOp::Add };
            elemwise::eval_elemwise(op, &[args[0].clone(), product], label)?
        }
        Op::StackRows => assemble::stack_rows(&args, label)?,
        Op::StackedDot { products } => {
            let Some((s, rest)) = args.split_first() else {
                return Err(ir_error(id, label, "has no inputs"));
            };
            let (a, b) = rest.split_at(rest.len() / 2);
            ops::stacked_dot(s, a, b, products, label)?
        }
        // The increments of zeros, one by one, as before the join_slices rewrite.
        Op::JoinSlices {
            axis,
            slices,
            labels,
        } => {
            let n = slices.len();
            if args.len() < 1 + n || labels.len() != n {
                return Err(ir_error(id, label, "has fewer inputs than slices"));
            }
            let mut x = ops::fill_like(&args[0], Literal::zero(dtype), dtype);
            let mut bounds = args[1 + n..].iter();
            for (k, &(start, end)) in slices.iter().enumerate() {
                let operands: Vec<Value> = bounds
                    .by_ref()
                    .take(usize::from(start) + usize::from(end))
                    .cloned()
                    .collect();
                let path = [
                    PathStep::At(*axis),
                    PathStep::Slice { start, end },
                    PathStep::At(0),
                ];
                x = ops::set_subtensor(&x, &args[1 + k], &path, true, &operands, &labels[k])?;
            }
            x
        }
        // The fused operations evaluated one by one on whole arrays, as before fusion.
        Op::Fused(body) => {
            let mut results = eval_graph(body, &args)?;
            match results.len() {
                1 => results.remove(0),
                2 => return Ok(Slot::Scan(results)),
                _ => {
                    return Err(ir_error(
                        id,
                        label,
                        "is a fused body of neither one nor two outputs",
                    ))
                }
            }
        }
        Op::Scan(op) => return scan::eval_scan(op, &args, label).map(Slot::Scan),
        Op::ScanOutput { .. } | Op::Part { .. } => unreachable!("handled above"),
    };
    check_type(id, node, value).map(Slot::Value)
}

/// The value, if it has the node's dtype and rank.
fn check_type(id: NodeId, node: &crate::ir::Node, value: Value) -> Result<Value, String> {
    if value.ty() == node.ty {
        Ok(value)
    } else {
        Err(ir_error(
            id,
            &node.label,
            &format!(
                "is typed {} but evaluates to a {}",
                node.ty,
                value.describe()
            ),
        ))
    }
}

fn ir_error(id: NodeId, label: &str, what: &str) -> String {
    format!("IR error: node {} (`{label}`) {what}", id.0)
}
