"""Reference numbers for tests/linalg.rs: numpy's and scipy's linear algebra on the
matrices the tests use, printed as Rust array literals (17 significant digits).

Run: python3 tools/linalg_values.py   (numpy 2.4.6, scipy 1.17.1 made the numbers in the
tests). The tests carry the output; this script is kept to say where they come from.
"""

import numpy as np
import scipy.linalg as sl

A = np.array([[4.0, 2.0, 0.4], [2.0, 5.0, 1.0], [0.4, 1.0, 3.0]])  # SPD
G = np.array([[0.5, 2.0, -1.0], [3.0, 1.0, 2.0], [1.0, -2.0, 4.0]])  # general
# Symmetric indefinite, its lower triangle garbage: scipy's solve reads the upper one
# (lower=False by default) for assume_a="sym" and "pos".
S = np.array([[1.0, 2.0, 0.0], [99.0, -1.0, 3.0], [99.0, 99.0, 2.0]])
# Lower triangular, its upper triangle garbage (never read with lower=True).
M = np.array([[2.0, 9.0, 9.0], [1.0, 3.0, 9.0], [-1.0, 0.5, 4.0]])
b = np.array([1.0, 2.0, 3.0])
B = np.array([[1.0, -1.0], [2.0, 0.5], [3.0, 2.0]])


def show(name, x):
    x = np.asarray(x, dtype=np.float64)
    print(f"// {name}")
    print("[" + ", ".join(f"{v:.17g}" for v in x.ravel()) + "]")


L = sl.cholesky(A, lower=True)
U = sl.cholesky(A, lower=False)
show("cholesky(a)", L)
show("cholesky(a, lower = false)", U)
show("cho_solve((l, true), b)", sl.cho_solve((L, True), b))
show("cho_solve((u, false), bm)", sl.cho_solve((U, False), B))
show("solve(g, b)", sl.solve(G, b))
show("solve(g, bm)", sl.solve(G, B))
show("solve(a, bm, assume_a = pos)", sl.solve(A, B, assume_a="pos"))
show("solve(s, b, assume_a = sym)", sl.solve(S, b, assume_a="sym"))
show("solve(s, bm, assume_a = sym, lower = ...)  [upper of S.T, i.e. lower=True on S.T]",
     sl.solve(S.T, B, assume_a="sym", lower=True))
show("solve_triangular(m, b, lower = true)", sl.solve_triangular(M, b, lower=True))
show("solve_triangular(m, bm, trans = T, lower = true)",
     sl.solve_triangular(M, B, trans="T", lower=True))
show("solve_triangular(m, b, lower = true, unit_diagonal = true)",
     sl.solve_triangular(M, b, lower=True, unit_diagonal=True))
show("inv(g)", np.linalg.inv(G))
show("det(g)", np.linalg.det(G))
show("slogdet(g)", np.linalg.slogdet(G))
show("slogdet(a)", np.linalg.slogdet(A))
# f32: numpy in float32 (LAPACK's sgesv, spotrf)
show("f32 solve(g, b)", sl.solve(G.astype(np.float32), b.astype(np.float32)))
show("f32 cholesky(a)", sl.cholesky(A.astype(np.float32), lower=True))
show("f32 det(g)", np.linalg.det(G.astype(np.float32)))

# eigh, qr, svd (the second batch of issue 8).
# Symmetric indefinite, its upper triangle garbage: eigh reads the lower one by default
# (UPLO="L"); with UPLO="U" the matrix S above (lower triangle garbage).
E = np.array([[2.0, 99.0, 99.0], [-1.0, 3.0, 99.0], [0.5, 1.5, -1.0]])
T = np.array([[1.0, 2.0, 0.0], [-1.0, 0.5, 3.0], [2.0, 1.0, 1.0], [0.0, -2.0, 4.0]])  # tall
W = np.array([[1.0, -2.0, 3.0, 0.5], [2.0, 0.0, -1.0, 1.0]])  # wide


def signed(v):
    """Each column's component of largest magnitude (the first within sqrt(eps) of it)
    made positive: the sign convention of scan's eigh (numpy's signs are LAPACK's)."""
    v = v.copy()
    eps = np.sqrt(np.finfo(v.dtype).eps)
    for j in range(v.shape[1]):
        col = v[:, j]
        big = np.abs(col).max()
        first = np.argmax(np.abs(col) >= big - big * eps)
        if col[first] < 0:
            v[:, j] = -col
    return v


for name, m, uplo in [("a", A, "L"), ("e", E, "L"), ("s", S, "U")]:
    w, v = np.linalg.eigh(m, UPLO=uplo)
    show(f"eigh({name}, UPLO={uplo}).w", w)
    show(f"eigh({name}, UPLO={uplo}).v  numpy's own signs", v)
    show(f"eigh({name}, UPLO={uplo}).v  signed", signed(v))
for name, m in [("g", G), ("t", T), ("w", W)]:
    q, r = np.linalg.qr(m)
    show(f"qr({name}).q", q)
    show(f"qr({name}).r", r)
    show(f"svd({name}, compute_uv=False)", np.linalg.svd(m, compute_uv=False))
# f32
w, v = np.linalg.eigh(E.astype(np.float32))
show("f32 eigh(e).w", w)
show("f32 eigh(e).v signed", signed(v))
q, r = np.linalg.qr(T.astype(np.float32))
show("f32 qr(t).q", q)
show("f32 qr(t).r", r)
show("f32 svd(t)", np.linalg.svd(T.astype(np.float32), compute_uv=False))

# svd with its vectors, qr's modes "complete" and "r" (the third batch).


def svd_signed(u, vh):
    """numpy's u with scan's sign rule (`signed`) and vh's rows flipped with it."""
    k = min(u.shape[0], vh.shape[1])
    su = signed(u)
    flip = np.sign(su[:, :k] * u[:, :k]).max(axis=0)  # +1 kept, -1 flipped
    return su, vh * np.concatenate([flip, np.ones(vh.shape[0] - k)])[:, None]


for name, m in [("g", G), ("t", T), ("w", W)]:
    u, s, vh = np.linalg.svd(m, full_matrices=False)
    su, svh = svd_signed(u, vh)
    show(f"svd({name}, full_matrices=False).u  signed", su)
    show(f"svd({name}, full_matrices=False).s", s)
    show(f"svd({name}, full_matrices=False).vh  signed", svh)
u, s, vh = np.linalg.svd(T)  # full_matrices=True: u is 4 x 4, its last column unique up to sign
show("svd(t).u  signed", signed(u))
q, r = np.linalg.qr(T, mode="complete")
show("qr(t, complete).q", q)
show("qr(t, complete).r", r)
show("qr(w, r)", np.linalg.qr(W, mode="r"))
show("qr(t, r)", np.linalg.qr(T, mode="r"))
# f32
u, s, vh = np.linalg.svd(T.astype(np.float32), full_matrices=False)
su, svh = svd_signed(u, vh)
show("f32 svd(t, full_matrices=False).u signed", su)
show("f32 svd(t, full_matrices=False).s", s)
show("f32 svd(t, full_matrices=False).vh signed", svh)
q, r = np.linalg.qr(T.astype(np.float32), mode="complete")
show("f32 qr(t, complete).q", q)
show("f32 qr(t, complete).r", r)
