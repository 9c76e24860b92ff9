//! A fused pass with two results (`Op::Fused` whose body has two outputs, read through
//! `Op::Part` nodes; the fusion rewrite makes it from a chain and a value it reads that
//! is needed elsewhere too): one runtime `pair` kernel writes both, each into its own
//! buffer or straight into its row of a scan's output ([`InPlace`]), when the second
//! result has the pass's whole shape (`kernels::broadcasts_alike`); otherwise the two are
//! computed by two maps one after the other, as before fusion (the second from its own
//! operands, so that it fails first and names itself; then the first, computing the
//! second again inside its element formula, which gives the same bits). The kernel takes
//! the second result's formula and the first's given the second (`fb`, `fa`): it runs
//! them as two short loops over each block, not one long one (`kernels::elementwise`'s
//! `PAIR_BLOCK`).

use std::collections::HashMap;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::graph::{fused_element, operands, InPlace, Repr};
use super::{owned_type, rt};
use crate::ir::{Graph, NodeId, Op};

/// Where one result goes.
struct Destination {
    /// Its own buffer, when it needs one (not written in place, or not at the first step).
    own: Option<Ident>,
    /// Its row, when written in place.
    target: Option<InPlace>,
}

/// What the pass's code needs from the graph emitter: its buffers and the nodes that, as
/// graph outputs, are their own buffers.
pub(super) struct Emitted<'a> {
    pub setup: &'a mut TokenStream,
    pub buffers: &'a mut Vec<Ident>,
    pub as_output: &'a mut HashMap<NodeId, Repr>,
}

/// The code of the two-result pass `id` over its operands `args`, and how each result is
/// held (result `k` is what `Part { index: k }` reads).
pub(super) fn emit(
    g: &Graph,
    id: NodeId,
    prefix: &str,
    users: &[Vec<NodeId>],
    args: &[Repr],
    in_place: &HashMap<NodeId, InPlace>,
    out: Emitted<'_>,
) -> (TokenStream, Vec<Repr>) {
    let rt = rt();
    let node = g.node(id);
    let Op::Fused(body) = &node.op else {
        unreachable!("a two-result pass is a fused node")
    };
    let part = |k: usize| {
        users[id.0]
            .iter()
            .copied()
            .find(|&u| matches!(g.node(u).op, Op::Part { index } if index == k))
    };
    let parts = [part(0), part(1)];
    // Each result's buffer (named after its `Part`) or row.
    let dests: Vec<Destination> = (0..2)
        .map(|k| {
            let target = parts[k].and_then(|p| in_place.get(&p)).cloned();
            let needs_own = target.as_ref().is_none_or(|t| t.own_buffer_when.is_some());
            let own = needs_own.then(|| {
                let name = match parts[k] {
                    Some(p) => format_ident!("{}{}", prefix, p.0),
                    None => format_ident!("{}{}_{}", prefix, id.0, k),
                };
                let ty = body.ty(body.outputs[k]);
                let owned = owned_type(ty);
                out.setup
                    .extend(quote!(let mut #name: #owned = ::core::default::Default::default();));
                out.buffers.push(name.clone());
                name
            });
            Destination { own, target }
        })
        .collect();

    let label = &node.label;
    let second_label = parts[1].map_or(label, |p| &g.node(p).label);
    let (arrays, _, xs) = operands(args);
    // The pass: the second result from the operands (`fb`), then the first from them and
    // the second (`fa`, the second as its last parameter).
    let second = only_output(body, 1);
    let first = given_second(body);
    let given = format_ident!("__second");
    let mut first_xs = xs.clone();
    first_xs.push(quote!(#given));
    let fb = fused_element(&second, &xs);
    let fa = fused_element(&first, &first_xs);
    let fb_params = params(args, &inputs_read(&second));
    let fa_params = params(args, &inputs_read(&first));
    // Else the second from its own operands, then the first computing it again.
    let (second_arrays, second_params, second_xs) = operands_read(args, &inputs_read(&second));
    let second_alone = fused_element(&second, &second_xs);
    let first_alone = fused_element(&only_output(body, 0), &xs);
    let all_params = params(args, &inputs_read(&only_output(body, 0)));
    let pair = format_ident!("pair{}", arrays.len());
    let (map_all, map_second) = (
        format_ident!("map{}", arrays.len()),
        format_ident!("map{}", second_arrays.len()),
    );
    let call = |d0: &TokenStream, d1: &TokenStream| {
        quote! {
            if #rt::kernels::broadcasts_alike(
                &[#(#second_arrays.shape()),*],
                &[#(#arrays.shape()),*],
            ) {
                #rt::kernels::#pair(#d0, #d1, #(#arrays,)* #label,
                    #[inline(always)] move |#(#fb_params),*| #fb,
                    #[inline(always)] move |#(#fa_params,)* #given| #fa)?;
            } else {
                #rt::kernels::#map_second(#d1, #(#second_arrays,)* #second_label,
                    #[inline(always)] move |#(#second_params),*| #second_alone)?;
                #rt::kernels::#map_all(#d0, #(#arrays,)* #label,
                    #[inline(always)] move |#(#all_params),*| #first_alone)?;
            }
        }
    };
    let code = branches(&dests, &[], &call);

    // Each result read back: its buffer, or its row (the buffer at the first step of a
    // map output, which is then the output's own buffer too).
    let mut reprs = Vec::new();
    let mut read_back = TokenStream::new();
    for (k, d) in dests.iter().enumerate() {
        let repr = match (&d.own, &d.target) {
            (Some(own), None) => Repr::Buffer(own.clone()),
            (own, Some(t)) => {
                let written = format_ident!("{}{}_{}_row", prefix, id.0, k);
                let back = &t.read_back;
                match (own, &t.own_buffer_when) {
                    (Some(own), Some(cond)) => {
                        if let Some(p) = parts[k] {
                            out.as_output.insert(p, Repr::Buffer(own.clone()));
                        }
                        read_back.extend(
                            quote!(let #written = if #cond { #own.view() } else { #back };),
                        );
                    }
                    _ => read_back.extend(quote!(let #written = #back;)),
                }
                Repr::View(written)
            }
            (None, None) => unreachable!("a result without a row has its own buffer"),
        };
        reprs.push(repr);
    }
    (quote!(#code #read_back), reprs)
}

/// The call for every combination of destinations: a result written in place from the
/// second step on (a map output) takes its own buffer when its condition holds.
fn branches(
    dests: &[Destination],
    chosen: &[TokenStream],
    call: &dyn Fn(&TokenStream, &TokenStream) -> TokenStream,
) -> TokenStream {
    let Some((d, rest)) = dests.split_first() else {
        return call(&chosen[0], &chosen[1]);
    };
    let with = |dest: TokenStream| {
        let mut now = chosen.to_vec();
        now.push(dest);
        branches(rest, &now, call)
    };
    match (&d.own, &d.target) {
        (Some(own), None) => with(quote!(&mut #own)),
        (None, Some(t)) => with(t.row.clone()),
        (Some(own), Some(t)) => {
            let cond = t
                .own_buffer_when
                .as_ref()
                .expect("a row and a buffer: a condition");
            let (mine, theirs) = (with(quote!(&mut #own)), with(t.row.clone()));
            quote!(if #cond { #mine } else { #theirs })
        }
        (None, None) => unreachable!("a result without a row has its own buffer"),
    }
}

/// `body` computing its output `k` alone.
fn only_output(body: &Graph, k: usize) -> Graph {
    let mut one = body.clone();
    one.outputs = vec![body.outputs[k]];
    one
}

/// `body` computing its first output from its second given, as one more input (the
/// last), instead of computed.
fn given_second(body: &Graph) -> Graph {
    let mut first = body.clone();
    let second = body.outputs[1];
    let n = body.node(second);
    let input = first.add_input("second", n.ty, n.span);
    first.replace_uses(second, input);
    first.outputs = vec![first.outputs[0]];
    first.normalize();
    first
}

/// Which of `body`'s inputs its output is computed from.
fn inputs_read(body: &Graph) -> Vec<bool> {
    let mut reads = vec![false; body.inputs.len()];
    for id in body.live_nodes() {
        if let Op::Input { index, .. } = body.node(id).op {
            reads[index] = true;
        }
    }
    reads
}

/// A closure's parameters for the array operands among `args`: the name `operands` gives
/// those that `reads` marks, `_` for the others.
fn params(args: &[Repr], reads: &[bool]) -> Vec<TokenStream> {
    let mut k = 0usize;
    let mut out = Vec::new();
    for (a, &read) in args.iter().zip(reads) {
        if matches!(a, Repr::Scalar(_)) {
            continue;
        }
        let p = format_ident!("__x{}", k);
        out.push(if read { quote!(#p) } else { quote!(_) });
        k += 1;
    }
    out
}

/// [`operands`] of the arguments that `reads` marks (the others, never read by the
/// formula, stand for `()`).
fn operands_read(
    args: &[Repr],
    reads: &[bool],
) -> (Vec<TokenStream>, Vec<Ident>, Vec<TokenStream>) {
    let mut arrays = Vec::new();
    let mut params = Vec::new();
    let xs = args
        .iter()
        .zip(reads)
        .map(|(a, &read)| match a {
            Repr::Scalar(i) => quote!(#i),
            other if read => {
                let p = format_ident!("__x{}", arrays.len());
                arrays.push(other.view());
                params.push(p.clone());
                quote!(#p)
            }
            _ => quote!(()),
        })
        .collect();
    (arrays, params, xs)
}
