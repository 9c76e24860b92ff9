//! One graph -> setup (buffer declarations) and body (the computation), node by node in
//! topological order. How a node's value is held is its `Repr`: a Rust scalar for rank 0,
//! otherwise an owned buffer or a view into another value (inputs, indexing, transposes,
//! scan results), so taps and slices are index arithmetic, never copies.

use std::collections::HashMap;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::formula::{self, literal};
use super::{nd, owned_type, rt, scalar_type};
use crate::ir::{
    Assume, ElemOp, Graph, LinalgOp, Literal, LoopCheck, Node, NodeId, Op, PathStep, RandomOp,
    ReduceOp,
};

/// How a graph input arrives: an expression giving a view (arrays) or a scalar.
pub enum Input {
    Expr(TokenStream),
}

#[derive(Clone)]
pub enum Repr {
    Scalar(Ident),
    Buffer(Ident),
    View(Ident),
    /// Rows `start..start + done` of a scan's output buffer: a view while the function
    /// runs, the buffer itself (no copy) when it is returned.
    Rows {
        buf: Ident,
        start: usize,
        done: Ident,
    },
    /// The `kept` (0 or 1) last rows of a scan output held as its state alone: the state
    /// buffer `buf` with a leading axis, a view while the function runs, the buffer itself
    /// (no copy) when returned.
    State {
        buf: Ident,
        kept: Ident,
    },
    /// A row of a [`Repr::State`] (`x[-1]`), bound as the view `row` where it was indexed
    /// (the index checked there): the only row there can be, the state itself, so returned
    /// it is the buffer `buf`, moved.
    StateRow {
        row: Ident,
        buf: Ident,
    },
}

impl Repr {
    /// An `ArrayView` of the value (a 0-d view for scalars).
    pub fn view(&self) -> TokenStream {
        match self {
            Repr::Scalar(i) => {
                let nd = nd();
                quote!(#nd::aview0(&#i))
            }
            Repr::Buffer(i) | Repr::View(i) | Repr::StateRow { row: i, .. } => quote!(#i.view()),
            Repr::Rows { buf, start, done } => {
                let nd = nd();
                quote!(#buf.slice_axis(#nd::Axis(0), #nd::Slice::from(#start..#start + #done)))
            }
            Repr::State { buf, kept } => {
                let nd = nd();
                quote!(#buf.view().insert_axis(#nd::Axis(0)).slice_axis_move(#nd::Axis(0), #nd::Slice::from(0..#kept)))
            }
        }
    }

    pub fn scalar(&self) -> TokenStream {
        match self {
            Repr::Scalar(i) => quote!(#i),
            other => {
                let rt = rt();
                let v = other.view();
                quote!(#rt::kernels::scalar(#v))
            }
        }
    }

    /// An owned copy, to hand back to the caller.
    pub fn owned(&self) -> TokenStream {
        match self {
            Repr::Scalar(i) => quote!(#i),
            other => {
                let v = other.view();
                quote!(#v.to_owned())
            }
        }
    }

    /// The buffer that holds the value, if it owns one.
    pub fn buffer(&self) -> Option<&Ident> {
        match self {
            Repr::Buffer(b)
            | Repr::Rows { buf: b, .. }
            | Repr::State { buf: b, .. }
            | Repr::StateRow { buf: b, .. } => Some(b),
            _ => None,
        }
    }

    /// The value handed back by moving its buffer (no copy); the buffer is gone after.
    pub fn moved(&self) -> TokenStream {
        match self {
            Repr::Buffer(b) | Repr::StateRow { buf: b, .. } => quote!(#b),
            Repr::State { buf, kept } => {
                let nd = nd();
                quote!({
                    let mut __rows = #buf.insert_axis(#nd::Axis(0));
                    __rows.slice_axis_inplace(#nd::Axis(0), #nd::Slice::from(0..#kept));
                    __rows
                })
            }
            Repr::Rows { buf, start, done } => {
                let nd = nd();
                quote!({
                    let mut __rows = #buf;
                    __rows.slice_axis_inplace(#nd::Axis(0), #nd::Slice::from(#start..#start + #done));
                    __rows
                })
            }
            other => other.owned(),
        }
    }

    pub fn is_scalar(&self) -> bool {
        matches!(self, Repr::Scalar(_))
    }
}

pub struct Code {
    pub setup: TokenStream,
    pub body: TokenStream,
    pub outputs: Vec<Repr>,
    /// The buffers of the graph's own nodes (each an owned `Array` declared in the setup),
    /// for the function to hand back to `kernels::pool::recycle` when it returns.
    pub buffers: Vec<Ident>,
}

/// A node whose kernel writes straight into a row of a scan's output (a
/// `kernels::Destination`) instead of into a buffer of its own that is then copied.
#[derive(Clone)]
pub struct InPlace {
    /// The destination expression (a trace's row: `kernels::SlotRow`).
    pub row: TokenStream,
    /// The row again, as a view, for the step's nodes that read the value after it is
    /// written.
    pub read_back: TokenStream,
    /// When the row may not exist yet (a map output's buffer is made from its first
    /// result): the condition under which the node fills its own buffer as usual.
    pub own_buffer_when: Option<TokenStream>,
}

/// Whether node `id` is computed by a kernel that can write into a given row
/// ([`InPlace`]): the map kernels (arrays' elementwise work, casts, fused chains) and the
/// vector and matrix products.
pub fn writes_in_place(g: &Graph, id: NodeId) -> bool {
    let node = g.node(id);
    if node.ty.rank == 0 {
        return false;
    }
    match &node.op {
        Op::Elemwise(_) | Op::Cast | Op::Fused(_) => true,
        // A result of a fused pass with two (`fused_pair`).
        Op::Part { .. } => g.node(node.inputs[0]).op.is_fused_pair(),
        Op::Dot => node.inputs.iter().all(|&i| g.ty(i).rank <= 2),
        Op::DotAdd { .. } | Op::StackedDot { .. } => true,
        _ => false,
    }
}

/// When `node` is `concatenate([head, trace])` with `trace` a recurrent output of a scan
/// held whole (`Repr::Rows` of its buffer, the initial rows first) and `head` exactly
/// those initial rows (`init[None]` of a SITSOT output, `init[:depth]` of a MITSOT one):
/// the buffer, the number of initial rows and the steps' count.
fn history_rows(g: &Graph, node: &Node, trace: &Repr) -> Option<(Ident, usize, Ident)> {
    let Repr::Rows { buf, start, done } = trace else {
        return None;
    };
    let [head, out] = node.inputs[..] else {
        return None;
    };
    let Op::ScanOutput { index } = g.node(out).op else {
        return None;
    };
    let scan = *g.node(out).inputs.first()?;
    let Op::Scan(op) = &g.node(scan).op else {
        return None;
    };
    let init = g.node(scan).inputs[op.init_input(index)?];
    let depth = op.outputs[index].depth() as usize;
    let h = g.node(head);
    let is_init_rows = match &h.op {
        Op::Subtensor { path } => match (path.as_slice(), h.inputs.as_slice()) {
            ([PathStep::NewAxis], [x]) => {
                *x == init && depth == 1 && op.outputs[index].taps == [-1]
            }
            (
                [PathStep::Slice {
                    start: false,
                    end: true,
                }],
                [x, end],
            ) => {
                *x == init
                    && matches!(g.node(*end).op, Op::Const(Literal::Int(d)) if d == depth as i128)
            }
            _ => false,
        },
        _ => false,
    };
    (is_init_rows && *start == depth && depth > 0).then(|| (buf.clone(), depth, done.clone()))
}

/// The scan that fills `fill`, a `fill_like` node, itself when its interchanged loop does
/// not run (`scan::defers_fill`), and its input that `fill` is: its only reader, once, as
/// an initial state.
fn deferred_fill(g: &Graph, users: &[Vec<NodeId>], fill: NodeId) -> Option<(NodeId, usize)> {
    let [reader] = users[fill.0][..] else {
        return None;
    };
    let Op::Scan(op) = &g.node(reader).op else {
        return None;
    };
    let k = g.node(reader).inputs.iter().position(|&i| i == fill)?;
    (!g.outputs.contains(&fill) && super::scan::defers_fill(op, k)).then_some((reader, k))
}

pub fn emit(g: &Graph, prefix: &str, inputs: &[Input]) -> Code {
    emit_in_place(g, prefix, inputs, &HashMap::new(), &HashMap::new(), None)
}

/// [`emit`], with the nodes of `in_place` (each one that [`writes_in_place`]) writing
/// their value into the row given instead of a buffer of their own; the graph's nodes read
/// it back from the row. As a graph output such a node is its own buffer (filled only when
/// `own_buffer_when`; the caller reads the row otherwise).
/// Products in `packed` (a matrix right operand packed before the loop) call the packed
/// matrix given (`kernels::PackedMatrix`). `step`: the loop's step counter, when `g` is a
/// step (linear algebra failures name the step).
pub fn emit_in_place(
    g: &Graph,
    prefix: &str,
    inputs: &[Input],
    in_place: &HashMap<NodeId, InPlace>,
    packed: &HashMap<NodeId, TokenStream>,
    step: Option<&Ident>,
) -> Code {
    let step = match step {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    };
    let rt = rt();
    let nd = nd();
    let mut setup = TokenStream::new();
    let mut body = TokenStream::new();
    let mut reprs: HashMap<NodeId, Repr> = HashMap::new();
    let mut scan_outputs: HashMap<NodeId, Vec<Repr>> = HashMap::new();
    let buffers: std::cell::RefCell<Vec<Ident>> = Default::default();
    let users = g.consumers();
    // Nodes written in place, as graph outputs: their own buffers.
    let mut as_output: HashMap<NodeId, Repr> = HashMap::new();

    let folded = folded_maps(g, &users, in_place);
    let with_extreme = maps_with_extremes(g, &folded, in_place);
    let chunkable = super::scan::chunkable_sequences(g, &users);
    let mut chunks: HashMap<NodeId, HashMap<usize, super::scan::Chunk>> = HashMap::new();
    // `fill_like` values left unfilled for the scan that reads them, by scan and input.
    let mut fills: HashMap<NodeId, HashMap<usize, super::scan::Fill>> = HashMap::new();
    // Increments that a join of slices (`Op::JoinSlices`) may have written into its
    // result by the map kernel computing them, and the joins planned so far.
    let parts = join_parts(g, &users, in_place, &folded, &with_extreme);
    let mut planned: std::collections::HashSet<NodeId> = Default::default();

    for id in g.live_nodes() {
        if folded.contains(&id) || reprs.contains_key(&id) {
            // Computed by the reduction that reads it, or (a reduction) with the map it
            // reads.
            continue;
        }
        let node = g.node(id);
        let ident = format_ident!("{}{}", prefix, id.0);
        let ty = node.ty;
        let s = scalar_type(ty.dtype);
        let label = &node.label;
        let arg = |k: usize| reprs[&node.inputs[k]].clone();
        // An increment of a join written into its slice (when the join's plan, made before
        // the first such increment, says the slices tile and the shapes fit; else into its
        // own buffer): the plan's code, if it comes here, and the destination.
        let part = match parts.get(&id) {
            Some(&(join, k)) => {
                join_part(g, prefix, join, k, &ident, &reprs, &mut planned, &mut setup)
            }
            None => None,
        };
        let into_part = part.is_some();
        if node.op.is_fused_pair() {
            // A fused pass with two results, read through `Part` nodes.
            let args: Vec<Repr> = (0..node.inputs.len()).map(arg).collect();
            let out = super::fused_pair::Emitted {
                setup: &mut setup,
                buffers: &mut buffers.borrow_mut(),
                as_output: &mut as_output,
            };
            let (code, results) =
                super::fused_pair::emit(g, id, prefix, &users, &args, in_place, out);
            body.extend(code);
            scan_outputs.insert(id, results);
            continue;
        }
        // A buffer declared in the setup, refilled by the body.
        let declare_buffer = |setup: &mut TokenStream| {
            let owned = owned_type(ty);
            setup.extend(quote!(let mut #ident: #owned = ::core::default::Default::default();));
            buffers.borrow_mut().push(ident.clone());
            Repr::Buffer(ident.clone())
        };
        // A view bound to the node's name, read out as a scalar when the node is one.
        let bind_view = |body: &mut TokenStream, view: TokenStream| {
            if ty.rank == 0 {
                body.extend(quote!(let #ident: #s = #rt::kernels::scalar(#view);));
                Repr::Scalar(ident.clone())
            } else {
                body.extend(quote!(let #ident = #view;));
                Repr::View(ident.clone())
            }
        };
        // A kernel call writing into `out`: the node's own buffer, or its row in place
        // (then read back from the row).
        let mut write = |setup: &mut TokenStream, call: &dyn Fn(TokenStream) -> TokenStream| {
            if let Some((plan, dest)) = &part {
                let code = call(dest.clone());
                return (declare_buffer(setup), quote!(#plan #code));
            }
            let own = quote!(&mut #ident);
            let Some(target) = in_place.get(&id) else {
                return (declare_buffer(setup), call(own));
            };
            let (row, back) = (&target.row, &target.read_back);
            let written = format_ident!("{}_row", ident);
            let code = match &target.own_buffer_when {
                None => {
                    let theirs = call(row.clone());
                    quote!(#theirs let #written = #back;)
                }
                Some(cond) => {
                    let (mine, theirs) = (call(own), call(row.clone()));
                    as_output.insert(id, declare_buffer(setup));
                    quote! {
                        let #written = if #cond { #mine #ident.view() } else { #theirs #back };
                    }
                }
            };
            (Repr::View(written), code)
        };
        if let Some(&reduce) = with_extreme.get(&id) {
            // The map, and the `max`/`min` of a map of it and its operands, in one pass.
            let args: Vec<Repr> = (0..node.inputs.len()).map(arg).collect();
            let (arrays, params, operands) = operands(&args);
            let f = element(node, &operands);
            let (r, reduced) = (g.node(reduce), g.node(g.node(reduce).inputs[0]));
            let y = format_ident!("__y");
            let reduced_operands: Vec<TokenStream> = reduced
                .inputs
                .iter()
                .map(|i| match node.inputs.iter().position(|x| x == i) {
                    _ if *i == id => quote!(#y),
                    Some(k) => operands[k].clone(),
                    None => reprs[i].scalar(),
                })
                .collect();
            let g_body = element(reduced, &reduced_operands);
            let which = if matches!(
                r.op,
                Op::Reduce {
                    op: ReduceOp::Max,
                    ..
                }
            ) {
                "max"
            } else {
                "min"
            };
            let kernel = format_ident!("map{}_{}", arrays.len(), which);
            let extreme = format_ident!("{}{}", prefix, reduce.0);
            let rs = scalar_type(r.ty.dtype);
            let r_label = &r.label;
            let (repr, code) = write(&mut setup, &|out| {
                quote! {
                    let #extreme: #rs = #rt::kernels::#kernel(
                        #out, #(#arrays,)* #label, #r_label,
                        #[inline(always)] move |#(#params),*| #f,
                        #[inline(always)] move |#(#params,)* #y| #g_body,
                    )?;
                }
            });
            body.extend(code);
            reprs.insert(id, repr);
            reprs.insert(reduce, Repr::Scalar(extreme));
            continue;
        }
        let repr = match &node.op {
            Op::Input { index, .. } => {
                let Input::Expr(e) = &inputs[*index];
                body.extend(quote!(let #ident = #e;));
                if ty.rank == 0 {
                    Repr::Scalar(ident.clone())
                } else {
                    Repr::View(ident.clone())
                }
            }
            Op::Const(value) => {
                let lit = literal(*value, ty.dtype);
                body.extend(quote!(let #ident: #s = #lit;));
                Repr::Scalar(ident.clone())
            }
            Op::Elemwise(op) => {
                let args: Vec<Repr> = (0..node.inputs.len()).map(arg).collect();
                if ty.rank == 0 && *op == ElemOp::Pow {
                    // A loop's `pow` usually sees its exponent grow by one each step: the
                    // runtime carries the power (`kernels::Powers`) instead of calling libm.
                    let (b, e) = (args[0].scalar(), args[1].scalar());
                    let state = format_ident!("{}_powers", ident);
                    setup.extend(quote!(let mut #state = #rt::kernels::Powers::default();));
                    body.extend(quote!(let #ident: #s = #state.pow(#b, #e);));
                    Repr::Scalar(ident.clone())
                } else if ty.rank == 0 {
                    let scalars: Vec<TokenStream> = args.iter().map(|a| a.scalar()).collect();
                    let f = formula::scalar(*op, &scalars);
                    body.extend(quote!(let #ident: #s = #f;));
                    Repr::Scalar(ident.clone())
                } else {
                    let (repr, code) = write(&mut setup, &|out| {
                        map_kernel(out, &args, label, |xs| part_element(node, xs, into_part))
                    });
                    body.extend(code);
                    repr
                }
            }
            Op::Cast => {
                let x = [arg(0)];
                if ty.rank == 0 {
                    let f = element(node, &[x[0].scalar()]);
                    body.extend(quote!(let #ident: #s = #f;));
                    Repr::Scalar(ident.clone())
                } else {
                    let (repr, code) = write(&mut setup, &|out| {
                        map_kernel(out, &x, label, |xs| part_element(node, xs, into_part))
                    });
                    body.extend(code);
                    repr
                }
            }
            Op::Dot => {
                let (a, b) = (arg(0).view(), arg(1).view());
                let (ra, rb) = (g.ty(node.inputs[0]).rank, g.ty(node.inputs[1]).rank);
                match (ra, rb) {
                    (1, 1) => {
                        body.extend(
                            quote!(let #ident: #s = #rt::kernels::dot_vv(#a, #b, #label)?;),
                        );
                        Repr::Scalar(ident.clone())
                    }
                    (3, 2) if chunkable.contains_key(&id) => {
                        // Computed by the loop that reads it, a chunk of steps at a time:
                        // only its shapes are checked here.
                        let (scan, i) = chunkable[&id];
                        let (x, w) = (format_ident!("{}_x", ident), format_ident!("{}_w", ident));
                        body.extend(quote! {
                            let #x = #a;
                            let #w = #b;
                            #rt::kernels::check_dot_stack(#x.view(), #w.view(), #label)?;
                        });
                        let repr = declare_buffer(&mut setup);
                        let chunk = super::scan::Chunk {
                            x,
                            w,
                            buf: ident.clone(),
                            label: label.clone(),
                            dtype: ty.dtype,
                        };
                        chunks.entry(scan).or_default().insert(i, chunk);
                        repr
                    }
                    _ => {
                        let f = match (ra, rb) {
                            (1, 2) => quote!(dot_vm),
                            (2, 1) => quote!(dot_mv),
                            (3, 1) => quote!(dot_stack_v),
                            (3, 2) => quote!(dot_stack_m),
                            _ => quote!(dot_mm),
                        };
                        let (repr, code) = write(&mut setup, &|out| match packed.get(&id) {
                            Some(p) => quote!(#p.#f(#out, #a, #b, #label)?;),
                            None => quote!(#rt::kernels::#f(#out, #a, #b, #label)?;),
                        });
                        body.extend(code);
                        repr
                    }
                }
            }
            Op::DotAdd { subtract } => {
                let (c, a, b) = (arg(0).view(), arg(1).view(), arg(2).view());
                let f = match (g.ty(node.inputs[1]).rank, g.ty(node.inputs[2]).rank) {
                    (1, _) => quote!(dot_add_vm),
                    (_, 1) => quote!(dot_add_mv),
                    _ => quote!(dot_add_mm),
                };
                // A matrix addend in a buffer of its own that nothing else reads (a product
                // before it: `dot(a, b) + dot(c, d)`, a group of input projections) is
                // taken over, the product accumulated onto it: one buffer, no copy.
                let ci = node.inputs[0];
                let onto = match arg(0) {
                    Repr::Buffer(cb)
                        if users[ci.0] == [id]
                            && !g.outputs.contains(&ci)
                            && g.ty(ci) == ty
                            && ty.rank == 2
                            && g.ty(node.inputs[1]).rank == 2
                            && g.ty(node.inputs[2]).rank == 2
                            && !in_place.contains_key(&id)
                            && !packed.contains_key(&id) =>
                    {
                        Some(cb)
                    }
                    _ => None,
                };
                if let Some(cb) = onto {
                    let repr = declare_buffer(&mut setup);
                    body.extend(quote!(
                        #rt::kernels::dot_add_mm_onto(&mut #ident, &mut #cb, #a, #b, #subtract, #label)?;
                    ));
                    repr
                } else {
                    let (repr, code) = write(&mut setup, &|out| match packed.get(&id) {
                        Some(p) => quote!(#p.#f(#out, #c, #a, #b, #subtract, #label)?;),
                        None => quote!(#rt::kernels::#f(#out, #c, #a, #b, #subtract, #label)?;),
                    });
                    body.extend(code);
                    repr
                }
            }
            // The stack_dots rewrite's matrices stacked by rows (before the loop).
            Op::StackRows => {
                let parts: Vec<TokenStream> =
                    (0..node.inputs.len()).map(|k| arg(k).view()).collect();
                let repr = declare_buffer(&mut setup);
                body.extend(
                    quote!(#rt::kernels::stack_rows(&mut #ident, &[#(#parts),*], #label)?;),
                );
                repr
            }
            // One product of the left operands side by side, or the sum when they do not fit.
            Op::StackedDot { products } => {
                let n = products.len();
                let stacked = arg(0).view();
                let a: Vec<TokenStream> = (1..=n).map(|k| arg(k).view()).collect();
                let b: Vec<TokenStream> = (n + 1..=2 * n).map(|k| arg(k).view()).collect();
                let (f, dim) = match g.ty(node.inputs[1]).rank {
                    1 => (quote!(dot_v), quote!(Ix1)),
                    _ => (quote!(dot_m), quote!(Ix2)),
                };
                // Its memory: made by the loop when it packs the stacked matrix before it.
                let st = packed.get(&id).cloned().unwrap_or_else(|| {
                    let st = format_ident!("{}_stacked", ident);
                    setup.extend(quote!(let mut #st: #rt::kernels::StackedDot<#s, #nd::#dim> = ::core::default::Default::default();));
                    quote!(#st)
                });
                let (repr, code) = write(
                    &mut setup,
                    &|out| quote!(#st.#f(#out, #stacked, &[#(#a),*], &[#(#b),*], &[#(#products),*], #label)?;),
                );
                body.extend(code);
                repr
            }
            // Zeros incremented at slices (join_slices): the increments written into their
            // slices when the slices tile the axis and the shapes fit, else added to zeros.
            Op::JoinSlices {
                axis,
                slices,
                labels,
            } => {
                let n = slices.len();
                let like = arg(0).view();
                let values: Vec<TokenStream> = (1..=n).map(|k| arg(k).view()).collect();
                let repr = declare_buffer(&mut setup);
                if planned.contains(&id) {
                    // Planned before its first increment written in place.
                    let state = format_ident!("{}_join", ident);
                    body.extend(
                        quote!(#state.finish(&mut #ident, [#(#values),*], [#(#labels),*])?;),
                    );
                } else {
                    let bounds = join_bounds(node, &reprs);
                    body.extend(quote!(#rt::kernels::join_slices(
                        &mut #ident, #like, #axis, [#(#bounds),*], [#(#values),*], [#(#labels),*],
                    )?;));
                }
                repr
            }
            Op::MatMul => {
                // numpy's matmul with a stack of matrices on the right.
                let (a, b) = (arg(0).view(), arg(1).view());
                let f = match g.ty(node.inputs[0]).rank {
                    1 => quote!(matmul_vector_stack),
                    2 => quote!(matmul_matrix_stack),
                    _ => quote!(matmul_stacks),
                };
                let repr = declare_buffer(&mut setup);
                body.extend(quote!(#rt::kernels::#f(&mut #ident, #a, #b, #label)?;));
                repr
            }
            Op::Reduce {
                op: op @ (ReduceOp::Max | ReduceOp::Min),
                axis: None,
            } if folded.contains(&node.inputs[0]) => {
                // The map it reads, computed here in the same pass.
                let map = g.node(node.inputs[0]);
                let args: Vec<Repr> = map.inputs.iter().map(|i| reprs[i].clone()).collect();
                let (arrays, params, operands) = operands(&args);
                let f = element(map, &operands);
                let which = if *op == ReduceOp::Max { "max" } else { "min" };
                let kernel = format_ident!("{}_of_map{}", which, arrays.len());
                let map_label = &map.label;
                body.extend(quote! {
                    let #ident: #s = #rt::kernels::#kernel(#(#arrays,)* #map_label, #label, #[inline(always)] move |#(#params),*| #f)?;
                });
                Repr::Scalar(ident.clone())
            }
            Op::Reduce { op, axis } => {
                let x = arg(0).view();
                match axis {
                    None => {
                        // `kernels::{name}_all`, with the label when it can fail.
                        let f = format_ident!("{}_all", op.name());
                        let call = if op.fails_when_empty() {
                            quote!(#rt::kernels::#f(#x, #label)?)
                        } else {
                            quote!(#rt::kernels::#f(#x))
                        };
                        body.extend(quote!(let #ident: #s = #call;));
                        Repr::Scalar(ident.clone())
                    }
                    Some(axis) => {
                        let reduced = if ty.rank == 0 {
                            // Reducing a vector along its only axis: through a 0-d buffer.
                            let tmp = format_ident!("{}_0d", ident);
                            setup.extend(quote!(let mut #tmp: #nd::Array0<#s> = #nd::Array0::default(#nd::Ix0());));
                            tmp
                        } else {
                            ident.clone()
                        };
                        // `kernels::{name}_axis`, with the label when it can fail.
                        let f = format_ident!("{}_axis", op.name());
                        let what = op.fails_when_empty().then(|| quote!(, #label));
                        let call = quote!(#rt::kernels::#f(&mut #reduced, #x, #axis #what)?;);
                        if ty.rank == 0 {
                            body.extend(call);
                            body.extend(
                                quote!(let #ident: #s = #rt::kernels::scalar(#reduced.view());),
                            );
                            Repr::Scalar(ident.clone())
                        } else {
                            let repr = declare_buffer(&mut setup);
                            body.extend(call);
                            repr
                        }
                    }
                }
            }
            Op::FillLike { value } => {
                let like = arg(0).view();
                let lit = literal(*value, ty.dtype);
                let repr = declare_buffer(&mut setup);
                match deferred_fill(g, &users, id) {
                    // The scan that reads it fills it, if its interchanged loop does not run.
                    Some((reader, k)) => {
                        let fill = super::scan::Fill { like, value: lit };
                        fills.entry(reader).or_default().insert(k, fill);
                    }
                    None => body.extend(quote!(#rt::kernels::fill_like(&mut #ident, #like, #lit);)),
                }
                repr
            }
            Op::Full => {
                let value = arg(0).scalar();
                let dims: Vec<TokenStream> =
                    (1..node.inputs.len()).map(|k| arg(k).scalar()).collect();
                let repr = declare_buffer(&mut setup);
                body.extend(
                    quote!(#rt::kernels::full(&mut #ident, &[#(#dims),*], #value, #label)?;),
                );
                repr
            }
            Op::Reshape => {
                let x = arg(0).view();
                let dims: Vec<TokenStream> =
                    (1..node.inputs.len()).map(|k| arg(k).scalar()).collect();
                let repr = declare_buffer(&mut setup);
                body.extend(
                    quote!(#rt::kernels::reshape(&mut #ident, #x, &[#(#dims),*], #label)?;),
                );
                repr
            }
            // A recurrent output's history, its initial rows then its steps (what a
            // gradient's backward loop reads): the rows of the trace's buffer, which holds
            // exactly those, viewed rather than copied.
            Op::Concatenate { axis: 0 } if history_rows(g, node, &arg(1)).is_some() => {
                let (buf, depth, done) =
                    history_rows(g, node, &arg(1)).expect("matched by the guard");
                body.extend(quote!(
                    let #ident = #buf.slice_axis(#nd::Axis(0), #nd::Slice::from(0..#depth + #done));
                ));
                Repr::View(ident.clone())
            }
            Op::Concatenate { axis } | Op::Stack { axis } => {
                let parts: Vec<TokenStream> =
                    (0..node.inputs.len()).map(|k| arg(k).view()).collect();
                let kernel = if matches!(node.op, Op::Stack { .. }) {
                    quote!(stack)
                } else {
                    quote!(concatenate)
                };
                let repr = declare_buffer(&mut setup);
                body.extend(
                    quote!(#rt::kernels::#kernel(&mut #ident, &[#(#parts),*], #axis, #label)?;),
                );
                repr
            }
            Op::Eye => {
                let n = arg(0).scalar();
                let repr = declare_buffer(&mut setup);
                body.extend(quote!(#rt::kernels::eye(&mut #ident, #n, #label)?;));
                repr
            }
            Op::Random(op) => {
                // `scan_runtime::random`: element j of a draw is a function of (key, j).
                let key = arg(0).scalar();
                let random = quote!(#rt::random);
                match op {
                    RandomOp::DeriveKey => {
                        let i = arg(1).scalar();
                        body.extend(quote!(let #ident: i64 = #random::derive_key(#key, #i);));
                        Repr::Scalar(ident.clone())
                    }
                    RandomOp::Split => {
                        let n = arg(1).scalar();
                        let repr = declare_buffer(&mut setup);
                        body.extend(quote!(#random::split(&mut #ident, #key, #n, #label)?;));
                        repr
                    }
                    RandomOp::Uniform | RandomOp::Normal => {
                        let (at, kernel) = if *op == RandomOp::Uniform {
                            (quote!(uniform_at), quote!(uniform))
                        } else {
                            (quote!(normal_at), quote!(normal))
                        };
                        if ty.rank == 0 {
                            body.extend(quote!(let #ident: #s = #random::#at::<#s>(#key, 0);));
                            Repr::Scalar(ident.clone())
                        } else {
                            let dims: Vec<TokenStream> =
                                (1..node.inputs.len()).map(|k| arg(k).scalar()).collect();
                            let repr = declare_buffer(&mut setup);
                            body.extend(quote!(
                                #random::#kernel(&mut #ident, #key, &[#(#dims),*], #label)?;
                            ));
                            repr
                        }
                    }
                    RandomOp::Bernoulli => {
                        if ty.rank == 0 {
                            let p = arg(1).scalar();
                            let ps = scalar_type(g.ty(node.inputs[1]).dtype);
                            body.extend(quote!(
                                let #ident: bool = #random::uniform_at::<#ps>(#key, 0) < #p;
                            ));
                            Repr::Scalar(ident.clone())
                        } else {
                            let p = arg(1).view();
                            let repr = declare_buffer(&mut setup);
                            body.extend(
                                quote!(#random::bernoulli(&mut #ident, #key, #p, #label)?;),
                            );
                            repr
                        }
                    }
                    RandomOp::Gamma => {
                        if ty.rank == 0 {
                            let a = arg(1).scalar();
                            body.extend(
                                quote!(let #ident: #s = #random::gamma_at::<#s>(#key, 0, #a);),
                            );
                            Repr::Scalar(ident.clone())
                        } else {
                            let a = arg(1).view();
                            let repr = declare_buffer(&mut setup);
                            body.extend(quote!(#random::gamma(&mut #ident, #key, #a, #label)?;));
                            repr
                        }
                    }
                    RandomOp::Beta => {
                        if ty.rank == 0 {
                            let (a, b) = (arg(1).scalar(), arg(2).scalar());
                            body.extend(
                                quote!(let #ident: #s = #random::beta_at::<#s>(#key, 0, #a, #b);),
                            );
                            Repr::Scalar(ident.clone())
                        } else {
                            let (a, b) = (arg(1).view(), arg(2).view());
                            let repr = declare_buffer(&mut setup);
                            body.extend(quote!(#random::beta(&mut #ident, #key, #a, #b, #label)?;));
                            repr
                        }
                    }
                    RandomOp::Categorical => {
                        let logits = arg(1).view();
                        if ty.rank == 0 {
                            // One row of logits: through a 0-d buffer, as a reduction.
                            let tmp = format_ident!("{}_0d", ident);
                            setup.extend(quote!(let mut #tmp: #nd::Array0<i64> = #nd::Array0::default(#nd::Ix0());));
                            body.extend(quote! {
                                #random::categorical(&mut #tmp, #key, #logits, #label)?;
                                let #ident: i64 = #rt::kernels::scalar(#tmp.view());
                            });
                            Repr::Scalar(ident.clone())
                        } else {
                            let repr = declare_buffer(&mut setup);
                            body.extend(quote!(
                                #random::categorical(&mut #ident, #key, #logits, #label)?;
                            ));
                            repr
                        }
                    }
                }
            }
            Op::Cumulative { product, axis } => {
                let x = arg(0).view();
                let repr = declare_buffer(&mut setup);
                body.extend(match axis {
                    None => quote!(#rt::kernels::cumulative_all(&mut #ident, #x, #product);),
                    Some(a) => {
                        quote!(#rt::kernels::cumulative_axis(&mut #ident, #x, #a, #product)?;)
                    }
                });
                repr
            }
            Op::Shape { axis } => {
                let x = arg(0).view();
                // The axis was checked against x's rank when the program was lowered.
                body.extend(quote!(let #ident: i64 = #x.len_of(#nd::Axis(#axis)) as i64;));
                Repr::Scalar(ident.clone())
            }
            Op::Arange => {
                let n = arg(0).scalar();
                let repr = declare_buffer(&mut setup);
                body.extend(quote!(#rt::kernels::arange(&mut #ident, #n, #label)?;));
                repr
            }
            Op::Subtensor { path } => {
                let view = walk_path(arg(0).view(), path, &node.inputs[1..], &reprs, label, false);
                if ty.rank == 0 {
                    body.extend(quote!(let #ident: #s = #rt::kernels::scalar(#view);));
                    Repr::Scalar(ident.clone())
                } else {
                    body.extend(quote!(let #ident = #view;));
                    match (arg(0), &path[..]) {
                        // `x[i]` of a state's last row: the state itself.
                        (Repr::State { buf, .. }, [PathStep::Index]) => Repr::StateRow {
                            row: ident.clone(),
                            buf,
                        },
                        _ => Repr::View(ident.clone()),
                    }
                }
            }
            Op::SetSubtensor { path, inc } => {
                let x = arg(0).view();
                let v = arg(1).view();
                // x's own buffer, read by nothing else, is taken over (its kernel refills
                // it next time): a chain of increments, a gradient's slices of one value,
                // works in one array instead of copying it at every link.
                let xi = node.inputs[0];
                let take = match arg(0) {
                    Repr::Buffer(xb) if users[xi.0].len() == 1 && !g.outputs.contains(&xi) => {
                        Some(xb.clone())
                    }
                    _ => None,
                };
                let repr = declare_buffer(&mut setup);
                let kernel = if *inc {
                    quote!(assign_add)
                } else {
                    quote!(assign)
                };
                let target = walk_path(
                    quote!(#ident.view_mut()),
                    path,
                    &node.inputs[2..],
                    &reprs,
                    label,
                    true,
                );
                let start = match take {
                    Some(xb) => quote!(::core::mem::swap(&mut #ident, &mut #xb);),
                    None => quote!(#rt::kernels::copy_into(&mut #ident, #x);),
                };
                body.extend(quote! {
                    #start
                    #rt::kernels::#kernel(#target, #v, #label)?;
                });
                repr
            }
            Op::Fused(_) => {
                let args: Vec<Repr> = (0..node.inputs.len()).map(arg).collect();
                let (repr, code) = write(&mut setup, &|out| {
                    map_kernel(out, &args, label, |xs| part_element(node, xs, into_part))
                });
                body.extend(code);
                repr
            }
            Op::ZeroStepShape => {
                let x = arg(0).view();
                body.extend(quote!(let #ident = #rt::kernels::zero_step_shape(#x);));
                Repr::View(ident.clone())
            }
            Op::LastOr => {
                let (first, rows) = (arg(0).view(), arg(1).view());
                bind_view(
                    &mut body,
                    quote!(#rt::kernels::last_or(#first, #rows, #label)?),
                )
            }
            // push_out_dot's sum of stacked products: one GEMM when the stacks merge.
            Op::DotSum {
                transpose,
                output,
                result,
            } => {
                let init = arg(0).view();
                let stack = |k: usize| {
                    let v = arg(k).view();
                    if transpose[k - 1] {
                        quote!(#v.permuted_axes([0, 2, 1]))
                    } else {
                        v
                    }
                };
                let (p, q) = (stack(1), stack(2));
                let scratch = format_ident!("{}_scratch", ident);
                setup.extend(quote!(let mut #scratch: #rt::kernels::DotSumScratch<#s> = ::core::default::Default::default();));
                let repr = declare_buffer(&mut setup);
                let text = quote!(#rt::kernels::DotSumText { product: #label, output: #output, result: #result });
                body.extend(quote!(#rt::kernels::dot_sum(&mut #ident, #init, #p, #q, &mut #scratch, #text)?;));
                repr
            }
            Op::Transpose => {
                let x = arg(0).view();
                body.extend(quote!(let #ident = #x.reversed_axes();));
                Repr::View(ident.clone())
            }
            Op::Squeeze { axis } => {
                let x = arg(0).view();
                bind_view(&mut body, quote!(#rt::kernels::squeeze(#x, #axis, #label)?))
            }
            Op::BroadcastTo => {
                let x = arg(0).view();
                let dims: Vec<TokenStream> =
                    (1..node.inputs.len()).map(|k| arg(k).scalar()).collect();
                let dim = super::dim_type(ty.rank);
                body.extend(quote!(
                    let #ident = #rt::kernels::broadcast_to::<_, _, #dim>(#x, &[#(#dims),*], #label)?;
                ));
                Repr::View(ident.clone())
            }
            // numpy's `broadcast_arrays(*inputs)[index]`, a view (slice_operands).
            Op::BroadcastArrays { index } => {
                let x = arg(*index).view();
                let shapes: Vec<TokenStream> = (0..node.inputs.len())
                    .map(|k| {
                        let v = arg(k).view();
                        quote!(#v.shape())
                    })
                    .collect();
                let dim = super::dim_type(ty.rank);
                body.extend(quote!(
                    let #ident = #rt::kernels::broadcast_arrays::<_, _, #dim>(#x, &[#(#shapes),*], #label)?;
                ));
                Repr::View(ident.clone())
            }
            // The adjoint of a broadcast (reverse mode): g summed back to like's shape.
            Op::Unbroadcast => {
                let (gv, like) = (arg(0).view(), arg(1).view());
                if ty.rank == 0 {
                    body.extend(quote!(let #ident: #s = #rt::kernels::sum_all(#gv);));
                    Repr::Scalar(ident.clone())
                } else {
                    // A view of g when the shapes agree at run time (no copy), else of a
                    // buffer of its own holding the sums.
                    let sums = format_ident!("{}_sums", ident);
                    let owned = owned_type(ty);
                    setup.extend(
                        quote!(let mut #sums: #owned = ::core::default::Default::default();),
                    );
                    buffers.borrow_mut().push(sums.clone());
                    body.extend(quote!(
                        let #ident = #rt::kernels::sum_to_shape_view(&mut #sums, #gv, #like, #label)?;
                    ));
                    Repr::View(ident.clone())
                }
            }
            Op::Diag if ty.rank == 1 => {
                // The diagonal of a matrix: a view.
                let (m, k) = (arg(0).view(), arg(1).scalar());
                body.extend(quote!(let #ident = #rt::kernels::diagonal(#m, #k);));
                Repr::View(ident.clone())
            }
            Op::Diag => {
                let (v, k) = (arg(0).view(), arg(1).scalar());
                let repr = declare_buffer(&mut setup);
                body.extend(quote!(#rt::kernels::diag(&mut #ident, #v, #k, #label)?;));
                repr
            }
            Op::Tri { upper } => {
                let (x, k) = (arg(0).view(), arg(1).scalar());
                let repr = declare_buffer(&mut setup);
                body.extend(quote!(#rt::kernels::triangle(&mut #ident, #x, #k, #upper, #label)?;));
                repr
            }
            Op::Take { axis } => {
                let (x, idx) = (arg(0).view(), arg(1).view());
                let repr = declare_buffer(&mut setup);
                // An index array of rank 2 or more gives its axes to the result.
                let kernel = if g.ty(node.inputs[1]).rank == 1 {
                    quote!(take)
                } else {
                    quote!(take_nd)
                };
                body.extend(quote!(#rt::kernels::#kernel(&mut #ident, #x, #idx, #axis, #label)?;));
                repr
            }
            Op::MaskTake => {
                let (x, mask) = (arg(0).view(), arg(1).view());
                let repr = declare_buffer(&mut setup);
                body.extend(quote!(#rt::kernels::mask_take(&mut #ident, #x, #mask, #label)?;));
                repr
            }
            Op::Scatter { axis, inc } => {
                let (x, v, idx) = (arg(0).view(), arg(1).view(), arg(2).view());
                let repr = declare_buffer(&mut setup);
                let kernel = if *inc {
                    quote!(scatter_add)
                } else {
                    quote!(scatter)
                };
                body.extend(
                    quote!(#rt::kernels::#kernel(&mut #ident, #x, #idx, #v, #axis, #label)?;),
                );
                repr
            }
            Op::MaskSet { inc } => {
                let (x, v, mask) = (arg(0).view(), arg(1).view(), arg(2).view());
                let repr = declare_buffer(&mut setup);
                let kernel = if *inc {
                    quote!(mask_add)
                } else {
                    quote!(mask_set)
                };
                body.extend(quote!(#rt::kernels::#kernel(&mut #ident, #x, #mask, #v, #label)?;));
                repr
            }
            Op::IdentityLike => {
                let like = arg(0).view();
                let repr = declare_buffer(&mut setup);
                body.extend(quote!(#rt::kernels::identity_like(&mut #ident, #like, #label)?;));
                repr
            }
            Op::Linalg(op) => {
                // Its workspace (copies, permutations, faer's scratch) lives beside the
                // buffers, before any loop: a step allocates nothing.
                let ws = format_ident!("{}_ws", ident);
                let la = quote!(#rt::kernels::linalg);
                setup.extend(
                    quote!(let mut #ws: #la::Linalg<#s> = ::core::default::Default::default();),
                );
                let a = arg(0).view();
                let b = (node.inputs.len() > 1).then(|| arg(1).view());
                if let Some(ranks) = op.parts() {
                    // Every result from one factorisation, each in a value of its own, read
                    // through the `Part` nodes (as a scan's outputs).
                    let parts: Vec<Ident> = (0..ranks.len())
                        .map(|k| format_ident!("{}_{}", ident, k))
                        .collect();
                    let mut reprs = Vec::new();
                    for (p, &rank) in parts.iter().zip(ranks) {
                        if rank == 0 {
                            reprs.push(Repr::Scalar(p.clone()));
                        } else {
                            let owned = owned_type(crate::ir::Type::new(ty.dtype, rank));
                            setup.extend(
                                quote!(let mut #p: #owned = ::core::default::Default::default();),
                            );
                            buffers.borrow_mut().push(p.clone());
                            reprs.push(Repr::Buffer(p.clone()));
                        }
                    }
                    let (p0, p1) = (&parts[0], &parts[1]);
                    body.extend(match *op {
                        LinalgOp::Eigh { lower } => quote!(
                            #la::eigh(&mut #ws, &mut #p0, &mut #p1, #a, #lower, #label, #step)?;
                        ),
                        LinalgOp::Qr {
                            mode: crate::ir::QrMode::Complete,
                        } => quote!(#la::qr_complete(&mut #ws, &mut #p0, &mut #p1, #a, #label)?;),
                        LinalgOp::Qr { .. } => quote!(#la::qr(&mut #ws, &mut #p0, &mut #p1, #a, #label)?;),
                        LinalgOp::Svd { full_matrices } => {
                            let p2 = &parts[2];
                            quote!(#la::svd(&mut #ws, &mut #p0, &mut #p1, &mut #p2, #a, #full_matrices, #label, #step)?;)
                        }
                        _ => match &b {
                            Some(l) => quote!(let (#p0, #p1): (#s, #s) = #la::slogdet_factored(&mut #ws, #a, #l, #label)?;),
                            None => quote!(let (#p0, #p1): (#s, #s) = #la::slogdet(&mut #ws, #a, #label)?;),
                        },
                    });
                    scan_outputs.insert(id, reprs);
                    continue;
                }
                match *op {
                    LinalgOp::Det => {
                        body.extend(match &b {
                            Some(l) => quote!(let #ident: #s = #la::det_factored(&mut #ws, #a, #l, #label)?;),
                            None => quote!(let #ident: #s = #la::det(&mut #ws, #a, #label)?;),
                        });
                        Repr::Scalar(ident.clone())
                    }
                    _ => {
                        let repr = declare_buffer(&mut setup);
                        let out = quote!(&mut #ident);
                        body.extend(match *op {
                            LinalgOp::Cholesky { lower, nan_on_error } => quote!(
                                #la::cholesky(&mut #ws, #out, #a, #lower, #nan_on_error, #label, #step)?;
                            ),
                            LinalgOp::ChoSolve { lower } => {
                                quote!(#la::cho_solve(&mut #ws, #out, #a, #b, #lower, #label)?;)
                            }
                            LinalgOp::Solve { assume, lower } => {
                                let assume = match assume {
                                    Assume::General => quote!(General),
                                    Assume::Positive => quote!(Positive),
                                    Assume::Symmetric => quote!(Symmetric),
                                };
                                quote!(#la::solve(&mut #ws, #out, #a, #b, #la::Assume::#assume, #lower, #label, #step)?;)
                            }
                            LinalgOp::SolveTriangular { lower, trans, unit_diagonal } => quote!(
                                #la::solve_triangular(&mut #ws, #out, #a, #b, #lower, #trans, #unit_diagonal, #label, #step)?;
                            ),
                            LinalgOp::SvdVals => {
                                quote!(#la::svdvals(&mut #ws, #out, #a, #label, #step)?;)
                            }
                            LinalgOp::Qr { .. } => quote!(#la::qr_r(&mut #ws, #out, #a, #label)?;),
                            _ => quote!(#la::inv(&mut #ws, #out, #a, #label, #step)?;),
                        });
                        repr
                    }
                }
            }
            Op::Permute { axes } => {
                let x = arg(0).view();
                body.extend(quote!(let #ident = #x.permuted_axes([#(#axes),*]);));
                Repr::View(ident.clone())
            }
            Op::Scan(op) => {
                let args: Vec<Repr> = (0..node.inputs.len()).map(arg).collect();
                // Inputs this scan is the only reader of: their buffers may be taken over.
                let exclusive: Vec<bool> = node
                    .inputs
                    .iter()
                    .map(|i| users[i.0].len() == 1 && !g.outputs.contains(i))
                    .collect();
                let chunked = chunks.remove(&id).unwrap_or_default();
                let fills = fills.remove(&id).unwrap_or_default();
                let code = super::scan::emit(
                    op,
                    &args,
                    &exclusive,
                    &chunked,
                    &fills,
                    &format!("{prefix}{}_", id.0),
                );
                setup.extend(code.setup);
                body.extend(code.body);
                // Its outputs' buffers, unless returned, go to the pool when the function
                // returns (a large trace read only by later work: a gradient's states).
                buffers
                    .borrow_mut()
                    .extend(code.outputs.iter().filter_map(|r| r.buffer().cloned()));
                scan_outputs.insert(id, code.outputs);
                continue;
            }
            // A scan's results, and those of a linear-algebra node with several.
            Op::ScanOutput { index } | Op::Part { index } => {
                scan_outputs[&node.inputs[0]][*index].clone()
            }
        };
        reprs.insert(id, repr);
    }
    let outputs = g
        .outputs
        .iter()
        .map(|o| as_output.get(o).unwrap_or(&reprs[o]).clone())
        .collect();
    let mut buffers = buffers.into_inner();
    buffers.dedup();
    Code {
        setup,
        body,
        outputs,
        buffers,
    }
}

/// The increments of joins (`Op::JoinSlices`) that can be written into their slices by
/// the kernel computing them, each with its join and its index there: array nodes a map
/// kernel computes (an elementwise operation, a cast, a fused chain), of the join's type,
/// read by the join alone (once), not graph outputs, not written in place elsewhere nor
/// folded into a reduction.
fn join_parts(
    g: &Graph,
    users: &[Vec<NodeId>],
    in_place: &HashMap<NodeId, InPlace>,
    folded: &std::collections::HashSet<NodeId>,
    with_extreme: &HashMap<NodeId, NodeId>,
) -> HashMap<NodeId, (NodeId, usize)> {
    let mut parts = HashMap::new();
    for join in g.live_nodes() {
        let node = g.node(join);
        let Op::JoinSlices { slices, .. } = &node.op else {
            continue;
        };
        for (k, &p) in node.inputs[1..=slices.len()].iter().enumerate() {
            let value = g.node(p);
            let fits = value.ty == node.ty
                && matches!(value.op, Op::Elemwise(_) | Op::Cast | Op::Fused(_))
                && users[p.0] == [join]
                && !g.outputs.contains(&p)
                && !in_place.contains_key(&p)
                && !folded.contains(&p)
                && !with_extreme.contains_key(&p);
            if fits {
                parts.insert(p, (join, k));
            }
        }
    }
    parts
}

/// For increment `k` of `join`, computed by node `ident`: the code planning the join when
/// it is not planned yet (its state declared in the setup), and the destination the
/// increment's kernel writes to (`JoinSlices::part`: its slice of the join's buffer, or
/// its own buffer). `None` when the join cannot be planned here (the array its zeros are
/// like, or a bound, is computed after this increment): the increment is then an ordinary
/// value the join reads.
#[allow(clippy::too_many_arguments)]
fn join_part(
    g: &Graph,
    prefix: &str,
    join: NodeId,
    k: usize,
    ident: &Ident,
    reprs: &HashMap<NodeId, Repr>,
    planned: &mut std::collections::HashSet<NodeId>,
    setup: &mut TokenStream,
) -> Option<(TokenStream, TokenStream)> {
    let rt = rt();
    let node = g.node(join);
    let Op::JoinSlices { axis, slices, .. } = &node.op else {
        return None;
    };
    let out = format_ident!("{}{}", prefix, join.0);
    let state = format_ident!("{}{}_join", prefix, join.0);
    let mut plan = TokenStream::new();
    if !planned.contains(&join) {
        let n = slices.len();
        let known = std::iter::once(&node.inputs[0])
            .chain(&node.inputs[1 + n..])
            .all(|i| reprs.contains_key(i));
        if !known {
            return None;
        }
        let dim = super::dim_type(node.ty.rank);
        setup.extend(quote!(
            let mut #state: #rt::kernels::JoinSlices<#dim, #n> = ::core::default::Default::default();
        ));
        let like = reprs[&node.inputs[0]].view();
        let bounds = join_bounds(node, reprs);
        plan = quote!(#state.plan(&mut #out, #like, #axis, [#(#bounds),*]););
        planned.insert(join);
    }
    Some((plan, quote!(#state.part(&mut #out, &mut #ident, #k))))
}

/// The bounds of a join's slices, `(Option<i64>, Option<i64>)` each.
fn join_bounds(node: &Node, reprs: &HashMap<NodeId, Repr>) -> Vec<TokenStream> {
    let Op::JoinSlices { slices, .. } = &node.op else {
        return Vec::new();
    };
    let mut operands = node.inputs[1 + slices.len()..].iter();
    // A join has an operand per bound present, by construction.
    let mut bound = |present: bool| match (present, present.then(|| operands.next()).flatten()) {
        (true, Some(o)) => {
            let v = reprs[o].scalar();
            quote!(::core::option::Option::Some(#v))
        }
        (true, None) => unreachable!("a join's bound without its operand"),
        (false, _) => quote!(::core::option::Option::None),
    };
    slices
        .iter()
        .map(|&(start, end)| {
            let (a, b) = (bound(start), bound(end));
            quote!((#a, #b))
        })
        .collect()
}

/// [`element`], as `0 + value` for a float increment written into a join's slice: what
/// adding it to zeros gives (-0.0 becomes 0.0), so the join's result is bit-identical to
/// the increments'.
fn part_element(node: &crate::ir::Node, xs: &[TokenStream], into_part: bool) -> TokenStream {
    let f = element(node, xs);
    if into_part && node.ty.dtype.is_float() {
        let zero = literal(Literal::Float(0.0), node.ty.dtype);
        formula::scalar(ElemOp::Add, &[zero, f])
    } else {
        f
    }
}

/// `out = f(args...)` elementwise with broadcasting: array operands go through a runtime
/// `map` kernel, scalar operands are captured by the closure. `out` is the kernel's
/// destination (`&mut buffer` or a row).
fn map_kernel(
    out: TokenStream,
    args: &[Repr],
    label: &str,
    f: impl Fn(&[TokenStream]) -> TokenStream,
) -> TokenStream {
    let rt = rt();
    let (arrays, params, operands) = operands(args);
    let body = f(&operands);
    let kernel = format_ident!("map{}", arrays.len());
    // `#[inline(always)]`: the kernel calls the closure from its AVX2 loop and its
    // fallback; without it LLVM inlines a long chain into neither, and the AVX2 loop calls
    // it once per element instead of running it on vectors. `move`: scalar operands are
    // copied into the closure; captured by reference, each element reloads them (the
    // output might alias them) and the loop does not vectorize.
    quote!(#rt::kernels::#kernel(#out, #(#arrays,)* #label, #[inline(always)] move |#(#params),*| #body)?;)
}

/// A map's operands as its kernel takes them: the arrays' views, the closure's parameters
/// for them, and every operand as the element formula reads it (a parameter for an array,
/// the captured local for a scalar).
pub(super) fn operands(
    args: &[Repr],
) -> (Vec<TokenStream>, Vec<proc_macro2::Ident>, Vec<TokenStream>) {
    let mut arrays = Vec::new();
    let mut params = Vec::new();
    let operands: Vec<TokenStream> = args
        .iter()
        .map(|a| match a {
            Repr::Scalar(i) => quote!(#i),
            other => {
                let p = format_ident!("__x{}", arrays.len());
                arrays.push(other.view());
                params.push(p.clone());
                quote!(#p)
            }
        })
        .collect();
    (arrays, params, operands)
}

/// The element formula of an array node that a map kernel computes (an elementwise
/// operation, a cast, a fused chain), over its operands `xs`.
fn element(node: &crate::ir::Node, xs: &[TokenStream]) -> TokenStream {
    let rt = rt();
    match &node.op {
        Op::Elemwise(op) => formula::scalar(*op, xs),
        Op::Cast => {
            let (s, x) = (scalar_type(node.ty.dtype), &xs[0]);
            quote!(#rt::element::Cast::<#s>::cast(#x))
        }
        Op::Fused(fused) => fused_element(fused, xs),
        other => unreachable!("not a map: {other:?}"),
    }
}

/// Maps computed inside the `max`/`min` of all their elements that is their only reader
/// (`kernels::max_of_map2` and kin: one pass, no array of the map): array nodes a map
/// kernel computes, of one to three array operands, that are not graph outputs and are
/// not written in place.
fn folded_maps(
    g: &Graph,
    users: &[Vec<NodeId>],
    in_place: &HashMap<NodeId, InPlace>,
) -> std::collections::HashSet<NodeId> {
    g.live_nodes()
        .into_iter()
        .filter(|&id| {
            let node = g.node(id);
            let arrays = node.inputs.iter().filter(|&&i| g.ty(i).rank > 0).count();
            let folded_by = |&u: &NodeId| {
                matches!(
                    g.node(u).op,
                    Op::Reduce {
                        op: ReduceOp::Max | ReduceOp::Min,
                        axis: None
                    }
                )
            };
            node.ty.rank > 0
                && matches!(node.op, Op::Elemwise(_) | Op::Cast | Op::Fused(_))
                && (1..=3).contains(&arrays)
                && users[id.0].len() == 1
                && users[id.0].iter().all(folded_by)
                && !g.outputs.contains(&id)
                && !in_place.contains_key(&id)
        })
        .collect()
}

/// Maps computed together with the `max`/`min` of all the elements of a map of their
/// result and their operands (`kernels::map2_max` and kin: a step's new row and its largest
/// change from the previous one, in one pass), keyed by the map, with the reduction: the
/// reduction's map is folded ([`folded_maps`]), reads the map, its operands and scalars
/// computed before it, and nothing else; the map is a map kernel's of one or two array
/// operands, not folded, and writes unconditionally (no `own_buffer_when`).
fn maps_with_extremes(
    g: &Graph,
    folded: &std::collections::HashSet<NodeId>,
    in_place: &HashMap<NodeId, InPlace>,
) -> HashMap<NodeId, NodeId> {
    let live = g.live_nodes();
    let position: HashMap<NodeId, usize> =
        live.iter().enumerate().map(|(k, &id)| (id, k)).collect();
    let is_map = |id: NodeId| {
        g.ty(id).rank > 0 && matches!(g.node(id).op, Op::Elemwise(_) | Op::Cast | Op::Fused(_))
    };
    let mut found: HashMap<NodeId, NodeId> = HashMap::new();
    for &r in &live {
        let node = g.node(r);
        let (
            Op::Reduce {
                op: ReduceOp::Max | ReduceOp::Min,
                axis: None,
            },
            [f],
        ) = (&node.op, &node.inputs[..])
        else {
            continue;
        };
        if !folded.contains(f) {
            continue;
        }
        let reduced = g.node(*f);
        let map = reduced.inputs.iter().copied().find(|&m| {
            let map = g.node(m);
            let arrays = map.inputs.iter().filter(|&&i| g.ty(i).rank > 0).count();
            is_map(m)
                && !folded.contains(&m)
                && !found.contains_key(&m)
                && (1..=2).contains(&arrays)
                && in_place.get(&m).is_none_or(|t| t.own_buffer_when.is_none())
                && reduced.inputs.iter().all(|&i| {
                    i == m
                        || map.inputs.contains(&i)
                        || (g.ty(i).rank == 0 && position[&i] < position[&m])
                })
        });
        if let Some(m) = map {
            found.insert(m, r);
        }
    }
    found
}

/// One element of a fused chain: its operations' scalar formulas in order, reading the
/// chain's operands `xs` (closure parameters for arrays, captured locals for scalars).
pub(super) fn fused_element(body: &Graph, xs: &[TokenStream]) -> TokenStream {
    let rt = rt();
    let mut lets = TokenStream::new();
    let mut value: HashMap<NodeId, TokenStream> = HashMap::new();
    for id in body.live_nodes() {
        let node = body.node(id);
        let e = format_ident!("__e{}", id.0);
        let ins: Vec<TokenStream> = node.inputs.iter().map(|i| value[i].clone()).collect();
        let s = scalar_type(node.ty.dtype);
        let expr = match &node.op {
            Op::Input { index, .. } => {
                value.insert(id, xs[*index].clone());
                continue;
            }
            Op::Const(v) => literal(*v, node.ty.dtype),
            Op::Elemwise(op) => formula::scalar(*op, &ins),
            Op::Cast => {
                let x = &ins[0];
                quote!(#rt::element::Cast::<#s>::cast(#x))
            }
            other => unreachable!("fusion admits only elementwise nodes, found {other:?}"),
        };
        lets.extend(quote!(let #e: #s = #expr;));
        value.insert(id, quote!(#e));
    }
    let out = &value[&body.outputs[0]];
    quote!({ #lets #out })
}

/// A view (or mutable view) of `base` through an indexing path.
fn walk_path(
    base: TokenStream,
    path: &[PathStep],
    operands: &[NodeId],
    reprs: &HashMap<NodeId, Repr>,
    label: &str,
    mutable: bool,
) -> TokenStream {
    let rt = rt();
    let nd = nd();
    let mut cur = base;
    let mut operands = operands.iter().map(|o| &reprs[o]);
    // A path has an operand per index and bound (and per check operand), by construction.
    let next = |operands: &mut dyn Iterator<Item = &Repr>| match operands.next() {
        Some(r) => r.scalar(),
        None => unreachable!("a path step without its operand"),
    };
    let (index, slice) = if mutable {
        (quote!(index_mut), quote!(slice_mut))
    } else {
        (quote!(index), quote!(slice))
    };
    let (index_at, slice_at, slice_step_at) = if mutable {
        (
            quote!(index_at_mut),
            quote!(slice_at_mut),
            quote!(slice_step_at_mut),
        )
    } else {
        (quote!(index_at), quote!(slice_at), quote!(slice_step_at))
    };
    // The axis the steps act on (`PathStep::At`; 0 until one says otherwise).
    let mut at = 0usize;
    for step in path {
        cur = match step {
            PathStep::At(axis) => {
                at = *axis;
                continue;
            }
            PathStep::Index if at > 0 => {
                let i = next(&mut operands);
                quote!(#rt::kernels::#index_at(#cur, #at, #i, #label)?)
            }
            PathStep::Index => {
                let i = next(&mut operands);
                quote!(#rt::kernels::#index(#cur, #i, #label)?)
            }
            PathStep::NewAxis => quote!(#cur.insert_axis(#nd::Axis(#at))),
            // The checks of a loop removed by one-step inlining, by the loop's own functions.
            PathStep::Check(check) => {
                let checks = quote!(#rt::kernels::one_step);
                match &**check {
                    LoopCheck::Window { sequence, taps } => {
                        quote!(#checks::sequence_window(#cur, #sequence, &[#(#taps),*])?)
                    }
                    LoopCheck::Steps {
                        sequence,
                        taps,
                        n_steps,
                    } => quote!(#checks::sequence_rows(#cur, #sequence, &[#(#taps),*], #n_steps)?),
                    LoopCheck::InitialRows { output, taps } => {
                        quote!(#checks::initial_rows(#cur, #output, &[#(#taps),*])?)
                    }
                    LoopCheck::StepShape {
                        output,
                        result,
                        rows,
                    } => {
                        let init = match operands.next() {
                            Some(r) => r.view(),
                            None => unreachable!("a step shape check reads the initial state"),
                        };
                        let skip = usize::from(*rows);
                        quote!(#checks::step_shape(#cur, #output, #result, &#init.shape()[#skip..])?)
                    }
                    // Only an order: its operands are computed before this node anyway.
                    LoopCheck::After(n) => {
                        operands.by_ref().take(*n).for_each(drop);
                        cur
                    }
                }
            }
            PathStep::Stepped { start, end } => {
                let mut bound = |present: bool| {
                    if present {
                        let v = next(&mut operands);
                        quote!(::core::option::Option::Some(#v))
                    } else {
                        quote!(::core::option::Option::None)
                    }
                };
                let (a, b) = (bound(*start), bound(*end));
                let step = next(&mut operands);
                quote!(#rt::kernels::#slice_step_at(#cur, #at, #a, #b, #step, #label)?)
            }
            PathStep::Slice { start, end } => {
                let a = if *start {
                    let v = next(&mut operands);
                    quote!(::core::option::Option::Some(#v))
                } else {
                    quote!(::core::option::Option::None)
                };
                let b = if *end {
                    let v = next(&mut operands);
                    quote!(::core::option::Option::Some(#v))
                } else {
                    quote!(::core::option::Option::None)
                };
                if at > 0 {
                    quote!(#rt::kernels::#slice_at(#cur, #at, #a, #b))
                } else {
                    quote!(#rt::kernels::#slice(#cur, #a, #b))
                }
            }
        };
    }
    cur
}
