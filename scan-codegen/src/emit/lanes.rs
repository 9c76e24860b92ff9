//! The lane loop of a scan marked by sum-lanes (`rewrite/sum_lanes.rs`): groups of
//! `kernels::lanes::LANES` steps, step `t + l` in lane `l`, each total an array of partial
//! sums. After the groups, each total's state is its initial value plus its lanes
//! (`kernels::lanes::total`), and the ordinary loop runs the steps left (fewer than a
//! group) from there. Every value is computed by the same formula as in the ordinary loop
//! (`formula::scalar`); where it is computed depends on what it reads:
//! - loop-invariant values (constants, non-sequences, work on those): once, before the
//!   groups, as scalars;
//! - `pow` nodes, with what they read: per group, as arrays of one value per lane, before
//!   the lanes (a `pow` of an invariant base and the loop index is anchored at the start
//!   of a run of groups by `LanePowers::anchor_index` and then only carried, a multiply
//!   per lane; any other `pow` checks its chain every group, `LanePowers::pow`);
//! - everything else: in one loop over the lanes, as scalars, ending with each total's
//!   `acc[l] = acc[l] + addend`: the shape of a hand-written loop, which LLVM vectorizes
//!   over the lanes with the partial sums in registers.
//!
//! The groups run inside `with_best_isa`, so they are compiled for AVX2 where the CPU has
//! it. Sequences are read as slices, one bounds check a run of groups; a sequence that is
//! not contiguous leaves all the steps to the ordinary loop.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::formula::{self, literal};
use super::graph::Repr;
use super::{rt, scalar_type};
use crate::ir::{ElemOp, NodeId, Op, ScanOp};

/// The names the ordinary loop's code gives what the lane loop reads and writes.
pub struct Names<'a> {
    /// The number of steps.
    pub n: &'a Ident,
    /// Each sequence's view (unused for `arange` sequences).
    pub seqs: &'a [Ident],
    /// Each sequence's available steps (its length less its tap window).
    pub avails: &'a [Ident],
    /// Each output's scalar state, which the ordinary loop continues from.
    pub states: &'a [Ident],
}

/// Where a step value is computed (see the module's comment).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Invariant,
    Array,
    Lane,
}

/// A block that runs the groups of steps, adds the lanes into each state, and evaluates to
/// the number of steps it ran.
pub fn emit(op: &ScanOp, args: &[Repr], prefix: &str, names: &Names) -> TokenStream {
    let rt = rt();
    let lanes = quote!(#rt::kernels::lanes);
    let width = quote!(#lanes::LANES);
    let n = names.n;
    let t = format_ident!("{}lt", prefix);
    let l = format_ident!("{}l", prefix);
    let run = format_ident!("{}run", prefix);
    let value = |id: NodeId| format_ident!("{}lane{}", prefix, id.0);
    let acc = |j: usize| format_ident!("{}acc{}", prefix, j);
    let step = &op.step;
    let places = places(op);

    // Step inputs. A sequence tap's rows of a group: `first` is lane 0's row, the other
    // lanes' follow it (precede it, backwards).
    let backwards = op.go_backwards;
    let mut slices = TokenStream::new();
    // Each tap's rows of the whole run of groups, one bounds check, then cut into groups
    // by an iterator (no check per group): `(chunks, pattern)`.
    let mut runs = TokenStream::new();
    let mut chunks: Vec<(TokenStream, Ident)> = Vec::new();
    // Per input: (as an array of the group, in lane `l`), or None for non-sequences.
    let mut taps: Vec<Option<(TokenStream, TokenStream)>> = Vec::new();
    for (i, s) in op.sequences.iter().enumerate() {
        let (v, a) = (&names.seqs[i], &names.avails[i]);
        let slice = format_ident!("{}slice{}", prefix, i);
        if !s.arange {
            slices.extend(quote!(let Some(#slice) = #v.as_slice() else { return 0; };));
        }
        for (m, tap) in s.taps.iter().enumerate() {
            let offset = (tap + s.past()) as usize;
            let first = if backwards {
                quote!((#a - 1 - #t + #offset))
            } else {
                quote!((#t + #offset))
            };
            let at = if backwards {
                quote!((#first - #l))
            } else {
                quote!((#first + #l))
            };
            taps.push(Some(if s.arange {
                (
                    quote!(#lanes::indices(#first, #backwards)),
                    quote!((#at as i64)),
                )
            } else {
                let group = format_ident!("{}group{}_{}", prefix, i, m);
                let rows = format_ident!("{}rows{}_{}", prefix, i, m);
                // Backwards, the run's rows end at lane 0's and are cut from the end.
                runs.extend(if backwards {
                    quote!(let #rows = &#slice[#first + 1 - #run * #width..#first + 1];)
                } else {
                    quote!(let #rows = &#slice[#first..#first + #run * #width];)
                });
                chunks.push(if backwards {
                    (quote!(#rows.rchunks_exact(#width)), group.clone())
                } else {
                    (quote!(#rows.chunks_exact(#width)), group.clone())
                });
                let in_lane = if backwards {
                    quote!(#group[#width - 1 - #l])
                } else {
                    quote!(#group[#l])
                };
                (quote!(#lanes::load(#slice, #first, #backwards)), in_lane)
            }));
        }
    }
    for j in 0..op.outputs.len() {
        let a = acc(j);
        taps.push(Some((quote!(#a), quote!(#a[#l]))));
    }
    let first_ns = op.first_non_sequence_input();
    let non_sequences: Vec<TokenStream> = (0..op.non_sequences.len())
        .map(|k| args[first_ns + k].scalar())
        .collect();

    // A value as the code of `place` reads it.
    let read = |id: NodeId, place: Place| -> TokenStream {
        let v = value(id);
        match (places[id.0], place) {
            (Place::Invariant, Place::Array) => quote!([#v; #width]),
            (Place::Array, Place::Lane) => quote!(#v[#l]),
            _ => quote!(#v),
        }
    };

    let mut setup = TokenStream::new();
    let (mut hoisted, mut anchors, mut arrays, mut in_lane) = (
        TokenStream::new(),
        TokenStream::new(),
        TokenStream::new(),
        TokenStream::new(),
    );
    for id in step.live_nodes() {
        let node = step.node(id);
        let s = scalar_type(node.ty.dtype);
        let v = value(id);
        let place = places[id.0];
        let code = match (&node.op, place) {
            (Op::Input { index, .. }, _) => match (&taps.get(*index), place) {
                (Some(Some((array, _))), Place::Array) => array.clone(),
                (Some(Some((_, scalar))), _) => scalar.clone(),
                _ => non_sequences[*index - op.first_non_sequence_step_input()].clone(),
            },
            (Op::Const(c), _) => literal(*c, node.ty.dtype),
            (Op::Elemwise(ElemOp::Pow), Place::Array | Place::Lane) => {
                let powers = format_ident!("{}_powers", v);
                setup.extend(quote!(let mut #powers = #lanes::LanePowers::default();));
                let (b, e) = (node.inputs[0], node.inputs[1]);
                match index_power(op, id) {
                    Some(offset) => {
                        let first = quote!(((#t + #offset) as i64));
                        let b = read(b, Place::Invariant);
                        let chain = format_ident!("{}_chain", v);
                        anchors.extend(quote! {
                            let mut #chain = #powers.anchor_index(#b, #first);
                            #run = #run.min(#chain.groups());
                        });
                        quote!(#chain.take(#l))
                    }
                    None => {
                        let (b, e) = (read(b, place), read(e, place));
                        quote!(#powers.pow(#b, #e))
                    }
                }
            }
            (Op::Elemwise(e), Place::Array) => {
                let k = node.inputs.len();
                let xs: Vec<Ident> = (0..k).map(|i| format_ident!("{}x{}", prefix, i)).collect();
                let operands: Vec<TokenStream> = xs.iter().map(|x| quote!(#x)).collect();
                let f = formula::scalar(*e, &operands);
                let arrays = node.inputs.iter().map(|&i| read(i, place));
                let map = format_ident!("map{}", k);
                quote!(#lanes::#map(#(#arrays,)* |#(#xs),*| #f))
            }
            (Op::Cast, Place::Array) => {
                let x = read(node.inputs[0], place);
                quote!(#lanes::map1(#x, #rt::element::Cast::<#s>::cast))
            }
            (Op::Elemwise(e), _) => {
                let xs: Vec<TokenStream> = node.inputs.iter().map(|&i| read(i, place)).collect();
                formula::scalar(*e, &xs)
            }
            (Op::Cast, _) => {
                let x = read(node.inputs[0], place);
                quote!(#rt::element::Cast::<#s>::cast(#x))
            }
            _ => unreachable!("sum_lanes admits only scalar elementwise steps"),
        };
        match place {
            Place::Invariant => hoisted.extend(quote!(let #v: #s = #code;)),
            Place::Array => arrays.extend(quote!(let #v: [#s; #width] = #code;)),
            Place::Lane => in_lane.extend(quote!(let #v: #s = #code;)),
        }
    }
    let mut accs = TokenStream::new();
    let mut updates = TokenStream::new();
    let mut finish = TokenStream::new();
    for (j, &r) in step.outputs[..op.outputs.len()].iter().enumerate() {
        let (a, st, res) = (acc(j), &names.states[j], read(r, Place::Lane));
        let s = scalar_type(step.ty(r).dtype);
        accs.extend(
            quote!(let mut #a: [#s; #width] = [<#s as #rt::element::Number>::ZERO; #width];),
        );
        updates.extend(quote!(#a[#l] = #res;));
        finish.extend(quote!(#st = #rt::math::add(#st, #lanes::total(#a));));
    }
    // `for (((_, g0), g1), ..) in (0..run).zip(rows0.chunks_exact(L)).zip(..)`.
    let (mut iter, mut pattern) = (quote!((0..#run)), quote!(_));
    for (c, g) in &chunks {
        iter = quote!(#iter.zip(#c));
        pattern = quote!((#pattern, #g));
    }
    quote!(#rt::kernels::isa::with_best_isa(#[inline(always)] || {
        #slices
        #setup
        #hoisted
        #accs
        let mut #t: usize = 0;
        while #t + #width <= #n {
            let mut #run: usize = (#n - #t) / #width;
            #anchors
            #runs
            for #pattern in #iter {
                #arrays
                for #l in 0..#width {
                    #in_lane
                    #updates
                }
                #t += #width;
            }
        }
        #finish
        #t
    }))
}

/// Where each step value is computed (indexed by node).
fn places(op: &ScanOp) -> Vec<Place> {
    let step = &op.step;
    let mut places = vec![Place::Lane; step.nodes.len()];
    let live = step.live_nodes();
    for &id in &live {
        if invariant(op, id) {
            places[id.0] = Place::Invariant;
        }
    }
    // `pow` nodes other than powers of the loop index, and what they read (that is not
    // invariant), in reverse order.
    for &id in live.iter().rev() {
        let node = step.node(id);
        let pow = matches!(node.op, Op::Elemwise(ElemOp::Pow));
        let array = (pow && index_power(op, id).is_none()) || places[id.0] == Place::Array;
        if array && places[id.0] != Place::Invariant {
            places[id.0] = Place::Array;
            for &i in &node.inputs {
                if places[i.0] != Place::Invariant {
                    places[i.0] = Place::Array;
                }
            }
        }
    }
    places
}

/// Whether step value `id` is the same at every step: a constant, a non-sequence, or
/// scalar work on those.
fn invariant(op: &ScanOp, id: NodeId) -> bool {
    let node = op.step.node(id);
    match node.op {
        Op::Input { index, .. } => index >= op.first_non_sequence_step_input(),
        Op::Const(_) => true,
        Op::Elemwise(_) | Op::Cast => node.inputs.iter().all(|&i| invariant(op, i)),
        _ => false,
    }
}

/// When step value `id` is `pow` of an invariant base and the loop index (see
/// [`loop_index`]): the index's offset from the step.
fn index_power(op: &ScanOp, id: NodeId) -> Option<usize> {
    let node = op.step.node(id);
    match (&node.op, node.inputs.as_slice()) {
        (Op::Elemwise(ElemOp::Pow), &[b, e]) if invariant(op, b) => loop_index(op, e),
        _ => None,
    }
}

/// When step value `id` is the float cast of a tap of an `arange` sequence read forwards
/// (the loop index plus a constant): that constant (the tap's row is step + offset).
fn loop_index(op: &ScanOp, id: NodeId) -> Option<usize> {
    let node = op.step.node(id);
    if !matches!(node.op, Op::Cast) || !node.ty.dtype.is_float() || op.go_backwards {
        return None;
    }
    let Op::Input { index: k, .. } = op.step.node(node.inputs[0]).op else {
        return None;
    };
    op.sequences.iter().enumerate().find_map(|(i, s)| {
        let first = op.first_sequence_tap_input(i);
        let m = k
            .checked_sub(first)
            .filter(|&m| s.arange && m < s.taps.len())?;
        Some((s.taps[m] + s.past()) as usize)
    })
}
