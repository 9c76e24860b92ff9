//! The gradient rules of the linear algebra (`Op::Linalg`), built from ordinary IR ops
//! (products, transposes, `tril`/`triu`, `diag`, elementwise ops and the linear-algebra
//! ops themselves), so that every rewrite, the emitter and the evaluator serve them as they
//! are. `adjoints` holds the functions of one result, `parts` those of several (the sweep
//! gathers the adjoints of their `Part` reads first).
//!
//! **Matrices read through one triangle.** `cholesky`, `eigh`, `solve` with `assume_a =
//! "pos"` or `"sym"` read the symmetric matrix `S = tril(a) + tril(a, -1)ᵀ` (upper:
//! `triu(a) + triu(a, 1)ᵀ`), `cho_solve` and `solve_triangular` one triangle of their
//! factor; the other triangle is not read, so its gradient is 0. The rules give the
//! gradient of the function as computed, PyTensor's convention (`Cholesky.L_op`,
//! `EighGrad`, `SolveTriangular.L_op`): with `Ḡ` the adjoint of `S` (any matrix, only its
//! symmetric part matters), an element of the triangle read gets `Ḡ_ij + Ḡ_ji` off the
//! diagonal and `Ḡ_ii` on it, `tril(Ḡ) + tril(Ḡᵀ, -1)`, where a change of one element
//! changes both `S_ij` and `S_ji`. For a symmetric `a` changed symmetrically (a function
//! of `m mᵀ + c I`), this gives the same derivatives as any other convention; a central
//! difference of any one element of `a` agrees with it.
//!
//! The rules (`x̄` the adjoint of the result `x`, `Φ(M)` M's lower triangle with its
//! diagonal halved):
//! - `cholesky`: `L̄` (the factor's triangle of the adjoint; `U = Lᵀ` for `lower = false`),
//!   `Ḡ = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹` (Murray 2016, by two triangular solves), on the triangle read.
//! - solves `x = A⁻¹ b`: `b̄ = A⁻ᵀ x̄` (the same solve of `Aᵀ`), `Ā = -b̄ xᵀ` (an outer
//!   product for a vector `b`); symmetric solves on the triangle read; `solve_triangular`
//!   the triangle read only (without its diagonal with `unit_diagonal`), `-x b̄ᵀ` with
//!   `trans`; `cho_solve` of the factor `F` (`A = F Fᵀ`, upper `Fᵀ F`): `c̄ = tril((Ā + Āᵀ) F)`
//!   (upper `triu(F (Ā + Āᵀ))`).
//! - `inv`: `Ā = -Yᵀ Ȳ Yᵀ`; `det`: `ḡ det(A) A⁻ᵀ`; `slogdet`: `ḡ A⁻ᵀ` from logabsdet's
//!   adjoint, the sign's is 0 (piecewise constant). `A⁻ᵀ` is `inv(A)ᵀ`, so a singular `A`
//!   is `inv`'s `Err`, as numpy's `LinAlgError`.
//! - `eigh`: `Ḡ = V (diag(w̄) + F ∘ (Vᵀ V̄)) Vᵀ`, `F_ij = 1 / (w_j - w_i)` off the diagonal,
//!   0 on it (computed as `1 / (D + I) - I`, `D_ij = w_j - w_i`), on the triangle read. A
//!   repeated eigenvalue gives infinities and NaNs where `V̄` reaches it, as PyTensor's and
//!   JAX's rules do (the eigenvectors are not unique there); the eigenvalues alone
//!   (`V̄ = 0`) have no such term.
//! - `svd` (Townsend 2016) and `svdvals` (`Ā = U diag(s̄) Vᵀ`, thin factors; the same for
//!   `svd` with `full_matrices = true` when only `s` is read; its vectors then include an
//!   arbitrary basis: a compile error); a repeated singular value gives infinities where
//!   `Ū` or `V̄` reach it, a zero one where the vectors' adjoints do (`S⁻¹`).
//! - `qr` (modes "reduced" and "r"; "complete" when only `r` is read): the transpose of the
//!   evaluator's tangent (`eval/jvp/spectral.rs`), with `r`'s leading `k x k` block
//!   invertible (`k = min(m, n)`), see `qr_adjoint`.

use super::Builder;
use crate::ir::{Assume, ElemOp, LinalgOp, NodeId, Op, PathStep, QrMode, Type};
use crate::messages as msg;

/// The contributions of the linear-algebra node `y` of one result (adjoint `g`).
pub(super) fn adjoints(
    b: &mut Builder,
    op: LinalgOp,
    y: NodeId,
    g: NodeId,
    want: &[bool],
) -> Result<Vec<(usize, NodeId)>, String> {
    let xs = b.g.node(y).inputs.clone();
    let wanted = |k: usize| want.get(k).copied().unwrap_or(false);
    let mut out = Vec::new();
    match op {
        LinalgOp::Cholesky { lower, .. } => {
            if wanted(0) {
                // The lower factor L and its adjoint (the zero triangle's dropped).
                let (l, lbar) = if lower {
                    (y, tri(b, g, 0, false))
                } else {
                    let u = tri(b, g, 0, true);
                    (transpose(b, y), transpose(b, u))
                };
                let lt = transpose(b, l);
                let m = mm(b, lt, lbar);
                let p = phi(b, m);
                // L⁻ᵀ P L⁻¹ = (L⁻ᵀ (L⁻ᵀ P)ᵀ)ᵀ.
                let lower_t = LinalgOp::SolveTriangular {
                    lower: true,
                    trans: true,
                    unit_diagonal: false,
                };
                let x1 = linalg(b, lower_t, vec![l, p], 2);
                let x1t = transpose(b, x1);
                let x2 = linalg(b, lower_t, vec![l, x1t], 2);
                let s = transpose(b, x2);
                out.push((0, on_triangle(b, s, lower)));
            }
        }
        LinalgOp::ChoSolve { lower } => {
            let (c, rhs) = (xs[0], xs[1]);
            let rank = b.ty(rhs).rank;
            // The matrix is symmetric: its transpose's solve is the same solve.
            let bbar = linalg(b, op, vec![c, g], rank);
            if wanted(0) {
                // Ā = -b̄ xᵀ; A = F Fᵀ (upper: Fᵀ F) with F the triangle read.
                let o = outer(b, bbar, y);
                let ot = transpose(b, o);
                let sym = b.elem(ElemOp::Add, vec![o, ot]);
                let f = tri(b, c, 0, !lower);
                let prod = if lower { mm(b, sym, f) } else { mm(b, f, sym) };
                let t = tri(b, prod, 0, !lower);
                out.push((0, b.elem(ElemOp::Neg, vec![t])));
            }
            if wanted(1) {
                out.push((1, bbar));
            }
        }
        LinalgOp::Solve { assume, lower } => {
            let (a, rhs) = (xs[0], xs[1]);
            let rank = b.ty(rhs).rank;
            let bbar = match assume {
                Assume::General => {
                    let at = transpose(b, a);
                    linalg(b, op, vec![at, g], rank)
                }
                // The symmetric matrix of the triangle read is its own transpose.
                Assume::Positive | Assume::Symmetric => linalg(b, op, vec![a, g], rank),
            };
            if wanted(0) {
                let o = outer(b, bbar, y);
                let abar = b.elem(ElemOp::Neg, vec![o]);
                let abar = match assume {
                    Assume::General => abar,
                    Assume::Positive | Assume::Symmetric => on_triangle(b, abar, lower),
                };
                out.push((0, abar));
            }
            if wanted(1) {
                out.push((1, bbar));
            }
        }
        LinalgOp::SolveTriangular {
            lower,
            trans,
            unit_diagonal,
        } => {
            let (a, rhs) = (xs[0], xs[1]);
            let rank = b.ty(rhs).rank;
            // op(T) x = rhs, op(T) = T or Tᵀ: b̄ = op(T)⁻ᵀ x̄, the other `trans`.
            let back = LinalgOp::SolveTriangular {
                lower,
                trans: !trans,
                unit_diagonal,
            };
            let bbar = linalg(b, back, vec![a, g], rank);
            if wanted(0) {
                // op(T)'s adjoint -b̄ xᵀ, T's its transpose with `trans`; the triangle read.
                let o = if trans {
                    outer(b, y, bbar)
                } else {
                    outer(b, bbar, y)
                };
                let k = match (unit_diagonal, lower) {
                    (false, _) => 0,
                    (true, true) => -1,
                    (true, false) => 1,
                };
                let t = tri(b, o, k, !lower);
                out.push((0, b.elem(ElemOp::Neg, vec![t])));
            }
            if wanted(1) {
                out.push((1, bbar));
            }
        }
        // -Yᵀ Ȳ Yᵀ
        LinalgOp::Inv => {
            if wanted(0) {
                let yt = transpose(b, y);
                let p = mm(b, yt, g);
                let q = mm(b, p, yt);
                out.push((0, b.elem(ElemOp::Neg, vec![q])));
            }
        }
        // ḡ det(A) A⁻ᵀ
        LinalgOp::Det => {
            if wanted(0) {
                let scale = b.mul(g, y);
                let it = inv_transpose(b, xs[0]);
                out.push((0, b.mul(scale, it)));
            }
            if wanted(1) {
                return Err(msg::grad_no_rule(
                    "det",
                    Some("of a reused Cholesky factor"),
                ));
            }
        }
        LinalgOp::SvdVals => {
            if wanted(0) {
                let (u, _, vh) = thin_svd(b, xs[0]);
                out.push((0, svd_adjoint(b, u, None, vh, None, Some(g), None)));
            }
        }
        // Mode "r": the reduced factorisation's rule with no adjoint of q.
        LinalgOp::Qr { .. } => {
            if wanted(0) {
                let (q, r) = reduced_qr(b, xs[0]);
                out.push((0, qr_adjoint(b, xs[0], q, r, None, Some(g))));
            }
        }
        LinalgOp::SlogDet | LinalgOp::Eigh { .. } | LinalgOp::Svd { .. } => {
            if want.iter().any(|&w| w) {
                // The sweep hands a node of several results to `parts`.
                return Err(msg::grad_no_rule(op.name(), Some("read as one value")));
            }
        }
    }
    Ok(out)
}

/// The contributions of the linear-algebra node `y` of several results, from their
/// adjoints `gs` (`None` where the cost does not read a result).
pub(super) fn parts(
    b: &mut Builder,
    op: LinalgOp,
    y: NodeId,
    gs: &[Option<NodeId>],
    want: &[bool],
) -> Result<Vec<(usize, NodeId)>, String> {
    let a = b.g.node(y).inputs[0];
    let g = |k: usize| gs.get(k).copied().flatten();
    let mut out = Vec::new();
    if want.get(1).copied().unwrap_or(false) {
        return Err(msg::grad_no_rule(
            op.name(),
            Some("of a reused Cholesky factor"),
        ));
    }
    if !want.first().copied().unwrap_or(false) {
        return Ok(out);
    }
    match op {
        // The sign is piecewise constant: logabsdet's adjoint alone, ḡ A⁻ᵀ.
        LinalgOp::SlogDet => {
            if let Some(gl) = g(1) {
                let it = inv_transpose(b, a);
                out.push((0, b.mul(gl, it)));
            }
        }
        LinalgOp::Eigh { lower } => {
            let (gw, gv) = (g(0), g(1));
            if gw.is_none() && gv.is_none() {
                return Ok(out);
            }
            let w = part(b, y, 0, 1);
            let v = part(b, y, 1, 2);
            let dtype = b.ty(w).dtype;
            let mut inner: Option<NodeId> = None;
            if let Some(gw) = gw {
                let zero = b.int(0);
                inner = Some(b.add(Op::Diag, vec![gw, zero], Type::new(dtype, 2)));
            }
            if let Some(gv) = gv {
                let vt = transpose(b, v);
                let k = mm(b, vt, gv);
                let f = reciprocal_gaps(b, w);
                let fk = b.mul(f, k);
                inner = Some(match inner {
                    Some(i) => b.elem(ElemOp::Add, vec![i, fk]),
                    None => fk,
                });
            }
            if let Some(inner) = inner {
                let vi = mm(b, v, inner);
                let vt = transpose(b, v);
                let gbar = mm(b, vi, vt);
                out.push((0, on_triangle(b, gbar, lower)));
            }
        }
        LinalgOp::Qr { mode } => {
            let (gq, gr) = (g(0), g(1));
            match mode {
                QrMode::Reduced => {
                    if gq.is_some() || gr.is_some() {
                        let q = part(b, y, 0, 2);
                        let r = part(b, y, 1, 2);
                        out.push((0, qr_adjoint(b, a, q, r, gq, gr)));
                    }
                }
                // Only r's first min(m, n) rows are not constant (zero).
                QrMode::Complete => {
                    if gq.is_some() {
                        return Err(msg::grad_arbitrary_basis(
                            "qr",
                            "mode = \"complete\"",
                            "mode = \"reduced\"",
                        ));
                    }
                    if let Some(gr) = gr {
                        let (q, r) = reduced_qr(b, a);
                        let k = b.shape(r, 0);
                        let rows = vec![PathStep::Slice {
                            start: false,
                            end: true,
                        }];
                        let gr = b.subtensor(gr, rows, vec![k]);
                        out.push((0, qr_adjoint(b, a, q, r, None, Some(gr))));
                    }
                }
                QrMode::R => return Err(msg::grad_no_rule("qr", Some("read through parts"))),
            }
        }
        LinalgOp::Svd { full_matrices } => {
            let (gu, gs, gvh) = (g(0), g(1), g(2));
            if full_matrices && (gu.is_some() || gvh.is_some()) {
                return Err(msg::grad_arbitrary_basis(
                    "svd",
                    "full_matrices = true",
                    "full_matrices = false",
                ));
            }
            let (u, s, vh) = if full_matrices {
                // The singular values alone: the thin factors serve.
                thin_svd(b, a)
            } else {
                (part(b, y, 0, 2), part(b, y, 1, 1), part(b, y, 2, 2))
            };
            if gu.is_some() || gs.is_some() || gvh.is_some() {
                out.push((0, svd_adjoint(b, u, Some(s), vh, gu, gs, gvh)));
            }
        }
        LinalgOp::Cholesky { .. }
        | LinalgOp::ChoSolve { .. }
        | LinalgOp::Solve { .. }
        | LinalgOp::SolveTriangular { .. }
        | LinalgOp::Inv
        | LinalgOp::Det
        | LinalgOp::SvdVals => {
            return Err(msg::grad_no_rule(op.name(), Some("read through parts")));
        }
    }
    Ok(out)
}

/// The matrix `m` transposed (a view).
fn transpose(b: &mut Builder, m: NodeId) -> NodeId {
    let t = b.ty(m);
    b.add(Op::Transpose, vec![m], t)
}

/// numpy's `dot` of vectors and matrices.
fn mm(b: &mut Builder, p: NodeId, q: NodeId) -> NodeId {
    let (tp, tq) = (b.ty(p), b.ty(q));
    let rank = (tp.rank + tq.rank).saturating_sub(2);
    b.add(Op::Dot, vec![p, q], tp.with_rank(rank))
}

/// `p qᵀ` of two matrices, or the outer product of two vectors.
fn outer(b: &mut Builder, p: NodeId, q: NodeId) -> NodeId {
    if b.ty(p).rank == 1 {
        let col = b.new_axis(p, 1);
        b.mul(col, q)
    } else {
        let qt = transpose(b, q);
        mm(b, p, qt)
    }
}

/// numpy's `tril(m, k)` (`upper`: `triu`).
fn tri(b: &mut Builder, m: NodeId, k: i64, upper: bool) -> NodeId {
    let k = b.int(k);
    let t = b.ty(m);
    b.add(Op::Tri { upper }, vec![m, k], t)
}

/// Φ(M): M's lower triangle with its diagonal halved, `(tril(M) + tril(M, -1)) / 2`.
fn phi(b: &mut Builder, m: NodeId) -> NodeId {
    let with = tri(b, m, 0, false);
    let without = tri(b, m, -1, false);
    let sum = b.elem(ElemOp::Add, vec![with, without]);
    let half = b.float(0.5, b.ty(m).dtype);
    b.mul(sum, half)
}

/// The adjoint of a matrix read through one triangle as the symmetric matrix it makes,
/// from the symmetric matrix's adjoint `s`: `tril(s) + tril(sᵀ, -1)` (upper: `triu`).
fn on_triangle(b: &mut Builder, s: NodeId, lower: bool) -> NodeId {
    let st = transpose(b, s);
    let with = tri(b, s, 0, !lower);
    let strict = tri(b, st, if lower { -1 } else { 1 }, !lower);
    b.elem(ElemOp::Add, vec![with, strict])
}

/// A linear-algebra node of one result of rank `rank`, of its operands' dtype.
fn linalg(b: &mut Builder, op: LinalgOp, inputs: Vec<NodeId>, rank: usize) -> NodeId {
    let dtype = b.ty(inputs[0]).dtype;
    b.add(Op::Linalg(op), inputs, Type::new(dtype, rank))
}

/// `inv(a)ᵀ`.
fn inv_transpose(b: &mut Builder, a: NodeId) -> NodeId {
    let i = linalg(b, LinalgOp::Inv, vec![a], 2);
    transpose(b, i)
}

/// Result `index` (of rank `rank`) of the node `whole` of several: the graph's read of it
/// when it has one, else a new one.
fn part(b: &mut Builder, whole: NodeId, index: usize, rank: usize) -> NodeId {
    let found = b.g.nodes.iter().position(|n| {
        matches!(n.op, Op::Part { index: i } if i == index) && n.inputs.first() == Some(&whole)
    });
    match found {
        Some(i) => NodeId(i),
        None => {
            let dtype = b.ty(whole).dtype;
            b.add(Op::Part { index }, vec![whole], Type::new(dtype, rank))
        }
    }
}

/// The reduced QR factorisation of `a`, `(q, r)`: a new node.
fn reduced_qr(b: &mut Builder, a: NodeId) -> (NodeId, NodeId) {
    let dtype = b.ty(a).dtype;
    let op = LinalgOp::Qr {
        mode: QrMode::Reduced,
    };
    let whole = b.add(Op::Linalg(op), vec![a], Type::new(dtype, 0));
    (part(b, whole, 0, 2), part(b, whole, 1, 2))
}

/// The thin SVD of `a`, `(u, s, vh)`: a new node.
fn thin_svd(b: &mut Builder, a: NodeId) -> (NodeId, NodeId, NodeId) {
    let dtype = b.ty(a).dtype;
    let op = LinalgOp::Svd {
        full_matrices: false,
    };
    let whole = b.add(Op::Linalg(op), vec![a], Type::new(dtype, 0));
    (
        part(b, whole, 0, 2),
        part(b, whole, 1, 1),
        part(b, whole, 2, 2),
    )
}

/// `x[.., ..k]`: x's first k columns (a view).
fn first_columns(b: &mut Builder, x: NodeId, k: NodeId) -> NodeId {
    b.subtensor(x, columns(), vec![k])
}

/// The path of `[.., ..k]`.
fn columns() -> Vec<PathStep> {
    vec![
        PathStep::At(1),
        PathStep::Slice {
            start: false,
            end: true,
        },
        PathStep::At(0),
    ]
}

/// `1 / (D + I) - I` with `D_ij = x_j - x_i`: `1 / (x_j - x_i)` off the diagonal, 0 on it.
fn reciprocal_gaps(b: &mut Builder, x: NodeId) -> NodeId {
    let dtype = b.ty(x).dtype;
    let row = b.new_axis(x, 0);
    let col = b.new_axis(x, 1);
    let d = b.elem(ElemOp::Sub, vec![row, col]);
    let eye = b.add(Op::IdentityLike, vec![d], Type::new(dtype, 2));
    let shifted = b.elem(ElemOp::Add, vec![d, eye]);
    let one = b.float(1.0, dtype);
    let r = b.elem(ElemOp::Div, vec![one, shifted]);
    b.elem(ElemOp::Sub, vec![r, eye])
}

/// `a`'s adjoint through its reduced QR factorisation `a = q r` (`q` `[m, k]`, `r` `[k, n]`,
/// `k = min(m, n)`, `r₁ = r[.., ..k]` invertible) from the adjoints of `q` and `r`. The
/// tangents (`eval/jvp/spectral.rs`) are `X = da₁ r₁⁻¹`, `M = qᵀ X`,
/// `Ω = tril(M, -1) - tril(M, -1)ᵀ`, `dq = q Ω + X - q M`, `dr = qᵀ da - Ω r`; transposed:
/// with `N = qᵀ q̄ - r̄ rᵀ` and `C = tril(N - Nᵀ, -1) - qᵀ q̄`, `X̄ = q̄ + q C` and
/// `ā = q r̄ + [X̄ r₁⁻ᵀ, 0]` (the zeros for the columns past k of a wide matrix).
fn qr_adjoint(
    b: &mut Builder,
    a: NodeId,
    q: NodeId,
    r: NodeId,
    gq: Option<NodeId>,
    gr: Option<NodeId>,
) -> NodeId {
    let qt = transpose(b, q);
    let qtgq = gq.map(|gq| mm(b, qt, gq));
    let rgr = gr.map(|gr| {
        let rt = transpose(b, r);
        mm(b, gr, rt)
    });
    let n = match (qtgq, rgr) {
        (Some(p), Some(m)) => b.elem(ElemOp::Sub, vec![p, m]),
        (Some(p), None) => p,
        (None, Some(m)) => b.elem(ElemOp::Neg, vec![m]),
        (None, None) => return b.zeros_like(a),
    };
    let nt = transpose(b, n);
    let skew = b.elem(ElemOp::Sub, vec![n, nt]);
    let low = tri(b, skew, -1, false);
    let c = match qtgq {
        Some(p) => b.elem(ElemOp::Sub, vec![low, p]),
        None => low,
    };
    let qc = mm(b, q, c);
    let xbar = match gq {
        Some(gq) => b.elem(ElemOp::Add, vec![gq, qc]),
        None => qc,
    };
    // X̄ r₁⁻ᵀ = (r₁⁻¹ X̄ᵀ)ᵀ, r₁ upper triangular.
    let k = b.shape(r, 0);
    let r1 = first_columns(b, r, k);
    let xt = transpose(b, xbar);
    let upper = LinalgOp::SolveTriangular {
        lower: false,
        trans: false,
        unit_diagonal: false,
    };
    let solved = linalg(b, upper, vec![r1, xt], 2);
    let z = transpose(b, solved);
    let zeros = b.zeros_like(a);
    let t = b.ty(a);
    let op = Op::SetSubtensor {
        path: columns(),
        inc: false,
    };
    let padded = b.add(op, vec![zeros, z, k], t);
    match gr {
        Some(gr) => {
            let qgr = mm(b, q, gr);
            b.elem(ElemOp::Add, vec![qgr, padded])
        }
        None => padded,
    }
}

/// `a`'s adjoint through its thin SVD `a = u diag(s) vh` (`V = vhᵀ`) from the adjoints of
/// `u`, `s` and `vh` (Townsend 2016; the transpose of the tangents in
/// `eval/jvp/spectral.rs`): with `F_ij = 1 / (s_j² - s_i²)` off the diagonal, 0 on it,
/// `J = F ∘ (uᵀ ū)`, `K = F ∘ (Vᵀ V̄)`,
/// `ā = u (diag(s̄) + (J + Jᵀ) S + S (K + Kᵀ)) vh + (I - u uᵀ) ū S⁻¹ vh + u S⁻¹ V̄ᵀ (I - V Vᵀ)`.
/// `s` is needed only with `ū` or `V̄`.
fn svd_adjoint(
    b: &mut Builder,
    u: NodeId,
    s: Option<NodeId>,
    vh: NodeId,
    gu: Option<NodeId>,
    gs: Option<NodeId>,
    gvh: Option<NodeId>,
) -> NodeId {
    let dtype = b.ty(u).dtype;
    let mut inner: Option<NodeId> = None;
    let mut outside: Option<NodeId> = None;
    let add = |b: &mut Builder, acc: &mut Option<NodeId>, x: NodeId| {
        *acc = Some(match *acc {
            Some(a) => b.elem(ElemOp::Add, vec![a, x]),
            None => x,
        });
    };
    if let Some(gs) = gs {
        let zero = b.int(0);
        let d = b.add(Op::Diag, vec![gs, zero], Type::new(dtype, 2));
        add(b, &mut inner, d);
    }
    if let (Some(s), true) = (s, gu.is_some() || gvh.is_some()) {
        let s2 = b.mul(s, s);
        let f = reciprocal_gaps(b, s2);
        let column = b.new_axis(s, 1);
        if let Some(gu) = gu {
            let ut = transpose(b, u);
            let utgu = mm(b, ut, gu);
            let j = b.mul(f, utgu);
            let jt = transpose(b, j);
            let sym = b.elem(ElemOp::Add, vec![j, jt]);
            // (J + Jᵀ) S: column j times s_j.
            let term = b.mul(sym, s);
            add(b, &mut inner, term);
            // (ū - u uᵀ ū) S⁻¹ vh
            let back = mm(b, u, utgu);
            let rest = b.elem(ElemOp::Sub, vec![gu, back]);
            let scaled = b.elem(ElemOp::Div, vec![rest, s]);
            let term = mm(b, scaled, vh);
            add(b, &mut outside, term);
        }
        if let Some(gvh) = gvh {
            // V̄ = gvhᵀ: Vᵀ V̄ = vh gvhᵀ.
            let gv = transpose(b, gvh);
            let vtgv = mm(b, vh, gv);
            let k = b.mul(f, vtgv);
            let kt = transpose(b, k);
            let sym = b.elem(ElemOp::Add, vec![k, kt]);
            // S (K + Kᵀ): row i times s_i.
            let term = b.mul(sym, column);
            add(b, &mut inner, term);
            // u S⁻¹ (gvh - gvh V vh)
            let v = transpose(b, vh);
            let gvh_v = mm(b, gvh, v);
            let back = mm(b, gvh_v, vh);
            let rest = b.elem(ElemOp::Sub, vec![gvh, back]);
            let scaled = b.elem(ElemOp::Div, vec![rest, column]);
            let term = mm(b, u, scaled);
            add(b, &mut outside, term);
        }
    }
    let mut result = None;
    if let Some(inner) = inner {
        let ui = mm(b, u, inner);
        let term = mm(b, ui, vh);
        add(b, &mut result, term);
    }
    if let Some(o) = outside {
        add(b, &mut result, o);
    }
    match result {
        Some(r) => r,
        None => {
            // No adjoint reached the factors: zeros of a's shape (u · vh).
            let p = mm(b, u, vh);
            b.zeros_like(p)
        }
    }
}
