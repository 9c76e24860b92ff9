"""Reference numbers for tests/int_dtypes.rs and the promotion table of
scan-codegen/src/ir/types.rs: numpy 2's rules for the integer dtypes i8 i16 i32 i64 u8 u16
u32 u64 beside bool, f32 and f64 (NEP 50: Python ints are weak), printed as the tests carry
them.

Run: python3 tools/int_dtypes.py   (numpy 2.4.6 made the numbers in the tests). The tests
carry the output; this script is kept to say where they come from.
"""

import warnings

import numpy as np

NAMES = ["bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64"]
NP = {
    "bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f32": np.float32, "f64": np.float64,
}
BACK = {np.dtype(t): n for n, t in NP.items()}


def promotion_table():
    """np.result_type of every pair, as (a, b, result) rows for the test."""
    print("// promotion: np.result_type(a, b)")
    for i, a in enumerate(NAMES):
        for b in NAMES[i:]:
            r = BACK[np.result_type(NP[a], NP[b])]
            print(f"({a!r}, {b!r}, {r!r}),".replace("'", '"'))


def safe_casts():
    """np.can_cast(a, b, 'safe'): numpy calls i64/u64 -> f64 safe; the step language's
    no-downcast rule does not (not every value is exact), everything else agrees."""
    print("// np.can_cast(a, b, 'safe') where it differs from holding every value exactly")
    for a in NAMES:
        for b in NAMES:
            safe = np.can_cast(NP[a], NP[b], "safe")
            exact = exact_cast(a, b)
            if safe != exact:
                print(f"// numpy {a} -> {b}: {safe}, exact: {exact}")


def exact_cast(a, b):
    if a == b or a == "bool":
        return True
    if b == "bool":
        return False
    if a.startswith("f"):
        return a == "f32" and b == "f64"
    bits = int(a[1:])
    if b.startswith("f"):
        return bits <= (16 if b == "f32" else 32)
    to = int(b[1:])
    if a[0] == "i" and b[0] == "u":
        return False
    if a[0] == "u" and b[0] == "i":
        return to > bits
    return to >= bits


def values():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        print("// wrapping at the edges")
        print("u8 255 + 1 =", np.uint8(255) + np.uint8(1))
        print("i8 -128 - 1 =", np.int8(-128) - np.int8(1))
        print("u16 0 - 1 =", np.uint16(0) - np.uint16(1))
        print("-u8 1 =", -np.uint8(1), " abs(u8 200) =", abs(np.uint8(200)))
        print("i8 100 * 3 =", np.int8(100) * np.int8(3))
        print("u32 4294967295 * 2 =", np.uint32(4294967295) * np.uint32(2))
        x = np.array([-7, -128, -1, 5, 0], dtype=np.int8)
        print("i8", x.tolist(), "// 2 =", (x // np.int8(2)).tolist())
        print("i8", x.tolist(), "% 3 =", (x % np.int8(3)).tolist())
        print("i8", x.tolist(), "// 0 =", (x // np.int8(0)).tolist(), "% 0 =", (x % np.int8(0)).tolist())
        u = np.array([7, 200, 0], dtype=np.uint8)
        print("u8", u.tolist(), "// 3 =", (u // np.uint8(3)).tolist(), "% 3 =", (u % np.uint8(3)).tolist())
        print("u8 7 / u8 2 =", repr(np.uint8(7) / np.uint8(2)), (np.uint8(7) / np.uint8(2)).dtype)
        s = np.array([200, 100, 255, 1], dtype=np.uint8)
        print("sum u8", s.tolist(), "=", s.sum(), s.sum().dtype, " prod", s.prod(), s.prod().dtype)
        print("cumsum u8", np.cumsum(s).tolist(), np.cumsum(s).dtype)
        t = np.array([100, 100, -128], dtype=np.int8)
        print("sum i8", t.tolist(), "=", t.sum(), t.sum().dtype)
        print("sum u32 dtype", np.array([1], dtype=np.uint32).sum().dtype,
              " sum i16 dtype", np.array([1], dtype=np.int16).sum().dtype,
              " sum u64 dtype", np.array([1], dtype=np.uint64).sum().dtype)
        print("max u8", s.max(), " argmax", s.argmax())
        print("u8 [3, 250] + weak 10 =", (np.array([3, 250], dtype=np.uint8) + 10).tolist(),
              (np.array([3, 250], dtype=np.uint8) + 10).dtype)
        print("u8 x * 2.5 dtype", (np.array([3], dtype=np.uint8) * 2.5).dtype)
        print("i16 + f32 dtype", (np.int16(3) + np.float32(1.5)).dtype,
              " i32 + f32 dtype", (np.int32(3) + np.float32(1.5)).dtype)
        print("u8 3 + i8 -4 =", np.uint8(3) + np.int8(-4), (np.uint8(3) + np.int8(-4)).dtype)
        print("u32 7 + i32 -9 =", np.uint32(7) + np.int32(-9), (np.uint32(7) + np.int32(-9)).dtype)
        print("u64 7 + i64 -9 =", repr(np.uint64(7) + np.int64(-9)))
        print("u8 200 < i8 -1 =", np.uint8(200) < np.int8(-1))
    for expr in ["np.uint8(3) + 300", "np.uint8(3) + (-1)", "np.int8(3) * 128",
                 "np.array([1], dtype=np.uint16) + 70000"]:
        try:
            eval(expr)
            print(expr, ": no error")
        except OverflowError as e:
            print(expr, ": OverflowError:", e)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = np.array([300.0, -5.0, 255.9, 1e20, np.nan])
        print("// float -> u8 out of range is platform-defined in numpy (here):",
              f.astype(np.uint8).tolist(), "; the step language uses Rust's `as`: 255, 0, 255, 255, 0")


if __name__ == "__main__":
    promotion_table()
    safe_casts()
    values()
