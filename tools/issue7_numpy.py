"""Expected values of tests/batched.rs and tests/gathers.rs, computed by numpy.

Run with a Python that has numpy (`python3 -m venv v && v/bin/pip install numpy`):
`v/bin/python tools/issue7_numpy.py`. The tests carry the printed numbers.
"""
import numpy as np


def show(name, x):
    x = np.asarray(x)
    print(f"{name}: shape {list(x.shape)}")
    print("  " + repr(x.ravel().tolist()))


def batched():
    s = (np.arange(12, dtype=float) - 5).reshape(2, 2, 3)
    t = (np.arange(12, dtype=float) * 0.5 - 2).reshape(2, 3, 2)
    m = np.array([[1.0, -2.0], [0.5, 3.0], [-1.0, 4.0]])
    p = (np.arange(12, dtype=float) % 5 - 2).reshape(4, 3)
    v = np.array([2.0, -1.0, 0.5])
    u = np.array([[[1.0, 0.0], [2.0, -1.0], [0.0, 3.0]]])
    show("matmul(s, t)", np.matmul(s, t))
    show("s.matmul(m)", s @ m)
    show("matmul(p, t)", p @ t)
    show("matmul(v, t)", v @ t)
    show("matmul(s, v)", s @ v)
    show("matmul(s, u)", s @ u)
    show("matmul(s[0..1], t)", s[0:1] @ t)
    show("dot(s, m)", np.dot(s, m))
    show("dot(p, t)", np.dot(p, t))
    show("dot(v, t)", np.dot(v, t))
    show("tensordot(s, m, 1)", np.tensordot(s, m, 1))
    show("tensordot(m, p, ([0], [1]))", np.tensordot(m, p, ([0], [1])))
    show("tensordot(s, v, (2, 0))", np.tensordot(s, v, (2, 0)))
    q = np.array([[1.0, -2.0], [0.5, 3.0]])
    show("tensordot(s, q, ([1], [0]))", np.tensordot(s, q, ([1], [0])))
    ai = (np.arange(12, dtype=np.int64) - 6).reshape(2, 2, 3)
    bi = (np.arange(6, dtype=np.int64) * 3 - 7).reshape(1, 3, 2)
    show("ints matmul(a, b)", ai @ bi)
    # A recurrence of stacks: h_t = h_{t-1} @ w, 3 steps.
    h = np.array([[[1.0, 0.5], [0.0, -1.0]], [[2.0, 1.0], [1.0, 0.0]]])
    w = np.array([[[0.5, -1.0], [1.0, 0.5]], [[0.0, 1.0], [-1.0, 0.5]]])
    hs = []
    for _ in range(3):
        h = h @ w
        hs.append(h)
    show("scan h @ w", np.stack(hs))


def gathers():
    x = np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0], [7.0, 8.0, -9.0], [0.5, -0.5, 2.0]])
    rows = np.array([True, False, True, True])
    show("x[rows]", x[rows])
    show("x[x < 0]", x[x < 0])
    show("x[x > 100]", x[x > 100])
    v = np.array([3.0, -1.0, 4.0, -1.5, 5.0])
    show("v[v > 0]", v[v > 0])
    idx = np.array([[0, -1], [2, 1], [3, 3]])
    show("x[idx]", x[idx])
    jdx = np.array([[0, -1], [2, 1]])
    show("take(x, jdx, 1)", np.take(x, jdx, 1))
    show("take(v, idx)", np.take(v, idx))
    show("v[idx]", v[idx])


batched()
gathers()
