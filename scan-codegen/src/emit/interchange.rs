//! The interchanged loop of a scan marked by the loop-interchange rewrite
//! (`ScanOp::interchange`): element chunks outer, steps inner.
//!
//! It is emitted beside the ordinary loop, as a block that returns whether it ran. It runs
//! after the ordinary loop's checks and storage setup (number of steps, sequence lengths,
//! initial states in their buffers), and only when every row it reads or writes has the
//! same shape and is contiguous, there is at least one step, and it pays
//! (`kernels::interchange::worth_it`); otherwise the ordinary loop runs, with its
//! broadcasting and its errors unchanged.
//!
//! The rows' elements are taken in chunks of `kernels::interchange::chunk(..)` elements
//! (128 bytes of the widest output dtype). For each chunk, each output's history — its
//! `max|tap|` initial rows — is loaded into local arrays `[T; CHUNK]`; then every step runs
//! element by element over the chunk with the step's scalar formulas (fused chains
//! inlined): the same operations in the same order as the ordinary loop's kernels, so
//! results are bit-identical. Each step's new row goes to a local array, then is shifted
//! into the history by value. Full chunks have a constant trip count, so LLVM keeps their
//! history in registers; the tail chunk runs the same code with its length. Rows go to the
//! output's storage only as its `keep` says: a trace row every step, a ring slot for the
//! last k steps, the final value of a state; the storage is the ordinary loop's, so the
//! code after the loop is unchanged. Scalar step values (constants, scalar non-sequences
//! and what is computed from them) are computed once before the chunks. The chunks run
//! inside `kernels::isa::with_best_isa`, so the element loops get AVX2 code where the CPU
//! has it.

use std::collections::HashMap;

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use super::graph::Repr;
use super::scan::{Fill, Storage};
use super::{formula, nd, rt, scalar_type};
use crate::ir::{Graph, Node, NodeId, Op, ScanOp};

/// The names the ordinary loop's code gives to what the interchanged loop reuses.
pub struct Names<'a> {
    pub n: &'a Ident,
    pub seqs: &'a [Ident],
    pub avails: &'a [Ident],
    pub bufs: &'a [Ident],
    pub states: &'a [Ident],
    /// Each full trace's `kernels::ArrayTrace` (rows of rank >= 1 always are arrays).
    pub traces: &'a [Ident],
    /// Each output's initial state when it is a `fill_like` left unfilled (a state's): the
    /// chunks start from its value, and the state is written once, chunk after chunk.
    pub fills: &'a [Option<&'a Fill>],
}

/// What a step input is.
enum Source {
    /// Sequence `i`, tap `k` (its position in the sequence's tap list).
    Seq(usize, usize),
    /// Output `j`, history slot `slot` (0: the oldest row).
    Tap(usize, usize),
    /// Non-sequence `k`.
    NonSeq(usize),
}

/// An expression block that runs the interchanged loop and returns `true`, or returns
/// `false` having changed nothing the ordinary loop depends on.
pub fn emit(op: &ScanOp, args: &[Repr], prefix: &str, names: &Names) -> TokenStream {
    let rt = rt();
    let nd = nd();
    let step = &op.step;
    let n = names.n;
    let rank = step.ty(step.outputs[0]).rank;
    let chunk = format_ident!("{}IC_CHUNK", prefix.to_uppercase());
    let lt = syn::Lifetime::new(&format!("'{prefix}ic"), Span::call_site());
    let bail = quote!(break #lt false;);
    let id = |what: &str, i: usize| format_ident!("{}ic_{}{}", prefix, what, i);
    let id2 = |what: &str, i: usize, k: usize| format_ident!("{}ic_{}{}_{}", prefix, what, i, k);
    let total = format_ident!("{}ic_total", prefix);
    let row = format_ident!("{}ic_row", prefix);
    let e0 = format_ident!("{}ic_e0", prefix);
    let len = format_ident!("{}ic_len", prefix);
    let t = format_ident!("{}ic_t", prefix);
    let e = format_ident!("{}ic_e", prefix);

    let live_ids = step.live_nodes();
    let mut live = vec![false; step.nodes.len()];
    for i in &live_ids {
        live[i.0] = true;
    }
    // Each step input's source.
    let mut sources = Vec::new();
    for (i, s) in op.sequences.iter().enumerate() {
        sources.extend((0..s.taps.len()).map(|k| Source::Seq(i, k)));
    }
    for (j, o) in op.outputs.iter().enumerate() {
        let depth = o.depth();
        sources.extend(
            o.taps
                .iter()
                .map(|tap| Source::Tap(j, (depth + tap) as usize)),
        );
    }
    sources.extend((0..op.non_sequences.len()).map(Source::NonSeq));
    let input_live = |pos: usize| live[step.inputs[pos].0];
    let seq_live: Vec<bool> = (0..op.sequences.len())
        .map(|i| {
            let first = op.first_sequence_tap_input(i);
            (first..first + op.sequences[i].taps.len()).any(input_live)
        })
        .collect();
    let first_ns_step = op.first_non_sequence_step_input();
    let first_ns_outer = op.first_non_sequence_input();
    let ns_array = |k: usize| step.ty(step.inputs[first_ns_step + k]).rank > 0;

    let mut block = TokenStream::new();
    let sizes = step.outputs[..op.outputs.len()].iter().map(|&r| {
        let s = scalar_type(step.ty(r).dtype);
        quote!(::core::mem::size_of::<#s>())
    });
    block.extend(quote! {
        const #chunk: usize = #rt::kernels::interchange::chunk(&[#(#sizes),*]);
        if #n == 0 { #bail }
    });

    // Every row read or written has one shape, or the ordinary loop runs.
    let mut shapes = Vec::new();
    for (j, o) in op.outputs.iter().enumerate() {
        if !o.is_recurrent() {
            continue;
        }
        shapes.push(match Storage::of(o) {
            Storage::State => match names.fills[j] {
                Some(Fill { like, .. }) => quote!(#like.shape()),
                None => {
                    let st = &names.states[j];
                    quote!(#st.shape())
                }
            },
            Storage::Trace => {
                let w = &names.traces[j];
                quote!(#w.row_shape())
            }
            Storage::Ring(_) => {
                let b = &names.bufs[j];
                quote!(&#b.shape()[1..])
            }
        });
    }
    for (i, seq) in names.seqs.iter().enumerate() {
        if seq_live[i] {
            shapes.push(quote!(&#seq.shape()[1..]));
        }
    }
    for k in 0..op.non_sequences.len() {
        if ns_array(k) && input_live(first_ns_step + k) {
            let v = id("nsv", k);
            let view = args[first_ns_outer + k].view();
            block.extend(quote!(let #v = #view;));
            shapes.push(quote!(#v.shape()));
        }
    }
    // Rows read or written every step, in chunk-wide strips when interchanged.
    let streams = seq_live.iter().any(|&l| l)
        || op.outputs.iter().any(|o| match Storage::of(o) {
            Storage::Trace => true,
            Storage::Ring(_) => o.keep.is_some_and(|k| k > 1),
            Storage::State => false,
        });
    block.extend(quote! {
        let ::core::option::Option::Some(#row) =
            #rt::kernels::interchange::common_row::<#rank>(&[#(#shapes),*]) else { #bail };
        let #total: usize = #row.iter().product();
        if !#rt::kernels::interchange::worth_it(#total, #chunk, #streams) { #bail }
    });

    // Contiguous inputs, as slices.
    for (i, seq) in names.seqs.iter().enumerate() {
        if seq_live[i] {
            let s = id("seq", i);
            block.extend(
                quote!(let ::core::option::Option::Some(#s) = #seq.to_slice() else { #bail };),
            );
        }
    }
    for k in 0..op.non_sequences.len() {
        if ns_array(k) && input_live(first_ns_step + k) {
            let (v, s) = (id("nsv", k), id("ns", k));
            block.extend(
                quote!(let ::core::option::Option::Some(#s) = #v.to_slice() else { #bail };),
            );
        }
    }

    // Map outputs get their rows' shape (as the ordinary loop does on its first step);
    // then every output's storage as one mutable slice.
    let axes: Vec<TokenStream> = (0..rank).map(|i| quote!(#row[#i])).collect();
    for (j, o) in op.outputs.iter().enumerate() {
        let storage = Storage::of(o);
        if !o.is_recurrent() {
            let ensure = match storage {
                Storage::State => {
                    let st = &names.states[j];
                    quote!(#rt::kernels::ensure_shape(&mut #st, #nd::Dim(#row));)
                }
                // Set with the traces' rows below, after the last way out.
                Storage::Trace => continue,
                Storage::Ring(r) => {
                    let b = &names.bufs[j];
                    quote!(#rt::kernels::try_ensure_shape("n_steps", &mut #b, #nd::Dim([#r, #(#axes),*]))?;)
                }
            };
            block.extend(ensure);
        }
    }
    for (j, o) in op.outputs.iter().enumerate() {
        let out = id("out", j);
        if names.fills[j].is_some() {
            // An unfilled state is built chunk after chunk (appended), never read.
            let s = scalar_type(step.ty(step.outputs[j]).dtype);
            block.extend(quote! {
                let mut #out: ::std::vec::Vec<#s> = ::std::vec::Vec::new();
                if #out.try_reserve_exact(#total).is_err() { #bail }
            });
            continue;
        }
        let holder = match Storage::of(o) {
            Storage::State => &names.states[j],
            Storage::Ring(_) => &names.bufs[j],
            Storage::Trace => continue,
        };
        block.extend(
            quote!(let ::core::option::Option::Some(#out) = #holder.as_slice_mut() else { #bail };),
        );
    }
    // A trace gets all its rows now (zeroed: the chunks write them piece by piece); the
    // ordinary loop no longer runs, so nothing may bail after this.
    for (j, o) in op.outputs.iter().enumerate() {
        if !matches!(Storage::of(o), Storage::Trace) {
            continue;
        }
        let (out, w) = (id("out", j), &names.traces[j]);
        if !o.is_recurrent() {
            block.extend(quote!(#w.start("n_steps", &#row, #n, #n)?;));
        }
        let depth = o.depth() as usize;
        block.extend(quote!(let #out = #w.fill_rows("n_steps", #depth + #n)?;));
    }

    // Scalar step values, once: scalar non-sequences and what depends only on them.
    let x = |node: NodeId| format_ident!("{}ic_x{}", prefix, node.0);
    let mut value: HashMap<NodeId, TokenStream> = HashMap::new();
    let mut element = TokenStream::new();
    for &nid in &live_ids {
        let node = step.node(nid);
        let v = x(nid);
        let s = scalar_type(node.ty.dtype);
        let expr = match &node.op {
            Op::Input { index, .. } => match sources[*index] {
                Source::NonSeq(k) if node.ty.rank == 0 => args[first_ns_outer + k].scalar(),
                Source::NonSeq(k) => {
                    let c = id("nc", k);
                    quote!(#c[#e])
                }
                Source::Seq(i, k) => {
                    let c = id2("sc", i, k);
                    quote!(#c[#e])
                }
                Source::Tap(j, slot) => {
                    let h = id2("h", j, slot);
                    quote!(#h[#e])
                }
            },
            _ => {
                let ins: Vec<TokenStream> = node.inputs.iter().map(|i| value[i].clone()).collect();
                scalar_formula(node, &ins, &format!("{prefix}ic_f{}_", nid.0))
            }
        };
        let stmt = quote!(let #v: #s = #expr;);
        if node.ty.rank == 0 {
            block.extend(stmt);
        } else {
            element.extend(stmt);
        }
        value.insert(nid, quote!(#v));
    }
    for (j, &result) in step.outputs[..op.outputs.len()].iter().enumerate() {
        let next = id("n", j);
        let v = &value[&result];
        element.extend(quote!(#next[#e] = #v;));
    }

    // One chunk of `len` elements (the constant CHUNK for full chunks, so their element
    // loops have a constant trip count and the chunk's history can live in registers):
    // initial rows in, every step, rows out as `keep` says.
    let chunk_body = |len: &TokenStream| {
        let mut load = TokenStream::new();
        let mut chunk_views = TokenStream::new();
        let mut step_views = TokenStream::new();
        let mut writes = TokenStream::new();
        let mut shift = TokenStream::new();
        let mut last = TokenStream::new();
        for (j, o) in op.outputs.iter().enumerate() {
            let out = id("out", j);
            let depth = o.depth() as usize;
            let s = scalar_type(step.ty(step.outputs[j]).dtype);
            let fresh = quote!([<#s as ::core::default::Default>::default(); #chunk]);
            let next = id("n", j);
            load.extend(quote!(let mut #next: [#s; #chunk] = #fresh;));
            for i in 0..depth {
                let h = id2("h", j, i);
                if let Some(Fill { value, .. }) = names.fills[j] {
                    load.extend(quote!(let mut #h: [#s; #chunk] = [#value; #chunk];));
                    continue;
                }
                let at = if i == 0 {
                    quote!(#e0)
                } else {
                    quote!(#i * #total + #e0)
                };
                load.extend(quote! {
                    let mut #h: [#s; #chunk] = #fresh;
                    #h[..#len].copy_from_slice(&#out[#at..][..#len]);
                });
            }
            match (Storage::of(o), o.keep) {
                (Storage::Trace, _) => writes.extend(quote! {
                    #out[(#depth + #t) * #total + #e0..][..#len].copy_from_slice(&#next[..#len]);
                }),
                (Storage::Ring(r), Some(k)) if k > 0 => writes.extend(quote! {
                    if #t + #k >= #n {
                        #out[((#depth + #t) % #r) * #total + #e0..][..#len]
                            .copy_from_slice(&#next[..#len]);
                    }
                }),
                (Storage::State, _) => {
                    let newest = if depth == 0 {
                        next.clone()
                    } else {
                        id2("h", j, depth - 1)
                    };
                    last.extend(if names.fills[j].is_some() {
                        quote!(#out.extend_from_slice(&#newest[..#len]);)
                    } else {
                        quote!(#out[#e0..][..#len].copy_from_slice(&#newest[..#len]);)
                    });
                }
                _ => {}
            }
            // Shift the history by value: h0 <- h1 <- .. <- newest (register moves when
            // the chunk lives in registers).
            for i in 1..depth {
                let (a, b) = (id2("h", j, i - 1), id2("h", j, i));
                shift.extend(quote!(#a = #b;));
            }
            if depth > 0 {
                let h = id2("h", j, depth - 1);
                shift.extend(quote!(#h = #next;));
            }
        }
        for k in 0..op.non_sequences.len() {
            if ns_array(k) && input_live(first_ns_step + k) {
                let (s, c) = (id("ns", k), id("nc", k));
                chunk_views.extend(quote!(let #c: &[_] = &#s[#e0..#e0 + #len];));
            }
        }
        for (i, s) in op.sequences.iter().enumerate() {
            if !seq_live[i] {
                continue;
            }
            let sl = id("seq", i);
            let a = &names.avails[i];
            for (k, tap) in s.taps.iter().enumerate() {
                if !input_live(op.first_sequence_tap_input(i) + k) {
                    continue;
                }
                let offset = (tap + s.past()) as usize;
                let pos = if op.go_backwards {
                    quote!((#a - 1 - #t + #offset))
                } else {
                    quote!((#t + #offset))
                };
                let c = id2("sc", i, k);
                step_views.extend(quote!(let #c: &[_] = &#sl[#pos * #total + #e0..][..#len];));
            }
        }
        quote! {{
            #load
            #chunk_views
            for #t in 0..#n {
                #step_views
                for #e in 0..#len {
                    #element
                }
                #writes
                #shift
            }
            #last
        }}
    };
    let full = chunk_body(&quote!(#chunk));
    let tail = chunk_body(&quote!(#len));
    // The chunks run inside `with_best_isa`: compiled for AVX2 + FMA too, and that copy runs
    // on CPUs that have them (same bits: no FMA contraction). The closure is inlined into
    // both copies (`#[inline(always)]`, allowed on a closure passed as an argument); it holds
    // no `?` and no break out of the block, only the element loops.
    block.extend(quote! {
        #rt::kernels::isa::with_best_isa(#[inline(always)] || {
            let mut #e0: usize = 0;
            while #e0 + #chunk <= #total {
                #full
                #e0 += #chunk;
            }
            if #e0 < #total {
                let #len: usize = #total - #e0;
                #tail
            }
        });
    });
    for (j, fill) in names.fills.iter().enumerate() {
        if fill.is_some() {
            let (st, out) = (&names.states[j], id("out", j));
            block
                .extend(quote!(#st = #rt::kernels::interchange::state_from(#nd::Dim(#row), #out);));
        }
    }
    block.extend(quote!(true));
    quote!(#lt: { #block })
}

/// One element of a step node from its operands' element values.
fn scalar_formula(node: &Node, ins: &[TokenStream], prefix: &str) -> TokenStream {
    let rt = rt();
    let s = scalar_type(node.ty.dtype);
    match &node.op {
        Op::Const(v) => formula::literal(*v, node.ty.dtype),
        Op::Elemwise(op) => formula::scalar(*op, ins),
        Op::Cast => {
            let x = &ins[0];
            quote!(#rt::element::Cast::<#s>::cast(#x))
        }
        Op::Fused(body) => fused(body, ins, prefix),
        other => unreachable!("loop interchange admits only elementwise steps, found {other:?}"),
    }
}

/// A fused chain's body inlined for one element: its nodes in order, reading `ins`.
fn fused(body: &Graph, ins: &[TokenStream], prefix: &str) -> TokenStream {
    let mut lets = TokenStream::new();
    let mut value: HashMap<NodeId, TokenStream> = HashMap::new();
    for nid in body.live_nodes() {
        let node = body.node(nid);
        if let Op::Input { index, .. } = node.op {
            value.insert(nid, ins[index].clone());
            continue;
        }
        let v = format_ident!("{}{}", prefix, nid.0);
        let s = scalar_type(node.ty.dtype);
        let operands: Vec<TokenStream> = node.inputs.iter().map(|i| value[i].clone()).collect();
        let expr = scalar_formula(node, &operands, &format!("{prefix}{}_", nid.0));
        lets.extend(quote!(let #v: #s = #expr;));
        value.insert(nid, quote!(#v));
    }
    let out = &value[&body.outputs[0]];
    quote!({ #lets #out })
}

#[cfg(test)]
mod tests {
    #[test]
    fn power_runs_chunks_outer_with_the_ordinary_loop_beside() {
        let src = "pub fn power(a: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
            let r = scan(|p, a| p * a, outputs_info = ones_like(a), non_sequences = a, n_steps = k);
            Ok(r[-1])
        }";
        let code = crate::expand_to_string(src).unwrap();
        for expected in [
            "kernels::interchange::common_row::<",
            "kernels::interchange::worth_it(",
            "while __scan_3_ic_e0 + __SCAN_3_IC_CHUNK <= __scan_3_ic_total",
            "if !__scan_3_ic {",
        ] {
            assert!(code.contains(expected), "{expected}: {code}");
        }
    }
}
