"""PyTensor: each case as `pytensor.scan`, written as in PyTensor's scan tutorial, compiled
once with `pytensor.function(..., mode=MODE)` and then called repeatedly. MODE is
"FAST_RUN" (the C backend: cvm linker, C ops and BLAS) for impl=pytensor_c and "NUMBA"
for impl=pytensor_numba.

Every function takes a case's inputs (spec.inputs) and returns a zero-argument call that
computes the case's output(s) from already-prepared inputs.
"""

import numpy as np
import pytensor
import pytensor.tensor as pt
from pytensor.scan.utils import until


def compile_(inputs, outputs, mode):
    return pytensor.function(inputs, outputs, mode=mode)


def power(mode, a, k):
    # The tutorial's "A**k": only the last step is used, so scan's save-memory rewrite
    # keeps just the state.
    A = pt.dvector("A")
    n_steps = pt.iscalar("k")
    result = pytensor.scan(
        fn=lambda prior_result, A: prior_result * A,
        outputs_info=pt.ones_like(A),
        non_sequences=A,
        n_steps=n_steps,
        return_updates=False,
    )
    f = compile_([A, n_steps], result[-1], mode)
    return lambda: f(a, k)


power_small = power
power_large = power


def cumsum_all(mode, up_to):
    # The tutorial's triangular numbers, int64 (an lscalar gives an int64 arange).
    n = pt.lscalar("up_to")
    seq = pt.arange(n)
    s = pytensor.scan(
        fn=lambda x, acc: acc + x,
        sequences=seq,
        outputs_info=pt.as_tensor_variable(np.asarray(0, seq.dtype)),
        return_updates=False,
    )
    f = compile_([n], s, mode)
    return lambda: f(up_to)


def linrec2(mode, u, x0):
    U = pt.dvector("u")
    X0 = pt.dvector("x0")
    x = pytensor.scan(
        fn=lambda u_t, x_tm2, x_tm1: x_tm1 * 0.6 + x_tm2 * 0.4 + u_t,
        sequences=U,
        outputs_info=dict(initial=X0, taps=[-2, -1]),
        return_updates=False,
    )
    f = compile_([U, X0], x, mode)
    return lambda: f(u, x0)


def polynomial(mode, c, x):
    # The tutorial's polynomial with float32 inputs: float32 ** int64 upcasts to float64,
    # so the powers, the components and their sum are float64 (as SPEC asks).
    coefficients = pt.fvector("coefficients")
    free_variable = pt.fscalar("x")
    components = pytensor.scan(
        fn=lambda coefficient, power, free_variable: coefficient * (free_variable**power),
        outputs_info=None,
        sequences=[coefficients, pt.arange(coefficients.shape[0], dtype="int64")],
        non_sequences=free_variable,
        return_updates=False,
    )
    f = compile_([coefficients, free_variable], components.sum(), mode)
    return lambda: f(c, x)


def elman(mode, x, w_in, w, b):
    X = pt.tensor3("x", dtype="float32")
    W_in = pt.matrix("W_in", dtype="float32")
    W = pt.matrix("W", dtype="float32")
    B = pt.vector("b", dtype="float32")
    h0 = pt.zeros((X.shape[1], W.shape[0]), dtype="float32")
    h = pytensor.scan(
        fn=lambda x_t, h_tm1, W_in, W, b: pt.tanh(x_t @ W_in + h_tm1 @ W + b),
        sequences=X,
        outputs_info=h0,
        non_sequences=[W_in, W, B],
        return_updates=False,
    )
    f = compile_([X, W_in, W, B], h, mode)
    return lambda: f(x, w_in, w, b)


def elman_grad(mode, x, w_in, w, b):
    # pytensor.grad through the scan: the gradients of the sum of every h_t.
    X = pt.tensor3("x", dtype="float32")
    W_in = pt.matrix("W_in", dtype="float32")
    W = pt.matrix("W", dtype="float32")
    B = pt.vector("b", dtype="float32")
    h0 = pt.zeros((X.shape[1], W.shape[0]), dtype="float32")
    h = pytensor.scan(
        fn=lambda x_t, h_tm1, W_in, W, b: pt.tanh(x_t @ W_in + h_tm1 @ W + b),
        sequences=X,
        outputs_info=h0,
        non_sequences=[W_in, W, B],
        return_updates=False,
    )
    grads = pytensor.grad(h.sum(), [W_in, W, B])
    f = compile_([X, W_in, W, B], grads, mode)
    return lambda: f(x, w_in, w, b)


def lstm(mode, x, w_x, w_h, b):
    hidden = w_h.shape[0]
    X = pt.tensor3("x", dtype="float32")
    W_x = pt.matrix("W_x", dtype="float32")
    W_h = pt.matrix("W_h", dtype="float32")
    B = pt.vector("b", dtype="float32")
    zeros = pt.zeros((X.shape[1], hidden), dtype="float32")

    def step(x_t, h_tm1, c_tm1, W_x, W_h, b):
        z = x_t @ W_x + h_tm1 @ W_h + b
        i = pt.sigmoid(z[:, :hidden])
        f = pt.sigmoid(z[:, hidden : 2 * hidden])
        g = pt.tanh(z[:, 2 * hidden : 3 * hidden])
        o = pt.sigmoid(z[:, 3 * hidden :])
        c_t = f * c_tm1 + i * g
        return o * pt.tanh(c_t), c_t

    h, _c = pytensor.scan(
        fn=step,
        sequences=X,
        outputs_info=[zeros, zeros],
        non_sequences=[W_x, W_h, B],
        return_updates=False,
    )
    fn = compile_([X, W_x, W_h, B], h, mode)
    return lambda: fn(x, w_x, w_h, b)


def lstm_grad(mode, x, w_x, w_h, b):
    # pytensor.grad through the scan: the gradients of the sum of every h_t.
    hidden = w_h.shape[0]
    X = pt.tensor3("x", dtype="float32")
    W_x = pt.matrix("W_x", dtype="float32")
    W_h = pt.matrix("W_h", dtype="float32")
    B = pt.vector("b", dtype="float32")
    zeros = pt.zeros((X.shape[1], hidden), dtype="float32")

    def step(x_t, h_tm1, c_tm1, W_x, W_h, b):
        z = x_t @ W_x + h_tm1 @ W_h + b
        i = pt.sigmoid(z[:, :hidden])
        f = pt.sigmoid(z[:, hidden : 2 * hidden])
        g = pt.tanh(z[:, 2 * hidden : 3 * hidden])
        o = pt.sigmoid(z[:, 3 * hidden :])
        c_t = f * c_tm1 + i * g
        return o * pt.tanh(c_t), c_t

    h, _c = pytensor.scan(
        fn=step,
        sequences=X,
        outputs_info=[zeros, zeros],
        non_sequences=[W_x, W_h, B],
        return_updates=False,
    )
    grads = pytensor.grad(h.sum(), [W_x, W_h, B])
    fn = compile_([X, W_x, W_h, B], grads, mode)
    return lambda: fn(x, w_x, w_h, b)


def seed_taps(mode, u, x0, y0, w, w_in_1, w_in_2, w_feedback, w_out):
    # The scan tutorial's RNN, word for word.
    U = pt.dmatrix("u")
    X0 = pt.dmatrix("x0")
    Y0 = pt.dvector("y0")
    W, W_in_1, W_in_2, W_feedback, W_out = (
        pt.dmatrix(name) for name in ("W", "W_in_1", "W_in_2", "W_feedback", "W_out")
    )

    def one_step(u_tm4, u_t, x_tm3, x_tm1, y_tm1, W, W_in_1, W_in_2, W_feedback, W_out):
        x_t = pt.tanh(
            pt.dot(x_tm1, W)
            + pt.dot(u_t, W_in_1)
            + pt.dot(u_tm4, W_in_2)
            + pt.dot(y_tm1, W_feedback)
        )
        y_t = pt.dot(x_tm3, W_out)
        return [x_t, y_t]

    x_vals, y_vals = pytensor.scan(
        fn=one_step,
        sequences=dict(input=U, taps=[-4, 0]),
        outputs_info=[dict(initial=X0, taps=[-3, -1]), Y0],
        non_sequences=[W, W_in_1, W_in_2, W_feedback, W_out],
        strict=True,
        return_updates=False,
    )
    f = compile_([U, X0, Y0, W, W_in_1, W_in_2, W_feedback, W_out], [x_vals, y_vals], mode)
    return lambda: f(u, x0, y0, w, w_in_1, w_in_2, w_feedback, w_out)


def until_newton(mode, a, n_steps, tol):
    A = pt.dvector("a")

    def step(y_tm1, a):
        y_t = 0.5 * (y_tm1 + a / y_tm1)
        return y_t, until(pt.max(pt.abs(y_t - y_tm1)) < tol)

    ys = pytensor.scan(
        fn=step, outputs_info=A, non_sequences=A, n_steps=n_steps, return_updates=False
    )
    f = compile_([A], ys, mode)
    return lambda: f(a)


def versions():
    import numba

    return dict(pytensor=pytensor.__version__, numba=numba.__version__, numpy=np.__version__,
                blas=pytensor.config.blas__ldflags or "none")


def kalman(mode, y, x0, p0, f, h, q, r):
    # scan-bench's program line by line (cases/kalman.rs): Cholesky of S, K from
    # cho_solve, the log-likelihood from a triangular solve and slogdet. Both modes run
    # every op used here: FAST_RUN through the ops' Python `perform` (scipy/numpy; none of
    # them has C code), NUMBA through its own kernels.
    Y = pt.dmatrix("y")
    X0 = pt.dvector("x0")
    P0, F, H, Q, R = (pt.dmatrix(name) for name in ("p0", "F", "H", "Q", "R"))
    m = Y.shape[1]

    def step(y_t, x, p, F, H, Q, R):
        x_pred = F @ x
        p_pred = F @ p @ F.T + Q
        pht = p_pred @ H.T
        s = H @ pht + R
        chol = pt.linalg.cholesky(s)  # lower
        v = y_t - H @ x_pred
        # K = P H^T S^-1, from S K^T = H P.
        k = pt.linalg.cho_solve((chol, True), pht.T).T
        z = pt.linalg.solve_triangular(chol, v, lower=True)
        _, logdet = pt.linalg.slogdet(s)
        ll = -0.5 * (m * np.log(2.0 * np.pi) + logdet + z @ z)
        return x_pred + k @ v, p_pred - k @ pht.T, ll

    xs, _ps, lls = pytensor.scan(
        fn=step,
        sequences=Y,
        outputs_info=[X0, P0, None],
        non_sequences=[F, H, Q, R],
        strict=True,
        return_updates=False,
    )
    fn = compile_([Y, X0, P0, F, H, Q, R], [xs, lls.sum()], mode)
    return lambda: fn(y, x0, p0, f, h, q, r)


kalman16 = kalman
