"""Reference numbers for tests/edge_cases.rs: numpy's (and scipy's, for logsumexp and
softmax) results on the edge cases of the step language: empty axes, NaN propagation,
signed zeros, integer overflow at every integer dtype, division by zero and by -1,
negative indices and steps, clip with lo > hi, pow at 0 and negative exponents.

Run: python3 tools/edge_cases.py   (numpy 2.4.6, scipy 1.17.1 on x86-64 made the numbers
in the tests). The tests carry the output; this script says where they come from. A
signed zero prints as -0.0; "RAISES" is where numpy raises (the step language gives an
`Err` naming the expression, or, where it documents another rule, the test says which).
"""

import warnings

import numpy as np
from scipy.special import log_softmax, logsumexp, softmax

warnings.simplefilter("ignore")  # numpy's integer division-by-zero RuntimeWarning


def fmt(v):
    a = np.asarray(v)
    if a.ndim == 0:
        x = a.item()
        if isinstance(x, float) and x == 0.0 and np.signbit(x):
            return "-0.0"
        return repr(x)
    return "[" + ", ".join(fmt(x) for x in a) + "]" + f" shape {a.shape} {a.dtype}"


def show(name, f):
    try:
        print(f"{name}: {fmt(f())}")
    except Exception as e:  # numpy raises: the test expects an Err
        print(f"{name}: RAISES {type(e).__name__}: {e}")


def empty_axes():
    print("# reductions over empty axes; x has shape (2, 0)")
    x = np.zeros((2, 0))
    for name in ["sum", "prod", "mean", "var", "std", "any", "all"]:
        show(f"{name}(x)", lambda: getattr(np, name)(x))
        show(f"{name}(x, 1)", lambda: getattr(np, name)(x, axis=1))
    show("cumsum(x)", lambda: np.cumsum(x))
    show("cumprod(x, 1)", lambda: np.cumprod(x, axis=1))
    show("logsumexp(v), v = []", lambda: logsumexp(x.ravel()))
    show("logsumexp(x, 1)", lambda: logsumexp(x, axis=1))
    show("max(x, 0)", lambda: np.max(x, axis=0))
    show("argmax(x, 0)", lambda: np.argmax(x, axis=0))
    for name in ["max", "min", "argmax", "argmin"]:
        show(f"{name}(x)", lambda: getattr(np, name)(x))
        show(f"{name}(x, 1)", lambda: getattr(np, name)(x, axis=1))
    show("softmax(x, 1)", lambda: softmax(x, axis=1))
    show("log_softmax(x, 1)", lambda: log_softmax(x, axis=1))
    k = np.zeros(0, dtype=np.int8)
    show("sum(k) of int8", lambda: np.sum(k))
    show("prod(k) of int8", lambda: np.prod(k))
    show("mean(k) of int8", lambda: np.mean(k))


def nans():
    print("# NaN propagation")
    n = np.nan
    x = np.array([1.0, n, 3.0, n, -2.0])
    for name in ["max", "min", "argmax", "argmin", "cumsum", "cumprod"]:
        show(f"{name}(x)", lambda: getattr(np, name)(x))
    m = np.array([[n, 2.0, 5.0], [4.0, -1.0, n]])
    for name in ["max", "min", "argmax", "argmin"]:
        show(f"{name}(m, 1)", lambda: getattr(np, name)(m, axis=1))
        show(f"{name}(m, 0)", lambda: getattr(np, name)(m, axis=0))
    a = np.array([n, 1.0, n, 2.0])
    b = np.array([1.0, n, n, 3.0])
    show("maximum(a, b)", lambda: np.maximum(a, b))
    show("minimum(a, b)", lambda: np.minimum(a, b))
    show("fmax(a, b) (not in the language)", lambda: np.fmax(a, b))
    show("clip(a, 0.0, 1.5)", lambda: np.clip(a, 0.0, 1.5))
    show("clip(0.5, a, 1.5)", lambda: np.clip(0.5, a, 1.5))
    show("clip(0.5, 0.0, a)", lambda: np.clip(0.5, 0.0, a))
    show("relu(a) = maximum(a, 0)", lambda: np.maximum(a, 0.0))
    show("logsumexp(a)", lambda: logsumexp(a))
    show("sign(nan)", lambda: np.sign(n))
    ninf = -np.inf
    show("logsumexp([-inf, -inf])", lambda: logsumexp(np.array([ninf, ninf])))
    show("softmax([-inf, -inf])", lambda: softmax(np.array([ninf, ninf])))
    show("log_softmax([-inf, -inf])", lambda: log_softmax(np.array([ninf, ninf])))
    show("logsumexp([inf, 1])", lambda: logsumexp(np.array([np.inf, 1.0])))
    show("softmax([-inf, 0])", lambda: softmax(np.array([ninf, 0.0])))
    show("log_softmax([-inf, 0])", lambda: log_softmax(np.array([ninf, 0.0])))


def signed_zeros():
    print("# signed zeros")
    z = np.array([-0.0, 0.0])
    show("sign(z)", lambda: np.sign(z))
    show("abs(z)", lambda: np.abs(z))
    show("-z", lambda: -z)
    show("square(z)", lambda: np.square(z))
    show("sqrt(z)", lambda: np.sqrt(z))
    show("reciprocal(z)", lambda: np.reciprocal(z))
    show("maximum(-0.0, 0.0)", lambda: np.maximum(np.array([-0.0]), np.array([0.0])))
    show("maximum(0.0, -0.0)", lambda: np.maximum(np.array([0.0]), np.array([-0.0])))
    show("minimum(0.0, -0.0)", lambda: np.minimum(np.array([0.0]), np.array([-0.0])))
    show("minimum(-0.0, 0.0)", lambda: np.minimum(np.array([-0.0]), np.array([0.0])))
    show("maximum(z, 0) (relu)", lambda: np.maximum(z, 0.0))
    h = np.array([-0.0, -0.5, 0.5, -1.5, 2.5, -2.5])
    for name in ["round", "floor", "ceil", "trunc"]:
        show(f"{name}(h)", lambda: getattr(np, name)(h))
    y = np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0])
    x = np.array([0.0, 0.0, -0.0, -0.0, -np.inf, -np.inf])
    show("arctan2(y, x)", lambda: np.arctan2(y, x))
    show("sin, tanh, expm1, log1p, arctan of -0.0", lambda: [
        f(-0.0) for f in (np.sin, np.tanh, np.expm1, np.log1p, np.arctan)])
    a = np.array([-0.0, 0.0, -3.0, 1.0, -1.0, 0.0])
    b = np.array([3.0, -3.0, 3.0, 0.0, 0.0, 0.0])
    show("a % b", lambda: np.mod(a, b))
    show("floor_div(a, b)", lambda: np.floor_divide(a, b))
    show("sum([-0.0, -0.0]), prod([-0.0, 1.0])", lambda: [
        np.sum(np.array([-0.0, -0.0])), np.prod(np.array([-0.0, 1.0]))])
    show("cumsum([-0.0, -0.0])", lambda: np.cumsum(np.array([-0.0, -0.0])))


def integers():
    print("# integer overflow wraps; division by -1 and by 0")
    for t in [np.int8, np.int16, np.int32, np.int64]:
        lo, hi = np.iinfo(t).min, np.iinfo(t).max
        a = np.array([lo, hi, -1, 0], dtype=t)
        n = t.__name__
        show(f"{n} -a", lambda: -a)
        show(f"{n} abs(a)", lambda: np.abs(a))
        show(f"{n} square(a)", lambda: np.square(a))
        show(f"{n} a + 1", lambda: a + 1)
        show(f"{n} a * 2", lambda: a * 2)
        show(f"{n} a - 1", lambda: a - 1)
        show(f"{n} floor_div(a, -1)", lambda: a // t(-1))
        show(f"{n} a % -1", lambda: a % t(-1))
        show(f"{n} floor_div(a, 0)", lambda: a // t(0))
        show(f"{n} a % 0", lambda: a % t(0))
        two = np.array([hi, hi], dtype=t)
        show(f"{n} sum([hi, hi])", lambda: np.sum(two))
        show(f"{n} cumsum([hi, hi])", lambda: np.cumsum(two))
        show(f"{n} prod([hi, hi])", lambda: np.prod(two))
        show(f"{n} cumprod([hi, hi])", lambda: np.cumprod(two))
        show(f"{n} sign(a)", lambda: np.sign(a))
        show(f"{n} mean([hi, hi])", lambda: np.mean(two))
    for t in [np.uint8, np.uint16, np.uint32, np.uint64]:
        hi = np.iinfo(t).max
        a = np.array([0, 1, hi], dtype=t)
        n = t.__name__
        show(f"{n} -a", lambda: -a)
        show(f"{n} a + 1", lambda: a + 1)
        show(f"{n} a - 1", lambda: a - 1)
        show(f"{n} square(a)", lambda: np.square(a))
        show(f"{n} floor_div(a, 0)", lambda: a // t(0))
        show(f"{n} a % 0", lambda: a % t(0))
        two = np.array([hi, hi], dtype=t)
        show(f"{n} sum([hi, hi])", lambda: np.sum(two))
        show(f"{n} cumsum([hi, hi])", lambda: np.cumsum(two))
        show(f"{n} prod([hi, hi])", lambda: np.prod(two))
    show("int32 [1, 0, -1, 7] / [0, 0, 0, 2]", lambda: np.array([1, 0, -1, 7], dtype=np.int32)
         / np.array([0, 0, 0, 2], dtype=np.int32))
    show("int64 mean([2**62, 2**62])", lambda: np.mean(np.array([2**62, 2**62])))


def indexing():
    print("# negative indices and steps; x = arange(12).reshape(3, 4)")
    x = np.arange(12).reshape(3, 4)
    show("x[-1]", lambda: x[-1])
    show("x[:, -1]", lambda: x[:, -1])
    show("x[-1, -4]", lambda: x[-1, -4])
    show("x[::-1, ::-2]", lambda: x[::-1, ::-2])
    show("x[-2::-1, 3:0:-2]", lambda: x[-2::-1, 3:0:-2])
    show("x[10:-10:-1, -3:-1]", lambda: x[10:-10:-1, -3:-1])
    show("x[5:1]", lambda: x[5:1])
    show("x[-3]", lambda: x[-3])
    show("x[-4]", lambda: x[-4])
    show("x[3]", lambda: x[3])
    show("x[:, -5]", lambda: x[:, -5])
    show("x[:, 4]", lambda: x[:, 4])
    v = np.array([10, 20, 30])
    show("take(v, [-1, -3, 0])", lambda: np.take(v, np.array([-1, -3, 0])))
    show("take(x, [-1, 0], 1)", lambda: np.take(x, np.array([-1, 0]), axis=1))
    show("take(v, [3])", lambda: np.take(v, np.array([3])))
    show("take(v, [-4])", lambda: np.take(v, np.array([-4])))


def clip_and_pow():
    print("# clip with lo > hi; pow")
    show("clip([0, 5, 10], 6, 4)", lambda: np.clip(np.array([0.0, 5.0, 10.0]), 6.0, 4.0))
    show("clip(int [0, 5, 10], 6, 4)", lambda: np.clip(np.array([0, 5, 10]), 6, 4))
    show("pow(0.0, 0.0), pow(nan, 0.0), pow(1.0, nan), pow(-0.0, -1.0), pow(0.0, -1.0), "
         "pow(-8.0, 1/3)", lambda: [np.power(0.0, 0.0), np.power(np.nan, 0.0),
                                    np.power(1.0, np.nan), np.power(-0.0, -1.0),
                                    np.power(0.0, -1.0), np.power(-8.0, 1 / 3)])
    show("int pow(0, 0)", lambda: np.power(np.array([0]), np.array([0])))
    show("int pow(2, -1)", lambda: np.power(np.array([2]), np.array([-1])))
    show("int64 [0, 2, 3] ** 41 (wraps)", lambda: np.power(np.array([0, 2, 3]), 41))
    show("int8 [3, -1, 2] ** 5 (wraps)", lambda: np.power(np.array([3, -1, 2], dtype=np.int8), 5))


if __name__ == "__main__":
    print(f"numpy {np.__version__}")
    empty_axes()
    nans()
    signed_zeros()
    integers()
    indexing()
    clip_and_pow()
