#!/usr/bin/env python3
"""Reference values of the special functions (erf erfc erfcx erfinv log1mexp gammaln
digamma) computed with mpmath, and the digamma core polynomial of scan-runtime.

    python3 tools/special_functions.py reference > scan-runtime/src/special/tests/reference.rs
    python3 tools/special_functions.py digamma-core     # DIGAMMA_CORE in special.rs
    python3 tools/special_functions.py dense N > file   # N random points per region, for
                                                        # measuring (x, hi, lo per line)

Each value is computed at the exact binary value of the f64 (or f32) input with 60
significant digits (more where a formula needs them), and written as `hi + lo`: `hi` the
f64 nearest to the exact value, `lo` the f64 nearest to the rest, so a test measures its
error in ulps of the exact value, not of a rounded one.
"""

import random
import struct
import sys

import mpmath as mp

mp.mp.dps = 60


def f32(x):
    """The f32 nearest to x, as a Python float."""
    return struct.unpack("f", struct.pack("f", x))[0]


def erfcx(x):
    x = mp.mpf(x)
    with mp.workdps(80):
        if x < 100:
            return mp.exp(x * x) * mp.erfc(x)
        # mpmath's erfc gives up on huge x: the asymptotic series (A&S 7.1.23), whose
        # terms fall below 1e-70 of the sum within a dozen terms from x = 100 on.
        t = 1 / (2 * x * x)
        term, s, k = mp.mpf(1), mp.mpf(1), 1
        while abs(term) > mp.mpf("1e-75"):
            term *= -(2 * k - 1) * t
            s += term
            k += 1
        return s / (x * mp.sqrt(mp.pi))


def log1mexp(x):
    x = mp.mpf(x)
    with mp.workdps(80):
        if x > -1:
            return mp.log(-mp.expm1(x))
        return mp.log1p(-mp.exp(x))


def gammaln(x):
    return mp.re(mp.loggamma(mp.mpf(x)))


FUNCTIONS = {
    "erf": lambda x: mp.erf(mp.mpf(x)),
    "erfc": lambda x: mp.erfc(mp.mpf(x)),
    "erfcx": erfcx,
    "erfinv": lambda x: mp.erfinv(mp.mpf(x)),
    "log1mexp": log1mexp,
    "gammaln": gammaln,
    "digamma": lambda x: mp.digamma(mp.mpf(x)),
}

# A few dozen points per function, with the hard regions: tails, underflow, zeros, poles.
POINTS = {
    "erf": [1e-300, 1e-10, 1e-5, 0.01, 0.1, 0.25, 0.5, 0.75, 0.84, 1.0, 1.25, 1.5, 2.0,
            2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 5.9, -0.3, -1.7, -3.3, -6.0],
    "erfc": [-5.0, -1.0, -0.1, 1e-300, 1e-10, 0.01, 0.1, 0.3, 0.47, 0.5, 0.84, 1.0, 1.25,
             1.5, 2.0, 2.85, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.5, 15.0, 20.0, 25.0,
             26.0, 26.5],
    "erfcx": [-26.6, -26.0, -20.0, -10.0, -5.0, -1.5, -1.0, -0.3, -1e-5, 1e-300, 1e-10,
              1e-3, 0.1, 0.5, 1.0, 2.0, 3.5, 5.0, 10.0, 15.0, 20.0, 25.0, 25.99, 26.0,
              26.01, 27.0, 30.0, 50.0, 100.0, 1e3, 1e5, 1e10, 1e20, 1e100, 1e200, 1e300,
              1.7e308],
    "erfinv": [1e-300, 1e-10, 1e-5, 1e-3, 0.05, 0.1, 0.25, 0.4, 0.5, 0.5000001, 0.6,
               0.75, 0.9, 0.95, 0.99, 0.999, 0.9999, 0.99999, 0.999999, 1 - 1e-8,
               1 - 1e-10, 1 - 1e-12, 1 - 1e-14, 1 - 2.0**-50, 1 - 2.0**-52, 1 - 2.0**-53,
               -0.3, -0.7, -0.999999999],
    "log1mexp": [-1e-300, -1e-100, -1e-20, -1e-10, -1e-5, -0.001, -0.01, -0.1, -0.3,
                 -0.5, -0.69, -0.6931471805599, -0.6931471805599453, -0.6931471805600,
                 -0.7, -1.0, -1.5, -2.0, -3.0, -5.0, -10.0, -20.0, -36.0, -37.0, -40.0,
                 -100.0, -500.0, -700.0, -708.0],
    "gammaln": [1e-300, 1e-100, 1e-10, 1e-3, 0.1, 0.5, 0.9, 0.99, 0.9999999, 1.0000001,
                1.1, 1.4616321449683622, 1.5, 1.9, 1.9999999, 2.0000001, 2.5, 3.0, 4.5,
                7.0, 10.0, 33.3, 100.0, 1e3, 1e5, 1e10, 1e15, 1e100, 1e300, 2.5e305,
                -1e-10, -0.5, -1.5, -2.5, -3.5, -10.5, -100.5, -1.1],
    "digamma": [1e-300, 1e-100, 1e-10, 1e-3, 0.1, 0.3, 0.4616321449683622, 0.5, 0.9,
                1.0, 1.2, 1.4, 1.46, 1.4616321449683622, 1.4616321449683625, 1.47, 1.5,
                1.75, 2.0, 2.25, 2.5, 3.0, 3.7, 5.0, 6.0, 7.5, 9.99, 10.0, 10.5, 15.0,
                100.0, 1e5, 1e10, 1e15, 1e100, 1e300, -1e-10, -0.25, -0.5, -0.75,
                -0.999999, -1.000001, -1.5, -2.5, -3.25, -10.3, -100.25, -1e10 + 0.5],
}

# f32 inputs (rounded to f32 here), the f32 ranges' own tails.
POINTS32 = {
    "erf": [1e-30, 1e-5, 0.1, 0.5, 0.84, 1.0, 1.5, 2.0, 2.5, 3.0, 3.9, -0.6, -2.2],
    "erfc": [-2.0, -0.2, 1e-5, 0.1, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 7.0, 8.0, 9.0, 9.1],
    "erfcx": [-9.0, -5.0, -1.0, -1e-3, 1e-5, 0.5, 1.0, 3.0, 8.0, 9.5, 10.0, 12.0, 30.0,
              1e3, 1e10, 1e30, 3e38],
    "erfinv": [1e-30, 1e-4, 0.1, 0.5, 0.6, 0.9, 0.99, 0.9999, 0.999999, 0.9999999,
               1 - 2.0**-23, 1 - 2.0**-24, -0.8],
    "log1mexp": [-1e-30, -1e-7, -0.001, -0.1, -0.5, -0.6931472, -0.7, -1.0, -5.0, -17.0,
                 -20.0, -50.0, -87.0],
    "gammaln": [1e-30, 1e-5, 0.5, 0.99, 1.0001, 1.5, 1.999, 2.5, 10.0, 1e3, 1e10, 1e30,
                1e36, -0.5, -2.5, -10.5],
    "digamma": [1e-30, 1e-5, 0.3, 1.0, 1.4616321, 1.4616322, 1.5, 2.0, 3.3, 9.5, 10.0,
                100.0, 1e10, 1e30, -0.25, -1.5, -10.3],
}


def split(v):
    """hi + lo = v to 106 bits."""
    if mp.isinf(v):
        return (float(v), 0.0)
    hi = float(v)
    lo = float(v - mp.mpf(hi)) if mp.isfinite(mp.mpf(hi)) else 0.0
    return hi, lo


def rust_float(v):
    r = repr(float(v))
    if r == "inf":
        return "f64::INFINITY"
    if r == "-inf":
        return "f64::NEG_INFINITY"
    if "e" not in r and "." not in r:
        r += ".0"
    return r


def reference():
    print("//! Reference values of the special functions, computed with mpmath at 60 digits at the")
    print("//! exact binary value of each input (generated by tools/special_functions.py; do not")
    print("//! edit). f64 tables: `(x, hi, lo)` with `hi + lo` the exact value to 106 bits; f32")
    print("//! tables: `(x, exact)` with `x` an f32 written as an f64.")
    print()
    print("#![allow(clippy::approx_constant)] // ln 2 and its neighbours are inputs on purpose.")
    print()
    for name, xs in POINTS.items():
        print(f"pub const {name.upper()}: &[(f64, f64, f64)] = &[")
        for x in xs:
            hi, lo = split(FUNCTIONS[name](x))
            print(f"    ({rust_float(x)}, {rust_float(hi)}, {rust_float(lo)}),")
        print("];")
        print()
    for name, xs in POINTS32.items():
        print(f"pub const {name.upper()}_F32: &[(f64, f64)] = &[")
        for x in xs:
            x = f32(x)
            print(f"    ({rust_float(x)}, {rust_float(FUNCTIONS[name](x))}),")
        print("];")
        print()


def digamma_core():
    """DIGAMMA_CORE: digamma(x) / (x - x0) on [1, 2], x0 the positive zero, in t = 2x - 3;
    DIGAMMA_NEG_CORE: x (x + 1) digamma(x) / (x - r) on [-1, 0], r the first negative zero
    (analytic there: the poles at -1 and 0 are multiplied out), in t = 2x + 1. Chebyshev
    fits (mpmath's chebyfit), monomial coefficients in t, highest degree first."""
    x0 = mp.findroot(mp.digamma, mp.mpf("1.4616"))
    r = mp.findroot(mp.digamma, mp.mpf("-0.504"))

    def g(t):
        x = (t + 3) / 2
        if abs(x - x0) < mp.mpf("1e-40"):
            return mp.psi(1, x0)
        return mp.digamma(x) / (x - x0)

    def h(t):
        x = (t - 1) / 2
        if abs(x - r) < mp.mpf("1e-40"):
            return r * (r + 1) * mp.psi(1, r)
        if x == 0 or x == -1:
            # x (x + 1) digamma(x) tends to -(2x + 1) at both poles.
            return -(2 * x + 1) / (x - r)
        return x * (x + 1) * mp.digamma(x) / (x - r)

    for name, root, f, n in [("DIGAMMA_CORE", x0, g, 24), ("DIGAMMA_NEG_CORE", r, h, 25)]:
        poly, err = mp.chebyfit(f, [-1, 1], n, error=True)
        hi, lo = split(root)
        print(f"// {name}: zero {hi!r} + {lo!r}; fit error {mp.nstr(err, 3)}")
        for c in poly:
            print(f"    {float(c)!r},")


# Regions for dense measurement: (function, lo, hi, log-uniform?).
DENSE = [
    ("erf", -6.0, 6.0, False), ("erf", 1e-300, 1e-3, True),
    ("erfc", -6.0, 27.0, False), ("erfc", 1e-10, 1.0, True),
    ("erfcx", -26.6, 30.0, False), ("erfcx", 25.0, 1e300, True), ("erfcx", -1e-3, -1e-20, True),
    ("erfinv", -1.0, 1.0, False), ("erfinv", 1e-300, 1e-3, True), ("erfinv1m", 1e-16, 1.0, True),
    ("log1mexp", -2.0, 0.0, False), ("log1mexp", -745.0, -2.0, False), ("log1mexp", -1e-300, -1e-3, True),
    ("gammaln", 0.0, 20.0, False), ("gammaln", 1e-300, 1.0, True), ("gammaln", 20.0, 2.5e305, True),
    ("gammaln", -20.0, 0.0, False),
    ("digamma", 0.0, 20.0, False), ("digamma", 1e-300, 1.0, True), ("digamma", 20.0, 1e300, True),
    ("digamma", -20.0, 0.0, False),
]


def dense(n):
    rng = random.Random(7)
    for name, a, b, log in DENSE:
        for _ in range(n):
            if log:
                sign = -1 if a < 0 else 1
                lo, hi = sorted([abs(a), abs(b)])
                x = sign * float(mp.exp(rng.uniform(float(mp.log(lo)), float(mp.log(hi)))))
            else:
                x = rng.uniform(a, b)
            fname = name
            if name == "erfinv1m":
                x, fname = 1.0 - x, "erfinv"
                if x >= 1.0:
                    continue
            if fname in ("log1mexp",) and x >= 0:
                continue
            if fname in ("gammaln", "digamma") and x <= 0 and x == int(x):
                continue
            hi, lo = split(FUNCTIONS[fname](x))
            print(f"{fname} {x!r} {hi!r} {lo!r}")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "reference"
    if mode == "reference":
        reference()
    elif mode == "digamma-core":
        digamma_core()
    elif mode == "dense":
        dense(int(sys.argv[2]))
    else:
        sys.exit(__doc__)
