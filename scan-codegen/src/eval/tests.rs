//! Whole-graph tests on hand-built IR: functions with scans (every kind of output and tap),
//! and the errors a run can end with.

use ndarray::{array, ArrayD, IxDyn};
use proc_macro2::Span;

use super::*;
use crate::ir::{
    DType, ElemOp, Graph, Literal, NodeId, Op, Output, Param, PathStep, ScanOp, Sequence, Type,
};

/// Builds a graph tersely: every node's type is given or inferred.
#[derive(Default)]
struct B {
    g: Graph,
}

impl B {
    fn new() -> B {
        B::default()
    }

    fn input(&mut self, name: &str, dtype: DType, rank: usize) -> NodeId {
        self.g
            .add_input(name, Type::new(dtype, rank), Span::call_site())
    }

    fn node(&mut self, op: Op, inputs: &[NodeId], ty: Type, label: &str) -> NodeId {
        self.g.add(crate::ir::Node {
            op,
            inputs: inputs.to_vec(),
            ty,
            span: Span::call_site(),
            label: label.to_string(),
        })
    }

    fn konst(&mut self, literal: Literal, dtype: DType) -> NodeId {
        self.g.add_const(literal, dtype, Span::call_site(), "const")
    }

    fn f64(&mut self, x: f64) -> NodeId {
        self.konst(Literal::Float(x), DType::F64)
    }

    fn i64(&mut self, x: i64) -> NodeId {
        self.konst(Literal::Int(x.into()), DType::I64)
    }

    /// An elementwise node; its type follows the operands (the last operand's dtype, so
    /// that `where` takes its branches' dtype) and the largest rank.
    fn elem(&mut self, op: ElemOp, inputs: &[NodeId], label: &str) -> NodeId {
        let operand = self.g.ty(*inputs.last().unwrap()).dtype;
        let rank = inputs.iter().map(|&i| self.g.ty(i).rank).max().unwrap();
        let ty = Type::new(op.result_dtype(operand), rank);
        self.node(Op::Elemwise(op), inputs, ty, label)
    }

    fn add(&mut self, a: NodeId, b: NodeId) -> NodeId {
        self.elem(ElemOp::Add, &[a, b], "a + b")
    }

    /// A scan node and one `ScanOutput` per output (typed from the step's outputs).
    fn scan(&mut self, op: ScanOp, inputs: &[NodeId]) -> Vec<NodeId> {
        let types: Vec<Type> = op.step.outputs[..op.outputs.len()]
            .iter()
            .map(|&o| op.step.ty(o))
            .collect();
        let scan = self.node(
            Op::Scan(Box::new(op)),
            inputs,
            Type::scalar(DType::Bool),
            "scan(...)",
        );
        types
            .iter()
            .enumerate()
            .map(|(index, ty)| {
                self.node(
                    Op::ScanOutput { index },
                    &[scan],
                    ty.with_rank(ty.rank + 1),
                    "scan output",
                )
            })
            .collect()
    }

    fn graph(mut self, outputs: &[NodeId]) -> Graph {
        self.g.outputs = outputs.to_vec();
        self.g
    }

    /// A function whose parameters are the graph's inputs (a scalar i64 named `n*` is a
    /// usize) and whose results are its outputs.
    fn function(self, name: &str, outputs: &[NodeId]) -> Function {
        let graph = self.graph(outputs);
        let params = graph
            .inputs
            .iter()
            .map(|&id| {
                let node = graph.node(id);
                let kind = match node.ty.rank {
                    0 if node.label.starts_with('n') && node.ty.dtype == DType::I64 => {
                        ParamKind::Usize
                    }
                    0 => ParamKind::Scalar,
                    _ => ParamKind::View,
                };
                Param {
                    name: node.label.clone(),
                    ty: node.ty,
                    kind,
                    span: Span::call_site(),
                }
            })
            .collect();
        let results = graph.outputs.iter().map(|&o| graph.ty(o)).collect();
        Function {
            name: name.to_string(),
            params,
            results,
            tuple_result: false,
            graph,
        }
    }
}

fn seq(taps: &[i64], label: &str) -> Sequence {
    Sequence {
        taps: taps.to_vec(),
        arange: false,
        label: label.to_string(),
        span: Span::call_site(),
    }
}

fn out(taps: &[i64], label: &str) -> Output {
    Output {
        taps: taps.to_vec(),
        keep: None,
        total: false,
        label: label.to_string(),
        span: Span::call_site(),
    }
}

fn scan_op(sequences: Vec<Sequence>, outputs: Vec<Output>, step: Graph) -> ScanOp {
    ScanOp {
        name: None,
        sequences,
        outputs,
        non_sequences: vec![],
        has_n_steps: false,
        go_backwards: false,
        backwards_flag: false,
        has_until: false,
        interchange: false,
        lanes: false,
        unroll: 1,
        max_steps: None,
        truncate_gradient: None,
        checkpoints: None,
        step,
    }
}

fn run1(f: &Function, args: Vec<Value>) -> Result<Value, String> {
    let mut results = eval_function(f, args)?;
    assert_eq!(results.len(), 1);
    Ok(results.remove(0))
}

fn close(actual: &Value, expected: Value) {
    if let Err(e) = assert_close(actual, &expected) {
        panic!("{e}\nactual: {actual:?}\nexpected: {expected:?}");
    }
}

/// `cumsum(xs: vector f64) -> vector f64`: SITSOT `acc + x` from 0.
fn cumsum(until_above: Option<f64>) -> Function {
    let mut s = B::new();
    let x = s.input("x", DType::F64, 0);
    let acc = s.input("acc", DType::F64, 0);
    let next = s.add(acc, x);
    let mut outputs = vec![next];
    if let Some(limit) = until_above {
        let limit = s.f64(limit);
        outputs.push(s.elem(ElemOp::Gt, &[next, limit], "acc > limit"));
    }
    let step = s.graph(&outputs);
    let mut op = scan_op(vec![seq(&[0], "xs")], vec![out(&[-1], "acc")], step);
    op.has_until = until_above.is_some();

    let mut b = B::new();
    let xs = b.input("xs", DType::F64, 1);
    let zero = b.f64(0.0);
    let r = b.scan(op, &[xs, zero]);
    b.function("cumsum", &r)
}

#[test]
fn cumulative_sum() {
    let f = cumsum(None);
    let r = run1(&f, vec![Value::from(array![1.0, 2.0, 3.0, 4.0])]).unwrap();
    close(&r, Value::from(array![1.0, 3.0, 6.0, 10.0]));
    let r = run1(&f, vec![Value::from(ArrayD::<f64>::zeros(IxDyn(&[0])))]).unwrap();
    close(&r, Value::from(ArrayD::<f64>::zeros(IxDyn(&[0]))));
}

#[test]
fn until_stops_after_the_step_that_makes_it_true() {
    let f = cumsum(Some(5.0));
    let r = run1(&f, vec![Value::from(array![1.0, 2.0, 3.0, 4.0, 5.0])]).unwrap();
    close(&r, Value::from(array![1.0, 3.0, 6.0]));
    // Never true: every step runs.
    let r = run1(&f, vec![Value::from(array![1.0, 1.0])]).unwrap();
    close(&r, Value::from(array![1.0, 2.0]));
    // True at step 0: one step.
    let r = run1(&f, vec![Value::from(array![9.0, 1.0])]).unwrap();
    close(&r, Value::from(array![9.0]));
}

/// `fib(init: vector i64, n: usize) -> vector i64`: MITSOT taps [-2, -1].
fn fibonacci() -> Function {
    let mut s = B::new();
    let a2 = s.input("a2", DType::I64, 0);
    let a1 = s.input("a1", DType::I64, 0);
    let next = s.add(a2, a1);
    let step = s.graph(&[next]);
    let mut op = scan_op(vec![], vec![out(&[-2, -1], "fib")], step);
    op.has_n_steps = true;

    let mut b = B::new();
    let init = b.input("init", DType::I64, 1);
    let n = b.input("n", DType::I64, 0);
    let r = b.scan(op, &[init, n]);
    b.function("fib", &r)
}

#[test]
fn fibonacci_with_mitsot_taps() {
    let f = fibonacci();
    let r = run1(&f, vec![Value::from(array![0i64, 1]), Value::from(5i64)]).unwrap();
    close(&r, Value::from(array![1i64, 2, 3, 5, 8]));
    // Only the first `depth` rows of the initial state are used.
    let r = run1(
        &f,
        vec![Value::from(array![0i64, 1, 100]), Value::from(3i64)],
    )
    .unwrap();
    close(&r, Value::from(array![1i64, 2, 3]));
    // Fewer rows than the deepest tap.
    let err = run1(&f, vec![Value::from(array![1i64]), Value::from(3i64)]).unwrap_err();
    assert!(
        err.contains("`fib`") && err.contains("1 rows") && err.contains("need 2"),
        "{err}"
    );
}

#[test]
fn mitsot_taps_out_of_order_and_sparse() {
    // taps [-1, -3]: out[t] = out[t-1] - out[t-3]; init [a, b, c] is out[-3..-1].
    let mut s = B::new();
    let m1 = s.input("m1", DType::I64, 0);
    let m3 = s.input("m3", DType::I64, 0);
    let next = s.elem(ElemOp::Sub, &[m1, m3], "m1 - m3");
    let step = s.graph(&[next]);
    let mut op = scan_op(vec![], vec![out(&[-1, -3], "y")], step);
    op.has_n_steps = true;
    let mut b = B::new();
    let init = b.input("init", DType::I64, 1);
    let n = b.input("n", DType::I64, 0);
    let r = b.scan(op, &[init, n]);
    let f = b.function("f", &r);
    // out[-3..] = 1, 2, 10; out[0] = 10 - 1 = 9; out[1] = 9 - 2 = 7; out[2] = 7 - 10 = -3;
    // out[3] = -3 - 9 = -12.
    let r = run1(
        &f,
        vec![Value::from(array![1i64, 2, 10]), Value::from(4i64)],
    )
    .unwrap();
    close(&r, Value::from(array![9i64, 7, -3, -12]));
}

/// `window(xs: vector i64) -> vector i64` with sequence taps [-1, 0, 1]: a + 10 b + 100 c.
fn window(go_backwards: bool, n_steps: bool) -> Function {
    let mut s = B::new();
    let a = s.input("prev", DType::I64, 0);
    let b_ = s.input("cur", DType::I64, 0);
    let c = s.input("next", DType::I64, 0);
    let ten = s.i64(10);
    let hundred = s.i64(100);
    let b10 = s.elem(ElemOp::Mul, &[b_, ten], "cur * 10");
    let c100 = s.elem(ElemOp::Mul, &[c, hundred], "next * 100");
    let ab = s.add(a, b10);
    let abc = s.add(ab, c100);
    let step = s.graph(&[abc]);
    let mut op = scan_op(vec![seq(&[-1, 0, 1], "xs")], vec![out(&[], "w")], step);
    op.go_backwards = go_backwards;
    op.has_n_steps = n_steps;

    let mut b = B::new();
    let xs = b.input("xs", DType::I64, 1);
    let mut inputs = vec![xs];
    if n_steps {
        inputs.push(b.input("n", DType::I64, 0));
    }
    let r = b.scan(op, &inputs);
    b.function("window", &r)
}

#[test]
fn sequence_taps_around_the_step() {
    let xs = Value::from(array![1i64, 2, 3, 4, 5]);
    let r = run1(&window(false, false), vec![xs.clone()]).unwrap();
    close(&r, Value::from(array![321i64, 432, 543]));
    let r = run1(&window(true, false), vec![xs.clone()]).unwrap();
    close(&r, Value::from(array![543i64, 432, 321]));
    // n_steps smaller than the sequence allows: forwards uses the first windows...
    let r = run1(&window(false, true), vec![xs.clone(), Value::from(2i64)]).unwrap();
    close(&r, Value::from(array![321i64, 432]));
    // ...backwards still starts from the end.
    let r = run1(&window(true, true), vec![xs.clone(), Value::from(2i64)]).unwrap();
    close(&r, Value::from(array![543i64, 432]));
    // Too short for the taps.
    let err = run1(&window(false, false), vec![Value::from(array![1i64])]).unwrap_err();
    assert!(err.contains("`xs`") && err.contains("1 rows"), "{err}");
    // Exactly the span: zero steps.
    let r = run1(&window(false, false), vec![Value::from(array![1i64, 2])]).unwrap();
    assert_eq!(r.shape(), &[0]);
}

#[test]
fn n_steps_too_large_names_the_sequence() {
    let xs = Value::from(array![1i64, 2, 3, 4, 5]);
    let err = run1(&window(false, true), vec![xs.clone(), Value::from(4i64)]).unwrap_err();
    assert!(err.contains("`xs`"), "{err}");
    assert!(err.contains("5 rows") && err.contains("needs 6"), "{err}");
    let err = run1(&window(false, true), vec![xs, Value::from(-1i64)]).unwrap_err();
    assert!(err.contains("usize"), "{err}");
}

/// A single-tap sequence scan returning the tap: shows which rows a tap reads.
fn tap_reader(tap: i64, go_backwards: bool) -> Function {
    let mut s = B::new();
    let x = s.input("x", DType::I32, 0);
    let step = s.graph(&[x]);
    let mut op = scan_op(vec![seq(&[tap], "xs")], vec![out(&[], "y")], step);
    op.go_backwards = go_backwards;
    let mut b = B::new();
    let xs = b.input("xs", DType::I32, 1);
    let r = b.scan(op, &[xs]);
    b.function("taps", &r)
}

#[test]
fn single_taps_and_go_backwards() {
    let xs = || vec![Value::from(array![1i32, 2, 3, 4, 5])];
    let r = |tap, back| run1(&tap_reader(tap, back), xs()).unwrap();
    close(&r(0, false), Value::from(array![1i32, 2, 3, 4, 5]));
    close(&r(0, true), Value::from(array![5i32, 4, 3, 2, 1]));
    close(&r(2, false), Value::from(array![3i32, 4, 5]));
    close(&r(2, true), Value::from(array![5i32, 4, 3]));
    close(&r(-3, false), Value::from(array![1i32, 2]));
    close(&r(-3, true), Value::from(array![2i32, 1]));
}

#[test]
fn unequal_sequences_are_truncated_to_the_shortest() {
    let mut s = B::new();
    let x = s.input("x", DType::F32, 0);
    let y = s.input("y", DType::F32, 0);
    let z = s.elem(ElemOp::Mul, &[x, y], "x * y");
    let step = s.graph(&[z]);
    let op = scan_op(
        vec![seq(&[0], "xs"), seq(&[0], "ys")],
        vec![out(&[], "z")],
        step,
    );
    let mut b = B::new();
    let xs = b.input("xs", DType::F32, 1);
    let ys = b.input("ys", DType::F32, 1);
    let r = b.scan(op, &[xs, ys]);
    let f = b.function("mul", &r);
    let r = run1(
        &f,
        vec![
            Value::from(array![1.0f32, 2.0, 3.0]),
            Value::from(array![4.0f32, 5.0]),
        ],
    )
    .unwrap();
    close(&r, Value::from(array![4.0f32, 10.0]));
}

/// `rows(n: usize, init: vector f64, w: vector f64)`: a NITSOT output of vectors (`w * 2`)
/// and a SITSOT output of vectors (`acc + w`), with `w` a non-sequence.
fn vector_outputs() -> Function {
    let mut s = B::new();
    let acc = s.input("acc", DType::F64, 1);
    let w = s.input("w", DType::F64, 1);
    let two = s.f64(2.0);
    let twice = s.elem(ElemOp::Mul, &[w, two], "w * 2");
    let next = s.add(acc, w);
    let step = s.graph(&[twice, next]);
    let mut op = scan_op(vec![], vec![out(&[], "twice"), out(&[-1], "acc")], step);
    op.has_n_steps = true;
    op.non_sequences = vec![crate::ir::NonSequence {
        label: "w".to_string(),
        implicit: false,
    }];
    let mut b = B::new();
    let n = b.input("n", DType::I64, 0);
    let init = b.input("init", DType::F64, 1);
    let w = b.input("w", DType::F64, 1);
    let r = b.scan(op, &[init, w, n]);
    b.function("rows", &r)
}

#[test]
fn nitsot_and_sitsot_vectors_with_a_non_sequence() {
    let f = vector_outputs();
    let args = |n: i64| {
        vec![
            Value::from(n),
            Value::from(array![0.0, 1.0, 2.0]),
            Value::from(array![1.0, 1.0, 1.0]),
        ]
    };
    let r = eval_function(&f, args(2)).unwrap();
    close(&r[0], Value::from(array![[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]));
    close(&r[1], Value::from(array![[1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]));
}

#[test]
fn zero_steps_give_empty_results_of_the_right_shape() {
    let r = eval_function(
        &vector_outputs(),
        vec![
            Value::from(0i64),
            Value::from(array![0.0, 1.0, 2.0]),
            Value::from(array![1.0, 1.0, 1.0]),
        ],
    )
    .unwrap();
    // NITSOT: sizes unknown without a step, so all zeros; SITSOT: the initial state's shape.
    close(&r[0], Value::from(ArrayD::<f64>::zeros(IxDyn(&[0, 0]))));
    close(&r[1], Value::from(ArrayD::<f64>::zeros(IxDyn(&[0, 3]))));
    let r = run1(
        &fibonacci(),
        vec![Value::from(array![0i64, 1]), Value::from(0i64)],
    )
    .unwrap();
    close(&r, Value::from(ArrayD::<i64>::zeros(IxDyn(&[0]))));
}

#[test]
fn step_shapes_must_agree() {
    // NITSOT `arange(k)` over ks: steps of different lengths.
    let mut s = B::new();
    let k = s.input("k", DType::I64, 0);
    let r = s.node(Op::Arange, &[k], Type::new(DType::I64, 1), "arange(k)");
    let step = s.graph(&[r]);
    let op = scan_op(vec![seq(&[0], "ks")], vec![out(&[], "ranges")], step);
    let mut b = B::new();
    let ks = b.input("ks", DType::I64, 1);
    let r = b.scan(op, &[ks]);
    let f = b.function("ranges", &r);
    let ok = run1(&f, vec![Value::from(array![2i64, 2])]).unwrap();
    close(&ok, Value::from(array![[0i64, 1], [0, 1]]));
    let err = run1(&f, vec![Value::from(array![1i64, 2])]).unwrap_err();
    assert!(
        err.contains("`ranges`") && err.contains("[2]") && err.contains("[1]"),
        "{err}"
    );

    // SITSOT `acc[1..]`: a step shorter than the initial state.
    let mut s = B::new();
    let acc = s.input("acc", DType::I64, 1);
    let one = s.i64(1);
    let tail = s.node(
        Op::Subtensor {
            path: vec![PathStep::Slice {
                start: true,
                end: false,
            }],
        },
        &[acc, one],
        Type::new(DType::I64, 1),
        "acc[1..]",
    );
    let step = s.graph(&[tail]);
    let mut op = scan_op(vec![], vec![out(&[-1], "acc")], step);
    op.has_n_steps = true;
    let mut b = B::new();
    let init = b.input("init", DType::I64, 1);
    let n = b.input("n", DType::I64, 0);
    let r = b.scan(op, &[init, n]);
    let f = b.function("shrink", &r);
    let err = run1(&f, vec![Value::from(array![1i64, 2, 3]), Value::from(2i64)]).unwrap_err();
    assert!(
        err.contains("`acc`") && err.contains("[2]") && err.contains("[3]"),
        "{err}"
    );
}

#[test]
fn nested_scans_cumsum_each_row() {
    // inner: cumsum of a row (SITSOT from 0); outer: over the rows of a matrix.
    let mut inner_step = B::new();
    let x = inner_step.input("x", DType::F64, 0);
    let acc = inner_step.input("acc", DType::F64, 0);
    let next = inner_step.add(acc, x);
    let inner_step = inner_step.graph(&[next]);
    let inner = scan_op(vec![seq(&[0], "row")], vec![out(&[-1], "acc")], inner_step);

    let mut outer_step = B::new();
    let row = outer_step.input("row", DType::F64, 1);
    let zero = outer_step.f64(0.0);
    let r = outer_step.scan(inner, &[row, zero]);
    let outer_step = outer_step.graph(&r);
    let outer = scan_op(vec![seq(&[0], "m")], vec![out(&[], "sums")], outer_step);

    let mut b = B::new();
    let m = b.input("m", DType::F64, 2);
    let r = b.scan(outer, &[m]);
    let f = b.function("row_cumsum", &r);
    let r = run1(
        &f,
        vec![Value::from(array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])],
    )
    .unwrap();
    close(&r, Value::from(array![[1.0, 3.0, 6.0], [4.0, 9.0, 15.0]]));
}

#[test]
fn errors_inside_a_step_name_the_step() {
    // y = xs_row[i] for a non-sequence index i: out of range at run time.
    let mut s = B::new();
    let row = s.input("row", DType::F64, 1);
    let i = s.input("i", DType::I64, 0);
    let picked = s.node(
        Op::Subtensor {
            path: vec![PathStep::Index],
        },
        &[row, i],
        Type::scalar(DType::F64),
        "row[i]",
    );
    let step = s.graph(&[picked]);
    let mut op = scan_op(vec![seq(&[0], "m")], vec![out(&[], "picked")], step);
    op.non_sequences = vec![crate::ir::NonSequence {
        label: "i".to_string(),
        implicit: true,
    }];
    let mut b = B::new();
    let m = b.input("m", DType::F64, 2);
    let i = b.input("i", DType::I64, 0);
    let r = b.scan(op, &[m, i]);
    let f = b.function("pick", &r);
    let m = Value::from(array![[1.0, 2.0], [3.0, 4.0]]);
    close(
        &run1(&f, vec![m.clone(), Value::from(-1i64)]).unwrap(),
        Value::from(array![2.0, 4.0]),
    );
    let err = run1(&f, vec![m, Value::from(2i64)]).unwrap_err();
    assert!(
        err.contains("step 0") && err.contains("`row[i]`") && err.contains("index 2"),
        "{err}"
    );
}

#[test]
fn graph_level_ops_dot_broadcast_and_set_subtensor() {
    // f(m: matrix f64, v: vector f64) -> (m.dot(v), m + v, m with row -1 set to v)
    let mut b = B::new();
    let m = b.input("m", DType::F64, 2);
    let v = b.input("v", DType::F64, 1);
    let d = b.node(Op::Dot, &[m, v], Type::new(DType::F64, 1), "m.dot(v)");
    let s = b.add(m, v);
    let minus_one = b.i64(-1);
    let set = b.node(
        Op::SetSubtensor {
            path: vec![PathStep::Index],
            inc: false,
        },
        &[m, v, minus_one],
        Type::new(DType::F64, 2),
        "m[-1] = v",
    );
    let f = b.function("f", &[d, s, set]);
    let m = Value::from(array![[1.0, 2.0], [3.0, 4.0]]);
    let r = eval_function(&f, vec![m.clone(), Value::from(array![1.0, -1.0])]).unwrap();
    close(&r[0], Value::from(array![-1.0, -1.0]));
    close(&r[1], Value::from(array![[2.0, 1.0], [4.0, 3.0]]));
    close(&r[2], Value::from(array![[1.0, 2.0], [1.0, -1.0]]));
    let err = eval_function(&f, vec![m, Value::from(array![1.0, 2.0, 3.0])]).unwrap_err();
    assert!(
        err.contains("`m.dot(v)`") && err.contains("[2, 2]") && err.contains("[3]"),
        "{err}"
    );
}

#[test]
fn casts_fills_reductions_in_a_graph() {
    // f(x: vector f32) -> (x.sum() as i32, ones_like(x) as i64 vector, x.max())
    let mut b = B::new();
    let x = b.input("x", DType::F32, 1);
    let sum = b.node(
        Op::Reduce {
            op: crate::ir::ReduceOp::Sum,
            axis: None,
        },
        &[x],
        Type::scalar(DType::F32),
        "x.sum()",
    );
    let cast = b.node(Op::Cast, &[sum], Type::scalar(DType::I32), "x.sum() as i32");
    let ones = b.node(
        Op::FillLike {
            value: Literal::Int(1),
        },
        &[x],
        Type::new(DType::I64, 1),
        "ones_like(x)",
    );
    let max = b.node(
        Op::Reduce {
            op: crate::ir::ReduceOp::Max,
            axis: Some(0),
        },
        &[x],
        Type::scalar(DType::F32),
        "x.max()",
    );
    let f = b.function("f", &[cast, ones, max]);
    let r = eval_function(&f, vec![Value::from(array![1.5f32, 2.0, -0.25])]).unwrap();
    assert_eq!(r[0], Value::from(3i32));
    assert_eq!(r[1], Value::from(array![1i64, 1, 1]));
    assert_eq!(r[2], Value::from(2.0f32));
    let err = eval_function(&f, vec![Value::from(ArrayD::<f32>::zeros(IxDyn(&[0])))]).unwrap_err();
    assert!(err.contains("`x.max()`"), "{err}");
}

#[test]
fn argument_errors_name_the_parameter() {
    let f = fibonacci();
    let err = eval_function(&f, vec![Value::from(array![0i64, 1])]).unwrap_err();
    assert!(err.contains("takes 2 arguments"), "{err}");
    let err = eval_function(&f, vec![Value::from(array![0i32, 1]), Value::from(1i64)]).unwrap_err();
    assert!(err.contains("`init`") && err.contains("i32"), "{err}");
    let err = eval_function(&f, vec![Value::from(array![0i64, 1]), Value::from(1i32)]).unwrap_err();
    assert!(err.contains("`n`") && err.contains("usize"), "{err}");
}

#[test]
fn inconsistent_ir_is_reported_and_dead_nodes_are_skipped() {
    // A node typed i32 that computes an f64.
    let mut b = B::new();
    let x = b.input("x", DType::F64, 0);
    let bad = b.node(
        Op::Elemwise(ElemOp::Neg),
        &[x],
        Type::scalar(DType::I32),
        "-x",
    );
    let f = b.function("bad", &[bad]);
    let err = eval_function(&f, vec![Value::from(1.0)]).unwrap_err();
    assert!(err.starts_with("IR error") && err.contains("`-x`"), "{err}");

    // A dead out-of-range index is never evaluated.
    let mut b = B::new();
    let v = b.input("v", DType::F64, 1);
    let nine = b.i64(9);
    b.node(
        Op::Subtensor {
            path: vec![PathStep::Index],
        },
        &[v, nine],
        Type::scalar(DType::F64),
        "v[9]",
    );
    let f = b.function("dead", &[v]);
    assert!(eval_function(&f, vec![Value::from(array![1.0])]).is_ok());
}

#[test]
fn run_reports_compile_errors_or_missing_functions() {
    // Whatever the compiler makes of this source, `run` must answer with an error, not
    // panic: either the source does not compile or it has no function `missing`.
    let result = run(
        "fn f(x: f64) -> f64 { x }",
        "missing",
        vec![Value::from(1.0)],
    );
    assert!(result.is_err());
}

#[test]
fn run_compiles_and_evaluates_source() {
    let source = "
        pub fn triangular_sequence(up_to: i64) -> Result<Array1<i64>> {
            let seq = arange(up_to);
            let scan_result = scan(
                |arange_val, sum_to_date| sum_to_date + arange_val,
                outputs_info = 0i64,
                sequences = seq,
            );
            Ok(scan_result)
        }
    ";
    let r = run(source, "triangular_sequence", vec![Value::from(5i64)]).unwrap();
    assert_eq!(r, vec![Value::from(array![0i64, 1, 3, 6, 10])]);
    let err = run(source, "nope", vec![]).unwrap_err();
    assert!(err.contains("triangular_sequence"), "{err}");
}
