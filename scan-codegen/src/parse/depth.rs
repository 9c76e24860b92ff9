//! A bound on how deeply a program nests, checked on the tokens before anything parses them.
//!
//! syn's parser recurses once per bracket, prefix operator, closure, `else if`, generic
//! argument, ...; so do the stages after it (`parse::expr`, lowering, emission, the
//! evaluator), once per level of the expression tree. A 1,000-deep parenthesised
//! expression overflows an 8 MiB stack inside syn (a debug build, which is how proc macros
//! are built), a 700-deep `x + x + ..` chain overflows it in lowering. The proc macro runs
//! on rustc's thread, so an overflow there is an abort of the compiler, not an error.
//!
//! [`check`] computes, without recursing deeper than [`MAX_DEPTH`], an upper bound of the
//! depth of any tree built from the tokens: along every path into nested brackets it adds
//! up, at each bracket level, the tokens of the `,`- or `;`-separated part the path goes
//! through (every node of an expression, type or pattern tree has a token of its own: an
//! operator, a keyword, a bracket, a name), plus the level's `|` and `<` (closures and
//! generic arguments nest across commas). At the top level of the block a part also ends
//! after each `{ .. }` (the body of a `fn`). Wide code is not deep: a 5,000-element tuple
//! or a 200-statement body counts little; a long chain of operators in one expression
//! counts its length. Real programs stay far below the bound (the tutorial's RNN: about
//! 40). Past it, the block is refused with one spanned error and nothing parses it.

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};

/// The deepest tree (by the bound above) a `scan!` block may hold. The whole pipeline
/// (and the evaluator) runs this deep on 4 MiB of stack in a debug build
/// (`tests/mutations_never_panic.rs` checks it on a thread of that size), half of the
/// 8 MiB of rustc's thread, on which the proc macro runs.
pub const MAX_DEPTH: usize = 256;

/// `Err` with the token where the bound passes [`MAX_DEPTH`].
pub fn check(tokens: &TokenStream) -> syn::Result<()> {
    match level(tokens.clone(), 0, true) {
        Ok(_) => Ok(()),
        Err(span) => Err(syn::Error::new(
            span,
            crate::messages::nesting_too_deep(MAX_DEPTH),
        )),
    }
}

/// The bound itself, for a block within [`MAX_DEPTH`] (`None` past it).
pub fn bound(tokens: &TokenStream) -> Option<usize> {
    level(tokens.clone(), 0, true).ok()
}

/// The deepest bound in one bracket level entered at depth `base`, or the token where it
/// passes [`MAX_DEPTH`]. Recursion is bounded: every level adds at least one (its bracket)
/// to `base`, and `base > MAX_DEPTH` stops.
fn level(tokens: TokenStream, base: usize, top: bool) -> Result<usize, Span> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let spanners = trees
        .iter()
        .filter(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == '|' || p.as_char() == '<'))
        .count();
    let mut deepest = base;
    let mut start = 0;
    while start < trees.len() {
        let end = part_end(&trees, start, top);
        let part = &trees[start..end];
        // Each token of the part counts: the bound at its i-th token is base + spanners + i.
        let first = base + spanners;
        if first + part.len() > MAX_DEPTH {
            let i = (MAX_DEPTH - first.min(MAX_DEPTH)).min(part.len() - 1);
            return Err(span_of(&part[i]));
        }
        let depth = first + part.len();
        deepest = deepest.max(depth);
        for tree in part {
            if let TokenTree::Group(g) = tree {
                deepest = deepest.max(level(g.stream(), depth, false)?);
            }
        }
        start = end;
    }
    Ok(deepest)
}

/// The end (exclusive) of the part starting at `start`: after the next `,` or `;`, or at
/// the top level after a `{ .. }` group.
fn part_end(trees: &[TokenTree], start: usize, top: bool) -> usize {
    for (i, tree) in trees.iter().enumerate().skip(start) {
        let ends = match tree {
            TokenTree::Punct(p) => p.as_char() == ',' || p.as_char() == ';',
            TokenTree::Group(g) => top && g.delimiter() == Delimiter::Brace,
            _ => false,
        };
        if ends {
            return i + 1;
        }
    }
    trees.len()
}

fn span_of(tree: &TokenTree) -> Span {
    match tree {
        TokenTree::Group(g) => g.span_open(),
        other => other.span(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_ok(src: &str) -> bool {
        check(&src.parse().expect("lexes")).is_ok()
    }

    #[test]
    fn wide_is_not_deep() {
        let tuple = format!("fn f() {{ ({}) }}", vec!["x"; 5000].join(", "));
        assert!(depth_ok(&tuple));
        let body = format!("fn f() {{ {} }}", "let a = b + c * d;".repeat(500));
        assert!(depth_ok(&body));
        let fns = "pub fn f(x: f64) -> Result<f64> { Ok(x) }".repeat(200);
        assert!(depth_ok(&fns));
    }

    #[test]
    fn deep_is_refused() {
        let parens = format!("fn f() {{ {}x{} }}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(!depth_ok(&parens));
        assert!(!depth_ok(&format!("fn f() {{ {}x }}", "-".repeat(300))));
        assert!(!depth_ok(&format!(
            "fn f() {{ {} }}",
            vec!["x"; 300].join(" + ")
        )));
        // Closures and generic arguments nest across commas.
        assert!(!depth_ok(&format!(
            "fn f() {{ {}x }}",
            "|a, b| ".repeat(150)
        )));
        assert!(!depth_ok(&format!(
            "fn f(x: {}f64{}) {{ }}",
            "A<u8, ".repeat(300),
            ">".repeat(300)
        )));
    }

    #[test]
    fn the_bound_is_exact_for_parentheses() {
        // `fn f() { .. }`: the top-level part (4 tokens), the body's part (1 token), then one
        // per parenthesis (the group itself), the innermost holding `x`.
        let nest = |n: usize| format!("fn f() {{ {}x{} }}", "(".repeat(n), ")".repeat(n));
        assert!(depth_ok(&nest(MAX_DEPTH - 5)));
        assert!(!depth_ok(&nest(MAX_DEPTH - 4)));
    }
}
