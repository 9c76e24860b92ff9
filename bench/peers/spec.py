"""SPEC's cases as data: sizes (full, or --quick as scan-bench shrinks them) and the
deterministic inputs, as numpy arrays shared by every peer.

numpy only; the libraries under test are imported by the peer modules, after peers.py has
set the thread variables.
"""

try:
    import numpy as np
except ImportError:  # run_all.py (outside the virtualenv) uses only CASES and TOLERANCE
    np = None

# SPEC's order; the same names as scan-bench's.
CASES = [
    "power_small",
    "power_large",
    "cumsum_all",
    "linrec2",
    "polynomial",
    "elman",
    "lstm",
    "seed_taps",
    "until_newton",
    "kalman",
    "kalman16",
    "elman_grad",
    "lstm_grad",
]

# SPEC: checksums agree to a relative 1e-4 for f32 cases, 1e-9 for f64 (and i64) ones.
TOLERANCE = {case: 1e-9 for case in CASES}
TOLERANCE.update(polynomial=1e-4, elman=1e-4, lstm=1e-4, elman_grad=1e-4,
                 lstm_grad=1e-4)


def gen(shape, seed, scale):
    """SPEC's gen(shape, seed, scale) in float64 (uint64 products wrap mod 2^64, a
    multiple of 2^32, so the result mod 2^32 is exact)."""
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.uint64)
    h = ((i + np.uint64(seed * 1000003)) * np.uint64(2654435761)) % np.uint64(2**32)
    return ((h.astype(np.float64) / 2.0**32 - 0.5) * scale).reshape(shape)


def gen_f32(shape, seed, scale):
    return gen(shape, seed, scale).astype(np.float32)


def size(full, div, minimum, quick):
    """scan-bench's Bench::size: SPEC's size, or with --quick full // div but >= minimum."""
    return max(full // div, minimum) if quick else full


def inputs(case, quick):
    """The inputs of a case as a dict of numpy arrays and Python ints (the sizes that a
    program needs statically, such as n_steps)."""
    s = lambda full, div, minimum: size(full, div, minimum, quick)  # noqa: E731
    if case in ("power_small", "power_large"):
        n, k = (16, s(200_000, 100, 10)) if case == "power_small" else (s(1_000_000, 100, 10), 64)
        return dict(a=1.0 + gen([n], 1, 1e-4), k=k)
    if case == "cumsum_all":
        return dict(up_to=s(2_000_000, 100, 10))
    if case == "linrec2":
        return dict(u=gen([s(1_000_000, 100, 10)], 2, 1.0), x0=np.array([0.0, 1.0]))
    if case == "polynomial":
        n = s(1_000_000, 100, 10)
        # x is float32 (PyTensor's floatX = float32 style); the powers are carried in f64.
        return dict(c=gen_f32([n], 3, 1.0), x=np.float32(0.999999))
    if case in ("elman", "elman_grad"):
        # elman_grad: the same inputs; the outputs are the gradients of the sum of every
        # h_t with respect to w_in, w and b.
        t, b, i, h = s(256, 32, 4), s(32, 8, 4), s(256, 8, 8), s(512, 8, 8)
        return dict(
            x=gen_f32((t, b, i), 4, 1.0),
            w_in=gen_f32((i, h), 5, 0.1),
            w=gen_f32((h, h), 6, 0.1),
            b=gen_f32([h], 7, 0.1),
        )
    if case in ("lstm", "lstm_grad"):
        # lstm_grad: the same inputs; the outputs are the gradients of the sum of every
        # h_t with respect to w_x, w_h and b.
        t, b, i, h = s(128, 32, 4), s(32, 8, 4), s(256, 8, 8), s(512, 8, 8)
        return dict(
            x=gen_f32((t, b, i), 8, 1.0),
            w_x=gen_f32((i, 4 * h), 9, 0.1),
            w_h=gen_f32((h, 4 * h), 10, 0.1),
            b=gen_f32([4 * h], 11, 0.1),
        )
    if case == "seed_taps":
        t, n_u, n_x, n_y = s(10_000, 100, 10), 64, 128, 32
        return dict(
            u=gen((t + 4, n_u), 12, 1.0),
            x0=gen((3, n_x), 13, 0.1),
            y0=gen([n_y], 14, 0.1),
            w=gen((n_x, n_x), 15, 0.1),
            w_in_1=gen((n_u, n_x), 16, 0.1),
            w_in_2=gen((n_u, n_x), 17, 0.1),
            w_feedback=gen((n_y, n_x), 18, 0.1),
            w_out=gen((n_x, n_y), 19, 0.1),
        )
    if case == "until_newton":
        return dict(a=1.5 + gen([s(4096, 64, 16)], 20, 1.0), n_steps=200, tol=1e-12)
    if case in ("kalman", "kalman16"):
        # State dimension 4 (kalman) or 16 (kalman16), half as many observations.
        n = 4 if case == "kalman" else 16
        t, m = s(10_000, 100, 50), n // 2
        return dict(
            y=gen((t, m), 15, 2.0),
            x0=np.zeros(n),
            p0=np.eye(n),
            f=0.8 * np.eye(n) + gen((n, n), 11, 0.1),
            h=gen((m, n), 12, 1.0),
            q=np.diag(gen([n], 13, 0.1) + 0.1),
            r=np.diag(gen([m], 14, 0.2) + 0.5),
        )
    raise ValueError(f"unknown case {case}")


def checksum(out):
    """SPEC's checksum: the sum of every element of the output(s), as float64. Works on
    numpy arrays, JAX arrays and CPU torch tensors (all convert with np.asarray)."""
    if isinstance(out, (tuple, list)):
        return sum(checksum(o) for o in out)
    return float(np.asarray(out).astype(np.float64).sum())
