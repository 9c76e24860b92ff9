"""JAX: each case as `lax.scan` (until_newton: `lax.while_loop`) inside one `jax.jit`-ed
function; the first (warm-up) call compiles it. float64/int64 through jax_enable_x64 (the
f32 cases pass float32 arrays, which stay float32). Inputs are put on the device once;
every call blocks until its result is ready.

Every function takes a case's inputs (spec.inputs) and returns a zero-argument call.
"""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg  # noqa: E402
from jax import lax  # noqa: E402


def ready(f, *args):
    """A call of the jitted f on device copies of args that waits for the result."""
    args = [jax.device_put(a) for a in args]
    return lambda: jax.block_until_ready(f(*args))


def power(a, k):
    @jax.jit
    def power(a):
        last, _ = lax.scan(lambda prior, _: (prior * a, None), jnp.ones_like(a), None, length=k)
        return last

    return ready(power, a)


power_small = power
power_large = power


def cumsum_all(up_to):
    @jax.jit
    def cumsum_all(s0):
        def step(acc, x):
            s = acc + x
            return s, s

        _, s = lax.scan(step, s0, jnp.arange(up_to, dtype=jnp.int64))
        return s

    # s_{-1} = 0 is an argument, as outputs_info is an input of the scan.
    return ready(cumsum_all, jnp.int64(0))


def linrec2(u, x0):
    @jax.jit
    def linrec2(u, x0):
        def step(carry, u_t):
            x_tm2, x_tm1 = carry
            x_t = x_tm1 * 0.6 + x_tm2 * 0.4 + u_t
            return (x_tm1, x_t), x_t

        _, xs = lax.scan(step, (x0[0], x0[1]), u)
        return xs

    return ready(linrec2, u, x0)


def polynomial(c, x):
    @jax.jit
    def polynomial(c, x):
        # The powers and components in float64, as SPEC asks (x is SPEC's float32 value).
        x = x.astype(jnp.float64)

        def step(_, cp):
            coefficient, power = cp
            return None, coefficient * x**power

        _, components = lax.scan(step, None, (c, jnp.arange(c.shape[0], dtype=jnp.int64)))
        return components.sum()

    return ready(polynomial, c, x)


def elman(x, w_in, w, b):
    @jax.jit
    def elman(x, w_in, w, b):
        def step(h_tm1, x_t):
            h_t = jnp.tanh(x_t @ w_in + h_tm1 @ w + b)
            return h_t, h_t

        h0 = jnp.zeros((x.shape[1], w.shape[0]), x.dtype)
        _, h = lax.scan(step, h0, x)
        return h

    return ready(elman, x, w_in, w, b)


def elman_grad(x, w_in, w, b):
    def loss(w_in, w, b, x):
        def step(h_tm1, x_t):
            h_t = jnp.tanh(x_t @ w_in + h_tm1 @ w + b)
            return h_t, h_t

        h0 = jnp.zeros((x.shape[1], w.shape[0]), x.dtype)
        _, h = lax.scan(step, h0, x)
        return jnp.sum(h)

    grads = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))
    return ready(lambda x, w_in, w, b: grads(w_in, w, b, x), x, w_in, w, b)


def lstm(x, w_x, w_h, b):
    @jax.jit
    def lstm(x, w_x, w_h, b):
        def step(carry, x_t):
            h_tm1, c_tm1 = carry
            z = x_t @ w_x + h_tm1 @ w_h + b
            i, f, g, o = jnp.split(z, 4, axis=1)
            c_t = jax.nn.sigmoid(f) * c_tm1 + jax.nn.sigmoid(i) * jnp.tanh(g)
            h_t = jax.nn.sigmoid(o) * jnp.tanh(c_t)
            return (h_t, c_t), h_t

        zeros = jnp.zeros((x.shape[1], w_h.shape[0]), x.dtype)
        _, h = lax.scan(step, (zeros, zeros), x)
        return h

    return ready(lstm, x, w_x, w_h, b)


def lstm_grad(x, w_x, w_h, b):
    def loss(w_x, w_h, b, x):
        def step(carry, x_t):
            h_tm1, c_tm1 = carry
            z = x_t @ w_x + h_tm1 @ w_h + b
            i, f, g, o = jnp.split(z, 4, axis=1)
            c_t = jax.nn.sigmoid(f) * c_tm1 + jax.nn.sigmoid(i) * jnp.tanh(g)
            h_t = jax.nn.sigmoid(o) * jnp.tanh(c_t)
            return (h_t, c_t), h_t

        zeros = jnp.zeros((x.shape[1], w_h.shape[0]), x.dtype)
        _, h = lax.scan(step, (zeros, zeros), x)
        return jnp.sum(h)

    grads = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))
    return ready(lambda x, w_x, w_h, b: grads(w_x, w_h, b, x), x, w_x, w_h, b)


def seed_taps(u, x0, y0, w, w_in_1, w_in_2, w_feedback, w_out):
    @jax.jit
    def seed_taps(u, x0, y0, w, w_in_1, w_in_2, w_feedback, w_out):
        # Taps become carries: the last three x (oldest first) and y_{t-1}; the
        # sequence taps -4 and 0 become two shifted views of u.
        def step(carry, u_pair):
            x_last3, y_tm1 = carry
            u_tm4, u_t = u_pair
            x_tm3, x_tm1 = x_last3[0], x_last3[2]
            x_t = jnp.tanh(x_tm1 @ w + u_t @ w_in_1 + u_tm4 @ w_in_2 + y_tm1 @ w_feedback)
            y_t = x_tm3 @ w_out
            return (jnp.concatenate([x_last3[1:], x_t[None]]), y_t), (x_t, y_t)

        t = u.shape[0] - 4
        _, (xs, ys) = lax.scan(step, (x0, y0), (u[:t], u[4:]))
        return xs, ys

    return ready(seed_taps, u, x0, y0, w, w_in_1, w_in_2, w_feedback, w_out)


def until_newton(a, n_steps, tol):
    @jax.jit
    def newton(a):
        # Every step is kept: the rows go into a buffer of n_steps rows; the caller
        # slices the steps done.
        def cond(state):
            t, _, _, done = state
            return (t < n_steps) & ~done

        def body(state):
            t, y_tm1, ys, _ = state
            y_t = 0.5 * (y_tm1 + a / y_tm1)
            return t + 1, y_t, ys.at[t].set(y_t), jnp.max(jnp.abs(y_t - y_tm1)) < tol

        ys = jnp.zeros((n_steps, a.shape[0]), a.dtype)
        t, _, ys, _ = lax.while_loop(cond, body, (0, a, ys, False))
        return ys, t

    a = jax.device_put(a)

    def call():
        ys, t = newton(a)
        return jax.block_until_ready(ys[: int(t)])

    return call


def versions():
    import jaxlib
    import numpy as np

    return dict(jax=jax.__version__, jaxlib=jaxlib.__version__, numpy=np.__version__)


def kalman(y, x0, p0, f, h, q, r):
    @jax.jit
    def kalman(y, x0, p0, f, h, q, r):
        # scan-bench's program line by line: Cholesky of S, K from cho_solve, the
        # log-likelihood from a triangular solve and slogdet.
        m = y.shape[1]

        def step(carry, y_t):
            x, p = carry
            x_pred = f @ x
            p_pred = f @ p @ f.T + q
            pht = p_pred @ h.T
            s = h @ pht + r
            l = jnp.linalg.cholesky(s)
            v = y_t - h @ x_pred
            k = jax.scipy.linalg.cho_solve((l, True), pht.T).T
            z = jax.scipy.linalg.solve_triangular(l, v, lower=True)
            _, logdet = jnp.linalg.slogdet(s)
            ll = -0.5 * (m * jnp.log(2.0 * jnp.pi) + logdet + z @ z)
            x_new = x_pred + k @ v
            return (x_new, p_pred - k @ pht.T), (x_new, ll)

        _, (xs, lls) = lax.scan(step, (x0, p0), y)
        return xs, lls.sum()

    return ready(kalman, y, x0, p0, f, h, q, r)


kalman16 = kalman
