//! The scan graph: a list of typed nodes in topological order. A function body is one graph
//! (the outer graph); every scan node owns another graph, its step (the inner graph), whose
//! inputs are the step's arguments. Nodes refer to their inputs by index, so rewrites can
//! walk and rebuild graphs without touching syntax.

use proc_macro2::Span;

use super::elemwise::ElemOp;
use super::scan::ScanOp;
use super::types::{DType, Type};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub usize);

/// A scalar constant. Its dtype is the node's type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Literal {
    Bool(bool),
    /// The integer's value (i128 holds every value of every integer dtype, u64 included);
    /// lowering makes it a value of the node's dtype.
    Int(i128),
    Float(f64),
}

impl Literal {
    /// 0 of a number dtype (false for bool).
    pub fn zero(dtype: DType) -> Literal {
        match dtype {
            DType::Bool => Literal::Bool(false),
            DType::F32 | DType::F64 => Literal::Float(0.0),
            _ => Literal::Int(0),
        }
    }
}

/// What a reduction computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Max,
    Min,
    Mean,
    Prod,
    /// Of bools (numbers are true when non-zero, cast before).
    All,
    Any,
    /// The index (i64) of the largest / smallest element (flattened without an axis).
    ArgMax,
    ArgMin,
    /// numpy's `var`, `std` (ddof 0) and scipy's `logsumexp`, in the float dtype.
    Var,
    Std,
    LogSumExp,
}

impl ReduceOp {
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::Mean => "mean",
            ReduceOp::Prod => "prod",
            ReduceOp::All => "all",
            ReduceOp::Any => "any",
            ReduceOp::ArgMax => "argmax",
            ReduceOp::ArgMin => "argmin",
            ReduceOp::Var => "var",
            ReduceOp::Std => "std",
            ReduceOp::LogSumExp => "logsumexp",
        }
    }

    /// Whether the reduction has no value for an empty input (an `Err` naming it): its
    /// runtime kernels (`kernels::{name}_all`, `{name}_axis`) take the expression's label.
    pub fn fails_when_empty(self) -> bool {
        matches!(
            self,
            ReduceOp::Max | ReduceOp::Min | ReduceOp::ArgMax | ReduceOp::ArgMin
        )
    }
}

/// Random numbers (docs/SEMANTICS.md, "Random numbers"; runtime `scan_runtime::random`,
/// evaluator `eval/random.rs`). A key is an i64 scalar; every op is a pure function of
/// its inputs, as JAX's are: the same key (and shape) gives the same numbers, so `cse` may
/// merge two identical draws and push_out_nonseq may hoist a draw from a loop-invariant
/// key. Not elementwise: no fusion, lifting or loop interchange takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RandomOp {
    /// inputs `[key, i]` (i64 scalars): key `i` derived from `key`, an i64 scalar
    /// (`split(key)` is derived keys 0 and 1; an advancing draw's next key is key 0).
    DeriveKey,
    /// inputs `[key, n]`: the keys `0..n` derived from `key`, an i64 vector.
    Split,
    /// inputs `[key, d0, d1, ...]`: uniform values in [0, 1) of the node's float dtype,
    /// of shape `(d0, d1, ...)` (the rank is the lengths' count).
    Uniform,
    /// inputs `[key, d0, d1, ...]`: standard normal values, as `Uniform`.
    Normal,
    /// inputs `[key, p]`, p a float array (or scalar): bools of p's shape, true with
    /// probability p (`uniform(key, p.shape) < p`).
    Bernoulli,
    /// inputs `[key, logits]`, logits a float array of rank >= 1: an i64 index into the
    /// last axis per row, drawn with probabilities `softmax(logits, -1)`.
    Categorical,
    /// inputs `[key, a]`, a float array (or scalar): Gamma(a, 1) variates of a's shape
    /// and dtype.
    Gamma,
    /// inputs `[key, a, b]`, float arrays of one dtype: Beta(a, b) variates of their
    /// broadcast shape.
    Beta,
}

impl RandomOp {
    pub fn name(self) -> &'static str {
        match self {
            RandomOp::DeriveKey => "derive_key",
            RandomOp::Split => "split",
            RandomOp::Uniform => "uniform",
            RandomOp::Normal => "normal",
            RandomOp::Bernoulli => "bernoulli",
            RandomOp::Categorical => "categorical",
            RandomOp::Gamma => "gamma",
            RandomOp::Beta => "beta",
        }
    }
}

/// One step of an indexing path on the leading axis: `x[i]`, `x[a..b]`, `x[None]`; or a
/// check that a removed scan loop made (one-step inlining).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PathStep {
    /// Takes one scalar integer operand; removes the axis.
    Index,
    /// Takes an operand for each bound present; keeps the axis (numpy clamping).
    Slice { start: bool, end: bool },
    /// numpy's `a:b:s` (Python's `slice(a, b, s)`): an operand for each bound present, then
    /// the step (a non-zero i64; negative goes backwards, `x[::-1]`); keeps the axis, clamps
    /// as Python's `slice.indices` does. A view.
    Stepped { start: bool, end: bool },
    /// numpy's `x[None]`: a new leading axis of length 1; no operand. A view.
    NewAxis,
    /// The axis the steps after it act on (0 until one says otherwise): a multi-axis index
    /// `x[(.., a..b)]` is `[At(1), Slice, At(0)]`. No operand, no change of rank.
    At(usize),
    /// Not an indexing: the value passes unchanged once the check holds, else the `Err`
    /// the scan loop would have given. Takes `LoopCheck::operands` operands, which the
    /// check reads (they are not indices).
    Check(Box<LoopCheck>),
}

impl PathStep {
    pub fn operands(&self) -> usize {
        match self {
            PathStep::Index => 1,
            PathStep::Slice { start, end } => *start as usize + *end as usize,
            PathStep::Stepped { start, end } => *start as usize + *end as usize + 1,
            PathStep::NewAxis | PathStep::At(_) => 0,
            PathStep::Check(check) => check.operands(),
        }
    }

    /// How the step changes the rank: `Index` removes an axis, `NewAxis` adds one.
    pub fn rank_change(&self) -> isize {
        match self {
            PathStep::Index => -1,
            PathStep::NewAxis => 1,
            PathStep::Slice { .. }
            | PathStep::Stepped { .. }
            | PathStep::Check(_)
            | PathStep::At(_) => 0,
        }
    }
}

/// A run-time check of a scan's loop, kept on the values it concerns when one-step
/// inlining (`rewrite/one_step.rs`) removes the loop, so that a bad argument still gives
/// the loop's `Err` (the same runtime functions make them: `kernels::one_step`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum LoopCheck {
    /// The value is a sequence read with `taps`: it has at least its tap window's rows.
    Window { sequence: String, taps: Vec<i64> },
    /// The value is a sequence read with `taps` for `n_steps` steps: it has `n_steps` rows
    /// beyond its tap window.
    Steps {
        sequence: String,
        taps: Vec<i64>,
        n_steps: usize,
    },
    /// The value is the initial state of an output with `taps` (MITSOT): it has a row per
    /// past step, `max |tap|`.
    InitialRows { output: String, taps: Vec<i64> },
    /// The value is the step result `result` of output `output`; one operand, the output's
    /// initial state, whose shape (without its leading axis when `rows`, for MITSOT) the
    /// result must have.
    StepShape {
        output: String,
        result: String,
        rows: bool,
    },
    /// No check: the value, once its operands (this many) are computed. Keeps the loop's
    /// other work (every step result, the checks, the `until` condition) computed before
    /// the value is read, as the loop did, even where nothing else reads it.
    After(usize),
}

impl LoopCheck {
    pub fn operands(&self) -> usize {
        match self {
            LoopCheck::StepShape { .. } => 1,
            LoopCheck::After(n) => *n,
            LoopCheck::Window { .. } | LoopCheck::Steps { .. } | LoopCheck::InitialRows { .. } => 0,
        }
    }
}

/// Short, for printed graphs (and exact enough for `cse`'s keys: every field is shown).
impl std::fmt::Debug for LoopCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoopCheck::Window { sequence, taps } => {
                write!(f, "window of {sequence:?} taps={taps:?}")
            }
            LoopCheck::Steps {
                sequence,
                taps,
                n_steps,
            } => {
                let s = if *n_steps == 1 { "" } else { "s" };
                write!(
                    f,
                    "rows for {n_steps} step{s} of {sequence:?} taps={taps:?}"
                )
            }
            LoopCheck::InitialRows { output, taps } => {
                write!(f, "rows of {output:?} taps={taps:?}")
            }
            LoopCheck::StepShape {
                output,
                result,
                rows,
            } => {
                let of = if *rows { "rows of " } else { "" };
                write!(f, "{result:?} has the shape of {of}{output:?}")
            }
            LoopCheck::After(n) => write!(f, "after {n}"),
        }
    }
}

#[derive(Clone, Debug)]
pub enum Op {
    /// Input `k` of the graph: a function parameter (outer graph) or a step argument
    /// (inner graph: sequence taps, then output taps, then non-sequences).
    Input {
        index: usize,
        name: String,
    },
    Const(Literal),
    /// inputs: the operands, already cast to the operation's operand dtype (the condition
    /// of `Where` stays bool).
    Elemwise(ElemOp),
    /// inputs: `[x]`; converts to the node's dtype.
    Cast,
    /// inputs: [a, b]; vector/matrix products by rank (a rank-3 left operand: numpy's
    /// `dot` over its last axis, a stack of matrices by a vector or a matrix).
    Dot,
    /// inputs: `[a, b]`, `b` a stack of matrices `[n, k, p]`; numpy's `matmul(a, b)` with
    /// `a` a vector `[k]` (result `[n, p]`), a matrix `[m, k]` (`[n, m, p]`: the matrix
    /// times each of b's) or a stack `[n, m, k]` (`[n, m, p]`, product by product; a batch
    /// size of 1 on either side broadcasts). The other rank pairs of `matmul` are `Dot`s.
    MatMul,
    /// inputs: `[x]`; over every element (`axis: None`) or one axis.
    Reduce {
        op: ReduceOp,
        axis: Option<usize>,
    },
    /// inputs: `[like]`; an array of like's shape filled with `value` (zeros_like, ones_like).
    FillLike {
        value: Literal,
    },
    /// inputs: `[n]`; `0..n` as i64.
    Arange,
    /// inputs: `[x]`; the length of x's axis `axis` as an i64 scalar (`x.shape[axis]`).
    Shape {
        axis: usize,
    },
    /// inputs: `[value, d0, d1, ...]`; numpy's `full((d0, d1, ...), value)` (and `zeros`,
    /// `ones`): the lengths are i64 scalars, the rank their count.
    Full,
    /// inputs: `[n]`; numpy's `eye(n)`, an `n x n` identity.
    Eye,
    /// inputs: `[x, d0, d1, ...]`; numpy's `reshape(x, (d0, d1, ...))` (one length may be
    /// -1), a copy in row-major order.
    Reshape,
    /// inputs: the arrays joined, of one dtype and one rank (at least 1); numpy's
    /// `concatenate(inputs, axis)`: their lengths on every other axis agree (checked at run
    /// time). A copy.
    Concatenate {
        axis: usize,
    },
    /// inputs: the values joined, of one dtype, one rank and (checked at run time) one
    /// shape; numpy's `stack(inputs, axis)`, `axis` an axis of the result (one more than
    /// theirs). A list `[a, b, c]` is `stack` on axis 0. A copy.
    Stack {
        axis: usize,
    },
    /// inputs: `[x]`; numpy's `squeeze(x, axis)`: x without its axis `axis`, whose length
    /// must be 1 (checked at run time). A view.
    Squeeze {
        axis: usize,
    },
    /// inputs: `[x, d0, d1, ...]`; numpy's `broadcast_to(x, (d0, d1, ...))`: x's axes
    /// aligned with the last lengths, each of x's lengths equal to its length or 1 (checked
    /// at run time); the rank is the lengths' count. A read-only view (zero strides).
    BroadcastTo,
    /// inputs: arrays (of any dtypes); numpy's `broadcast_arrays(*inputs)[index]`: input
    /// `index` as a view of the inputs' broadcast shape (zero strides on the repeated axes),
    /// `Err` as an elementwise operation on them gives when their shapes do not broadcast.
    /// The rank is the largest input rank. Made by `rewrite/slice_operands.rs`.
    BroadcastArrays {
        index: usize,
    },
    /// inputs: `[g, like]`; the adjoint of a broadcast (made by `grad/`): g summed to
    /// like's shape, over g's leading axes that like lacks and over every axis where like
    /// has length 1 (kept, of length 1). Of like's type; like's shape must broadcast to
    /// g's (checked at run time). A copy (`kernels::sum_to_shape`).
    Unbroadcast,
    /// inputs: `[x, k]` (k an i64 scalar); numpy's `diag(x, k)`: of a vector, the square
    /// matrix (of side `len + |k|`) with x on its diagonal k, zeros elsewhere (a copy); of a
    /// matrix, its diagonal k as a vector (a view; empty when k is past the matrix).
    Diag,
    /// inputs: `[x, k]` (x of rank 2 or more, k an i64 scalar); numpy's `tril(x, k)`
    /// (`upper`: `triu`): x with the elements above (below) diagonal k of its last two
    /// axes set to 0 (false). A copy.
    Tri {
        upper: bool,
    },
    /// inputs: `[x]`, a matrix; PyTensor's `identity_like(x)`: a matrix of x's shape and
    /// dtype with ones (true) on the diagonal, zeros elsewhere.
    IdentityLike,
    /// inputs: `[x, idx]`, idx an i64 array (rank 1 or more); numpy's `take(x, idx, axis)`
    /// (and `x[idx]`, `x[(.., idx)]`): x's rows along `axis` at the indices, negative
    /// counting from the end (out of range: an `Err` naming the expression, the index and
    /// the length). A copy: x's axes before `axis`, idx's axes, x's axes after `axis` (of
    /// x's rank, `idx.len()` long on `axis`, for a vector).
    Take {
        axis: usize,
    },
    /// inputs: `[x, mask]`, mask a bool array of x's leading axes' shape (checked at run
    /// time); numpy's `x[mask]`: the elements (rows, for a mask of fewer axes) where the
    /// mask is true, in row-major order, `[count, x's other axes]`: a copy whose length is
    /// known only at run time.
    MaskTake,
    /// inputs: `[x, value, idx]`, idx an i64 vector; numpy's `x[.., idx, ..] = value` on
    /// `axis` (`inc`: PyTensor's `inc_subtensor(x[idx], value)`, which adds once per
    /// occurrence of an index, as `np.add.at`): a copy of x whose rows `idx[k]` along
    /// `axis` are set to (incremented by) row k of `value` broadcast to the gathered shape
    /// (x's with `idx.len()` rows on `axis`); a repeated index set twice keeps the last.
    Scatter {
        axis: usize,
        inc: bool,
    },
    /// inputs: `[x, value, mask]`, mask a bool array of x's leading axes' shape (checked at
    /// run time); numpy's `x[mask] = value` (`inc`: `x[mask] += value`): a copy of x whose
    /// elements (rows, for a mask of fewer axes) where the mask is true, in row-major
    /// order, are set to (incremented by) those of `value` broadcast to `[count, x's other
    /// axes]`.
    MaskSet {
        inc: bool,
    },
    /// Dense linear algebra (`ir/linalg.rs`): `cholesky`, `solve`, `inv`, `det`, ... on
    /// float matrices. Reads across elements (never fused or interchanged); fails at run
    /// time on a matrix that is not square, not positive definite or singular, as the op
    /// says. An op with several results (`LinalgOp::parts`: `slogdet`, `eigh`, `qr`) has no
    /// value of its own (its type is its dtype at rank 0, unused): its results are read
    /// through `Part` nodes, and it lives as long as one of them does.
    Linalg(super::linalg::LinalgOp),
    /// A random draw or key derivation (see [`RandomOp`]).
    Random(RandomOp),
    /// inputs: `[node]`, an `Op::Linalg` with several results, its result `index`, of
    /// rank `parts()[index]` (one factorisation, several values: `eigh`'s `w` and `v`); or
    /// an `Op::Fused` with two, its result `index` (the body's output `index`).
    Part {
        index: usize,
    },
    /// inputs: `[x]`; numpy's `cumsum` (`product`: `cumprod`) along `axis` (x's shape),
    /// or of every element flattened (a vector) when `axis` is `None`.
    Cumulative {
        product: bool,
        axis: Option<usize>,
    },
    /// inputs: [x, path operands...]; a view of `x` through the path. Its rank is x's
    /// plus each step's `PathStep::rank_change`.
    Subtensor {
        path: Vec<PathStep>,
    },
    /// inputs: [x, value, path operands...]; a copy of `x` with the subtensor set to (or
    /// incremented by) `value`, broadcast.
    SetSubtensor {
        path: Vec<PathStep>,
        inc: bool,
    },
    /// inputs: `[x]`; reversed axes.
    Transpose,
    /// inputs: `[x]`; numpy's `transpose(x, axes)`: axis k of the result is axis
    /// `axes[k]` of x (a permutation). A view.
    Permute {
        axes: Vec<usize>,
    },
    /// inputs: `[x]`, the steps of a map output computed after the loop (push-out of
    /// outputs); x itself, but with no row every axis is 0: the shape a scan gives a map
    /// output when no step ran (PyTensor's), which x's other axes would not be.
    ZeroStepShape,
    /// inputs: `[first, rows]`, made by the last_row rewrite from
    /// `concatenate([first[None], rows])[-1]` (grad's read of an accumulator's final value,
    /// or of its initial one when no step ran): the last row of `rows` along axis 0, or
    /// `first` when `rows` has none; a view of either. `rows` has `first`'s dtype and one
    /// more axis; rows of another shape than `first` are the concatenation's error, with
    /// or without rows. The node's type is `first`'s.
    LastOr,
    /// inputs: [init, p, q], where `p` is a stack of T matrices `[T, m, k]` and `q` one of
    /// `[T, k, n]` (either stored transposed, `[T, k, m]` or `[T, n, k]`, where `transpose`
    /// says): the last row of the accumulation `acc_t = acc_{t-1} + p_t · q_t` from
    /// `acc_0 = init`, made by push_out_dot from a scan output read only at its last step.
    /// Its value is that output read at its last row: `init + Σ_t p_t · q_t` (the sum
    /// broadcast to init's shape, which it must keep) as a stack of one row, or of no row
    /// (`[0, init's shape]`) when T = 0. Rank 2 operands, rank 3 result ([`dot_sum_type`]).
    /// The node's label is the product's text; `output` and `result` name the accumulator
    /// and its step expression in errors, as the loop named them.
    DotSum {
        transpose: [bool; 2],
        output: String,
        result: String,
    },
    /// inputs: `[c, a, b]`; `c + dot(a, b)` (`c - dot(a, b)` when `subtract`), made by the
    /// gemm rewrite from an addition of a product: the product is accumulated onto `c`
    /// (BLAS's gemm with beta = 1), with no buffer for it. `a`, `b`: float matrix·matrix,
    /// matrix·vector or vector·matrix operands; `c` of the product's dtype and at most its
    /// rank, broadcast as the addition broadcasts. The node's type is the addition's.
    DotAdd {
        subtract: bool,
    },
    /// inputs: `[b_1, .., b_n]`, float matrices of one dtype, made by the stack_dots rewrite
    /// (before the loop): numpy's `concatenate(b, axis=0)` when their column counts agree,
    /// else an empty `0 x 0` matrix (never an error: `StackedDot` then falls back).
    StackRows,
    /// inputs: `[s, a_1, .., a_n, b_1, .., b_n]` (n >= 2), made by the stack_dots rewrite:
    /// `dot(a_1, b_1) + .. + dot(a_n, b_n)` (numpy's broadcast sum, added left to right),
    /// the `a_i` all vectors or all matrices, the `b_i` matrices, one float dtype; `s` is
    /// `StackRows(b_1, .., b_n)`. Computed as the one product
    /// `dot(concatenate(a, axis=-1), s)` when that equals the sum: `s` has `Σ rows(b_i)`
    /// rows, every `b_i` has `s`'s columns, each `a_i` has `rows(b_i)` on its last axis
    /// and (matrices) all `a_i` have one row count; else as the sum, each product named by
    /// `products[i]` in its errors, the sum by the node's label.
    StackedDot {
        products: Vec<String>,
    },
    /// inputs: `[like, v_1, .., v_n, bounds of slice 1, .., bounds of slice n]` (n >= 2),
    /// made by the join_slices rewrite from a chain of `inc_subtensor`s of `zeros_like(like)`
    /// at slices of one axis (a gradient's adjoint of a value read through slices, an
    /// LSTM's four gate blocks): zeros of the node's type and like's shape with `v_i` added
    /// at slice i of axis `axis`, in order, numpy's broadcasting and clamping as each
    /// `inc_subtensor` had them. Slice i has the bounds `slices[i]` says are present
    /// (`PathStep::Slice`'s `start` and `end`), i64 scalars after the `v`s, in order; each
    /// `v_i` has the node's dtype and rank. Computed as each `v_i` written into its slice
    /// when the slices tile the axis at run time and each `v_i` has its slice's shape, with
    /// no zero-fill; else as the increments were, `labels[i]` naming increment i in its
    /// errors (`kernels::JoinSlices`).
    JoinSlices {
        axis: usize,
        slices: Vec<(bool, bool)>,
        labels: Vec<String>,
    },
    /// inputs: the operands of a chain of elementwise operations, fused into one pass by
    /// the fusion rewrite. The graph computes one element: its inputs are scalars of the
    /// operands' dtypes (input k reads operand k, broadcast), its nodes `Const`,
    /// `Elemwise` and `Cast`, its one output the element of the result. With two outputs
    /// (a chain and a value it reads that is needed elsewhere too, of one rank) it has no
    /// value of its own (its type is the first's dtype at rank 0): its results are read
    /// through `Part` nodes, the first of the whole broadcast shape, the second of the
    /// shape of the operands it reads.
    Fused(Box<Graph>),
    /// inputs: see `ScanOp::outer_inputs`. Its results are read through `ScanOutput`.
    Scan(Box<ScanOp>),
    /// inputs: [scan node]; all steps of output `index` (steps actually done when `until`).
    ScanOutput {
        index: usize,
    },
}

impl Op {
    /// A fused pass with two results (`emit/fused_pair.rs`).
    pub fn is_fused_pair(&self) -> bool {
        matches!(self, Op::Fused(body) if body.outputs.len() == 2)
    }

    /// A linear-algebra node or a fused pass with several results, read through `Op::Part`
    /// nodes (it has no value of its own).
    pub fn has_parts(&self) -> bool {
        match self {
            Op::Linalg(op) => op.parts().is_some(),
            Op::Fused(body) => body.outputs.len() > 1,
            _ => false,
        }
    }
}

/// The type of `Op::DotSum` on `[init, p, q]` of these types: a stack of init-shaped rows,
/// if init is a matrix and `p`, `q` stacks of matrices, all of one number dtype.
pub fn dot_sum_type(init: Type, p: Type, q: Type) -> Option<Type> {
    let fits = init.rank == 2
        && p.rank == 3
        && q.rank == 3
        && init.dtype.is_number()
        && p.dtype == init.dtype
        && q.dtype == init.dtype;
    fits.then(|| init.with_rank(3))
}

#[derive(Clone, Debug)]
pub struct Node {
    pub op: Op,
    pub inputs: Vec<NodeId>,
    /// For a `Scan` node (which has no value of its own) this is unused and set to a
    /// scalar bool; for a linear-algebra node with several results (read through `Part`),
    /// its dtype at rank 0.
    pub ty: Type,
    /// The user's token this node comes from, for errors.
    pub span: Span,
    /// The user's source text for this node, for run-time error messages.
    pub label: String,
}

/// `text` (a node's label) on one line and at most 40 characters, `..` marking a cut: how
/// the rewrites' log and the gradient's labels quote user text, which can be long.
pub fn short_label(text: &str) -> String {
    let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = text.chars().take(40).collect();
    if cut.len() < text.len() {
        format!("{cut}..")
    } else {
        cut
    }
}

#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub nodes: Vec<Node>,
    /// The `Input` nodes, in input order.
    pub inputs: Vec<NodeId>,
    /// The values the graph returns, in order.
    pub outputs: Vec<NodeId>,
}

impl Graph {
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0]
    }

    pub fn ty(&self, id: NodeId) -> Type {
        self.nodes[id.0].ty
    }

    pub fn add(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        NodeId(self.nodes.len() - 1)
    }

    pub fn add_input(&mut self, name: &str, ty: Type, span: Span) -> NodeId {
        let index = self.inputs.len();
        let id = self.add(Node {
            op: Op::Input {
                index,
                name: name.to_string(),
            },
            inputs: vec![],
            ty,
            span,
            label: name.to_string(),
        });
        self.inputs.push(id);
        id
    }

    pub fn add_const(&mut self, value: Literal, dtype: DType, span: Span, label: &str) -> NodeId {
        self.add(Node {
            op: Op::Const(value),
            inputs: vec![],
            ty: Type::scalar(dtype),
            span,
            label: label.to_string(),
        })
    }

    /// Whether each node is one the outputs depend on, directly or not.
    pub fn live(&self) -> Vec<bool> {
        let mut live = vec![false; self.nodes.len()];
        let mut stack: Vec<NodeId> = self.outputs.clone();
        while let Some(id) = stack.pop() {
            if !live[id.0] {
                live[id.0] = true;
                stack.extend(self.nodes[id.0].inputs.iter().copied());
            }
        }
        live
    }

    /// Nodes the outputs depend on, in topological order (dead nodes left out).
    pub fn live_nodes(&self) -> Vec<NodeId> {
        let live = self.live();
        (0..self.nodes.len())
            .filter(|&i| live[i])
            .map(NodeId)
            .collect()
    }

    /// Every use of `from` (as a node's input or a graph output) becomes a use of `to`.
    pub fn replace_uses(&mut self, from: NodeId, to: NodeId) {
        for node in &mut self.nodes {
            for input in &mut node.inputs {
                if *input == from {
                    *input = to;
                }
            }
        }
        for output in &mut self.outputs {
            if *output == from {
                *output = to;
            }
        }
    }

    /// For each node, the nodes that read it (each reader once per use).
    pub fn consumers(&self) -> Vec<Vec<NodeId>> {
        let mut users = vec![Vec::new(); self.nodes.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            for input in &node.inputs {
                users[input.0].push(NodeId(i));
            }
        }
        users
    }

    /// The graph rebuilt in dependency order, without the nodes nothing reads (inputs are
    /// kept: they are the graph's signature). Rewrites append nodes and redirect uses
    /// freely, then call this so that every later stage sees a clean topological order.
    /// Returns the new id of every old node that was kept.
    pub fn normalize(&mut self) -> Vec<Option<NodeId>> {
        let mut live = vec![false; self.nodes.len()];
        let mut stack: Vec<NodeId> = self.outputs.clone();
        stack.extend(self.inputs.iter().copied());
        while let Some(id) = stack.pop() {
            if !live[id.0] {
                live[id.0] = true;
                stack.extend(self.nodes[id.0].inputs.iter().copied());
            }
        }
        // Depth-first, inputs before readers, otherwise in the old order.
        let mut order = Vec::new();
        let mut state = vec![0u8; self.nodes.len()]; // 0 new, 1 open, 2 done
        for root in (0..self.nodes.len()).filter(|&i| live[i]) {
            let mut work = vec![(root, false)];
            while let Some((i, expanded)) = work.pop() {
                if expanded {
                    if state[i] != 2 {
                        state[i] = 2;
                        order.push(i);
                    }
                    continue;
                }
                if state[i] != 0 {
                    continue;
                }
                state[i] = 1;
                work.push((i, true));
                for input in self.nodes[i].inputs.iter().rev() {
                    if state[input.0] == 0 {
                        work.push((input.0, false));
                    }
                }
            }
        }
        let mut new_id = vec![None; self.nodes.len()];
        for (new, &old) in order.iter().enumerate() {
            new_id[old] = Some(NodeId(new));
        }
        let map = |id: &NodeId| new_id[id.0].expect("a live node's inputs are live");
        let mut old_nodes: Vec<Option<Node>> = std::mem::take(&mut self.nodes)
            .into_iter()
            .map(Some)
            .collect();
        for &old in &order {
            let mut node = old_nodes[old].take().expect("each node is placed once");
            node.inputs = node.inputs.iter().map(map).collect();
            self.nodes.push(node);
        }
        self.inputs = self.inputs.iter().map(map).collect();
        self.outputs = self.outputs.iter().map(map).collect();
        new_id
    }
}
