//! A scan node -> its loop. Before the loop: the number of steps (checked against every
//! sequence), each output's storage with its initial state's rows (a trace that grows by
//! a row per step, a ring, or the state alone). In the loop: step arguments are views at
//! computed offsets into the sequences and output storage (taps are index arithmetic), the
//! step's body, then each result is written into its row (or was, in place, by its
//! kernel). After the loop: each output is a view of the rows the steps wrote.
//! A scan marked by loop interchange also gets the interchanged loop (element chunks
//! outer, steps inner: `emit/interchange.rs`), tried first on the same storage.

use std::collections::HashMap;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::graph::{self, Code, Input, Repr};
use super::interchange;
use super::lanes;
use super::{nd, owned_type, rt};
use crate::ir::{NodeId, Op, Output, OutputKind, ScanOp};
use crate::rewrite::{loop_interchange, sum_lanes};

/// `Dim([lead, s[skip], s[skip+1], ..])` with `rest` trailing axes taken from shape `s`.
fn dim_with_lead(lead: TokenStream, shape: &TokenStream, skip: usize, rest: usize) -> TokenStream {
    let nd = nd();
    let axes = (skip..skip + rest).map(|i| quote!(#shape[#i]));
    quote!(#nd::Dim([#lead, #(#axes),*]))
}

/// Whether step value `id` is a view into output `j`'s buffer: one of its tap inputs, or
/// an indexing or transpose of one.
fn views_own_taps(op: &ScanOp, j: usize, id: NodeId) -> bool {
    let node = op.step.node(id);
    match node.op {
        Op::Input { index, .. } => {
            let first = op.first_output_tap_input(j);
            (first..first + op.outputs[j].taps.len()).contains(&index)
        }
        Op::Subtensor { .. }
        | Op::Transpose
        | Op::Permute { .. }
        | Op::Squeeze { .. }
        | Op::BroadcastTo
        | Op::Unbroadcast => views_own_taps(op, j, node.inputs[0]),
        Op::BroadcastArrays { index } => views_own_taps(op, j, node.inputs[index]),
        // A view of either input.
        Op::LastOr => node.inputs.iter().any(|&x| views_own_taps(op, j, x)),
        _ => false,
    }
}

/// Whether output `j`'s step result is written by its kernel straight into the output's
/// row (no buffer of the step's, no copy): an array row of a full trace, computed by a
/// kernel that can ([`graph::writes_in_place`]), the result of no other output (other
/// step nodes read it back from the row).
fn in_place(op: &ScanOp, j: usize) -> bool {
    let r = op.step.outputs[j];
    let row = op.step.ty(r);
    matches!(Storage::of(&op.outputs[j]), Storage::Trace)
        && row.rank > 0
        && graph::writes_in_place(&op.step, r)
        && op.step.outputs.iter().filter(|&&o| o == r).count() == 1
}

/// An initial state `fill_like(like, value)` (`ones_like(a)`, say) left unfilled until the
/// loop runs ([`defers_fill`]): the interchanged loop starts each chunk from `value` and
/// writes the state once, instead of reading back a buffer written with `value` first (a
/// pass over the whole state: power_large's 8 MB); the ordinary loop fills the buffer
/// before its first step. `like` and `value` are expressions valid where the scan is.
pub struct Fill {
    pub like: TokenStream,
    pub value: TokenStream,
}

/// Whether the scan's input `k`, a `fill_like` that this scan alone reads, may be left
/// unfilled ([`Fill`]): it is the initial state of an array output kept as its state alone
/// (one row of history, only the last row kept), in a scan that gets the interchanged
/// loop.
pub fn defers_fill(op: &ScanOp, k: usize) -> bool {
    op.interchange
        && loop_interchange::eligible(op).is_ok()
        && op.outputs.iter().enumerate().any(|(j, o)| {
            op.init_input(j) == Some(k)
                && matches!(Storage::of(o), Storage::State)
                && op.step.ty(op.step.outputs[j]).rank > 0
        })
}

/// Output `j` as run-time errors name it: a recurrent output by its initial state, a map
/// output by its position.
fn output_name(op: &ScanOp, j: usize) -> String {
    let o = &op.outputs[j];
    if o.is_recurrent() {
        format!("`{}`", o.label)
    } else {
        j.to_string()
    }
}

/// How the loop holds an output (chosen from `Output::keep`, set by save-mem).
#[derive(Clone, Copy)]
pub(super) enum Storage {
    /// Every step after the initial rows.
    Trace,
    /// A ring of this many rows: the last steps kept and the taps' depth.
    Ring(usize),
    /// The current value alone (at most one row kept, taps at most -1): a local scalar,
    /// or a buffer swapped with the step's result.
    State,
}

impl Storage {
    pub(super) fn of(o: &Output) -> Storage {
        match o.keep {
            None => Storage::Trace,
            Some(k) if k.max(o.depth() as usize) <= 1 => Storage::State,
            Some(k) => Storage::Ring(k.max(o.depth() as usize)),
        }
    }

    /// The buffer row holding absolute row `at` (initial rows first, then the steps).
    fn slot(self, at: TokenStream) -> TokenStream {
        match self {
            Storage::Ring(r) => quote!(((#at) % #r)),
            _ => at,
        }
    }
}

/// A sequence that is the product of a stack by a matrix (`x.dot(w)` pushed out of the
/// step by push_out_seq), computed inside the loop, [`kernels::chunk_steps`] steps at a
/// time into `buf`, instead of before it: the chunk is still in cache when its steps read
/// it. `x` and `w` are the operands' views, bound before the loop.
pub struct Chunk {
    pub x: Ident,
    pub w: Ident,
    pub buf: Ident,
    pub label: String,
    /// The product's dtype: a float one multiplies through `w` packed once before the loop
    /// (`PackedMatrix::project_chunk`), others through `kernels::project_chunk`.
    pub dtype: crate::ir::DType,
}

/// The outer nodes computed chunk by chunk by the loop that reads them ([`Chunk`]), each
/// with that scan and the sequence it is: products of a stack by a matrix read by one
/// scan alone, as one sequence read at tap 0 only, going forwards (each chunk is then
/// needed once, in order), by the ordinary loop.
pub fn chunkable_sequences(
    g: &crate::ir::Graph,
    users: &[Vec<NodeId>],
) -> HashMap<NodeId, (NodeId, usize)> {
    let mut found = HashMap::new();
    for id in g.live_nodes() {
        let Op::Scan(op) = &g.node(id).op else {
            continue;
        };
        // The interchanged and the lanes loops read their sequences' views themselves.
        if op.go_backwards || op.backwards_flag || op.interchange || op.lanes {
            continue;
        }
        for (i, s) in op.sequences.iter().enumerate() {
            let p = g.node(id).inputs[i];
            let node = g.node(p);
            let stack_by_matrix = matches!(node.op, Op::Dot)
                && g.ty(node.inputs[0]).rank == 3
                && g.ty(node.inputs[1]).rank == 2;
            let read_once = users[p.0] == [id]
                && g.node(id).inputs.iter().filter(|&&x| x == p).count() == 1
                && !g.outputs.contains(&p);
            if stack_by_matrix && read_once && s.taps == [0] && !s.arange {
                found.insert(p, (id, i));
            }
        }
    }
    found
}

/// `exclusive[k]`: outer input `k` is read by this scan alone, so a buffer holding it may
/// be taken over rather than copied. `chunked`: the sequences (by index) computed here a
/// chunk at a time.
pub fn emit(
    op: &ScanOp,
    args: &[Repr],
    exclusive: &[bool],
    chunked: &HashMap<usize, Chunk>,
    fills: &HashMap<usize, Fill>,
    prefix: &str,
) -> Code {
    let rt = rt();
    let nd = nd();
    let mut setup = TokenStream::new();
    let mut body = TokenStream::new();
    let n = format_ident!("{}n_steps", prefix);
    let t = format_ident!("{}t", prefix);
    let done = format_ident!("{}done", prefix);

    // Sequences: views, lengths, the steps each allows.
    let seq = |i: usize| format_ident!("{}seq{}", prefix, i);
    let avail = |i: usize| format_ident!("{}avail{}", prefix, i);
    let len = |i: usize| format_ident!("{}len{}", prefix, i);
    let chunk = |i: usize| format_ident!("{}chunk{}", prefix, i);
    for (i, s) in op.sequences.iter().enumerate() {
        let (v, a, l) = (seq(i), avail(i), len(i));
        let what = &s.label;
        let taps = &s.taps;
        if s.arange {
            // `arange(n)` read as the loop index: only its length exists.
            let n_arg = args[i].scalar();
            body.extend(quote!(let #l: usize = #rt::kernels::arange_len(#n_arg)?;));
        } else if let Some(Chunk { x, w, .. }) = chunked.get(&i) {
            // As long as the stack it is made from; `chunk_i` steps per chunk.
            let c = chunk(i);
            body.extend(quote! {
                let #l = #x.len_of(#nd::Axis(0));
                let #c: usize = #rt::kernels::chunk_steps(#x.view(), #w.view());
            });
        } else {
            let view = args[i].view();
            body.extend(quote! {
                let #v = #view;
                let #l = #v.len_of(#nd::Axis(0));
            });
        }
        body.extend(quote! {
            let #a = #rt::kernels::sequence_steps(#what, #l, &[#(#taps),*])?;
        });
    }
    // A run-time direction (`go_backwards = flag`), read once before the loop.
    let backwards = format_ident!("{}backwards", prefix);
    if let Some(k) = op.backwards_flag_input() {
        let flag = args[k].scalar();
        body.extend(quote!(let #backwards: bool = #flag;));
    }
    let n_value = match op.n_steps_input() {
        Some(k) => {
            let given = args[k].scalar();
            let checks = op.sequences.iter().enumerate().map(|(i, s)| {
                let l = len(i);
                let what = &s.label;
                let taps = &s.taps;
                quote!(#rt::kernels::check_steps_available(#what, #l, &[#(#taps),*], #n)?;)
            });
            quote!({
                let #n = #rt::kernels::check_n_steps(#given)?;
                #(#checks)*
                #n
            })
        }
        None => {
            let all = (0..op.sequences.len()).map(avail);
            quote!([#(#all),*].into_iter().min().unwrap_or(0))
        }
    };
    body.extend(quote!(let #n: usize = #n_value;));
    if let Some(cap) = op.max_steps {
        // Only the first steps are read (save-mem): the rest are not run.
        body.extend(quote!(let #n: usize = #n.min(#cap);));
    }

    // Output storage, with the initial states in place.
    let buf = |j: usize| format_ident!("{}buf{}", prefix, j);
    // A full trace is built row after row as the steps are taken, in memory not zeroed
    // first: a scalar output's through a `ScalarTrace` (its taps are locals, so its rows
    // are only written), an array output's through an `ArrayTrace`. An `until` loop's
    // trace starts with a few rows and grows.
    let traced = |j: usize| matches!(Storage::of(&op.outputs[j]), Storage::Trace);
    let pushed = |j: usize| traced(j) && op.step.ty(op.step.outputs[j]).rank == 0;
    let trace = |j: usize| format_ident!("{}trace{}", prefix, j);
    let first_rows = |depth: usize| {
        if op.has_until {
            quote!(#depth + #n.min(#rt::kernels::UNTIL_FIRST_ROWS))
        } else {
            quote!(#depth + #n)
        }
    };
    let state = |j: usize| format_ident!("{}state{}", prefix, j);
    for (j, o) in op.outputs.iter().enumerate() {
        let row = op.step.ty(op.step.outputs[j]);
        let b = buf(j);
        let owned = owned_type(row.with_rank(row.rank + 1));
        let depth = o.depth() as usize;
        let storage = Storage::of(o);
        // A scalar state needs its buffer only to hand its last row over.
        if !matches!(storage, Storage::State) || row.rank == 0 {
            setup.extend(quote!(let mut #b: #owned = ::core::default::Default::default();));
        }
        if let Storage::State = storage {
            let st = state(j);
            let init = op.init_input(j).map(|k| &args[k]);
            if row.rank == 0 {
                let v = match init {
                    Some(init) => init.scalar(),
                    None => quote!(::core::default::Default::default()),
                };
                body.extend(quote!(let mut #st = #v;));
            } else {
                let owned_row = owned_type(row);
                setup
                    .extend(quote!(let mut #st: #owned_row = ::core::default::Default::default();));
                let k = op.init_input(j);
                if let (Some(Repr::Buffer(ib)), Some(true)) = (init, k.map(|k| exclusive[k])) {
                    // The initial state's buffer becomes the state: no copy.
                    body.extend(quote!(::core::mem::swap(&mut #st, &mut #ib);));
                } else if let Some(init) = init {
                    let v = init.view();
                    body.extend(quote!(#rt::kernels::copy_into(&mut #st, #v);));
                } else {
                    // No step yet: the value of zero steps has rows of shape zero.
                    let zeros = dim_with_lead(quote!(0), &quote!([0usize; 8]), 1, row.rank - 1);
                    body.extend(
                        quote!(if #n == 0 { #rt::kernels::ensure_shape(&mut #st, #zeros); }),
                    );
                }
            }
            continue;
        }
        if pushed(j) {
            // A scalar trace is only ever written, row after row (its taps live in
            // registers): into memory that is not zero-filled first.
            let w = trace(j);
            let first = first_rows(depth);
            body.extend(quote! {
                let mut #w = #rt::kernels::ScalarTrace::new(
                    "n_steps",
                    #rt::kernels::take_rows(&mut #b),
                    #first,
                    #depth + #n,
                )?;
            });
            let init = op.init_input(j).map(|k| &args[k]);
            match (o.kind(), init) {
                (OutputKind::Sitsot, Some(init)) => {
                    let x = init.scalar();
                    body.extend(quote!(#w.push(#x)?;));
                }
                (OutputKind::Mitsot, Some(init)) => {
                    let iv = init.view();
                    let what = &o.label;
                    let taps = &o.taps;
                    let (first, i) = (
                        format_ident!("{}init{}", prefix, j),
                        format_ident!("{}i", prefix),
                    );
                    body.extend(quote! {
                        let #first = #iv;
                        #rt::kernels::check_initial_rows(#what, #first.len(), &[#(#taps),*])?;
                        for #i in 0..#depth {
                            #w.push(#first[#i])?;
                        }
                    });
                }
                _ => {}
            }
            continue;
        }
        if traced(j) {
            // An array trace: the initial rows first; a map output's row shape is its
            // first result's.
            let w = trace(j);
            let first = first_rows(depth);
            body.extend(quote!(let mut #w = #rt::kernels::ArrayTrace::new(&mut #b);));
            if let Some(k) = op.init_input(j) {
                let v = args[k].view();
                let what = &o.label;
                let init = format_ident!("{}init{}", prefix, j);
                body.extend(quote!(let #init = #v;));
                body.extend(if o.kind() == OutputKind::Mitsot {
                    let taps = &o.taps;
                    quote! {
                        #rt::kernels::check_initial_rows(#what, #init.len_of(#nd::Axis(0)), &[#(#taps),*])?;
                        #w.start("n_steps", &#init.shape()[1..], #first, #depth + #n)?;
                        #w.push_rows(#what, #init.slice_axis(#nd::Axis(0), #nd::Slice::from(0..#depth)))?;
                    }
                } else {
                    quote! {
                        #w.start("n_steps", #init.shape(), #first, #depth + #n)?;
                        #w.push_rows(#what, #init.insert_axis(#nd::Axis(0)))?;
                    }
                });
            }
            continue;
        }
        // What is left is a ring: the initial rows in its first slots.
        let Storage::Ring(rows) = storage else {
            continue;
        };
        match o.kind() {
            OutputKind::Nitsot => {
                // Row shape known after the first step; until then (and for 0 steps) zeros.
                if row.rank == 0 {
                    body.extend(quote!(#rt::kernels::ensure_shape(&mut #b, #nd::Dim([#rows]));));
                } else {
                    let zeros = dim_with_lead(quote!(0), &quote!([0usize; 8]), 0, row.rank);
                    body.extend(
                        quote!(if #n == 0 { #rt::kernels::ensure_shape(&mut #b, #zeros); }),
                    );
                }
            }
            OutputKind::Sitsot => {
                let init = &args[op.init_input(j).expect("recurrent output has an init")];
                let shape = format_ident!("{}shape{}", prefix, j);
                let dim = dim_with_lead(quote!(#rows), &quote!(#shape), 0, row.rank);
                let write = if row.rank == 0 {
                    let v = init.scalar();
                    quote!(#b[0] = #v;)
                } else {
                    let v = init.view();
                    quote!(#b.index_axis_mut(#nd::Axis(0), 0).assign(&#v);)
                };
                let init_view = init.view();
                body.extend(quote! {
                    let #shape = #init_view.raw_dim();
                    #rt::kernels::try_ensure_shape("n_steps", &mut #b, #dim)?;
                    #write
                });
            }
            OutputKind::Mitsot => {
                let init = &args[op.init_input(j).expect("recurrent output has an init")];
                let v = init.view();
                let shape = format_ident!("{}shape{}", prefix, j);
                let dim = dim_with_lead(quote!(#rows), &quote!(#shape), 1, row.rank);
                let what = &o.label;
                let taps = &o.taps;
                body.extend(quote! {
                    let #shape = #v.raw_dim();
                    #rt::kernels::check_initial_rows(#what, #shape[0], &[#(#taps),*])?;
                    #rt::kernels::try_ensure_shape("n_steps", &mut #b, #dim)?;
                    #b.slice_axis_mut(#nd::Axis(0), #nd::Slice::from(0..#depth))
                        .assign(&#v.slice_axis(#nd::Axis(0), #nd::Slice::from(0..#depth)));
                });
            }
        }
    }

    // Step arguments.
    let mut inputs: Vec<Input> = Vec::new();
    for (i, s) in op.sequences.iter().enumerate() {
        let (v, a) = (seq(i), avail(i));
        let past = s.past();
        let rank = op
            .step
            .ty(op.step.inputs[op.first_sequence_tap_input(i)])
            .rank;
        for tap in &s.taps {
            let offset = (tap + past) as usize;
            let pos = if op.backwards_flag {
                quote!((if #backwards { #a - 1 - #t + #offset } else { #t + #offset }))
            } else if op.go_backwards {
                quote!((#a - 1 - #t + #offset))
            } else {
                quote!((#t + #offset))
            };
            inputs.push(Input::Expr(if s.arange {
                quote!(((#pos) as i64))
            } else if let Some(Chunk { buf, .. }) = chunked.get(&i) {
                let c = chunk(i);
                quote!(#buf.index_axis(#nd::Axis(0), #t % #c))
            } else if rank == 0 {
                quote!(#v[#pos])
            } else {
                quote!(#v.index_axis(#nd::Axis(0), #pos))
            }));
        }
    }
    let reg = |j: usize, i: usize| format_ident!("{}reg{}_{}", prefix, j, i);
    // A recurrent output written in place gets its new row each step with the rows before
    // it (its taps read them).
    let past = |j: usize| format_ident!("{}past{}", prefix, j);
    let rest = |j: usize| format_ident!("{}rest{}", prefix, j);
    let written = |j: usize| in_place(op, j);
    for (j, o) in op.outputs.iter().enumerate() {
        let b = buf(j);
        let depth = o.depth();
        let rank = op.step.ty(op.step.outputs[j]).rank;
        let storage = Storage::of(o);
        if rank == 0 && !matches!(storage, Storage::State) {
            // reg_i holds output[t - depth + i], loaded from the initial rows.
            for i in 0..depth as usize {
                let r = reg(j, i);
                let at = storage.slot(quote!(#i));
                let first = match op.init_input(j).map(|k| &args[k]) {
                    // A pushed trace is not read: the initial state is.
                    Some(init) if pushed(j) && o.kind() == OutputKind::Sitsot => init.scalar(),
                    Some(init) if pushed(j) => {
                        let iv = init.view();
                        quote!(#iv[#i])
                    }
                    _ => quote!(#b[#at]),
                };
                body.extend(quote!(let mut #r = #first;));
            }
        }
        for tap in &o.taps {
            if let Storage::State = storage {
                let st = state(j);
                inputs.push(Input::Expr(if rank == 0 {
                    quote!(#st)
                } else {
                    quote!(#st.view())
                }));
                continue;
            }
            let offset = (depth + tap) as usize;
            let at = storage.slot(quote!(#t + #offset));
            inputs.push(Input::Expr(if rank == 0 {
                // Scalar taps live in locals (registers), shifted each step.
                let r = reg(j, offset);
                quote!(#r)
            } else if written(j) && o.is_recurrent() {
                let p = past(j);
                quote!(#p.index_axis(#nd::Axis(0), #at))
            } else if traced(j) {
                let w = trace(j);
                quote!(#w.row(#at)?)
            } else {
                quote!(#b.index_axis(#nd::Axis(0), #at))
            }));
        }
    }
    let first_ns = op.first_non_sequence_input();
    let ns_inputs = inputs.len();
    for k in 0..op.non_sequences.len() {
        let a = &args[first_ns + k];
        inputs.push(Input::Expr(if a.is_scalar() {
            a.scalar()
        } else {
            a.view()
        }));
    }

    // Products of a step value by a non-sequence matrix (an RNN's recurrent weights) or its
    // transpose: the matrix is packed once, before the loop (`kernels::PackedMatrix`), not
    // by every step's product. A stacked product's matrix (stack_dots) too, in its
    // `kernels::StackedDot`.
    let mut packed = std::collections::HashMap::new();
    for id in op.step.live_nodes() {
        let node = op.step.node(id);
        let ((Op::Dot, [a, w])
        | (Op::DotAdd { .. }, [_, a, w])
        | (Op::StackedDot { .. }, [w, a, ..])) = (&node.op, &node.inputs[..])
        else {
            continue;
        };
        // The matrix is a non-sequence, or its transpose (a backward step's `dz . W^T`).
        let (source, transposed) = match (&op.step.node(*w).op, &op.step.node(*w).inputs[..]) {
            (Op::Transpose, [x]) => (*x, true),
            _ => (*w, false),
        };
        let Op::Input { index, .. } = op.step.node(source).op else {
            continue;
        };
        if index < ns_inputs
            || op.step.ty(*w).rank != 2
            || !matches!(op.step.ty(*a).rank, 1 | 2)
            || !node.ty.dtype.is_float()
        {
            continue;
        }
        let matrix = args[first_ns + index - ns_inputs].view();
        let matrix = if transposed {
            quote!(#matrix.reversed_axes())
        } else {
            matrix
        };
        let p = format_ident!("{}packed{}", prefix, id.0);
        // Declared with the buffers (a nested loop packs into the same memory each time).
        let t = super::scalar_type(node.ty.dtype);
        let kind = match (&node.op, op.step.ty(*a).rank) {
            (Op::StackedDot { .. }, 1) => quote!(StackedDot<#t, #nd::Ix1>),
            (Op::StackedDot { .. }, _) => quote!(StackedDot<#t, #nd::Ix2>),
            _ => quote!(PackedMatrix<#t>),
        };
        setup
            .extend(quote!(let mut #p: #rt::kernels::#kind = ::core::default::Default::default();));
        // A matrix that vectors multiply pays packing from a smaller size.
        let pack = match (&node.op, op.step.ty(*a).rank) {
            (Op::Dot | Op::DotAdd { .. }, 1) => quote!(pack_vectors),
            _ => quote!(pack),
        };
        body.extend(quote!(#p.#pack(#matrix);));
        packed.insert(id, quote!(#p));
    }

    // Before each step: outputs written in place get their new row (a map output's from
    // its second step on, when its row shape is known).
    let mut prologue = TokenStream::new();
    // The next chunk of each chunked sequence, when its first step comes.
    let mut chunked_sorted: Vec<_> = chunked.iter().collect();
    chunked_sorted.sort_by_key(|(i, _)| **i);
    for (&i, ch) in chunked_sorted {
        let Chunk {
            x, w, buf, label, ..
        } = ch;
        let c = chunk(i);
        let project = if ch.dtype.is_float() {
            let p = format_ident!("{}packed_chunk{}", prefix, i);
            let ty = super::scalar_type(ch.dtype);
            setup.extend(quote!(let mut #p: #rt::kernels::PackedMatrix<#ty> = ::core::default::Default::default();));
            body.extend(quote!(#p.pack(#w.view());));
            quote!(#p.project_chunk(&mut #buf, #x.view(), #w.view(), #t, #c, #label)?;)
        } else {
            quote!(#rt::kernels::project_chunk(&mut #buf, #x.view(), #w.view(), #t, #c, #label)?;)
        };
        prologue.extend(quote! {
            if #t % #c == 0 {
                #project
            }
        });
    }
    let mut targets = std::collections::HashMap::new();
    for (j, o) in op.outputs.iter().enumerate() {
        if !written(j) {
            continue;
        }
        let depth = o.depth() as usize;
        let at = quote!(#t + #depth);
        let (w, p, r) = (trace(j), past(j), rest(j));
        let output = output_name(op, j);
        let result = &op.step.node(op.step.outputs[j]).label;
        let (row, read_back) = if o.is_recurrent() {
            // The row's memory as it is (a `kernels::Slot`): a kernel that writes every
            // element does not zero it first. It joins the trace after the writes.
            prologue.extend(quote! {
                let (#p, mut #r) = #w.next_slot("n_steps")?;
            });
            (quote!(#r.row(#output, #result)), quote!(#r.written()?))
        } else {
            // Also a slot, a temporary of the kernel's call, whose row joins the trace
            // right after it (its first row is the output's own buffer, pushed).
            (
                quote!(#w.next_slot("n_steps")?.1.row(#output, #result)),
                quote!({
                    #w.commit_row("n_steps")?;
                    #w.row(#at)?
                }),
            )
        };
        targets.insert(
            op.step.outputs[j],
            graph::InPlace {
                row,
                read_back,
                // A map output's rows are made from its first result.
                own_buffer_when: (!o.is_recurrent()).then(|| quote!(#t == 0)),
            },
        );
    }

    // The step itself; its buffers live outside the loop.
    let step = graph::emit_in_place(&op.step, prefix, &inputs, &targets, &packed, Some(&t));
    setup.extend(step.setup);
    let step_body = step.body;
    let step_body = quote!(#prologue #step_body);

    // A loop of known length whose only trace is a pushed scalar one runs inside the
    // trace's `fill`: the room for every row is made once, so no row is checked, and the
    // loop is the step body returning the row (as tight as a hand-written `from_iter`).
    let pushed_outputs: Vec<usize> = (0..op.outputs.len()).filter(|&j| pushed(j)).collect();
    let filled = match pushed_outputs.as_slice() {
        [j] if !op.has_until && op.unroll == 1 && !op.lanes => Some(*j),
        _ => None,
    };
    let mut filled_value = TokenStream::new();

    // Writing each result into its row (or its state).
    let mut writes = TokenStream::new();
    for (j, o) in op.outputs.iter().enumerate() {
        let b = buf(j);
        let depth = o.depth() as usize;
        let row = op.step.ty(op.step.outputs[j]);
        let res = &step.outputs[j];
        let storage = Storage::of(o);
        let at = storage.slot(quote!(#t + #depth));
        if written(j) && o.is_recurrent() {
            // Written by the step's kernel, shape checked there.
            continue;
        }
        if row.rank == 0 {
            let v = res.scalar();
            writes.extend(match storage {
                Storage::State => {
                    let st = state(j);
                    quote!(#st = #v;)
                }
                _ => {
                    let shift = (1..depth).map(|i| {
                        let (to, from) = (reg(j, i - 1), reg(j, i));
                        quote!(#to = #from;)
                    });
                    let newest = (depth > 0).then(|| {
                        let r = reg(j, depth - 1);
                        quote!(#r = #v;)
                    });
                    let store = if filled == Some(j) {
                        // Returned to `fill`, which writes it.
                        filled_value = v.clone();
                        TokenStream::new()
                    } else if pushed(j) {
                        let w = trace(j);
                        quote!(#w.push(#v)?;)
                    } else {
                        quote!(#b[#at] = #v;)
                    };
                    quote!(#store #(#shift)* #newest)
                }
            });
            continue;
        }
        // A result that is a view into this output's own buffer (a step returning one of
        // its taps, or a slice of one) cannot be written into that buffer while borrowed
        // from it: copy it out first. Other views are written directly.
        let res_view = if views_own_taps(op, j, op.step.outputs[j]) {
            let m = format_ident!("{}copy{}", prefix, j);
            let owned_row = owned_type(row);
            setup.extend(quote!(let mut #m: #owned_row = ::core::default::Default::default();));
            let v = res.view();
            writes.extend(quote!(#rt::kernels::copy_into(&mut #m, #v);));
            quote!(#m.view())
        } else {
            res.view()
        };
        let output = output_name(op, j);
        let result = &op.step.node(op.step.outputs[j]).label;
        if let Storage::State = storage {
            let st = state(j);
            // The step's own buffer becomes the state by a swap (no copy) when no other
            // output returns the same buffer; the old state's buffer is refilled next step.
            let own_buffer = match res {
                Repr::Buffer(rb) if !views_own_taps(op, j, op.step.outputs[j]) => {
                    let shared = step
                        .outputs
                        .iter()
                        .enumerate()
                        .any(|(k, other)| k != j && other.buffer() == Some(rb));
                    (!shared).then_some(rb.clone())
                }
                _ => None,
            };
            let check = quote!(#rt::kernels::check_step_shape(#output, #result, #st.shape(), #res_view.shape())?;);
            let check = if o.is_recurrent() {
                check
            } else {
                quote!(if #t > 0 { #check })
            };
            let write = match own_buffer {
                Some(rb) => quote!(::core::mem::swap(&mut #st, &mut #rb);),
                None => quote!(#rt::kernels::copy_into(&mut #st, #res_view);),
            };
            writes.extend(quote!(#check #write));
            continue;
        }
        if traced(j) {
            // Appended to the trace, which checks its shape.
            let w = trace(j);
            let push = quote!(#w.push_row(#output, #result, #res_view)?;);
            writes.extend(if o.kind() == OutputKind::Nitsot {
                // A map output's rows are made from its first result; later rows are
                // written in place when its kernel can.
                let first = first_rows(0);
                let start = quote!(#w.start("n_steps", #res_view.shape(), #first, #n)?;);
                if written(j) {
                    quote!(if #t == 0 { #start #push })
                } else {
                    quote!(if #t == 0 { #start } #push)
                }
            } else {
                push
            });
            continue;
        }
        let Storage::Ring(lead) = storage else {
            continue;
        };
        let check = quote!(#rt::kernels::check_step_shape(#output, #result, &#b.shape()[1..], #res_view.shape())?;);
        let write = quote!(#b.index_axis_mut(#nd::Axis(0), #at).assign(&#res_view););
        writes.extend(if o.kind() == OutputKind::Nitsot {
            // A map output's rows are made from its first result.
            let rs = format_ident!("{}rshape{}", prefix, j);
            let dim = dim_with_lead(quote!(#lead), &quote!(#rs), 0, row.rank);
            let first = quote! {
                let #rs = #res_view.raw_dim();
                #rt::kernels::try_ensure_shape("n_steps", &mut #b, #dim)?;
            };
            quote!(if #t == 0 { #first } #check #write)
        } else {
            quote!(#check #write)
        });
    }
    // Rows written in place join their traces, before an `until` may stop the loop.
    for (j, o) in op.outputs.iter().enumerate() {
        if written(j) && o.is_recurrent() {
            let w = trace(j);
            writes.extend(quote!(#w.commit_row("n_steps")?;));
        }
    }
    let label = syn::Lifetime::new(&format!("'{prefix}loop"), proc_macro2::Span::call_site());
    let stop = if op.has_until {
        let c = step.outputs[op.outputs.len()].scalar();
        quote!(if #c { #done = #t + 1; break #label; })
    } else {
        TokenStream::new()
    };
    // Marked by sum-lanes: groups of steps in lanes first (`emit/lanes.rs`), then the
    // ordinary loop from the first step they left.
    let from = if op.lanes && sum_lanes::eligible(op).is_ok() {
        let from = format_ident!("{}from", prefix);
        let idents =
            |f: &dyn Fn(usize) -> proc_macro2::Ident, k: usize| (0..k).map(f).collect::<Vec<_>>();
        let (seqs, avails, states) = (
            idents(&seq, op.sequences.len()),
            idents(&avail, op.sequences.len()),
            idents(&state, op.outputs.len()),
        );
        let names = lanes::Names {
            n: &n,
            seqs: &seqs,
            avails: &avails,
            states: &states,
        };
        let block = lanes::emit(op, args, prefix, &names);
        body.extend(quote!(let #from: usize = #block;));
        quote!(#from)
    } else {
        quote!(0)
    };
    let the_loop = if op.unroll > 1 {
        // `unroll = k`: k copies of the step per trip, then the remaining steps.
        let k = op.unroll;
        let trip = format_ident!("{}trip", prefix);
        let copies = (0..k).map(|u| {
            quote!({
                let #t = #trip + #u;
                #step_body
                #writes
                #stop
            })
        });
        quote! {
            #label: {
                let mut #trip: usize = #from;
                while #trip + #k <= #n {
                    #(#copies)*
                    #trip += #k;
                }
                for #t in #trip..#n {
                    #step_body
                    #writes
                    #stop
                }
            }
        }
    } else if let Some(j) = filled {
        let w = trace(j);
        let s = super::scalar_type(op.step.ty(op.step.outputs[j]).dtype);
        // The step's value is computed before the other outputs' writes: keep it.
        let value = format_ident!("{}filled", prefix);
        quote! {
            #w.fill(#n, |#t| -> #rt::Result<#s> {
                #step_body
                let #value: #s = #filled_value;
                #writes
                ::core::result::Result::Ok(#value)
            })?;
        }
    } else {
        quote! {
            #label: for #t in #from..#n {
                #step_body
                #writes
                #stop
            }
        }
    };
    // Marked by loop interchange (and still elementwise): element chunks outer, steps
    // inner, when the rows allow it at run time; otherwise the loop above.
    if op.interchange && loop_interchange::eligible(op).is_ok() {
        let idents =
            |f: &dyn Fn(usize) -> proc_macro2::Ident, k: usize| (0..k).map(f).collect::<Vec<_>>();
        let (seqs, avails) = (
            idents(&seq, op.sequences.len()),
            idents(&avail, op.sequences.len()),
        );
        let (bufs, states, traces) = (
            idents(&buf, op.outputs.len()),
            idents(&state, op.outputs.len()),
            idents(&trace, op.outputs.len()),
        );
        let state_fills: Vec<Option<&Fill>> = (0..op.outputs.len())
            .map(|j| op.init_input(j).and_then(|k| fills.get(&k)))
            .collect();
        let names = interchange::Names {
            n: &n,
            seqs: &seqs,
            avails: &avails,
            bufs: &bufs,
            states: &states,
            traces: &traces,
            fills: &state_fills,
        };
        let ic_block = interchange::emit(op, args, prefix, &names);
        let ran = format_ident!("{}ic", prefix);
        // States left unfilled for the interchanged loop get their value before the
        // ordinary loop's first step.
        let refills = state_fills.iter().enumerate().filter_map(|(j, f)| {
            let Fill { like, value } = (*f)?;
            let st = state(j);
            Some(quote!(#rt::kernels::fill_like(&mut #st, #like, #value);))
        });
        body.extend(quote! {
            let mut #done: usize = #n;
            let #ran: bool = #ic_block;
            if !#ran {
                #(#refills)*
                #the_loop
            }
        });
    } else {
        body.extend(quote! {
            let mut #done: usize = #n;
            #the_loop
        });
    }

    // Traces: their rows become the output buffers (a map output's rows of a loop without
    // steps have shape zero).
    for j in (0..op.outputs.len()).filter(|&j| traced(j)) {
        let (b, w) = (buf(j), trace(j));
        let row = op.step.ty(op.step.outputs[j]);
        body.extend(if pushed(j) {
            quote!(#b = #w.finish();)
        } else if op.outputs[j].is_recurrent() {
            quote!(#b = #w.finish()?;)
        } else {
            let zeros = dim_with_lead(quote!(0), &quote!([0usize; 8]), 0, row.rank);
            quote! {
                #b = #w.finish()?;
                if #n == 0 { #rt::kernels::ensure_shape(&mut #b, #zeros); }
            }
        });
    }

    // Results: the rows the steps wrote, or the last ones kept.
    let mut outputs = Vec::new();
    for (j, o) in op.outputs.iter().enumerate() {
        let b = buf(j);
        let depth = o.depth() as usize;
        let row = op.step.ty(op.step.outputs[j]);
        let kept = format_ident!("{}kept{}", prefix, j);
        outputs.push(match (Storage::of(o), o.keep) {
            (Storage::Trace, _) | (_, None) => Repr::Rows {
                buf: b,
                start: depth,
                done: done.clone(),
            },
            (Storage::State, Some(k)) => {
                let st = state(j);
                if row.rank == 0 {
                    body.extend(quote! {
                        let #kept = #k.min(#done);
                        #rt::kernels::ensure_shape(&mut #b, #nd::Dim([#kept]));
                        if #kept == 1 { #b[0] = #st; }
                    });
                    Repr::Rows {
                        buf: b,
                        start: 0,
                        done: kept,
                    }
                } else {
                    body.extend(quote!(let #kept = #k.min(#done);));
                    Repr::State { buf: st, kept }
                }
            }
            (Storage::Ring(_), Some(k)) => {
                let tail = format_ident!("{}tail{}", prefix, j);
                let owned = owned_type(row.with_rank(row.rank + 1));
                setup.extend(quote!(let mut #tail: #owned = ::core::default::Default::default();));
                body.extend(quote! {
                    let #kept = #k.min(#done);
                    #rt::kernels::ring_tail(&mut #tail, #b.view(), #depth + #done, #kept);
                });
                Repr::Rows {
                    buf: tail,
                    start: 0,
                    done: kept,
                }
            }
        });
    }
    Code {
        setup,
        body,
        outputs,
        // A scan's own buffers are its outputs' (returned or read by the graph around it)
        // and its steps' (one step's size): none for the pool.
        buffers: Vec::new(),
    }
}
