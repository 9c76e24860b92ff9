"""PyTorch, impl=torch_loop: each case as a Python loop over torch ops, one iteration per
scan step, the step written as SPEC's program writes it (no hoisting by hand: that is
the compilers' job in the other peers; torch_nn is PyTorch's own fused RNN). Under
torch.no_grad(), inputs made into tensors once, outputs written into preallocated tensors.

Every function takes a case's inputs (spec.inputs) and returns a zero-argument call.
"""

import math

import torch

torch.set_grad_enabled(False)


def set_threads(n):
    torch.set_num_threads(n)


def power(a, k):
    a = torch.from_numpy(a)

    def call():
        result = torch.ones_like(a)
        for _ in range(k):
            result.mul_(a)
        return result

    return call


power_small = power
power_large = power


def cumsum_all(up_to):
    def call():
        seq = torch.arange(up_to, dtype=torch.int64)
        out = torch.empty(up_to, dtype=torch.int64)
        acc = torch.zeros((), dtype=torch.int64)
        for t in range(up_to):
            acc = acc + seq[t]
            out[t] = acc
        return out

    return call


def linrec2(u, x0):
    u, x0 = torch.from_numpy(u), torch.from_numpy(x0)

    def call():
        out = torch.empty_like(u)
        x_tm2, x_tm1 = x0[0], x0[1]
        for t in range(u.shape[0]):
            x_t = x_tm1 * 0.6 + x_tm2 * 0.4 + u[t]
            out[t] = x_t
            x_tm2, x_tm1 = x_tm1, x_t
        return out

    return call


def polynomial(c, x):
    c = torch.from_numpy(c)
    # The powers in float64, as SPEC asks (x is SPEC's float32 value).
    x = torch.tensor(float(x), dtype=torch.float64)

    def call():
        components = torch.empty(c.shape[0], dtype=torch.float64)
        for t in range(c.shape[0]):
            components[t] = c[t] * x**t
        return components.sum()

    return call


def elman(x, w_in, w, b):
    x, w_in, w, b = map(torch.from_numpy, (x, w_in, w, b))

    def call():
        out = torch.empty(x.shape[0], x.shape[1], w.shape[0])
        h = torch.zeros(x.shape[1], w.shape[0])
        for t in range(x.shape[0]):
            h = torch.tanh(x[t] @ w_in + h @ w + b, out=out[t])
        return out

    return call


def elman_grad(x, w_in, w, b):
    # Autograd over the Python loop: the gradients of the sum of every h_t.
    x = torch.from_numpy(x)
    params = [torch.from_numpy(a).requires_grad_() for a in (w_in, w, b)]

    def call():
        w_in, w, b = params
        with torch.enable_grad():
            h = torch.zeros(x.shape[1], w.shape[0])
            loss = 0.0
            for t in range(x.shape[0]):
                h = torch.tanh(x[t] @ w_in + h @ w + b)
                loss = loss + h.sum()
            return torch.autograd.grad(loss, params)

    return call


def lstm(x, w_x, w_h, b):
    x, w_x, w_h, b = map(torch.from_numpy, (x, w_x, w_h, b))

    def call():
        out = torch.empty(x.shape[0], x.shape[1], w_h.shape[0])
        h = c = torch.zeros(x.shape[1], w_h.shape[0])
        for t in range(x.shape[0]):
            i, f, g, o = (x[t] @ w_x + h @ w_h + b).chunk(4, dim=1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.mul(torch.sigmoid(o), torch.tanh(c), out=out[t])
        return out

    return call


def lstm_grad(x, w_x, w_h, b):
    # Autograd over the Python loop: the gradients of the sum of every h_t.
    x = torch.from_numpy(x)
    params = [torch.from_numpy(a).requires_grad_() for a in (w_x, w_h, b)]

    def call():
        w_x, w_h, b = params
        with torch.enable_grad():
            h = c = torch.zeros(x.shape[1], w_h.shape[0])
            loss = 0.0
            for t in range(x.shape[0]):
                i, f, g, o = (x[t] @ w_x + h @ w_h + b).chunk(4, dim=1)
                c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
                h = torch.sigmoid(o) * torch.tanh(c)
                loss = loss + h.sum()
            return torch.autograd.grad(loss, params)

    return call


def seed_taps(u, x0, y0, w, w_in_1, w_in_2, w_feedback, w_out):
    u, x0, y0, w, w_in_1, w_in_2, w_feedback, w_out = map(
        torch.from_numpy, (u, x0, y0, w, w_in_1, w_in_2, w_feedback, w_out)
    )

    def call():
        t_len = u.shape[0] - 4
        # x_hist holds x_{-3}, x_{-2}, x_{-1} (x0) and then every x_t.
        x_hist = torch.empty(t_len + 3, x0.shape[1], dtype=x0.dtype)
        x_hist[:3] = x0
        ys = torch.empty(t_len, y0.shape[0], dtype=y0.dtype)
        y_tm1 = y0
        for t in range(t_len):
            u_tm4, u_t = u[t], u[t + 4]
            x_tm3, x_tm1 = x_hist[t], x_hist[t + 2]
            torch.tanh(
                x_tm1 @ w + u_t @ w_in_1 + u_tm4 @ w_in_2 + y_tm1 @ w_feedback,
                out=x_hist[t + 3],
            )
            ys[t] = x_tm3 @ w_out
            y_tm1 = ys[t]
        return x_hist[3:], ys

    return call


def until_newton(a, n_steps, tol):
    a = torch.from_numpy(a)

    def call():
        ys = []
        y_tm1 = a
        for _ in range(n_steps):
            y_t = 0.5 * (y_tm1 + a / y_tm1)
            ys.append(y_t)
            if (y_t - y_tm1).abs().max() < tol:
                break
            y_tm1 = y_t
        return torch.stack(ys)

    return call


def kalman(y, x0, p0, f, h, q, r):
    # scan-bench's program (cases/kalman.rs) step by step: Cholesky of S, K from
    # cholesky_solve, the log-likelihood from a triangular solve and slogdet.
    y, x0, p0, f, h, q, r = map(torch.from_numpy, (y, x0, p0, f, h, q, r))
    m = y.shape[1]
    log_2pi = math.log(2.0 * math.pi)

    def call():
        xs = torch.empty(y.shape[0], x0.shape[0], dtype=x0.dtype)
        total = torch.zeros((), dtype=x0.dtype)
        x, p = x0, p0
        for t in range(y.shape[0]):
            x_pred = f @ x
            p_pred = f @ p @ f.T + q
            pht = p_pred @ h.T
            s = h @ pht + r
            chol = torch.linalg.cholesky(s)
            v = y[t] - h @ x_pred
            # K = P H^T S^-1, from S K^T = H P.
            k = torch.cholesky_solve(pht.T, chol).T
            z = torch.linalg.solve_triangular(chol, v[:, None], upper=False)[:, 0]
            _, logdet = torch.linalg.slogdet(s)
            total += -0.5 * (m * log_2pi + logdet + z @ z)
            x = torch.add(x_pred, k @ v, out=xs[t])
            p = p_pred - k @ pht.T
        return xs, total

    return call


kalman16 = kalman


def versions():
    return dict(torch=torch.__version__)
