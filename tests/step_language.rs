//! The step language family by family (docs/SEMANTICS.md, "The step language"): operators,
//! comparisons and logic, `where_`, the elementwise functions, `pow`/`powi`, `maximum`/
//! `minimum`, `dot`, reductions, `zeros_like`/`ones_like`/`arange`, indexing and slicing,
//! `set_subtensor`/`inc_subtensor`, casts, integer wrapping, broadcasting and dtype
//! promotion, in function bodies and inside scan steps. Each test checks real values from
//! an independent oracle (plain Rust on the same inputs, or numbers computed by hand, with
//! numpy's rules) and runs the same program through the reference evaluator.

mod common;

use common::{assert_floats, assert_floats32, second_opinion, Value};
use scan_runtime::ndarray::Dimension;
use scan_runtime::prelude::*;

// ---------------------------------------------------------------------------------------
// Oracle helpers: numpy's rules written out in plain Rust.
// ---------------------------------------------------------------------------------------

/// numpy's `%` on integers: the result takes the divisor's sign; `x % 0 == 0`.
fn np_mod_i64(a: i64, b: i64) -> i64 {
    if b == 0 {
        return 0;
    }
    let r = a.wrapping_rem(b);
    if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    }
}

/// numpy's `%` on floats (`np.remainder`): fmod, moved into the divisor's sign; a zero
/// result takes the divisor's sign; `x % 0.0` is NaN.
fn np_mod_f64(a: f64, b: f64) -> f64 {
    let r = a % b;
    if r != 0.0 && ((r < 0.0) != (b < 0.0)) {
        r + b
    } else if r == 0.0 {
        0.0f64.copysign(b)
    } else {
        r
    }
}

/// numpy's `maximum`: NaN on either side propagates.
fn np_maximum(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// numpy's `minimum`: NaN on either side propagates.
fn np_minimum(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

/// numpy's clamped slice `x[start:end]` of an axis of length `len`, as a range.
fn np_slice(len: usize, start: Option<i64>, end: Option<i64>) -> std::ops::Range<usize> {
    let len = len as i64;
    let resolve = |b: i64| -> i64 {
        let b = if b < 0 { b + len } else { b };
        b.clamp(0, len)
    };
    let s = start.map_or(0, resolve);
    let e = end.map_or(len, resolve);
    (s as usize)..(e.max(s) as usize)
}

fn f64s<D: Dimension>(a: &Array<f64, D>) -> Vec<f64> {
    a.iter().copied().collect()
}

/// A deterministic pseudo-random matrix in [-0.5, 0.5), so no random-number crate is
/// needed.
fn matrix(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    Array2::from_shape_fn((rows, cols), |_| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as f64 / (1u64 << 31) as f64) - 0.5
    })
}

/// `a · b` by the textbook triple loop.
fn naive_matmul(a: &Array2<f64>, b: &Array2<f64>) -> Array2<f64> {
    let (n, k) = a.dim();
    let (k2, m) = b.dim();
    assert_eq!(k, k2);
    let mut out = Array2::<f64>::zeros((n, m));
    for i in 0..n {
        for j in 0..m {
            let mut acc = 0.0;
            for l in 0..k {
                acc += a[[i, l]] * b[[l, j]];
            }
            out[[i, j]] = acc;
        }
    }
    out
}

/// Each element of `got` within `rtol` of the naive product, relative to the element's
/// scale `sum_l |a_il b_lj|` (which bounds the rounding error of any summation order).
fn assert_matmul_close(got: &Array2<f64>, a: &Array2<f64>, b: &Array2<f64>, rtol: f64) {
    let expected = naive_matmul(a, b);
    let scale = naive_matmul(&a.mapv(f64::abs), &b.mapv(f64::abs));
    assert_eq!(got.dim(), expected.dim());
    for ((idx, g), e) in got.indexed_iter().zip(expected.iter()) {
        let tol = rtol * scale[idx].max(e.abs());
        assert!(
            (g - e).abs() <= tol,
            "element {idx:?}: {g} vs naive {e} (tolerance {tol})"
        );
    }
}

// ---------------------------------------------------------------------------------------
// + - * / and unary minus
// ---------------------------------------------------------------------------------------

mod arith {
    scan_tests::program! {
        pub fn float_ops(
            a: ArrayView1<f64>,
            b: ArrayView1<f64>,
        ) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((a + b, a - b, a * b, a / b))
        }

        /// `/` of integers is true division: f64.
        pub fn int_ops(
            a: ArrayView1<i64>,
            b: ArrayView1<i64>,
        ) -> Result<(Array1<i64>, Array1<i64>, Array1<i64>, Array1<f64>)> {
            Ok((a + b, a - b, a * b, a / b))
        }

        pub fn i32_division(a: ArrayView1<i32>, b: ArrayView1<i32>) -> Result<Array1<f64>> {
            Ok(a / b)
        }

        pub fn scalar_int_division(a: i64, b: i64) -> Result<f64> {
            Ok(a / b)
        }

        pub fn f32_ops(x: ArrayView1<f32>, y: ArrayView1<f32>) -> Result<(Array1<f32>, Array1<f32>)> {
            Ok((x * y - x, x / y))
        }

        pub fn precedence(a: f64, b: f64, c: f64) -> Result<(f64, f64, f64)> {
            Ok((a + b * c, (a + b) * c, a - b / c - a))
        }

        pub fn literal_arithmetic() -> Result<(f64, f64, i64)> {
            Ok((7 / 2, -7 / 2, 7 - 2 * 3))
        }

        pub fn negate(
            a: ArrayView1<f64>,
            k: ArrayView1<i32>,
            x: f64,
        ) -> Result<(Array1<f64>, Array1<i32>, f64, Array1<f64>)> {
            Ok((-a, -k, -x, -a.abs() - -x))
        }
    }
}

#[test]
fn add_sub_mul_div_on_floats_and_ints() {
    let a = array![1.5, -2.0, 3.25, 0.0, 1e300];
    let b = array![0.5, 4.0, -1.25, 2.0, 1e-10];
    let (s, d, p, q) = arith::float_ops(a.view(), b.view()).unwrap();
    let zip =
        |f: fn(f64, f64) -> f64| -> Vec<f64> { a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect() };
    assert_eq!(s.to_vec(), zip(|x, y| x + y));
    assert_eq!(d.to_vec(), zip(|x, y| x - y));
    assert_eq!(p.to_vec(), zip(|x, y| x * y));
    assert_eq!(q.to_vec(), zip(|x, y| x / y));
    assert_eq!(q[0], 3.0);
    assert_eq!(q[4], f64::INFINITY); // 1e300 / 1e-10 overflows
    second_opinion(
        arith::SOURCE,
        "float_ops",
        vec![Value::from(a), Value::from(b)],
        vec![
            Value::from(s),
            Value::from(d),
            Value::from(p),
            Value::from(q),
        ],
    );

    let a = array![7i64, -7, 12, 0, 5, 9];
    let b = array![2i64, 3, -5, 4, 1, -3];
    let (s, d, p, q) = arith::int_ops(a.view(), b.view()).unwrap();
    assert_eq!(s.to_vec(), vec![9, -4, 7, 4, 6, 6]);
    assert_eq!(d.to_vec(), vec![5, -10, 17, -4, 4, 12]);
    assert_eq!(p.to_vec(), vec![14, -21, -60, 0, 5, -27]);
    assert_floats(&q.to_vec(), &[3.5, -7.0 / 3.0, -2.4, 0.0, 5.0, -3.0], 1e-15);
    second_opinion(
        arith::SOURCE,
        "int_ops",
        vec![Value::from(a), Value::from(b)],
        vec![
            Value::from(s),
            Value::from(d),
            Value::from(p),
            Value::from(q),
        ],
    );

    let a = array![1i32, -1, 0, 7, i32::MAX];
    let b = array![0i32, 0, 0, 2, 2];
    let q = arith::i32_division(a.view(), b.view()).unwrap();
    // numpy: true division of ints, 1/0 = inf, -1/0 = -inf, 0/0 = nan.
    assert_floats(
        &q.to_vec(),
        &[
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            3.5,
            i32::MAX as f64 / 2.0,
        ],
        0.0,
    );
    second_opinion(
        arith::SOURCE,
        "i32_division",
        vec![Value::from(a), Value::from(b)],
        vec![Value::from(q)],
    );

    for (x, y, expected) in [(9i64, 4i64, 2.25), (-1, 8, -0.125), (3, 0, f64::INFINITY)] {
        let got = arith::scalar_int_division(x, y).unwrap();
        assert_eq!(got, expected);
        second_opinion(
            arith::SOURCE,
            "scalar_int_division",
            vec![Value::from(x), Value::from(y)],
            vec![Value::from(got)],
        );
    }

    let x = array![1.5f32, -2.0, 0.1];
    let y = array![2.0f32, 0.5, 3.0];
    let (e, f) = arith::f32_ops(x.view(), y.view()).unwrap();
    let expected_e: Vec<f32> = x.iter().zip(&y).map(|(&p, &q)| p * q - p).collect();
    let expected_f: Vec<f32> = x.iter().zip(&y).map(|(&p, &q)| p / q).collect();
    assert_floats32(&e.to_vec(), &expected_e, 1e-6);
    assert_floats32(&f.to_vec(), &expected_f, 1e-6);
    second_opinion(
        arith::SOURCE,
        "f32_ops",
        vec![Value::from(x), Value::from(y)],
        vec![Value::from(e), Value::from(f)],
    );

    let got = arith::precedence(2.0, 3.0, 4.0).unwrap();
    assert_eq!(got, (14.0, 20.0, -0.75));
    second_opinion(
        arith::SOURCE,
        "precedence",
        vec![
            Value::from(2.0f64),
            Value::from(3.0f64),
            Value::from(4.0f64),
        ],
        vec![Value::from(got.0), Value::from(got.1), Value::from(got.2)],
    );

    let got = arith::literal_arithmetic().unwrap();
    assert_eq!(got, (3.5, -3.5, 1));
    second_opinion(
        arith::SOURCE,
        "literal_arithmetic",
        vec![],
        vec![Value::from(got.0), Value::from(got.1), Value::from(got.2)],
    );
}

#[test]
fn unary_minus() {
    let a = array![1.5, -2.0, 0.0, f64::INFINITY];
    let k = array![1i32, -2, 0, i32::MAX, i32::MIN];
    let (na, nk, nx, mixed) = arith::negate(a.view(), k.view(), 0.25).unwrap();
    assert_eq!(na.to_vec(), vec![-1.5, 2.0, -0.0, f64::NEG_INFINITY]);
    assert!(na[2].is_sign_negative(), "-0.0 keeps its sign");
    // -i32::MIN wraps to i32::MIN (numpy), no panic.
    assert_eq!(nk.to_vec(), vec![-1, 2, 0, -i32::MAX, i32::MIN]);
    assert_eq!(nx, -0.25);
    // -|a| - -x == x - |a|
    let expected: Vec<f64> = a.iter().map(|v| 0.25 - v.abs()).collect();
    assert_eq!(mixed.to_vec(), expected);
    second_opinion(
        arith::SOURCE,
        "negate",
        vec![Value::from(a), Value::from(k), Value::from(0.25f64)],
        vec![
            Value::from(na),
            Value::from(nk),
            Value::from(nx),
            Value::from(mixed),
        ],
    );
}

// ---------------------------------------------------------------------------------------
// % (numpy: the divisor's sign)
// ---------------------------------------------------------------------------------------

mod rem {
    scan_tests::program! {
        pub fn rem_i64(a: ArrayView1<i64>, b: ArrayView1<i64>) -> Result<Array1<i64>> {
            Ok(a % b)
        }

        pub fn rem_i32_by_literal(a: ArrayView1<i32>) -> Result<(Array1<i32>, Array1<i32>)> {
            Ok((a % 3, a % -3))
        }

        pub fn rem_f64(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Result<Array1<f64>> {
            Ok(a % b)
        }

        pub fn rem_f32(a: ArrayView1<f32>, d: f32) -> Result<Array1<f32>> {
            Ok(a % d)
        }

        pub fn rem_literals() -> Result<(i64, i64, f64, f64)> {
            Ok((-7 % 3, 7 % -3, 7.5 % -2.0, -7.5 % 2.0))
        }
    }
}

#[test]
fn remainder_takes_the_divisors_sign() {
    let got = rem::rem_literals().unwrap();
    assert_eq!(got, (2, -2, -0.5, 0.5));
    second_opinion(
        rem::SOURCE,
        "rem_literals",
        vec![],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
        ],
    );

    let a = array![7i64, -7, 7, -7, 6, 5, i64::MIN, -1];
    let b = array![3i64, 3, -3, -3, 3, 0, -1, 10];
    let got = rem::rem_i64(a.view(), b.view()).unwrap();
    assert_eq!(got.to_vec(), vec![1, 2, -2, -1, 0, 0, 0, 9]);
    let expected: Vec<i64> = a.iter().zip(&b).map(|(&x, &y)| np_mod_i64(x, y)).collect();
    assert_eq!(got.to_vec(), expected);
    second_opinion(
        rem::SOURCE,
        "rem_i64",
        vec![Value::from(a), Value::from(b)],
        vec![Value::from(got)],
    );

    let a = array![7i32, -7, 0, -1, 9, i32::MIN];
    let (pos, neg) = rem::rem_i32_by_literal(a.view()).unwrap();
    assert_eq!(pos.to_vec(), vec![1, 2, 0, 2, 0, 1]);
    assert_eq!(neg.to_vec(), vec![-2, -1, 0, -1, 0, -2]);
    for (i, &x) in a.iter().enumerate() {
        assert_eq!(i64::from(pos[i]), np_mod_i64(i64::from(x), 3));
        assert_eq!(i64::from(neg[i]), np_mod_i64(i64::from(x), -3));
    }
    second_opinion(
        rem::SOURCE,
        "rem_i32_by_literal",
        vec![Value::from(a)],
        vec![Value::from(pos), Value::from(neg)],
    );

    let a = array![7.5, -7.5, 7.5, -7.5, 4.0, 1.0, 5.25];
    let b = array![2.0, 2.0, -2.0, -2.0, -2.0, 0.0, 1.0];
    let got = rem::rem_f64(a.view(), b.view()).unwrap();
    assert_floats(
        &got.to_vec(),
        &[1.5, 0.5, -0.5, -1.5, -0.0, f64::NAN, 0.25],
        0.0,
    );
    assert!(got[4].is_sign_negative(), "4.0 % -2.0 is -0.0 in numpy");
    let expected: Vec<f64> = a.iter().zip(&b).map(|(&x, &y)| np_mod_f64(x, y)).collect();
    assert_floats(&got.to_vec(), &expected, 0.0);
    second_opinion(
        rem::SOURCE,
        "rem_f64",
        vec![Value::from(a), Value::from(b)],
        vec![Value::from(got)],
    );

    let a = array![7.5f32, -7.5, 1.0, -0.5];
    let got = rem::rem_f32(a.view(), -2.0).unwrap();
    assert_floats32(&got.to_vec(), &[-0.5, -1.5, -1.0, -0.5], 0.0);
    second_opinion(
        rem::SOURCE,
        "rem_f32",
        vec![Value::from(a), Value::from(-2.0f32)],
        vec![Value::from(got)],
    );
}

// ---------------------------------------------------------------------------------------
// Comparisons and && || ! (and numpy's & | ^ on bools)
// ---------------------------------------------------------------------------------------

mod logic {
    scan_tests::program! {
        #[allow(clippy::type_complexity)]
        pub fn compare(
            a: ArrayView1<f64>,
            b: ArrayView1<f64>,
        ) -> Result<(Array1<bool>, Array1<bool>, Array1<bool>, Array1<bool>, Array1<bool>, Array1<bool>)> {
            Ok((a < b, a <= b, a > b, a >= b, a == b, a != b))
        }

        pub fn combine(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Result<Array1<bool>> {
            Ok(a < b && a > 0.0 || !(b >= 0.0))
        }

        #[allow(clippy::type_complexity)]
        pub fn bools(
            p: ArrayView1<bool>,
            q: ArrayView1<bool>,
        ) -> Result<(Array1<bool>, Array1<bool>, Array1<bool>, Array1<bool>, Array1<bool>)> {
            Ok((p && q, p || q, !p, p == q, p != q))
        }

        /// numpy's spellings: `&`, `|`, `^` on bool arrays, the `logical_*` functions, a
        /// scalar broadcast, and a mask made by comparisons.
        #[allow(clippy::type_complexity)]
        pub fn numpy_logic(
            p: ArrayView1<bool>,
            q: ArrayView1<bool>,
            x: ArrayView1<f64>,
            r: bool,
        ) -> Result<(Array1<bool>, Array1<bool>, Array1<bool>, Array1<bool>, Array1<bool>, Array1<bool>, Array1<bool>)> {
            Ok((
                p & q,
                p | q,
                p ^ q,
                logical_xor(p, r),
                logical_and(p, logical_not(q)),
                logical_or(p, q) ^ logical_and(p, q),
                (x > 0.0) & (x < 2.0) | (x == -1.0),
            ))
        }

        /// An int compared with a float (both go to f64) and a scalar condition.
        pub fn mixed(k: ArrayView1<i32>, x: f64) -> Result<(Array1<bool>, bool)> {
            Ok((k > 1.5, x >= 2 && !(x == 3.0) || false))
        }
    }
}

#[test]
fn comparisons_and_logic_produce_bools() {
    let nan = f64::NAN;
    let a = array![1.0, 2.0, -1.0, nan, 3.0, nan];
    let b = array![2.0, 2.0, -3.0, 1.0, nan, nan];
    let (lt, le, gt, ge, eq, ne) = logic::compare(a.view(), b.view()).unwrap();
    let cmp = |f: fn(f64, f64) -> bool| -> Vec<bool> {
        a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect()
    };
    assert_eq!(lt.to_vec(), cmp(|x, y| x < y));
    assert_eq!(le.to_vec(), cmp(|x, y| x <= y));
    assert_eq!(gt.to_vec(), cmp(|x, y| x > y));
    assert_eq!(ge.to_vec(), cmp(|x, y| x >= y));
    assert_eq!(eq.to_vec(), cmp(|x, y| x == y));
    assert_eq!(ne.to_vec(), cmp(|x, y| x != y));
    // By hand: NaN compares false except with !=.
    assert_eq!(lt.to_vec(), vec![true, false, false, false, false, false]);
    assert_eq!(ne.to_vec(), vec![true, false, true, true, true, true]);
    second_opinion(
        logic::SOURCE,
        "compare",
        vec![Value::from(a.clone()), Value::from(b.clone())],
        vec![
            Value::from(lt),
            Value::from(le),
            Value::from(gt),
            Value::from(ge),
            Value::from(eq),
            Value::from(ne),
        ],
    );

    let got = logic::combine(a.view(), b.view()).unwrap();
    // !(y >= 0) is true for NaN.
    let expected = cmp(|x, y| (x < y && x > 0.0) || y < 0.0 || y.is_nan());
    assert_eq!(got.to_vec(), expected);
    assert_eq!(got.to_vec(), vec![true, false, true, false, true, true]);
    second_opinion(
        logic::SOURCE,
        "combine",
        vec![Value::from(a), Value::from(b)],
        vec![Value::from(got)],
    );

    let p = array![true, true, false, false];
    let q = array![true, false, true, false];
    let (and, or, not, eq, ne) = logic::bools(p.view(), q.view()).unwrap();
    assert_eq!(and.to_vec(), vec![true, false, false, false]);
    assert_eq!(or.to_vec(), vec![true, true, true, false]);
    assert_eq!(not.to_vec(), vec![false, false, true, true]);
    assert_eq!(eq.to_vec(), vec![true, false, false, true]);
    assert_eq!(ne.to_vec(), vec![false, true, true, false]);
    second_opinion(
        logic::SOURCE,
        "bools",
        vec![Value::from(p.clone()), Value::from(q.clone())],
        vec![
            Value::from(and),
            Value::from(or),
            Value::from(not),
            Value::from(eq),
            Value::from(ne),
        ],
    );

    // numpy: np.array([1,1,0,0], bool) ^ np.array([1,0,1,0], bool) is [F, T, T, F], ...
    let x = array![0.5, 2.0, -1.0, 1.0];
    for r in [true, false] {
        let got = logic::numpy_logic(p.view(), q.view(), x.view(), r).unwrap();
        assert_eq!(got.0.to_vec(), vec![true, false, false, false]);
        assert_eq!(got.1.to_vec(), vec![true, true, true, false]);
        assert_eq!(got.2.to_vec(), vec![false, true, true, false]);
        let flipped: Vec<bool> = p.iter().map(|&b| b ^ r).collect();
        assert_eq!(got.3.to_vec(), flipped);
        assert_eq!(got.4.to_vec(), vec![false, true, false, false]);
        assert_eq!(got.5.to_vec(), vec![false, true, true, false]);
        // `&` binds tighter than `|`, as in numpy and Rust.
        assert_eq!(got.6.to_vec(), vec![true, false, true, true]);
        let out = vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
            Value::from(got.5),
            Value::from(got.6),
        ];
        let args = vec![
            Value::from(p.clone()),
            Value::from(q.clone()),
            Value::from(x.clone()),
            Value::from(r),
        ];
        second_opinion(logic::SOURCE, "numpy_logic", args, out);
    }

    let k = array![0i32, 1, 2, -5, 100];
    for x in [2.0, 3.0, 1.5, 7.0] {
        let (big, cond) = logic::mixed(k.view(), x).unwrap();
        assert_eq!(big.to_vec(), vec![false, false, true, false, true]);
        assert_eq!(cond, x >= 2.0 && x != 3.0);
        second_opinion(
            logic::SOURCE,
            "mixed",
            vec![Value::from(k.clone()), Value::from(x)],
            vec![Value::from(big), Value::from(cond)],
        );
    }
}

// ---------------------------------------------------------------------------------------
// where_ / switch / select
// ---------------------------------------------------------------------------------------

mod choice {
    scan_tests::program! {
        pub fn choose(
            a: ArrayView1<f64>,
            b: ArrayView1<f64>,
        ) -> Result<(Array1<f64>, Array1<f64>, Array1<i64>)> {
            Ok((where_(a > b, a, b), switch(a < 0.0, 0.0, a), select(a >= b, 1, -1)))
        }

        pub fn scalar_condition(flag: bool, a: ArrayView1<f64>, b: ArrayView1<f64>) -> Result<Array1<f64>> {
            Ok(where_(flag, a, b))
        }

        /// An i32 branch against a float literal gives f64; against an int expression, i32.
        pub fn mixed_branches(c: ArrayView1<bool>, k: ArrayView1<i32>) -> Result<(Array1<f64>, Array1<i32>)> {
            Ok((where_(c, k, 0.5), where_(c, k, -k * 2)))
        }

        pub fn relu(x: f64) -> Result<f64> {
            Ok(where_(x > 0.0, x, 0.0))
        }
    }
}

#[test]
fn where_switch_and_select() {
    let a = array![1.0, -2.0, 3.0, -0.5, 4.0];
    let b = array![0.0, 5.0, 3.0, -1.0, 10.0];
    let (w, s, sel) = choice::choose(a.view(), b.view()).unwrap();
    let expected_w: Vec<f64> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| if x > y { x } else { y })
        .collect();
    assert_eq!(w.to_vec(), expected_w);
    assert_eq!(w.to_vec(), vec![1.0, 5.0, 3.0, -0.5, 10.0]);
    assert_eq!(s.to_vec(), vec![1.0, 0.0, 3.0, 0.0, 4.0]);
    assert_eq!(sel.to_vec(), vec![1, -1, 1, 1, -1]);
    second_opinion(
        choice::SOURCE,
        "choose",
        vec![Value::from(a.clone()), Value::from(b.clone())],
        vec![Value::from(w), Value::from(s), Value::from(sel)],
    );

    for flag in [true, false] {
        let got = choice::scalar_condition(flag, a.view(), b.view()).unwrap();
        assert_eq!(got, if flag { a.clone() } else { b.clone() });
        second_opinion(
            choice::SOURCE,
            "scalar_condition",
            vec![
                Value::from(flag),
                Value::from(a.clone()),
                Value::from(b.clone()),
            ],
            vec![Value::from(got)],
        );
    }

    let c = array![true, false, true, false];
    let k = array![3i32, 4, -5, i32::MIN];
    let (f, i) = choice::mixed_branches(c.view(), k.view()).unwrap();
    assert_eq!(f.to_vec(), vec![3.0, 0.5, -5.0, 0.5]);
    // -i32::MIN * 2 wraps: i32::MIN * 2 == 0.
    assert_eq!(i.to_vec(), vec![3, -8, -5, 0]);
    second_opinion(
        choice::SOURCE,
        "mixed_branches",
        vec![Value::from(c), Value::from(k)],
        vec![Value::from(f), Value::from(i)],
    );

    for (x, expected) in [(2.5, 2.5), (-1.0, 0.0), (f64::NAN, 0.0)] {
        let got = choice::relu(x).unwrap();
        assert_eq!(got, expected);
        second_opinion(
            choice::SOURCE,
            "relu",
            vec![Value::from(x)],
            vec![Value::from(got)],
        );
    }
}

// ---------------------------------------------------------------------------------------
// abs exp log tanh sigmoid sqrt
// ---------------------------------------------------------------------------------------

mod math {
    scan_tests::program! {
        #[allow(clippy::type_complexity)]
        pub fn unary_f64(
            x: ArrayView1<f64>,
        ) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((abs(x), exp(x), log(x), tanh(x), sigmoid(x), sqrt(x)))
        }

        #[allow(clippy::type_complexity)]
        pub fn unary_f32(
            x: ArrayView1<f32>,
        ) -> Result<(Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>)> {
            Ok((x.abs(), x.exp(), x.log(), x.tanh(), x.sigmoid(), x.sqrt()))
        }

        pub fn chained_methods(x: ArrayView1<f64>) -> Result<Array1<f64>> {
            Ok(x.abs().sqrt().exp().log().tanh().sigmoid())
        }

        /// abs keeps an int an int; the float functions of an int compute in f64.
        pub fn on_ints(k: ArrayView1<i64>) -> Result<(Array1<i64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((abs(k), sqrt(k), exp(k), sigmoid(k)))
        }

        pub fn scalars(x: f64) -> Result<(f64, f64)> {
            Ok((log(x), x.exp().sqrt()))
        }
    }
}

fn sigmoid64(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[test]
fn elementwise_functions() {
    let x = array![-2.0, -0.5, 0.0, 0.5, 3.0, 40.0, -800.0, 1e-300];
    let (ab, ex, lg, th, sg, sq) = math::unary_f64(x.view()).unwrap();
    let map = |f: fn(f64) -> f64| -> Vec<f64> { x.iter().map(|&v| f(v)).collect() };
    assert_floats(&ab.to_vec(), &map(f64::abs), 0.0);
    assert_floats(&ex.to_vec(), &map(f64::exp), 1e-14);
    assert_floats(&lg.to_vec(), &map(f64::ln), 1e-14);
    assert_floats(&th.to_vec(), &map(f64::tanh), 1e-14);
    assert_floats(&sg.to_vec(), &map(sigmoid64), 1e-14);
    assert_floats(&sq.to_vec(), &map(f64::sqrt), 1e-15);
    // By hand: log(0) = -inf, log(<0) = NaN, sqrt(<0) = NaN, sigmoid(0) = 1/2.
    assert_eq!(lg[2], f64::NEG_INFINITY);
    assert!(lg[0].is_nan() && sq[1].is_nan());
    assert_eq!(sg[2], 0.5);
    assert_eq!(sg[6], 0.0);
    assert!((sg[5] - 1.0).abs() < 1e-15);
    second_opinion(
        math::SOURCE,
        "unary_f64",
        vec![Value::from(x.clone())],
        vec![
            Value::from(ab),
            Value::from(ex),
            Value::from(lg),
            Value::from(th),
            Value::from(sg),
            Value::from(sq),
        ],
    );

    let x32 = array![-2.0f32, -0.5, 0.0, 0.5, 3.0, 20.0];
    let (ab, ex, lg, th, sg, sq) = math::unary_f32(x32.view()).unwrap();
    let map32 = |f: fn(f32) -> f32| -> Vec<f32> { x32.iter().map(|&v| f(v)).collect() };
    assert_floats32(&ab.to_vec(), &map32(f32::abs), 0.0);
    assert_floats32(&ex.to_vec(), &map32(f32::exp), 1e-6);
    assert_floats32(&lg.to_vec(), &map32(f32::ln), 1e-6);
    assert_floats32(&th.to_vec(), &map32(f32::tanh), 1e-6);
    assert_floats32(&sg.to_vec(), &map32(|v| 1.0 / (1.0 + (-v).exp())), 1e-6);
    assert_floats32(&sq.to_vec(), &map32(f32::sqrt), 1e-6);
    second_opinion(
        math::SOURCE,
        "unary_f32",
        vec![Value::from(x32)],
        vec![
            Value::from(ab),
            Value::from(ex),
            Value::from(lg),
            Value::from(th),
            Value::from(sg),
            Value::from(sq),
        ],
    );

    let got = math::chained_methods(x.view()).unwrap();
    let expected = map(|v| sigmoid64(v.abs().sqrt().exp().ln().tanh()));
    assert_floats(&got.to_vec(), &expected, 1e-14);
    second_opinion(
        math::SOURCE,
        "chained_methods",
        vec![Value::from(x)],
        vec![Value::from(got)],
    );

    let k = array![-4i64, 0, 9, 2, i64::MIN];
    let (ab, sq, ex, sg) = math::on_ints(k.view()).unwrap();
    // abs(i64::MIN) wraps to itself (numpy).
    assert_eq!(ab.to_vec(), vec![4, 0, 9, 2, i64::MIN]);
    let kf: Vec<f64> = k.iter().map(|&v| v as f64).collect();
    let mapk = |f: fn(f64) -> f64| -> Vec<f64> { kf.iter().map(|&v| f(v)).collect() };
    assert_floats(&sq.to_vec(), &mapk(f64::sqrt), 1e-15);
    assert_eq!(sq[2], 3.0);
    assert_floats(&ex.to_vec(), &mapk(f64::exp), 1e-14);
    assert_floats(&sg.to_vec(), &mapk(sigmoid64), 1e-14);
    second_opinion(
        math::SOURCE,
        "on_ints",
        vec![Value::from(k)],
        vec![
            Value::from(ab),
            Value::from(sq),
            Value::from(ex),
            Value::from(sg),
        ],
    );

    for x in [1.0, std::f64::consts::E, 10.0, 0.0, -1.0] {
        let got = math::scalars(x).unwrap();
        assert_floats(&[got.0, got.1], &[x.ln(), x.exp().sqrt()], 1e-15);
        second_opinion(
            math::SOURCE,
            "scalars",
            vec![Value::from(x)],
            vec![Value::from(got.0), Value::from(got.1)],
        );
    }
}

// ---------------------------------------------------------------------------------------
// pow and powi
// ---------------------------------------------------------------------------------------

mod powers {
    scan_tests::program! {
        pub fn float_pow(
            x: ArrayView1<f64>,
            y: ArrayView1<f64>,
        ) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((pow(x, y), x.pow(0.5), powi(x, 3), x.powi(-2)))
        }

        pub fn f32_pow(x: ArrayView1<f32>) -> Result<(Array1<f32>, Array1<f32>)> {
            Ok((pow(x, 1.5), powi(x, 2)))
        }

        /// `pow` of ints computes in f64; `powi` of an int stays an int.
        pub fn int_pow(
            k: ArrayView1<i64>,
            e: ArrayView1<i64>,
        ) -> Result<(Array1<f64>, Array1<i64>, Array1<i64>)> {
            Ok((pow(k, e), powi(k, 3), k.powi(0)))
        }

        pub fn i32_powi_wraps(k: ArrayView1<i32>) -> Result<Array1<i32>> {
            Ok(powi(k, 2))
        }
    }
}

#[test]
fn pow_and_powi() {
    let x = array![2.0, 9.0, 0.5, 1.5, 4.0];
    let y = array![10.0, 0.5, -1.0, 2.0, 0.0];
    let (p, root, cube, inv_sq) = powers::float_pow(x.view(), y.view()).unwrap();
    let expected: Vec<f64> = x.iter().zip(&y).map(|(&a, &b)| a.powf(b)).collect();
    assert_floats(&p.to_vec(), &expected, 1e-15);
    assert_floats(&p.to_vec(), &[1024.0, 3.0, 2.0, 2.25, 1.0], 1e-15);
    assert_floats(
        &root.to_vec(),
        &[2.0f64.sqrt(), 3.0, 0.5f64.sqrt(), 1.5f64.sqrt(), 2.0],
        1e-15,
    );
    assert_floats(&cube.to_vec(), &[8.0, 729.0, 0.125, 3.375, 64.0], 1e-15);
    assert_floats(
        &inv_sq.to_vec(),
        &[0.25, 1.0 / 81.0, 4.0, 1.0 / 2.25, 0.0625],
        1e-15,
    );
    second_opinion(
        powers::SOURCE,
        "float_pow",
        vec![Value::from(x), Value::from(y)],
        vec![
            Value::from(p),
            Value::from(root),
            Value::from(cube),
            Value::from(inv_sq),
        ],
    );

    let x = array![4.0f32, 0.25, 2.0];
    let (p, sq) = powers::f32_pow(x.view()).unwrap();
    assert_floats32(&p.to_vec(), &[8.0, 0.125, 2.0f32.powf(1.5)], 1e-6);
    assert_floats32(&sq.to_vec(), &[16.0, 0.0625, 4.0], 0.0);
    second_opinion(
        powers::SOURCE,
        "f32_pow",
        vec![Value::from(x)],
        vec![Value::from(p), Value::from(sq)],
    );

    let k = array![2i64, 5, -3, 7];
    let e = array![10i64, 0, 3, 2];
    let (p, cube, one) = powers::int_pow(k.view(), e.view()).unwrap();
    assert_eq!(p.to_vec(), vec![1024.0, 1.0, -27.0, 49.0]);
    assert_eq!(cube.to_vec(), vec![8, 125, -27, 343]);
    assert_eq!(one.to_vec(), vec![1, 1, 1, 1]);
    second_opinion(
        powers::SOURCE,
        "int_pow",
        vec![Value::from(k), Value::from(e)],
        vec![Value::from(p), Value::from(cube), Value::from(one)],
    );

    let k = array![65536i32, 46341, -3, i32::MIN];
    let got = powers::i32_powi_wraps(k.view()).unwrap();
    let expected: Vec<i32> = k.iter().map(|v| v.wrapping_pow(2)).collect();
    assert_eq!(got.to_vec(), expected);
    assert_eq!(got.to_vec(), vec![0, -2147479015, 9, 0]);
    second_opinion(
        powers::SOURCE,
        "i32_powi_wraps",
        vec![Value::from(k)],
        vec![Value::from(got)],
    );
}

// ---------------------------------------------------------------------------------------
// maximum / minimum (NaN propagates)
// ---------------------------------------------------------------------------------------

mod extrema {
    scan_tests::program! {
        pub fn floats(
            a: ArrayView1<f64>,
            b: ArrayView1<f64>,
        ) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((maximum(a, b), minimum(a, b), a.maximum(0.0), a.minimum(b).maximum(-1.0)))
        }

        pub fn ints(k: ArrayView1<i32>, m: i32) -> Result<(Array1<i32>, Array1<i32>)> {
            Ok((maximum(k, m), minimum(k, 2)))
        }

        pub fn scalars(x: f64, y: f64) -> Result<(f64, f64)> {
            Ok((maximum(x, y), minimum(x, y)))
        }
    }
}

#[test]
fn maximum_and_minimum_propagate_nan() {
    let nan = f64::NAN;
    let a = array![1.0, nan, -3.0, 5.0, 2.0];
    let b = array![2.0, 0.0, nan, -5.0, 2.0];
    let (mx, mn, relu, clipped) = extrema::floats(a.view(), b.view()).unwrap();
    let zip =
        |f: fn(f64, f64) -> f64| -> Vec<f64> { a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect() };
    assert_floats(&mx.to_vec(), &zip(np_maximum), 0.0);
    assert_floats(&mn.to_vec(), &zip(np_minimum), 0.0);
    assert_floats(&mx.to_vec(), &[2.0, nan, nan, 5.0, 2.0], 0.0);
    assert_floats(&mn.to_vec(), &[1.0, nan, nan, -5.0, 2.0], 0.0);
    assert_floats(&relu.to_vec(), &[1.0, nan, 0.0, 5.0, 2.0], 0.0);
    assert_floats(&clipped.to_vec(), &[1.0, nan, nan, -1.0, 2.0], 0.0);
    second_opinion(
        extrema::SOURCE,
        "floats",
        vec![Value::from(a), Value::from(b)],
        vec![
            Value::from(mx),
            Value::from(mn),
            Value::from(relu),
            Value::from(clipped),
        ],
    );

    let k = array![-4i32, 0, 3, 10];
    let (mx, mn) = extrema::ints(k.view(), 1).unwrap();
    assert_eq!(mx.to_vec(), vec![1, 1, 3, 10]);
    assert_eq!(mn.to_vec(), vec![-4, 0, 2, 2]);
    second_opinion(
        extrema::SOURCE,
        "ints",
        vec![Value::from(k), Value::from(1i32)],
        vec![Value::from(mx), Value::from(mn)],
    );

    for (x, y) in [(1.0, 2.0), (nan, 1.0), (1.0, nan), (-0.5, -7.0)] {
        let (mx, mn) = extrema::scalars(x, y).unwrap();
        assert_floats(&[mx, mn], &[np_maximum(x, y), np_minimum(x, y)], 0.0);
        second_opinion(
            extrema::SOURCE,
            "scalars",
            vec![Value::from(x), Value::from(y)],
            vec![Value::from(mx), Value::from(mn)],
        );
    }
}

// ---------------------------------------------------------------------------------------
// dot
// ---------------------------------------------------------------------------------------

mod linalg {
    scan_tests::program! {
        pub fn vv(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Result<f64> {
            Ok(dot(a, b))
        }

        pub fn vm(v: ArrayView1<f64>, m: ArrayView2<f64>) -> Result<Array1<f64>> {
            Ok(v.dot(m))
        }

        pub fn mv(m: ArrayView2<f64>, v: ArrayView1<f64>) -> Result<Array1<f64>> {
            Ok(dot(m, v))
        }

        pub fn mm(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<Array2<f64>> {
            Ok(a.dot(b))
        }

        /// aᵀ · b
        pub fn at_b(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<Array2<f64>> {
            Ok(a.t().dot(b))
        }

        /// a · bᵀ
        pub fn a_bt(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<Array2<f64>> {
            Ok(dot(a, transpose(b)))
        }

        /// v · mᵀ and mᵀ · w
        pub fn transposed_vectors(
            v: ArrayView1<f64>,
            m: ArrayView2<f64>,
            w: ArrayView1<f64>,
        ) -> Result<(Array1<f64>, Array1<f64>)> {
            Ok((v.dot(m.t()), m.t().dot(w)))
        }

        pub fn int_mm(a: ArrayView2<i64>, b: ArrayView2<i64>) -> Result<Array2<i64>> {
            Ok(a.dot(b))
        }

        pub fn f32_mm(a: ArrayView2<f32>, b: ArrayView2<f32>) -> Result<Array2<f32>> {
            Ok(a.dot(b))
        }

        /// An i32 vector with an f32 matrix: f64, as numpy promotes.
        pub fn mixed_vm(v: ArrayView1<i32>, m: ArrayView2<f32>) -> Result<Array1<f64>> {
            Ok(v.dot(m))
        }

        /// v · (a · b) · v
        pub fn quadratic_form(a: ArrayView2<f64>, b: ArrayView2<f64>, v: ArrayView1<f64>) -> Result<f64> {
            Ok(v.dot(a.dot(b)).dot(v))
        }
    }
}

#[test]
fn dot_in_its_four_forms() {
    let a = array![1.0, 2.0, 3.0];
    let b = array![4.0, -5.0, 0.5];
    let got = linalg::vv(a.view(), b.view()).unwrap();
    assert_eq!(got, 4.0 - 10.0 + 1.5);
    second_opinion(
        linalg::SOURCE,
        "vv",
        vec![Value::from(a.clone()), Value::from(b.clone())],
        vec![Value::from(got)],
    );

    // m is 3x2.
    let m = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
    let got = linalg::vm(a.view(), m.view()).unwrap();
    assert_eq!(got.to_vec(), vec![1.0 + 6.0 + 15.0, 2.0 + 8.0 + 18.0]);
    second_opinion(
        linalg::SOURCE,
        "vm",
        vec![Value::from(a.clone()), Value::from(m.clone())],
        vec![Value::from(got)],
    );

    let v2 = array![1.0, -1.0];
    let got = linalg::mv(m.view(), v2.view()).unwrap();
    assert_eq!(got.to_vec(), vec![-1.0, -1.0, -1.0]);
    second_opinion(
        linalg::SOURCE,
        "mv",
        vec![Value::from(m.clone()), Value::from(v2.clone())],
        vec![Value::from(got)],
    );

    let n = array![[1.0, 0.0, -1.0], [2.0, 1.0, 0.5]]; // 2x3
    let got = linalg::mm(m.view(), n.view()).unwrap();
    assert_eq!(
        got,
        array![[5.0, 2.0, 0.0], [11.0, 4.0, -1.0], [17.0, 6.0, -2.0]]
    );
    second_opinion(
        linalg::SOURCE,
        "mm",
        vec![Value::from(m.clone()), Value::from(n.clone())],
        vec![Value::from(got)],
    );

    // Transposed operands: mᵀ (2x3) · m (3x2) and n (2x3) · nᵀ (3x2).
    let got = linalg::at_b(m.view(), m.view()).unwrap();
    assert_eq!(got, array![[35.0, 44.0], [44.0, 56.0]]);
    second_opinion(
        linalg::SOURCE,
        "at_b",
        vec![Value::from(m.clone()), Value::from(m.clone())],
        vec![Value::from(got)],
    );
    let got = linalg::a_bt(n.view(), n.view()).unwrap();
    assert_eq!(got, array![[2.0, 1.5], [1.5, 5.25]]);
    second_opinion(
        linalg::SOURCE,
        "a_bt",
        vec![Value::from(n.clone()), Value::from(n.clone())],
        vec![Value::from(got)],
    );
    // v (2) · mᵀ (2x3) and mᵀ (2x3) · w (3).
    let (vmt, mtw) = linalg::transposed_vectors(v2.view(), m.view(), a.view()).unwrap();
    assert_eq!(vmt.to_vec(), vec![-1.0, -1.0, -1.0]);
    assert_eq!(mtw.to_vec(), vec![22.0, 28.0]);
    second_opinion(
        linalg::SOURCE,
        "transposed_vectors",
        vec![
            Value::from(v2),
            Value::from(m.clone()),
            Value::from(a.clone()),
        ],
        vec![Value::from(vmt), Value::from(mtw)],
    );

    let ai = array![[1i64, 2], [3, 4]];
    let bi = array![[5i64, -6], [7, 8]];
    let got = linalg::int_mm(ai.view(), bi.view()).unwrap();
    assert_eq!(got, array![[19, 10], [43, 14]]);
    second_opinion(
        linalg::SOURCE,
        "int_mm",
        vec![Value::from(ai), Value::from(bi)],
        vec![Value::from(got)],
    );

    let af = array![[0.5f32, 1.5], [-2.0, 0.25]];
    let bf = array![[2.0f32, 0.0], [4.0, -1.0]];
    let got = linalg::f32_mm(af.view(), bf.view()).unwrap();
    assert_eq!(got, array![[7.0f32, -1.5], [-3.0, -0.25]]);
    second_opinion(
        linalg::SOURCE,
        "f32_mm",
        vec![Value::from(af), Value::from(bf.clone())],
        vec![Value::from(got)],
    );

    let vi = array![3i32, -1];
    let got = linalg::mixed_vm(vi.view(), bf.view()).unwrap();
    assert_eq!(got.to_vec(), vec![2.0, 1.0]);
    second_opinion(
        linalg::SOURCE,
        "mixed_vm",
        vec![Value::from(vi), Value::from(bf)],
        vec![Value::from(got)],
    );

    // v (3) · (m (3x2) · n (2x3)) · v (3)
    let got = linalg::quadratic_form(m.view(), n.view(), a.view()).unwrap();
    let p = naive_matmul(&m, &n);
    let mut expected = 0.0;
    for i in 0..3 {
        for j in 0..3 {
            expected += a[i] * p[[i, j]] * a[j];
        }
    }
    assert_eq!(got, expected);
    second_opinion(
        linalg::SOURCE,
        "quadratic_form",
        vec![Value::from(m), Value::from(n), Value::from(a)],
        vec![Value::from(got)],
    );
}

#[test]
fn a_larger_matmul_matches_a_naive_triple_loop() {
    let a = matrix(64, 48, 11);
    let b = matrix(48, 40, 12);
    let got = linalg::mm(a.view(), b.view()).unwrap();
    assert_eq!(got.dim(), (64, 40));
    assert_matmul_close(&got, &a, &b, 1e-9);
    second_opinion(
        linalg::SOURCE,
        "mm",
        vec![Value::from(a.clone()), Value::from(b.clone())],
        vec![Value::from(got)],
    );

    // The same product with a transposed operand on either side.
    let a_t = a.t().to_owned(); // 48x64
    let got = linalg::at_b(a_t.view(), b.view()).unwrap();
    assert_eq!(got.dim(), (64, 40));
    assert_matmul_close(&got, &a, &b, 1e-9);
    second_opinion(
        linalg::SOURCE,
        "at_b",
        vec![Value::from(a_t), Value::from(b.clone())],
        vec![Value::from(got)],
    );
    let b_t = b.t().to_owned(); // 40x48
    let got = linalg::a_bt(a.view(), b_t.view()).unwrap();
    assert_eq!(got.dim(), (64, 40));
    assert_matmul_close(&got, &a, &b, 1e-9);
    second_opinion(
        linalg::SOURCE,
        "a_bt",
        vec![Value::from(a.clone()), Value::from(b_t)],
        vec![Value::from(got)],
    );

    // A non-contiguous input view (every other column of a wider matrix).
    let wide = matrix(64, 96, 13);
    let strided = wide.slice(s![.., ..;2]);
    let got = linalg::mm(strided, b.view()).unwrap();
    assert_matmul_close(&got, &strided.to_owned(), &b, 1e-9);
    second_opinion(
        linalg::SOURCE,
        "mm",
        vec![Value::from(strided.to_owned()), Value::from(b)],
        vec![Value::from(got)],
    );
}

// ---------------------------------------------------------------------------------------
// sum max min mean
// ---------------------------------------------------------------------------------------

mod reductions {
    scan_tests::program! {
        pub fn all(m: ArrayView2<f64>) -> Result<(f64, f64, f64, f64)> {
            Ok((sum(m), max(m), min(m), mean(m)))
        }

        pub fn axis0(m: ArrayView2<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((sum(m, 0), max(m, 0), min(m, 0), mean(m, 0)))
        }

        pub fn axis1(m: ArrayView2<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((m.sum(1), m.max(1), m.min(1), m.mean(1)))
        }

        pub fn last_axis(m: ArrayView2<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((sum(m, -1), max(m, -1), min(m, -1), mean(m, -1)))
        }

        /// Integer sums stay integers, means are f64, a sum of bools counts.
        pub fn ints(m: ArrayView2<i64>) -> Result<(i64, Array1<i64>, f64, Array1<f64>, i64)> {
            Ok((sum(m), max(m, 1), mean(m), mean(m, 0), sum(m > 2)))
        }

        pub fn cube(t: ArrayView3<f64>) -> Result<(Array2<f64>, Array2<f64>, Array2<f64>)> {
            Ok((sum(t, 1), max(t, -1), mean(t, 0)))
        }

        pub fn vector(v: ArrayView1<f64>) -> Result<(f64, f64, f64, f64)> {
            Ok((v.sum(), v.max(), v.min(0), v.mean(-1)))
        }

        pub fn as_array0(m: ArrayView2<f64>) -> Result<Array0<f64>> {
            Ok(m.sum())
        }
    }
}

mod extremes_of_maps {
    scan_tests::program! {
        /// `max`/`min` of a map nothing else reads: one pass, no array of the map.
        pub fn of_maps(a: ArrayView2<f64>, b: ArrayView2<f64>, c: f64) -> Result<(f64, f64, f64, f64)> {
            Ok((max(abs(a - b)), min(a * c + b), max(-a), min(a * b - c * a)))
        }

        /// The same in a step (a Newton-like convergence test over rows).
        pub fn in_a_step(x: ArrayView2<f64>, y: ArrayView2<f64>) -> Result<Array1<f64>> {
            let m = scan(|x_t, y_t| max(abs(x_t - y_t)), sequences = [x, y]);
            Ok(m)
        }
    }
}

#[test]
fn max_and_min_of_a_map_in_one_pass() {
    use extremes_of_maps::{in_a_step, of_maps};
    let a = Array2::from_shape_fn((5, 11), |(i, j)| ((i * 11 + j) as f64 * 0.77).sin());
    let b = Array2::from_shape_fn((5, 11), |(i, j)| ((i * 3 + j) as f64 * 0.41).cos());
    let row = Array2::from_shape_fn((1, 11), |(_, j)| j as f64 * 0.3 - 1.0);
    let c = 1.5;
    let by_hand = |a: &ArrayView2<f64>, b: &ArrayView2<f64>| {
        let (mut d, mut s, mut n, mut p) = (f64::MIN, f64::MAX, f64::MIN, f64::MAX);
        for ((i, j), &x) in a.indexed_iter() {
            let y = b[[i.min(b.nrows() - 1), j]];
            d = d.max((x - y).abs());
            s = s.min(x * c + y);
            n = n.max(-x);
            p = p.min(x * y - c * x);
        }
        (d, s, n, p)
    };
    let strided_a = a.slice(s![.., ..;2]);
    let strided_b = b.slice(s![.., ..;2]);
    for (x, y) in [
        (a.view(), b.view()),   // contiguous: one pass in lanes
        (a.view(), row.view()), // a broadcast row
        (strided_a, strided_b), // strided
    ] {
        let got = of_maps(x, y, c).unwrap();
        assert_eq!(got, by_hand(&x, &y), "{x:?}");
        second_opinion(
            extremes_of_maps::SOURCE,
            "of_maps",
            vec![
                Value::from(x.to_owned()),
                Value::from(y.to_owned()),
                Value::from(c),
            ],
            vec![
                Value::from(got.0),
                Value::from(got.1),
                Value::from(got.2),
                Value::from(got.3),
            ],
        );
    }
    // NaN propagates; shapes that do not broadcast and empty maps are the usual errors.
    let mut with_nan = a.clone();
    with_nan[[2, 7]] = f64::NAN;
    assert!(of_maps(with_nan.view(), b.view(), c).unwrap().0.is_nan());
    let narrow = Array2::<f64>::zeros((5, 3));
    assert_eq!(
        of_maps(a.view(), narrow.view(), c).unwrap_err().to_string(),
        "cannot broadcast shapes [5, 11] and [5, 3] together in `abs(a -b)`"
    );
    let empty = Array2::<f64>::zeros((0, 11));
    assert_eq!(
        of_maps(empty.view(), empty.view(), c)
            .unwrap_err()
            .to_string(),
        "`max(abs(a -b))` got an empty array, which has no element or row to take"
    );
    // In a step: each step's largest difference.
    let m = in_a_step(a.view(), b.view()).unwrap();
    let want: Vec<f64> = (0..5)
        .map(|i| {
            (0..11)
                .map(|j| (a[[i, j]] - b[[i, j]]).abs())
                .fold(f64::MIN, f64::max)
        })
        .collect();
    assert_eq!(m.to_vec(), want);
}

#[test]
fn reductions_over_everything_and_over_each_axis() {
    let m = array![
        [1.0, -2.0, 3.5, 0.0],
        [4.0, 5.0, -6.0, 2.0],
        [0.5, 8.0, 1.0, -1.0]
    ];
    let flat: Vec<f64> = m.iter().copied().collect();
    let (s, mx, mn, me) = reductions::all(m.view()).unwrap();
    assert_eq!(s, 16.0);
    assert_eq!(mx, 8.0);
    assert_eq!(mn, -6.0);
    assert_eq!(me, 16.0 / 12.0);
    assert_eq!(s, flat.iter().sum::<f64>());
    second_opinion(
        reductions::SOURCE,
        "all",
        vec![Value::from(m.clone())],
        vec![
            Value::from(s),
            Value::from(mx),
            Value::from(mn),
            Value::from(me),
        ],
    );

    // Oracles by plain loops over the columns and the rows.
    let col = |j: usize| -> Vec<f64> { (0..3).map(|i| m[[i, j]]).collect() };
    let row = |i: usize| -> Vec<f64> { (0..4).map(|j| m[[i, j]]).collect() };
    let stats = |xs: Vec<f64>| -> [f64; 4] {
        let s: f64 = xs.iter().sum();
        [
            s,
            xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            xs.iter().copied().fold(f64::INFINITY, f64::min),
            s / xs.len() as f64,
        ]
    };
    let per_col: Vec<[f64; 4]> = (0..4).map(|j| stats(col(j))).collect();
    let per_row: Vec<[f64; 4]> = (0..3).map(|i| stats(row(i))).collect();
    let pick = |v: &[[f64; 4]], k: usize| -> Vec<f64> { v.iter().map(|s| s[k]).collect() };

    let (s0, mx0, mn0, me0) = reductions::axis0(m.view()).unwrap();
    assert_eq!(s0.to_vec(), vec![5.5, 11.0, -1.5, 1.0]);
    assert_eq!(mx0.to_vec(), vec![4.0, 8.0, 3.5, 2.0]);
    assert_eq!(mn0.to_vec(), vec![0.5, -2.0, -6.0, -1.0]);
    assert_floats(&me0.to_vec(), &pick(&per_col, 3), 1e-15);
    assert_eq!(s0.to_vec(), pick(&per_col, 0));
    second_opinion(
        reductions::SOURCE,
        "axis0",
        vec![Value::from(m.clone())],
        vec![
            Value::from(s0),
            Value::from(mx0),
            Value::from(mn0),
            Value::from(me0),
        ],
    );

    for function in ["axis1", "last_axis"] {
        let (s1, mx1, mn1, me1) = if function == "axis1" {
            reductions::axis1(m.view()).unwrap()
        } else {
            reductions::last_axis(m.view()).unwrap()
        };
        assert_eq!(s1.to_vec(), vec![2.5, 5.0, 8.5]);
        assert_eq!(mx1.to_vec(), vec![3.5, 5.0, 8.0]);
        assert_eq!(mn1.to_vec(), vec![-2.0, -6.0, -1.0]);
        assert_eq!(me1.to_vec(), vec![0.625, 1.25, 2.125]);
        assert_eq!(mx1.to_vec(), pick(&per_row, 1));
        second_opinion(
            reductions::SOURCE,
            function,
            vec![Value::from(m.clone())],
            vec![
                Value::from(s1),
                Value::from(mx1),
                Value::from(mn1),
                Value::from(me1),
            ],
        );
    }

    let mi = array![[1i64, 5, -2], [3, 3, 9]];
    let (s, mx, me, me0, count) = reductions::ints(mi.view()).unwrap();
    assert_eq!(s, 19);
    assert_eq!(mx.to_vec(), vec![5, 9]);
    assert_eq!(me, 19.0 / 6.0);
    assert_eq!(me0.to_vec(), vec![2.0, 4.0, 3.5]);
    assert_eq!(count, 4);
    second_opinion(
        reductions::SOURCE,
        "ints",
        vec![Value::from(mi)],
        vec![
            Value::from(s),
            Value::from(mx),
            Value::from(me),
            Value::from(me0),
            Value::from(count),
        ],
    );

    let t = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| {
        (i * 12 + j * 4 + k) as f64 * if (i + j + k) % 2 == 0 { 1.0 } else { -0.5 }
    });
    let (s1, mxl, me0) = reductions::cube(t.view()).unwrap();
    let s1_expected = Array2::from_shape_fn((2, 4), |(i, k)| (0..3).map(|j| t[[i, j, k]]).sum());
    let mxl_expected = Array2::from_shape_fn((2, 3), |(i, j)| {
        (0..4)
            .map(|k| t[[i, j, k]])
            .fold(f64::NEG_INFINITY, f64::max)
    });
    let me0_expected = Array2::from_shape_fn((3, 4), |(j, k)| (t[[0, j, k]] + t[[1, j, k]]) / 2.0);
    assert_eq!(s1, s1_expected);
    assert_eq!(mxl, mxl_expected);
    assert_eq!(me0, me0_expected);
    second_opinion(
        reductions::SOURCE,
        "cube",
        vec![Value::from(t)],
        vec![Value::from(s1), Value::from(mxl), Value::from(me0)],
    );

    let v = array![2.0, -1.0, 7.0, 0.0];
    let got = reductions::vector(v.view()).unwrap();
    assert_eq!(got, (8.0, 7.0, -1.0, 2.0));
    second_opinion(
        reductions::SOURCE,
        "vector",
        vec![Value::from(v)],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
        ],
    );

    // A declared `Array0<T>` result is a 0-d array, not a scalar.
    let got: Array0<f64> = reductions::as_array0(m.view()).unwrap();
    assert_eq!(got, Array0::from_elem((), 16.0));
    let got = Value::from(got);
    second_opinion(
        reductions::SOURCE,
        "as_array0",
        vec![Value::from(m)],
        vec![got],
    );
}

#[test]
fn max_and_min_reductions_propagate_nan() {
    let m = array![[1.0, f64::NAN, 3.0], [4.0, 5.0, 6.0]];
    let (s, mx, mn, _) = reductions::all(m.view()).unwrap();
    assert!(s.is_nan() && mx.is_nan() && mn.is_nan(), "{s} {mx} {mn}");
    let (s0, mx0, mn0, me0) = reductions::axis0(m.view()).unwrap();
    assert_floats(&s0.to_vec(), &[5.0, f64::NAN, 9.0], 0.0);
    assert_floats(&mx0.to_vec(), &[4.0, f64::NAN, 6.0], 0.0);
    assert_floats(&mn0.to_vec(), &[1.0, f64::NAN, 3.0], 0.0);
    assert_floats(&me0.to_vec(), &[2.5, f64::NAN, 4.5], 0.0);
    second_opinion(
        reductions::SOURCE,
        "axis0",
        vec![Value::from(m)],
        vec![
            Value::from(s0),
            Value::from(mx0),
            Value::from(mn0),
            Value::from(me0),
        ],
    );
}

// ---------------------------------------------------------------------------------------
// zeros_like ones_like arange
// ---------------------------------------------------------------------------------------

mod fills {
    scan_tests::program! {
        pub fn likes(
            m: ArrayView2<i32>,
            v: ArrayView1<f64>,
            x: f32,
        ) -> Result<(Array2<i32>, Array1<f64>, f32, Array2<i32>)> {
            Ok((zeros_like(m), ones_like(v), ones_like(x), m.ones_like() * 7))
        }

        /// numpy's `full_like`: the first argument's shape and dtype, the value converted.
        pub fn full_likes(
            m: ArrayView2<i32>,
            v: ArrayView1<f32>,
            x: f64,
            c: f64,
        ) -> Result<(Array2<i32>, Array1<f32>, f64, Array1<f32>, Array2<i32>)> {
            Ok((full_like(m, 2.7), full_like(v, -1.5), full_like(x, 4), full_like(v, c), m.full_like(c) + 1))
        }

        pub fn ranges(n: usize, k: i64) -> Result<(Array1<i64>, Array1<i64>, Array1<f64>)> {
            Ok((arange(n), arange(k) * 2 - 1, arange(k) / 2))
        }

        pub fn range_sums(ks: ArrayView1<i64>) -> Result<Array1<i64>> {
            Ok(map(|k| arange(k).sum(), sequences = ks))
        }
    }
}

#[test]
fn zeros_like_ones_like_and_arange() {
    let m = array![[5i32, -1, 2], [0, 9, 9]];
    let v = array![0.5, 2.5];
    let (z, o, one, sevens) = fills::likes(m.view(), v.view(), 3.5).unwrap();
    assert_eq!(z, Array2::<i32>::zeros((2, 3)));
    assert_eq!(o.to_vec(), vec![1.0, 1.0]);
    assert_eq!(one, 1.0f32);
    assert_eq!(sevens, Array2::<i32>::from_elem((2, 3), 7));
    second_opinion(
        fills::SOURCE,
        "likes",
        vec![Value::from(m.clone()), Value::from(v), Value::from(3.5f32)],
        vec![
            Value::from(z),
            Value::from(o),
            Value::from(one),
            Value::from(sevens),
        ],
    );

    // full_like: numpy's conversions (2.7 and -3.9 truncated towards zero for i32).
    let w = array![0.25f32, 8.0, -1.0];
    let (twos, minus, four, cs, m_c) = fills::full_likes(m.view(), w.view(), 0.5, -3.9).unwrap();
    assert_eq!(twos, Array2::<i32>::from_elem((2, 3), 2));
    assert_eq!(minus.to_vec(), vec![-1.5f32; 3]);
    assert_eq!(four, 4.0);
    assert_eq!(cs.to_vec(), vec![-3.9f32; 3]);
    assert_eq!(m_c, Array2::<i32>::from_elem((2, 3), -2));
    second_opinion(
        fills::SOURCE,
        "full_likes",
        vec![
            Value::from(m.clone()),
            Value::from(w.clone()),
            Value::from(0.5),
            Value::from(-3.9),
        ],
        vec![
            Value::from(twos),
            Value::from(minus),
            Value::from(four),
            Value::from(cs),
            Value::from(m_c),
        ],
    );

    for (n, k) in [(5usize, 4i64), (0, 1), (1, 0), (3, -2)] {
        let (r, odd, halves) = fills::ranges(n, k).unwrap();
        let expected: Vec<i64> = (0..n as i64).collect();
        assert_eq!(r.to_vec(), expected);
        let expected_odd: Vec<i64> = (0..k.max(0)).map(|i| 2 * i - 1).collect();
        assert_eq!(odd.to_vec(), expected_odd);
        let expected_halves: Vec<f64> = (0..k.max(0)).map(|i| i as f64 / 2.0).collect();
        assert_eq!(halves.to_vec(), expected_halves);
        second_opinion(
            fills::SOURCE,
            "ranges",
            vec![Value::from(n as i64), Value::from(k)],
            vec![Value::from(r), Value::from(odd), Value::from(halves)],
        );
    }
    let (r, _, _) = fills::ranges(4, 0).unwrap();
    assert_eq!(r.to_vec(), vec![0, 1, 2, 3]);

    let ks = array![0i64, 1, 4, 10];
    let got = fills::range_sums(ks.view()).unwrap();
    assert_eq!(got.to_vec(), vec![0, 0, 6, 45]);
    second_opinion(
        fills::SOURCE,
        "range_sums",
        vec![Value::from(ks)],
        vec![Value::from(got)],
    );
}

// ---------------------------------------------------------------------------------------
// Indexing and slicing
// ---------------------------------------------------------------------------------------

mod indexing {
    scan_tests::program! {
        #[allow(clippy::type_complexity)]
        pub fn elements(
            v: ArrayView1<f64>,
            m: ArrayView2<f64>,
            i: i64,
        ) -> Result<(f64, f64, f64, Array1<f64>, f64, f64, f64)> {
            Ok((v[0], v[-1], v[i], m[-1], m[1][2], m[-1][-2], m[i][-1]))
        }

        pub fn cube(t: ArrayView3<i64>) -> Result<(Array2<i64>, Array1<i64>, i64)> {
            Ok((t[1], t[-1][0], t[0][-1][1]))
        }

        pub fn by_usize(v: ArrayView1<f64>, i: usize) -> Result<f64> {
            Ok(v[i])
        }

        #[allow(clippy::type_complexity)]
        pub fn slices(
            v: ArrayView1<f64>,
        ) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((v[1..3], v[..-1], v[-2..], v[1..100], v[-100..2], v[3..1]))
        }

        pub fn bounds(v: ArrayView1<i64>, a: i64, b: i64) -> Result<Array1<i64>> {
            Ok(v[a..b])
        }

        pub fn matrix_slices(m: ArrayView2<f64>) -> Result<(Array2<f64>, Array1<f64>, Array1<f64>, f64)> {
            Ok((m[1..3], m[-1][1..], m[..2][0], m[1..][0][-1]))
        }
    }
}

#[test]
fn indexing_with_negative_indices_and_chains() {
    let v = array![10.0, 20.0, 30.0, 40.0, 50.0];
    let m = Array2::from_shape_fn((3, 4), |(i, j)| (i * 10 + j) as f64);
    for i in [-3i64, -1, 0, 2] {
        let got = indexing::elements(v.view(), m.view(), i).unwrap();
        let vi = v[(i + 5) as usize % 5];
        let mi = ((i + 3) as usize) % 3;
        assert_eq!(got.0, 10.0);
        assert_eq!(got.1, 50.0);
        assert_eq!(got.2, vi);
        assert_eq!(got.3.to_vec(), vec![20.0, 21.0, 22.0, 23.0]);
        assert_eq!(got.4, 12.0);
        assert_eq!(got.5, 22.0);
        assert_eq!(got.6, m[[mi, 3]]);
        second_opinion(
            indexing::SOURCE,
            "elements",
            vec![
                Value::from(v.clone()),
                Value::from(m.clone()),
                Value::from(i),
            ],
            vec![
                Value::from(got.0),
                Value::from(got.1),
                Value::from(got.2),
                Value::from(got.3),
                Value::from(got.4),
                Value::from(got.5),
                Value::from(got.6),
            ],
        );
    }

    let t = Array3::from_shape_fn((2, 3, 2), |(i, j, k)| (100 * i + 10 * j + k) as i64);
    let (t1, t_last_0, t0_last_1) = indexing::cube(t.view()).unwrap();
    assert_eq!(t1, array![[100, 101], [110, 111], [120, 121]]);
    assert_eq!(t_last_0.to_vec(), vec![100, 101]);
    assert_eq!(t0_last_1, 21);
    second_opinion(
        indexing::SOURCE,
        "cube",
        vec![Value::from(t)],
        vec![
            Value::from(t1),
            Value::from(t_last_0),
            Value::from(t0_last_1),
        ],
    );

    let got = indexing::by_usize(v.view(), 3).unwrap();
    assert_eq!(got, 40.0);
    second_opinion(
        indexing::SOURCE,
        "by_usize",
        vec![Value::from(v), Value::from(3i64)],
        vec![Value::from(got)],
    );
}

#[test]
fn slicing_clamps_like_numpy() {
    let v = array![1.0, 2.0, 3.0, 4.0, 5.0];
    let got = indexing::slices(v.view()).unwrap();
    assert_eq!(got.0.to_vec(), vec![2.0, 3.0]);
    assert_eq!(got.1.to_vec(), vec![1.0, 2.0, 3.0, 4.0]);
    assert_eq!(got.2.to_vec(), vec![4.0, 5.0]);
    assert_eq!(got.3.to_vec(), vec![2.0, 3.0, 4.0, 5.0]);
    assert_eq!(got.4.to_vec(), vec![1.0, 2.0]);
    assert_eq!(got.5.len(), 0);
    second_opinion(
        indexing::SOURCE,
        "slices",
        vec![Value::from(v)],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
            Value::from(got.5),
        ],
    );

    let v = Array1::from_iter(0i64..6);
    for (a, b) in [
        (0, 6),
        (2, -1),
        (-4, -2),
        (-10, 3),
        (4, 100),
        (5, 2),
        (-1, 6),
        (6, 9),
    ] {
        let got = indexing::bounds(v.view(), a, b).unwrap();
        let expected = v.as_slice().unwrap()[np_slice(6, Some(a), Some(b))].to_vec();
        assert_eq!(got.to_vec(), expected, "v[{a}..{b}]");
        second_opinion(
            indexing::SOURCE,
            "bounds",
            vec![Value::from(v.clone()), Value::from(a), Value::from(b)],
            vec![Value::from(got)],
        );
    }

    let m = Array2::from_shape_fn((4, 3), |(i, j)| (i * 10 + j) as f64);
    let (rows, last_tail, first, corner) = indexing::matrix_slices(m.view()).unwrap();
    assert_eq!(rows, array![[10.0, 11.0, 12.0], [20.0, 21.0, 22.0]]);
    assert_eq!(last_tail.to_vec(), vec![31.0, 32.0]);
    assert_eq!(first.to_vec(), vec![0.0, 1.0, 2.0]);
    assert_eq!(corner, 12.0);
    second_opinion(
        indexing::SOURCE,
        "matrix_slices",
        vec![Value::from(m)],
        vec![
            Value::from(rows),
            Value::from(last_tail),
            Value::from(first),
            Value::from(corner),
        ],
    );
}

// ---------------------------------------------------------------------------------------
// set_subtensor / inc_subtensor
// ---------------------------------------------------------------------------------------

mod subtensor {
    scan_tests::program! {
        pub fn rows(
            m: ArrayView2<f64>,
            r: ArrayView1<f64>,
        ) -> Result<(Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>)> {
            Ok((set_subtensor(m[1], r), inc_subtensor(m[-1], r), set_subtensor(m[0], 0.0), inc_subtensor(m[0], 1.5)))
        }

        pub fn elements(m: ArrayView2<f64>, i: i64) -> Result<(Array2<f64>, Array2<f64>, Array2<f64>)> {
            Ok((
                set_subtensor(m[0][2], 9.0),
                inc_subtensor(m[-1][-1], 100.0),
                inc_subtensor(m[i][0], m[0][0]),
            ))
        }

        pub fn slices(v: ArrayView1<i64>) -> Result<(Array1<i64>, Array1<i64>, Array1<i64>)> {
            Ok((set_subtensor(v[1..3], 0), inc_subtensor(v[..2], v[-2..]), set_subtensor(v[-2..], arange(2))))
        }

        /// A literal adapts to the array's dtype; i32 increments wrap.
        pub fn int32(v: ArrayView1<i32>) -> Result<(Array1<i32>, Array1<i32>)> {
            Ok((inc_subtensor(v[1], 5), inc_subtensor(v[-1], v[-1])))
        }
    }
}

#[test]
fn set_and_inc_subtensor_on_rows_elements_and_slices() {
    let m = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]];
    let r = array![-1.0, -2.0, -3.0];
    let (set_row, inc_row, zero_row, inc_scalar) = subtensor::rows(m.view(), r.view()).unwrap();
    let mut expected = m.clone();
    expected.row_mut(1).assign(&r);
    assert_eq!(set_row, expected);
    let mut expected = m.clone();
    for j in 0..3 {
        expected[[2, j]] += r[j];
    }
    assert_eq!(inc_row, expected);
    assert_eq!(inc_row.row(2).to_vec(), vec![6.0, 6.0, 6.0]);
    assert_eq!(
        zero_row,
        array![[0.0, 0.0, 0.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]
    );
    assert_eq!(inc_scalar.row(0).to_vec(), vec![2.5, 3.5, 4.5]);
    assert_eq!(inc_scalar.row(1), m.row(1));
    // The input is untouched.
    assert_eq!(m[[1, 0]], 4.0);
    second_opinion(
        subtensor::SOURCE,
        "rows",
        vec![Value::from(m.clone()), Value::from(r)],
        vec![
            Value::from(set_row),
            Value::from(inc_row),
            Value::from(zero_row),
            Value::from(inc_scalar),
        ],
    );

    for i in [-1i64, 1] {
        let (set_el, inc_el, inc_first) = subtensor::elements(m.view(), i).unwrap();
        let mut expected = m.clone();
        expected[[0, 2]] = 9.0;
        assert_eq!(set_el, expected);
        let mut expected = m.clone();
        expected[[2, 2]] = 109.0;
        assert_eq!(inc_el, expected);
        let mut expected = m.clone();
        expected[[((i + 3) % 3) as usize, 0]] += 1.0;
        assert_eq!(inc_first, expected);
        second_opinion(
            subtensor::SOURCE,
            "elements",
            vec![Value::from(m.clone()), Value::from(i)],
            vec![
                Value::from(set_el),
                Value::from(inc_el),
                Value::from(inc_first),
            ],
        );
    }

    let v = array![1i64, 2, 3, 4, 5];
    let (zeroed, bumped, tail) = subtensor::slices(v.view()).unwrap();
    assert_eq!(zeroed.to_vec(), vec![1, 0, 0, 4, 5]);
    assert_eq!(bumped.to_vec(), vec![5, 7, 3, 4, 5]);
    assert_eq!(tail.to_vec(), vec![1, 2, 3, 0, 1]);
    second_opinion(
        subtensor::SOURCE,
        "slices",
        vec![Value::from(v)],
        vec![Value::from(zeroed), Value::from(bumped), Value::from(tail)],
    );

    let v = array![1i32, 2, i32::MAX];
    let (plus5, doubled_last) = subtensor::int32(v.view()).unwrap();
    assert_eq!(plus5.to_vec(), vec![1, 7, i32::MAX]);
    assert_eq!(doubled_last.to_vec(), vec![1, 2, -2]);
    second_opinion(
        subtensor::SOURCE,
        "int32",
        vec![Value::from(v)],
        vec![Value::from(plus5), Value::from(doubled_last)],
    );
}

// ---------------------------------------------------------------------------------------
// Casts
// ---------------------------------------------------------------------------------------

mod casts {
    scan_tests::program! {
        #[allow(clippy::type_complexity)]
        pub fn from_f64(
            x: ArrayView1<f64>,
        ) -> Result<(Array1<f32>, Array1<i32>, Array1<i64>, Array1<bool>, Array1<f64>)> {
            Ok((x as f32, x as i32, x as i64, x as bool, x as f64))
        }

        pub fn from_f32(x: ArrayView1<f32>) -> Result<(Array1<f64>, Array1<i32>, Array1<i64>, Array1<bool>)> {
            Ok((x as f64, x as i32, x as i64, x as bool))
        }

        pub fn from_i64(k: ArrayView1<i64>) -> Result<(Array1<i32>, Array1<f64>, Array1<f32>, Array1<bool>)> {
            Ok((k as i32, k as f64, k as f32, k as bool))
        }

        pub fn from_i32(k: ArrayView1<i32>) -> Result<(Array1<i64>, Array1<f64>, Array1<f32>, Array1<bool>)> {
            Ok((k as i64, k as f64, k as f32, k as bool))
        }

        pub fn from_bool(p: ArrayView1<bool>) -> Result<(Array1<f64>, Array1<f32>, Array1<i32>, Array1<i64>)> {
            Ok((p as f64, p as f32, p as i32, p as i64))
        }

        pub fn scalars(x: f64, k: i32, p: bool) -> Result<(i64, f32, bool, f64, i32)> {
            Ok((x as i64, k as f32, k as bool, (x as i32) as f64, p as i32 + k))
        }

        pub fn of_expressions(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Result<Array1<i64>> {
            Ok((a * b) as i64 + (a > b) as i64)
        }
    }
}

#[test]
fn casts_between_every_dtype() {
    // Values inside every target's range (out-of-range float -> int casts are undefined in
    // numpy, so they are not pinned here).
    let x = array![-2.7, -0.5, 0.0, 0.4, 2.9, 1e3, 0.1, 16777217.0];
    let (f, i32s, i64s, b, same) = casts::from_f64(x.view()).unwrap();
    let expected_f: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    assert_eq!(f.to_vec(), expected_f);
    assert_eq!(f[7], 16777216.0f32); // rounded to f32
    assert_eq!(i32s.to_vec(), vec![-2, 0, 0, 0, 2, 1000, 0, 16777217]);
    assert_eq!(i64s.to_vec(), vec![-2, 0, 0, 0, 2, 1000, 0, 16777217]);
    assert_eq!(
        b.to_vec(),
        vec![true, true, false, true, true, true, true, true]
    );
    assert_eq!(same, x);
    second_opinion(
        casts::SOURCE,
        "from_f64",
        vec![Value::from(x)],
        vec![
            Value::from(f),
            Value::from(i32s),
            Value::from(i64s),
            Value::from(b),
            Value::from(same),
        ],
    );

    // NaN and infinities to f32 and to bool (NaN is truthy in numpy).
    let special = array![f64::NAN, f64::INFINITY, -1e40, -0.0];
    let (f, _, _, b, _) = casts::from_f64(special.view()).unwrap();
    assert!(f[0].is_nan());
    assert_eq!(&f.to_vec()[1..], &[f32::INFINITY, f32::NEG_INFINITY, -0.0]);
    assert_eq!(b.to_vec(), vec![true, true, true, false]);

    let x = array![-3.75f32, 0.0, 1.5, 255.9];
    let (d, i32s, i64s, b) = casts::from_f32(x.view()).unwrap();
    assert_eq!(d.to_vec(), vec![-3.75, 0.0, 1.5, f64::from(255.9f32)]);
    assert_eq!(i32s.to_vec(), vec![-3, 0, 1, 255]);
    assert_eq!(i64s.to_vec(), vec![-3, 0, 1, 255]);
    assert_eq!(b.to_vec(), vec![true, false, true, true]);
    second_opinion(
        casts::SOURCE,
        "from_f32",
        vec![Value::from(x)],
        vec![
            Value::from(d),
            Value::from(i32s),
            Value::from(i64s),
            Value::from(b),
        ],
    );

    // i64 -> i32 keeps the low 32 bits (numpy's astype wraps the same way).
    let k = array![
        (1i64 << 32) + 5,
        1 << 31,
        -1,
        3_000_000_000,
        0,
        (1 << 24) + 1
    ];
    let (k32, kf, kf32, kb) = casts::from_i64(k.view()).unwrap();
    assert_eq!(
        k32.to_vec(),
        vec![5, i32::MIN, -1, -1_294_967_296, 0, 16_777_217]
    );
    let expected_f: Vec<f64> = k.iter().map(|&v| v as f64).collect();
    assert_eq!(kf.to_vec(), expected_f);
    let expected_f32: Vec<f32> = k.iter().map(|&v| v as f32).collect();
    assert_eq!(kf32.to_vec(), expected_f32);
    assert_eq!(kf32[5], 16_777_216.0);
    assert_eq!(kb.to_vec(), vec![true, true, true, true, false, true]);
    second_opinion(
        casts::SOURCE,
        "from_i64",
        vec![Value::from(k)],
        vec![
            Value::from(k32),
            Value::from(kf),
            Value::from(kf32),
            Value::from(kb),
        ],
    );

    let k = array![i32::MIN, -7, 0, i32::MAX];
    let (k64, kf, kf32, kb) = casts::from_i32(k.view()).unwrap();
    assert_eq!(
        k64.to_vec(),
        vec![i64::from(i32::MIN), -7, 0, i64::from(i32::MAX)]
    );
    assert_eq!(kf.to_vec(), vec![-2147483648.0, -7.0, 0.0, 2147483647.0]);
    let expected_f32: Vec<f32> = k.iter().map(|&v| v as f32).collect();
    assert_eq!(kf32.to_vec(), expected_f32);
    assert_eq!(kb.to_vec(), vec![true, true, false, true]);
    second_opinion(
        casts::SOURCE,
        "from_i32",
        vec![Value::from(k)],
        vec![
            Value::from(k64),
            Value::from(kf),
            Value::from(kf32),
            Value::from(kb),
        ],
    );

    let p = array![true, false, true];
    let (pf, pf32, pi32, pi64) = casts::from_bool(p.view()).unwrap();
    assert_eq!(pf.to_vec(), vec![1.0, 0.0, 1.0]);
    assert_eq!(pf32.to_vec(), vec![1.0f32, 0.0, 1.0]);
    assert_eq!(pi32.to_vec(), vec![1, 0, 1]);
    assert_eq!(pi64.to_vec(), vec![1i64, 0, 1]);
    second_opinion(
        casts::SOURCE,
        "from_bool",
        vec![Value::from(p)],
        vec![
            Value::from(pf),
            Value::from(pf32),
            Value::from(pi32),
            Value::from(pi64),
        ],
    );

    for (x, k, p) in [(-3.9, 7i32, true), (12.5, 0, false), (0.99, -2, true)] {
        let got = casts::scalars(x, k, p).unwrap();
        let expected = (
            x as i64,
            k as f32,
            k != 0,
            f64::from(x as i32),
            i32::from(p) + k,
        );
        assert_eq!(got, expected);
        second_opinion(
            casts::SOURCE,
            "scalars",
            vec![Value::from(x), Value::from(k), Value::from(p)],
            vec![
                Value::from(got.0),
                Value::from(got.1),
                Value::from(got.2),
                Value::from(got.3),
                Value::from(got.4),
            ],
        );
    }

    let a = array![1.5, -2.5, 3.0];
    let b = array![3.0, 1.0, 3.0];
    let got = casts::of_expressions(a.view(), b.view()).unwrap();
    // 4.5 -> 4, -2.5 -> -2 (truncation), 9 -> 9; a > b is false everywhere.
    let expected: Vec<i64> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| (x * y) as i64 + i64::from(x > y))
        .collect();
    assert_eq!(got.to_vec(), expected);
    assert_eq!(got.to_vec(), vec![4, -2, 9]);
    second_opinion(
        casts::SOURCE,
        "of_expressions",
        vec![Value::from(a), Value::from(b)],
        vec![Value::from(got)],
    );
}

// ---------------------------------------------------------------------------------------
// Integer wrapping
// ---------------------------------------------------------------------------------------

mod wrapping {
    scan_tests::program! {
        pub fn i32_ops(k: i32) -> Result<(i32, i32, i32, i32, i32)> {
            Ok((k + 1, k * 2, -(k + 1), abs(k + 1), k - -k))
        }

        pub fn i64_ops(l: i64) -> Result<(i64, i64, i64)> {
            Ok((l + 1, l * l, l + 1 - 1))
        }

        pub fn arrays(a: ArrayView1<i32>) -> Result<(Array1<i32>, Array1<i32>)> {
            Ok((a + 1, a * a))
        }

        pub fn tripling(n: usize) -> Result<Array1<i32>> {
            Ok(scan(|p| p * 3, outputs_info = 1i32, n_steps = n))
        }
    }
}

#[test]
fn integer_overflow_wraps_without_panicking() {
    let k = i32::MAX;
    let got = wrapping::i32_ops(k).unwrap();
    assert_eq!(got, (i32::MIN, -2, i32::MIN, i32::MIN, -2));
    assert_eq!(
        got,
        (
            k.wrapping_add(1),
            k.wrapping_mul(2),
            k.wrapping_add(1).wrapping_neg(),
            k.wrapping_add(1).wrapping_abs(),
            k.wrapping_sub(k.wrapping_neg()),
        )
    );
    second_opinion(
        wrapping::SOURCE,
        "i32_ops",
        vec![Value::from(k)],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
        ],
    );

    let l = i64::MAX;
    let got = wrapping::i64_ops(l).unwrap();
    assert_eq!(got, (i64::MIN, 1, i64::MAX));
    second_opinion(
        wrapping::SOURCE,
        "i64_ops",
        vec![Value::from(l)],
        vec![Value::from(got.0), Value::from(got.1), Value::from(got.2)],
    );

    let a = array![i32::MAX, 0, -1, i32::MAX];
    let (plus, squares) = wrapping::arrays(a.view()).unwrap();
    assert_eq!(plus.to_vec(), vec![i32::MIN, 1, 0, i32::MIN]);
    let expected_squares: Vec<i32> = a.iter().map(|&v| v.wrapping_mul(v)).collect();
    assert_eq!(squares.to_vec(), expected_squares);
    assert_eq!(squares.to_vec(), vec![1, 0, 1, 1]); // (2^31 - 1)^2 mod 2^32 == 1
    second_opinion(
        wrapping::SOURCE,
        "arrays",
        vec![Value::from(a)],
        vec![Value::from(plus), Value::from(squares)],
    );

    let got = wrapping::tripling(25).unwrap();
    let mut p = 1i32;
    let expected: Vec<i32> = (0..25)
        .map(|_| {
            p = p.wrapping_mul(3);
            p
        })
        .collect();
    assert_eq!(got.to_vec(), expected);
    assert_eq!(got[19], 3i32.wrapping_pow(20)); // 3^20 > i32::MAX: wrapped
    assert!(got.iter().any(|&v| v < 0));
    second_opinion(
        wrapping::SOURCE,
        "tripling",
        vec![Value::from(25i64)],
        vec![Value::from(got)],
    );
}

// ---------------------------------------------------------------------------------------
// Broadcasting
// ---------------------------------------------------------------------------------------

mod broadcasting {
    scan_tests::program! {
        pub fn scalar_and_vector(
            m: ArrayView2<f64>,
            v: ArrayView1<f64>,
            s: f64,
        ) -> Result<(Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>)> {
            Ok((m + s, m * v, v - m, s * m + v / 2.0))
        }

        pub fn int_matrix(m: ArrayView2<i32>, v: ArrayView1<i32>) -> Result<(Array2<i32>, Array2<bool>)> {
            Ok((m * 10 + v, m > v))
        }

        pub fn cube(t: ArrayView3<f64>, v: ArrayView1<f64>, m: ArrayView2<f64>) -> Result<(Array3<f64>, Array3<f64>)> {
            Ok((t * v, t + m))
        }

        /// Axes of length 1 stretch (numpy): a 1-row matrix, a 1-column matrix, a 1-vector.
        pub fn size_one(
            m: ArrayView2<f64>,
            row: ArrayView2<f64>,
            col: ArrayView2<f64>,
            one: ArrayView1<f64>,
        ) -> Result<(Array2<f64>, Array2<f64>, Array2<f64>)> {
            Ok((m + row, m * col, m - one))
        }
    }
}

#[test]
fn scalars_and_vectors_broadcast_against_matrices_row_wise() {
    let m = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let v = array![10.0, 20.0, 30.0];
    let s = 0.5;
    let (plus, times, minus, affine) =
        broadcasting::scalar_and_vector(m.view(), v.view(), s).unwrap();
    let each =
        |f: &dyn Fn(f64, f64) -> f64| Array2::from_shape_fn((2, 3), |(i, j)| f(m[[i, j]], v[j]));
    assert_eq!(plus, m.mapv(|x| x + s));
    assert_eq!(times, each(&|x, y| x * y));
    assert_eq!(times, array![[10.0, 40.0, 90.0], [40.0, 100.0, 180.0]]);
    assert_eq!(minus, each(&|x, y| y - x));
    assert_eq!(affine, each(&|x, y| s * x + y / 2.0));
    second_opinion(
        broadcasting::SOURCE,
        "scalar_and_vector",
        vec![
            Value::from(m.clone()),
            Value::from(v.clone()),
            Value::from(s),
        ],
        vec![
            Value::from(plus),
            Value::from(times),
            Value::from(minus),
            Value::from(affine),
        ],
    );

    let mi = array![[1i32, 2], [3, 4], [5, 6]];
    let vi = array![2i32, 5];
    let (shifted, greater) = broadcasting::int_matrix(mi.view(), vi.view()).unwrap();
    assert_eq!(shifted, array![[12, 25], [32, 45], [52, 65]]);
    assert_eq!(greater, array![[false, false], [true, false], [true, true]]);
    second_opinion(
        broadcasting::SOURCE,
        "int_matrix",
        vec![Value::from(mi), Value::from(vi)],
        vec![Value::from(shifted), Value::from(greater)],
    );

    let t = Array3::from_shape_fn((2, 2, 3), |(i, j, k)| (i * 6 + j * 3 + k) as f64);
    let (tv, tm) = broadcasting::cube(t.view(), v.view(), m.view()).unwrap();
    assert_eq!(
        tv,
        Array3::from_shape_fn((2, 2, 3), |(i, j, k)| t[[i, j, k]] * v[k])
    );
    assert_eq!(
        tm,
        Array3::from_shape_fn((2, 2, 3), |(i, j, k)| t[[i, j, k]] + m[[j, k]])
    );
    second_opinion(
        broadcasting::SOURCE,
        "cube",
        vec![Value::from(t), Value::from(v), Value::from(m)],
        vec![Value::from(tv), Value::from(tm)],
    );
}

#[test]
fn axes_of_length_one_broadcast_like_numpy() {
    let m = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let row = array![[10.0, 20.0, 30.0]];
    let col = array![[2.0], [-1.0]];
    let one = array![0.5];
    let (plus_row, times_col, minus_one) =
        broadcasting::size_one(m.view(), row.view(), col.view(), one.view()).unwrap();
    assert_eq!(plus_row, array![[11.0, 22.0, 33.0], [14.0, 25.0, 36.0]]);
    assert_eq!(times_col, array![[2.0, 4.0, 6.0], [-4.0, -5.0, -6.0]]);
    assert_eq!(minus_one, m.mapv(|x| x - 0.5));
    second_opinion(
        broadcasting::SOURCE,
        "size_one",
        vec![
            Value::from(m),
            Value::from(row),
            Value::from(col),
            Value::from(one),
        ],
        vec![
            Value::from(plus_row),
            Value::from(times_col),
            Value::from(minus_one),
        ],
    );
}

// ---------------------------------------------------------------------------------------
// dtype promotion and untyped literals
// ---------------------------------------------------------------------------------------

mod promotion {
    scan_tests::program! {
        /// i32 with f32 gives f64 (f32 cannot hold every i32), as numpy.
        pub fn i32_times_f32(a: ArrayView1<i32>, s: f32) -> Result<Array1<f64>> {
            Ok(a * s)
        }

        /// Untyped float literals adapt to f32.
        pub fn f32_with_literals(x: ArrayView1<f32>) -> Result<(Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>)> {
            Ok((x * 2.0, x + 1, 0.1 * x, x * (2.0 + 1.0)))
        }

        /// A float literal among integers gives f64.
        pub fn i64_plus_float_literal(a: ArrayView1<i64>) -> Result<Array1<f64>> {
            Ok(a + 1.5)
        }

        /// Integer literals keep i32; a float literal moves it to f64.
        pub fn i32_with_literals(a: ArrayView1<i32>) -> Result<(Array1<i32>, Array1<i32>, Array1<f64>)> {
            Ok((a + 1, 2 * a - 3, a * 0.5))
        }

        #[allow(clippy::type_complexity)]
        pub fn typed_operands(
            a: ArrayView1<i32>,
            b: ArrayView1<i64>,
            x: ArrayView1<f32>,
            y: f64,
            p: ArrayView1<bool>,
        ) -> Result<(Array1<i64>, Array1<f64>, Array1<f64>, Array1<i32>, Array1<f32>)> {
            Ok((a + b, x + y, x * a, p + a, p * x))
        }

        /// Suffixed literals are typed: they promote like parameters.
        pub fn suffixed(a: ArrayView1<i32>, x: ArrayView1<f32>) -> Result<(Array1<i64>, Array1<f64>, Array1<f64>)> {
            Ok((a + 1i64, x * 2.0f64, a * 1.5f32))
        }

        /// True division: an untyped int literal adapts to f32; ints divide into f64.
        pub fn division_with_literals(
            x: ArrayView1<f32>,
            k: ArrayView1<i32>,
        ) -> Result<(Array1<f32>, Array1<f64>, Array1<f32>)> {
            Ok((x / 2, k / 2, 1 / x))
        }

        /// Results declared with any dtype take untyped literals.
        pub fn literal_results() -> Result<(f32, f64, i32, bool)> {
            Ok((1.5, 2, 7, true))
        }
    }
}

#[test]
fn dtype_promotion_follows_numpy() {
    let a = array![1i32, -2, 16777217, 7];
    let got = promotion::i32_times_f32(a.view(), 0.1).unwrap();
    // Computed in f64: the f32 scalar widened exactly, the i32 exactly (16777217 survives).
    let s = f64::from(0.1f32);
    let expected: Vec<f64> = a.iter().map(|&v| f64::from(v) * s).collect();
    assert_eq!(got.to_vec(), expected);
    second_opinion(
        promotion::SOURCE,
        "i32_times_f32",
        vec![Value::from(a), Value::from(0.1f32)],
        vec![Value::from(got)],
    );

    let x = array![3.0f32, -1.25, 0.7];
    let (twice, plus_one, tenth, thrice) = promotion::f32_with_literals(x.view()).unwrap();
    let f = |g: fn(f32) -> f32| -> Vec<f32> { x.iter().map(|&v| g(v)).collect() };
    assert_eq!(twice.to_vec(), f(|v| v * 2.0));
    assert_eq!(plus_one.to_vec(), f(|v| v + 1.0));
    assert_eq!(tenth.to_vec(), f(|v| 0.1f32 * v));
    assert_eq!(thrice.to_vec(), f(|v| v * 3.0));
    second_opinion(
        promotion::SOURCE,
        "f32_with_literals",
        vec![Value::from(x.clone())],
        vec![
            Value::from(twice),
            Value::from(plus_one),
            Value::from(tenth),
            Value::from(thrice),
        ],
    );

    let k = array![1i64, -3, i64::from(i32::MAX) + 10];
    let got = promotion::i64_plus_float_literal(k.view()).unwrap();
    assert_eq!(got.to_vec(), vec![2.5, -1.5, 2147483657.0 + 1.5]);
    second_opinion(
        promotion::SOURCE,
        "i64_plus_float_literal",
        vec![Value::from(k)],
        vec![Value::from(got)],
    );

    let a = array![1i32, -2, i32::MAX];
    let (plus, affine, half) = promotion::i32_with_literals(a.view()).unwrap();
    assert_eq!(plus.to_vec(), vec![2, -1, i32::MIN]); // i32 arithmetic: wraps
    assert_eq!(
        affine.to_vec(),
        vec![-1, -7, i32::MAX.wrapping_mul(2).wrapping_sub(3)]
    );
    assert_eq!(half.to_vec(), vec![0.5, -1.0, f64::from(i32::MAX) * 0.5]);
    second_opinion(
        promotion::SOURCE,
        "i32_with_literals",
        vec![Value::from(a.clone())],
        vec![Value::from(plus), Value::from(affine), Value::from(half)],
    );

    let b = array![10i64, 1 << 40, -5];
    let p = array![true, false, true];
    let y = 0.25f64;
    let (ab, xy, xa, pa, px) =
        promotion::typed_operands(a.view(), b.view(), x.view(), y, p.view()).unwrap();
    assert_eq!(
        ab.to_vec(),
        vec![11, (1 << 40) - 2, i64::from(i32::MAX) - 5]
    );
    let expected_xy: Vec<f64> = x.iter().map(|&v| f64::from(v) + y).collect();
    assert_eq!(xy.to_vec(), expected_xy);
    let expected_xa: Vec<f64> = x
        .iter()
        .zip(&a)
        .map(|(&v, &w)| f64::from(v) * f64::from(w))
        .collect();
    assert_eq!(xa.to_vec(), expected_xa);
    assert_eq!(pa.to_vec(), vec![2, -2, i32::MIN]);
    assert_eq!(px.to_vec(), vec![3.0f32, 0.0, 0.7]);
    second_opinion(
        promotion::SOURCE,
        "typed_operands",
        vec![
            Value::from(a.clone()),
            Value::from(b),
            Value::from(x.clone()),
            Value::from(y),
            Value::from(p),
        ],
        vec![
            Value::from(ab),
            Value::from(xy),
            Value::from(xa),
            Value::from(pa),
            Value::from(px),
        ],
    );

    let (a64, x64, a_f) = promotion::suffixed(a.view(), x.view()).unwrap();
    assert_eq!(a64.to_vec(), vec![2, -1, i64::from(i32::MAX) + 1]); // no wrap in i64
    let expected_x64: Vec<f64> = x.iter().map(|&v| f64::from(v) * 2.0).collect();
    assert_eq!(x64.to_vec(), expected_x64);
    assert_eq!(a_f.to_vec(), vec![1.5, -3.0, f64::from(i32::MAX) * 1.5]);
    second_opinion(
        promotion::SOURCE,
        "suffixed",
        vec![Value::from(a), Value::from(x.clone())],
        vec![Value::from(a64), Value::from(x64), Value::from(a_f)],
    );

    let k = array![7i32, -3, 0];
    let (x_half, k_half, x_inv) = promotion::division_with_literals(x.view(), k.view()).unwrap();
    assert_eq!(x_half.to_vec(), f(|v| v / 2.0));
    assert_eq!(k_half.to_vec(), vec![3.5, -1.5, 0.0]);
    assert_eq!(x_inv.to_vec(), f(|v| 1.0 / v));
    second_opinion(
        promotion::SOURCE,
        "division_with_literals",
        vec![Value::from(x.clone()), Value::from(k)],
        vec![Value::from(x_half), Value::from(k_half), Value::from(x_inv)],
    );

    let got = promotion::literal_results().unwrap();
    assert_eq!(got, (1.5f32, 2.0f64, 7i32, true));
    second_opinion(
        promotion::SOURCE,
        "literal_results",
        vec![],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
        ],
    );
}

// ---------------------------------------------------------------------------------------
// The same language inside scan steps
// ---------------------------------------------------------------------------------------

mod in_steps {
    scan_tests::program! {
        /// Each row's affine score: a vector and a scalar broadcast inside the step, summed.
        pub fn row_scores(m: ArrayView2<f64>, w: ArrayView1<f64>, b: f64) -> Result<Array1<f64>> {
            Ok(map(|row| (row * w + b).sum(), sequences = m))
        }

        /// Each row broadcast against a matrix, reduced over axis 1 (w · row without dot).
        pub fn row_products(x: ArrayView2<f64>, w: ArrayView2<f64>) -> Result<Array2<f64>> {
            Ok(map(|row, w| (w * row).sum(1), sequences = x, non_sequences = w))
        }

        /// Each matrix of a stack centered on its column means (axis 0), with its row maxima
        /// (axis -1).
        pub fn centered(t: ArrayView3<f64>) -> Result<(Array3<f64>, Array2<f64>)> {
            Ok(map(|x| (x - x.mean(0), max(x, -1)), sequences = t))
        }

        /// A running sum clipped at `cap` with where_ and a comparison.
        pub fn clipped_cumsum(v: ArrayView1<f64>, cap: f64) -> Result<Array1<f64>> {
            Ok(scan(|x, acc| where_(acc + x > cap, cap, acc + x), sequences = v, outputs_info = 0.0))
        }

        /// Length of the current run of positive values, and whether the run continues.
        pub fn positive_runs(v: ArrayView1<f64>) -> Result<(Array1<i64>, Array1<bool>)> {
            let (runs, continuing) = scan(
                |x, run| {
                    let positive = x > 0.0;
                    (switch(positive, run + 1, 0), positive && run > 0)
                },
                sequences = v,
                outputs_info = [0i64, None],
            );
            Ok((runs, continuing))
        }

        /// A vector state wrapped into [0, 1) column by column.
        pub fn wrap_columns(m: ArrayView2<f64>) -> Result<Array2<f64>> {
            Ok(scan(
                |row, h| where_(h + row >= 1.0, h + row - 1.0, h + row),
                sequences = m,
                outputs_info = zeros_like(m[0]),
            ))
        }

        /// Counts per bin: inc_subtensor of an element of the state, negative indices too.
        pub fn histogram(idx: ArrayView1<i64>, bins: ArrayView1<i64>) -> Result<Array1<i64>> {
            Ok(reduce(|i, counts| inc_subtensor(counts[i], 1), sequences = idx, outputs_info = zeros_like(bins)))
        }

        /// %, casts, powi and logic in one step, three outputs.
        pub fn mixed(ks: ArrayView1<i64>) -> Result<(Array1<f64>, Array1<i32>, Array1<bool>)> {
            Ok(map(
                |k| ((k % 3) as f64 / 2.0 + powi(k, 2) as f64, (-k) as i32 % 4, k != 0 && k % 2 == 0),
                sequences = ks,
            ))
        }

        /// A matrix per step: an Array3 result.
        pub fn scaled_copies(m: ArrayView2<f64>, ks: ArrayView1<f64>) -> Result<Array3<f64>> {
            Ok(map(|k| m * k + ones_like(m), sequences = ks))
        }

        /// A recurrence with dot, a slice, maximum and a transposed matrix.
        pub fn relu_rnn(x: ArrayView2<f64>, w: ArrayView2<f64>, h0: ArrayView1<f64>) -> Result<Array2<f64>> {
            Ok(scan(
                |x_t, h| maximum(h.dot(w.t()) + x_t[..-1] * 0.5, 0.0),
                sequences = x,
                outputs_info = h0,
            ))
        }
    }
}

#[test]
fn a_map_over_rows_with_broadcasting_and_an_axis_reduction() {
    let m = array![[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0], [0.0, 0.0, 0.0]];
    let w = array![0.5, -1.0, 2.0];
    let got = in_steps::row_scores(m.view(), w.view(), 0.25).unwrap();
    let expected: Vec<f64> = m
        .outer_iter()
        .map(|r| (0..3).map(|j| r[j] * w[j] + 0.25).sum())
        .collect();
    assert_eq!(got.to_vec(), expected);
    assert_eq!(got.to_vec(), vec![5.25, 7.75, 0.75]);
    second_opinion(
        in_steps::SOURCE,
        "row_scores",
        vec![Value::from(m.clone()), Value::from(w), Value::from(0.25f64)],
        vec![Value::from(got)],
    );

    let x = matrix(5, 4, 21);
    let wm = matrix(3, 4, 22);
    let got = in_steps::row_products(x.view(), wm.view()).unwrap();
    assert_eq!(got.dim(), (5, 3));
    let expected = Array2::from_shape_fn((5, 3), |(t, j)| {
        (0..4).map(|k| wm[[j, k]] * x[[t, k]]).sum::<f64>()
    });
    assert_floats(&f64s(&got), &f64s(&expected), 1e-14);
    second_opinion(
        in_steps::SOURCE,
        "row_products",
        vec![Value::from(x), Value::from(wm)],
        vec![Value::from(got)],
    );

    let t = Array3::from_shape_fn((3, 2, 4), |(i, j, k)| {
        ((i * 8 + j * 4 + k) % 5) as f64 - 1.5
    });
    let (centered, row_max) = in_steps::centered(t.view()).unwrap();
    let expected_centered = Array3::from_shape_fn((3, 2, 4), |(i, j, k)| {
        let mean = (t[[i, 0, k]] + t[[i, 1, k]]) / 2.0;
        t[[i, j, k]] - mean
    });
    let expected_max = Array2::from_shape_fn((3, 2), |(i, j)| {
        (0..4)
            .map(|k| t[[i, j, k]])
            .fold(f64::NEG_INFINITY, f64::max)
    });
    assert_eq!(centered, expected_centered);
    assert_eq!(row_max, expected_max);
    second_opinion(
        in_steps::SOURCE,
        "centered",
        vec![Value::from(t)],
        vec![Value::from(centered), Value::from(row_max)],
    );

    let ks = array![0.0, 2.0, -1.0];
    let got = in_steps::scaled_copies(m.view(), ks.view()).unwrap();
    assert_eq!(got.dim(), (3, 3, 3));
    let expected = Array3::from_shape_fn((3, 3, 3), |(s, i, j)| m[[i, j]] * ks[s] + 1.0);
    assert_eq!(got, expected);
    second_opinion(
        in_steps::SOURCE,
        "scaled_copies",
        vec![Value::from(m), Value::from(ks)],
        vec![Value::from(got)],
    );
}

#[test]
fn a_scan_whose_step_uses_where_and_a_comparison() {
    let v = array![1.0, 2.0, 3.0, -4.0, 5.0, 1.0, -10.0];
    let got = in_steps::clipped_cumsum(v.view(), 5.0).unwrap();
    let mut acc = 0.0;
    let expected: Vec<f64> = v
        .iter()
        .map(|x| {
            acc = if acc + x > 5.0 { 5.0 } else { acc + x };
            acc
        })
        .collect();
    assert_eq!(got.to_vec(), expected);
    assert_eq!(got.to_vec(), vec![1.0, 3.0, 5.0, 1.0, 5.0, 5.0, -5.0]);
    second_opinion(
        in_steps::SOURCE,
        "clipped_cumsum",
        vec![Value::from(v), Value::from(5.0f64)],
        vec![Value::from(got)],
    );

    let v = array![1.0, 2.0, -1.0, 3.0, 0.0, 4.0, 5.0, 6.0];
    let (runs, continuing) = in_steps::positive_runs(v.view()).unwrap();
    let mut run = 0i64;
    let mut expected_runs = Vec::new();
    let mut expected_cont = Vec::new();
    for &x in v.iter() {
        expected_cont.push(x > 0.0 && run > 0);
        run = if x > 0.0 { run + 1 } else { 0 };
        expected_runs.push(run);
    }
    assert_eq!(runs.to_vec(), expected_runs);
    assert_eq!(runs.to_vec(), vec![1, 2, 0, 1, 0, 1, 2, 3]);
    assert_eq!(continuing.to_vec(), expected_cont);
    assert_eq!(
        continuing.to_vec(),
        vec![false, true, false, false, false, false, true, true]
    );
    second_opinion(
        in_steps::SOURCE,
        "positive_runs",
        vec![Value::from(v)],
        vec![Value::from(runs), Value::from(continuing)],
    );

    // Multiples of 1/4, exact in binary, so the >= 1.0 test has no rounding ambiguity.
    let m = array![[0.25, 0.75], [0.5, 0.5], [0.5, -0.25], [0.75, 0.25]];
    let got = in_steps::wrap_columns(m.view()).unwrap();
    let mut h = [0.0f64; 2];
    let mut expected = Array2::<f64>::zeros((4, 2));
    for t in 0..4 {
        for j in 0..2 {
            let s = h[j] + m[[t, j]];
            h[j] = if s >= 1.0 { s - 1.0 } else { s };
            expected[[t, j]] = h[j];
        }
    }
    assert_eq!(got, expected);
    assert_eq!(
        got,
        array![[0.25, 0.75], [0.75, 0.25], [0.25, 0.0], [0.0, 0.25]]
    );
    second_opinion(
        in_steps::SOURCE,
        "wrap_columns",
        vec![Value::from(m)],
        vec![Value::from(got)],
    );
}

#[test]
fn other_families_inside_steps() {
    let idx = array![0i64, 2, 2, -1, 1, 2, -4];
    let bins = Array1::<i64>::zeros(4);
    let got = in_steps::histogram(idx.view(), bins.view()).unwrap();
    let mut expected = [0i64; 4];
    for &i in idx.iter() {
        expected[((i + 4) % 4) as usize] += 1;
    }
    assert_eq!(got.to_vec(), expected.to_vec());
    assert_eq!(got.to_vec(), vec![2, 1, 3, 1]);
    second_opinion(
        in_steps::SOURCE,
        "histogram",
        vec![Value::from(idx), Value::from(bins)],
        vec![Value::from(got)],
    );

    let ks = array![0i64, 1, -2, 7, -9, 10];
    let (f, r, even) = in_steps::mixed(ks.view()).unwrap();
    let expected_f: Vec<f64> = ks
        .iter()
        .map(|&k| np_mod_i64(k, 3) as f64 / 2.0 + (k * k) as f64)
        .collect();
    let expected_r: Vec<i32> = ks.iter().map(|&k| np_mod_i64(-k, 4) as i32).collect();
    let expected_even: Vec<bool> = ks.iter().map(|&k| k != 0 && k % 2 == 0).collect();
    assert_eq!(f.to_vec(), expected_f);
    assert_eq!(r.to_vec(), expected_r);
    assert_eq!(r.to_vec(), vec![0, 3, 2, 1, 1, 2]);
    assert_eq!(even.to_vec(), expected_even);
    second_opinion(
        in_steps::SOURCE,
        "mixed",
        vec![Value::from(ks)],
        vec![Value::from(f), Value::from(r), Value::from(even)],
    );

    // x rows have 4 entries; the step uses x_t[..-1] (3) against h (3) · wᵀ (3x3).
    let x = matrix(6, 4, 31);
    let w = matrix(3, 3, 32);
    let h0 = array![0.1, -0.2, 0.3];
    let got = in_steps::relu_rnn(x.view(), w.view(), h0.view()).unwrap();
    let mut h = h0.to_vec();
    let mut expected = Array2::<f64>::zeros((6, 3));
    for t in 0..6 {
        let next: Vec<f64> = (0..3)
            .map(|i| {
                let pre: f64 = (0..3).map(|j| h[j] * w[[i, j]]).sum::<f64>() + x[[t, i]] * 0.5;
                pre.max(0.0)
            })
            .collect();
        h = next;
        for i in 0..3 {
            expected[[t, i]] = h[i];
        }
    }
    assert_floats(&f64s(&got), &f64s(&expected), 1e-14);
    second_opinion(
        in_steps::SOURCE,
        "relu_rnn",
        vec![Value::from(x), Value::from(w), Value::from(h0)],
        vec![Value::from(got)],
    );
}

mod int_sums {
    scan_tests::program! {
        /// numpy sums i32 (and bool) in i64: no wrap-around at i32::MAX.
        pub fn total(v: ArrayView1<i32>) -> Result<i64> {
            Ok(v.sum())
        }
    }
}

#[test]
fn sum_of_i32_accumulates_in_i64() {
    let v = array![i32::MAX, i32::MAX, 2];
    let got = int_sums::total(v.view()).unwrap();
    assert_eq!(got, 2 * i32::MAX as i64 + 2);
    second_opinion(
        int_sums::SOURCE,
        "total",
        vec![Value::from(v)],
        vec![Value::from(got)],
    );
}

mod shapes {
    scan_tests::program! {
        /// numpy's `x.shape[i]` (negative axes count from the end), `shape(x, i)`,
        /// ndarray's `x.shape()[i]`, `x.len()`, `x.nrows()`, `x.ncols()`: i64 scalars.
        pub fn lengths(x: ArrayView2<f64>) -> Result<(i64, i64, i64, i64, i64, i64, i64)> {
            Ok((x.shape[0], x.shape[-1], shape(x, 1), x.shape()[0], x.len(), x.nrows(), x.ncols()))
        }

        /// A length as `n_steps` and in arithmetic: `a * 2^len(x)` one step at a time.
        pub fn doubling(x: ArrayView1<f32>, a: f64) -> Result<Array1<f64>> {
            let ys = scan(|y| y * 2.0, outputs_info = a, n_steps = x.len());
            Ok(ys)
        }

        /// In a step: each row's mean by its own length, and `arange` of a length.
        pub fn row_means(x: ArrayView2<f64>) -> Result<(Array1<f64>, Array1<i64>)> {
            let (m, s) = scan(
                |x_t| (sum(x_t) / x_t.shape[0], sum(arange(x_t.len()))),
                sequences = x,
            );
            Ok((m, s))
        }
    }
}

#[test]
fn shapes_are_i64_scalars_usable_as_n_steps_and_in_steps() {
    let x = Array2::from_shape_fn((3, 5), |(i, j)| (i * 5 + j) as f64);
    let got = shapes::lengths(x.view()).unwrap();
    assert_eq!(got, (3, 5, 5, 3, 3, 3, 5));
    second_opinion(
        shapes::SOURCE,
        "lengths",
        vec![Value::from(x.clone())],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
            Value::from(got.5),
            Value::from(got.6),
        ],
    );

    let v = Array1::<f32>::zeros(4);
    let ys = shapes::doubling(v.view(), 1.5).unwrap();
    assert_eq!(ys, array![3.0, 6.0, 12.0, 24.0]);
    second_opinion(
        shapes::SOURCE,
        "doubling",
        vec![Value::from(v), Value::from(1.5)],
        vec![Value::from(ys)],
    );
    let empty = Array1::<f32>::zeros(0);
    assert_eq!(shapes::doubling(empty.view(), 1.5).unwrap().len(), 0);

    // sum / length: f64 / i64 is numpy's true division in f64.
    let (m, s) = shapes::row_means(x.view()).unwrap();
    assert_eq!(m, array![2.0, 7.0, 12.0]);
    assert_eq!(s, array![10, 10, 10], "0 + 1 + 2 + 3 + 4");
    second_opinion(
        shapes::SOURCE,
        "row_means",
        vec![Value::from(x)],
        vec![Value::from(m), Value::from(s)],
    );
}

mod products_and_truths {
    scan_tests::program! {
        /// numpy's `prod`, `all`, `any`, whole or along an axis; numbers are true when not 0.
        pub fn reductions(
            x: ArrayView2<f64>,
            k: ArrayView1<i32>,
        ) -> Result<(f64, Array1<f64>, i64, bool, bool, Array1<bool>, Array1<bool>)> {
            Ok((
                prod(x),
                prod(x, 1),
                prod(k),
                all(x),
                any(x > 5.0),
                all(x > 0.0, 0),
                any(x, -1),
            ))
        }

        /// `until(all(...))`: halve every value until all are below 1 (at most 20 steps).
        pub fn halve_all(x0: ArrayView1<f64>) -> Result<Array2<f64>> {
            let xs = scan(
                |x| {
                    let y = x * 0.5;
                    (y, until(all(y < 1.0)))
                },
                outputs_info = x0,
                n_steps = 20,
            );
            Ok(xs)
        }
    }
}

#[test]
fn prod_all_any_follow_numpy() {
    let x = array![[1.0, 2.0, 3.0], [0.0, 4.0, 6.0]];
    let k = array![100_000i32, 100_000, 3];
    let got = products_and_truths::reductions(x.view(), k.view()).unwrap();
    assert_eq!(got.0, 0.0);
    assert_eq!(got.1, array![6.0, 0.0]);
    assert_eq!(
        got.2, 30_000_000_000,
        "i32 is multiplied in i64, as numpy on 64-bit"
    );
    assert!(!got.3, "a zero is false");
    assert!(got.4);
    assert_eq!(got.5, array![false, true, true]);
    assert_eq!(got.6, array![true, true]);
    second_opinion(
        products_and_truths::SOURCE,
        "reductions",
        vec![Value::from(x.clone()), Value::from(k.clone())],
        vec![
            Value::from(got.0),
            Value::from(got.1.clone()),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
            Value::from(got.5.clone()),
            Value::from(got.6.clone()),
        ],
    );
    // Empty: prod 1, all true, any false.
    let e = Array2::<f64>::zeros((2, 0));
    let got = products_and_truths::reductions(e.view(), Array1::<i32>::zeros(0).view()).unwrap();
    assert_eq!((got.0, got.2, got.3, got.4), (1.0, 1, true, false));
    assert_eq!(got.1, array![1.0, 1.0]);
    assert_eq!(got.6, array![false, false]);

    let x0 = array![3.0, 20.0, 0.5];
    let xs = products_and_truths::halve_all(x0.view()).unwrap();
    assert_eq!(xs.nrows(), 5, "20 / 32 < 1 after 5 halvings");
    assert_eq!(
        xs.row(4).to_vec(),
        vec![3.0 / 32.0, 20.0 / 32.0, 0.5 / 32.0]
    );
    second_opinion(
        products_and_truths::SOURCE,
        "halve_all",
        vec![Value::from(x0)],
        vec![Value::from(xs)],
    );
}

mod arg_extremes {
    scan_tests::program! {
        /// numpy's `argmax`/`argmin`: flattened without an axis, per lane with one; i64.
        pub fn indices(x: ArrayView2<f64>, b: ArrayView1<bool>) -> Result<(i64, i64, Array1<i64>, Array1<i64>, i64)> {
            Ok((argmax(x), argmin(x), argmax(x, 1), x.argmin(0), argmax(b)))
        }

        /// A Viterbi-like step: each row's best previous state, as a sequence of indices.
        pub fn best_paths(scores: ArrayView3<f32>) -> Result<Array2<i64>> {
            let best = scan(|s_t| argmax(s_t, -1), sequences = scores);
            Ok(best)
        }
    }
}

#[test]
fn argmax_and_argmin_follow_numpy() {
    let x = array![[3.0, 9.0, 9.0], [-1.0, 4.0, -1.0]];
    let b = array![false, true, true];
    let got = arg_extremes::indices(x.view(), b.view()).unwrap();
    assert_eq!(got, (1, 3, array![1, 1], array![1, 1, 1], 1));
    second_opinion(
        arg_extremes::SOURCE,
        "indices",
        vec![Value::from(x.clone()), Value::from(b.clone())],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
        ],
    );
    // The first NaN is both the argmax and the argmin, as in numpy.
    let mut with_nan = x.clone();
    with_nan[[1, 2]] = f64::NAN;
    with_nan[[1, 0]] = f64::NAN;
    let got = arg_extremes::indices(with_nan.view(), b.view()).unwrap();
    assert_eq!((got.0, got.1), (3, 3));
    assert_eq!(got.2, array![1, 0]);
    // Nothing to take an index from: an error naming the expression.
    let empty = Array2::<f64>::zeros((2, 0));
    let e = arg_extremes::indices(empty.view(), b.view()).unwrap_err();
    assert!(e.to_string().contains("argmax(x)"), "{e}");

    let scores = Array3::from_shape_fn((4, 2, 5), |(t, r, s)| {
        ((t * 7 + r * 3 + s * 11) % 13) as f32
    });
    let best = arg_extremes::best_paths(scores.view()).unwrap();
    for t in 0..4 {
        for r in 0..2 {
            let lane: Vec<f32> = (0..5).map(|s| scores[[t, r, s]]).collect();
            let want = lane
                .iter()
                .enumerate()
                .fold(0, |m, (i, &v)| if v > lane[m] { i } else { m });
            assert_eq!(best[[t, r]], want as i64, "t = {t}, row {r}");
        }
    }
    second_opinion(
        arg_extremes::SOURCE,
        "best_paths",
        vec![Value::from(scores)],
        vec![Value::from(best)],
    );
}

mod any_axis {
    scan_tests::program! {
        /// numpy's `x[:, 1:3]`, `x[1, :]`, `x[:, -1]`, `x[0, 2]`, `x[:, 1:3][0]`, spelled
        /// with a tuple index.
        pub fn picks(x: ArrayView2<f64>) -> Result<(Array2<f64>, Array1<f64>, Array1<f64>, f64, Array1<f64>)> {
            Ok((x[(.., 1..3)], x[(1, ..)], x[(.., -1)], x[(0, 2)], x[(.., 1..3)][0]))
        }

        /// numpy's `m[:, None] * c`, `x[:, 0, 1:]` of a 3-d value, and
        /// `set_subtensor(x[:, 0], v)`.
        pub fn shapes(m: ArrayView1<f64>, c: ArrayView1<f64>, t: ArrayView3<f64>, x: ArrayView2<f64>, v: f64)
            -> Result<(Array2<f64>, Array2<f64>, Array2<f64>)> {
            Ok((m[(.., None)] * c, t[(.., 0, 1..)], set_subtensor(x[(.., 0)], v)))
        }

        /// An LSTM-like step cuts its gate block by columns.
        pub fn gates(z: ArrayView3<f32>) -> Result<Array3<f32>> {
            let out = scan(
                |z_t| {
                    let n = (z_t.shape[1] / 2) as i64;
                    sigmoid(z_t[(.., 0..n)]) * tanh(z_t[(.., n..)])
                },
                sequences = z,
            );
            Ok(out)
        }
    }
}

#[test]
fn indexing_on_any_axis_with_a_tuple() {
    use any_axis::{gates, picks, shapes};
    let x = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f64);
    let got = picks(x.view()).unwrap();
    assert_eq!(got.0, x.slice(s![.., 1..3]));
    assert_eq!(got.1, x.row(1));
    assert_eq!(got.2, x.column(3));
    assert_eq!(got.3, 2.0);
    assert_eq!(
        got.4,
        array![1.0, 2.0],
        "chained indexing starts again at axis 0"
    );
    second_opinion(
        any_axis::SOURCE,
        "picks",
        vec![Value::from(x.clone())],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
        ],
    );

    let m = array![1.0, 2.0];
    let c = array![10.0, 20.0, 30.0];
    let t = Array3::from_shape_fn((2, 3, 4), |(a, b, d)| (a * 100 + b * 10 + d) as f64);
    let got = shapes(m.view(), c.view(), t.view(), x.view(), -1.0).unwrap();
    assert_eq!(got.0, array![[10.0, 20.0, 30.0], [20.0, 40.0, 60.0]]);
    assert_eq!(got.1, t.slice(s![.., 0, 1..]));
    let mut want = x.clone();
    want.column_mut(0).fill(-1.0);
    assert_eq!(got.2, want);
    second_opinion(
        any_axis::SOURCE,
        "shapes",
        vec![
            Value::from(m),
            Value::from(c),
            Value::from(t),
            Value::from(x.clone()),
            Value::from(-1.0),
        ],
        vec![Value::from(got.0), Value::from(got.1), Value::from(got.2)],
    );

    let z = Array3::from_shape_fn((3, 2, 6), |(a, b, d)| ((a + b * 2 + d) as f32 - 4.0) * 0.3);
    let out = gates(z.view()).unwrap();
    assert_eq!(out.dim(), (3, 2, 3));
    for ((a, b, d), &v) in out.indexed_iter() {
        let s = 1.0 / (1.0 + (-z[[a, b, d]]).exp());
        let want = s * z[[a, b, d + 3]].tanh();
        assert!((v - want).abs() < 1e-6, "{v} vs {want}");
    }
    second_opinion(
        any_axis::SOURCE,
        "gates",
        vec![Value::from(z)],
        vec![Value::from(out)],
    );
}

#[test]
fn an_index_out_of_range_on_another_axis_is_an_err() {
    let x = Array2::<f64>::zeros((3, 4));
    let e = any_axis::picks(Array2::<f64>::zeros((3, 2)).view()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "index 2 is out of bounds for `x[(0, 2)]` with length 2"
    );
    assert!(any_axis::picks(x.view()).is_ok());
}

mod floor_division {
    scan_tests::program! {
        /// numpy's `//` (`floor_divide`): toward negative infinity; `x // 0` is 0 for
        /// integers, `x / 0` for floats. Integer results index and slice.
        pub fn quotients(a: ArrayView1<i64>, b: ArrayView1<i64>, x: ArrayView1<f64>, y: ArrayView1<f64>)
            -> Result<(Array1<i64>, Array1<f64>, Array1<f64>)> {
            let half = floor_div(x.len(), 2);
            Ok((floor_div(a, b), floor_divide(x, y), x[..half]))
        }
    }
}

#[test]
fn floor_division_follows_numpy() {
    let a = array![7i64, -7, 7, -7, 5, i64::MIN];
    let b = array![2i64, 2, -2, -2, 0, -1];
    let x = array![7.0, -7.0, 7.5, -0.5, 1.0, 0.0];
    let y = array![2.0, 2.0, -2.0, 2.0, 0.0, -3.0];
    let got = floor_division::quotients(a.view(), b.view(), x.view(), y.view()).unwrap();
    // numpy: np.array([7,-7,7,-7,5,MIN]) // [2,2,-2,-2,0,-1]
    assert_eq!(got.0, array![3, -4, -4, 3, 0, i64::MIN]);
    // np.floor_divide([7.,-7.,7.5,-0.5,1.,0.], [2.,2.,-2.,2.,0.,-3.])
    assert_eq!(&got.1.to_vec()[..4], &[3.0, -4.0, -4.0, -1.0]);
    assert_eq!(got.1[4], f64::INFINITY);
    assert!(
        got.1[5] == 0.0 && got.1[5].is_sign_negative(),
        "0 // -3 is -0.0"
    );
    assert_eq!(got.2, array![7.0, -7.0, 7.5]);
    second_opinion(
        floor_division::SOURCE,
        "quotients",
        vec![
            Value::from(a),
            Value::from(b),
            Value::from(x),
            Value::from(y),
        ],
        vec![Value::from(got.0), Value::from(got.1), Value::from(got.2)],
    );
}

mod spreads {
    scan_tests::program! {
        /// numpy's `var`, `std` (ddof 0) and scipy's `logsumexp`, whole or along an axis.
        pub fn moments(x: ArrayView2<f64>, k: ArrayView1<i64>) -> Result<(f64, Array1<f64>, f64, f64, Array1<f64>)> {
            Ok((var(x), std(x, 1), var(k), logsumexp(x), logsumexp(x, 0)))
        }

        /// An HMM's forward pass in log space: alpha_t = logsumexp(alpha_{t-1}[:, None] +
        /// log_a, 0) + log_b_t.
        pub fn forward(log_b: ArrayView2<f64>, log_a: ArrayView2<f64>, alpha0: ArrayView1<f64>) -> Result<Array2<f64>> {
            let alphas = scan(
                |log_b_t, alpha, log_a| logsumexp(alpha[(.., None)] + log_a, 0) + log_b_t,
                sequences = log_b,
                outputs_info = alpha0,
                non_sequences = log_a,
            );
            Ok(alphas)
        }
    }
}

#[test]
fn var_std_logsumexp_and_an_hmm_forward_pass() {
    let x = array![[1.0, 2.0, 4.0], [1000.0, 1000.0, 990.0]];
    let k = array![1i64, 2, 3, 4];
    let got = spreads::moments(x.view(), k.view()).unwrap();
    let flat: Vec<f64> = x.iter().copied().collect();
    let mean = flat.iter().sum::<f64>() / 6.0;
    let var = flat.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / 6.0;
    assert!((got.0 - var).abs() <= 1e-12 * var);
    let row0_var: f64 = [1.0f64, 2.0, 4.0]
        .iter()
        .map(|v| (v - 7.0 / 3.0).powi(2))
        .sum::<f64>()
        / 3.0;
    assert!((got.1[0] - row0_var.sqrt()).abs() < 1e-14);
    assert_eq!(got.2, 1.25);
    // 1000 + ln(2 + e^-10 + e^-996 + ...): no overflow at magnitudes of 1e3.
    let want = 1000.0 + (2.0 + (-10f64).exp()).ln();
    assert!((got.3 - want).abs() < 1e-12, "{} vs {want}", got.3);
    assert!((got.4[0] - (1000.0 + (-999f64).exp().ln_1p())).abs() < 1e-12);
    second_opinion(
        spreads::SOURCE,
        "moments",
        vec![Value::from(x.clone()), Value::from(k)],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
        ],
    );

    // Forward pass against a plain loop (probabilities small enough to underflow without
    // logs: 200 steps of about 1e-3).
    let (t_len, s) = (200, 3);
    let log_a = array![[0.8f64, 0.1, 0.1], [0.2, 0.7, 0.1], [0.25, 0.25, 0.5]].mapv(f64::ln);
    let log_b = Array2::from_shape_fn((t_len, s), |(t, i)| {
        (((t * 7 + i * 3) % 11) as f64 * 1e-4 + 1e-3).ln()
    });
    let alpha0 = array![0.5f64, 0.3, 0.2].mapv(f64::ln);
    let alphas = spreads::forward(log_b.view(), log_a.view(), alpha0.view()).unwrap();
    let mut alpha = alpha0.to_vec();
    for t in 0..t_len {
        let next: Vec<f64> = (0..s)
            .map(|j| {
                let terms: Vec<f64> = (0..s).map(|i| alpha[i] + log_a[[i, j]]).collect();
                let m = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                m + terms.iter().map(|v| (v - m).exp()).sum::<f64>().ln() + log_b[[t, j]]
            })
            .collect();
        for j in 0..s {
            let got = alphas[[t, j]];
            assert!(
                (got - next[j]).abs() <= 1e-12 * next[j].abs(),
                "t {t}, state {j}: {got} vs {}",
                next[j]
            );
        }
        alpha = next;
    }
    assert!(
        alphas[[t_len - 1, 0]] < -1000.0,
        "far below f64's smallest probability"
    );
    second_opinion(
        spreads::SOURCE,
        "forward",
        vec![Value::from(log_b), Value::from(log_a), Value::from(alpha0)],
        vec![Value::from(alphas)],
    );
}

mod softmaxes {
    scan_tests::program! {
        /// `softmax`/`log_softmax` over all elements or along an axis, stable at 1e3.
        pub fn normalize(x: ArrayView2<f64>) -> Result<(Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>)> {
            Ok((softmax(x, -1), softmax(x, 0), log_softmax(x, 1), softmax(x)))
        }
    }
}

#[test]
fn softmax_and_log_softmax_are_stable() {
    let x = array![[1000.0, 1001.0, 999.0], [-1000.0, -1000.0, -1003.0]];
    let got = softmaxes::normalize(x.view()).unwrap();
    let soft = |v: &[f64]| -> Vec<f64> {
        let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let s: f64 = v.iter().map(|a| (a - m).exp()).sum();
        v.iter().map(|a| (a - m).exp() / s).collect()
    };
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-14 + 1e-12 * b.abs();
    for r in 0..2 {
        let want = soft(&x.row(r).to_vec());
        for (c, w) in want.iter().enumerate() {
            assert!(close(got.0[[r, c]], *w), "row softmax {r} {c}");
            assert!(close(got.2[[r, c]], w.ln()), "log_softmax {r} {c}");
        }
    }
    for c in 0..3 {
        let want = soft(&x.column(c).to_vec());
        for (r, w) in want.iter().enumerate() {
            assert!(close(got.1[[r, c]], *w), "column softmax {r} {c}");
        }
    }
    let all = soft(&x.iter().copied().collect::<Vec<_>>());
    for (g, w) in got.3.iter().zip(&all) {
        assert!(close(*g, *w));
    }
    assert!((got.0.row(1).sum() - 1.0).abs() < 1e-15);
    second_opinion(
        softmaxes::SOURCE,
        "normalize",
        vec![Value::from(x)],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
        ],
    );
}

mod new_axes {
    scan_tests::program! {
        /// numpy's `expand_dims` (a view) and `outer` of two vectors.
        pub fn axes(v: ArrayView1<f64>, m: ArrayView2<f64>, w: ArrayView1<f64>)
            -> Result<(Array2<f64>, Array2<f64>, Array3<f64>, Array2<f64>)> {
            Ok((expand_dims(v, 0), expand_dims(v, -1), expand_dims(m, 1), outer(v, w)))
        }
    }
}

#[test]
fn expand_dims_and_outer_follow_numpy() {
    let v = array![1.0, 2.0, 3.0];
    let m = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let w = array![10.0, 100.0];
    let got = new_axes::axes(v.view(), m.view(), w.view()).unwrap();
    assert_eq!(got.0, array![[1.0, 2.0, 3.0]]);
    assert_eq!(got.1, array![[1.0], [2.0], [3.0]]);
    assert_eq!(got.2.shape(), &[2, 1, 3]);
    assert_eq!(got.2.index_axis(Axis(1), 0), m);
    assert_eq!(got.3, array![[10.0, 100.0], [20.0, 200.0], [30.0, 300.0]]);
    second_opinion(
        new_axes::SOURCE,
        "axes",
        vec![Value::from(v), Value::from(m), Value::from(w)],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
        ],
    );
}

mod running {
    scan_tests::program! {
        /// numpy's `cumsum`/`cumprod`: flattened without an axis, along one with it; i32 in
        /// i64. In a step too.
        pub fn cumulative(m: ArrayView2<i32>, x: ArrayView2<f64>) -> Result<(Array1<i64>, Array2<i64>, Array2<f64>, Array2<f64>)> {
            let rows = scan(|x_t| cumsum(x_t), sequences = x);
            Ok((cumsum(m), cumprod(m, 1), x.cumsum(0), rows))
        }
    }
}

#[test]
fn cumsum_and_cumprod_follow_numpy() {
    let m = array![[1i32, 2, 3], [4, 5, 6]];
    let x = array![[0.5, 1.5, 2.0], [1.0, -1.0, 4.0]];
    let got = running::cumulative(m.view(), x.view()).unwrap();
    assert_eq!(got.0, array![1i64, 3, 6, 10, 15, 21]);
    assert_eq!(got.1, array![[1i64, 2, 6], [4, 20, 120]]);
    assert_eq!(got.2, array![[0.5, 1.5, 2.0], [1.5, 0.5, 6.0]]);
    assert_eq!(got.3, array![[0.5, 2.0, 4.0], [1.0, 0.0, 4.0]]);
    second_opinion(
        running::SOURCE,
        "cumulative",
        vec![Value::from(m), Value::from(x)],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
        ],
    );
}

mod rust_constants {
    scan_tests::program! {
        /// Rust's constants, typed as Rust types them.
        pub fn constants(x: ArrayView1<f32>) -> Result<(Array1<f32>, f64, f32, f64, i64, Array1<f64>)> {
            Ok((
                maximum(x, f32::NEG_INFINITY),
                std::f64::consts::PI,
                core::f32::consts::E,
                f64::INFINITY,
                i64::MAX,
                x * f64::EPSILON,
            ))
        }
    }
}

#[test]
fn rust_constants_are_typed_literals() {
    let x = array![1.0f32, -2.0];
    let got = rust_constants::constants(x.view()).unwrap();
    assert_eq!(got.0, x);
    assert_eq!(got.1, std::f64::consts::PI);
    assert_eq!(got.2, std::f32::consts::E);
    assert_eq!(got.3, f64::INFINITY);
    assert_eq!(got.4, i64::MAX);
    assert_eq!(
        got.5,
        array![f64::EPSILON, -2.0 * f64::EPSILON],
        "f32 * f64 is f64"
    );
    second_opinion(
        rust_constants::SOURCE,
        "constants",
        vec![Value::from(x)],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
            Value::from(got.5),
        ],
    );
}

mod constructors {
    scan_tests::program! {
        /// numpy's `zeros`, `ones`, `full`, `eye`, with shapes made of scalars; the elman
        /// state of zeros made inside the program.
        pub fn made(x: ArrayView2<f32>, n: i64) -> Result<(Array2<f64>, Array1<f64>, Array2<i64>, Array2<f32>, Array2<f64>)> {
            Ok((zeros((x.shape[0], n)), ones(n), full((2, 2), 7), full((x.shape[0], x.shape[1]), 0.5f32) + x, eye(n)))
        }

        /// An RNN whose initial state is `zeros` of the batch and hidden sizes.
        pub fn rnn(x: ArrayView3<f64>, w: ArrayView2<f64>) -> Result<Array3<f64>> {
            let h0 = zeros((x.shape[1], w.shape[1]));
            let h = scan(|x_t, h_tm1, w| tanh(x_t + h_tm1.dot(w)), sequences = x, outputs_info = h0, non_sequences = w);
            Ok(h)
        }
    }
}

#[test]
fn zeros_ones_full_eye_make_their_shapes() {
    let x = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let got = constructors::made(x.view(), 3).unwrap();
    assert_eq!(got.0, Array2::<f64>::zeros((2, 3)));
    assert_eq!(got.1, array![1.0, 1.0, 1.0]);
    assert_eq!(got.2, array![[7i64, 7], [7, 7]]);
    assert_eq!(got.3, x.mapv(|v| v + 0.5));
    assert_eq!(got.4, Array2::<f64>::eye(3));
    second_opinion(
        constructors::SOURCE,
        "made",
        vec![Value::from(x.clone()), Value::from(3i64)],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
        ],
    );
    let e = constructors::made(x.view(), -2).unwrap_err();
    assert!(e.to_string().contains("negative length -2"), "{e}");

    let xs = Array3::from_shape_fn((4, 2, 3), |(t, b, i)| ((t + b + i) as f64 - 3.0) * 0.2);
    let w = Array2::from_shape_fn((3, 3), |(i, j)| ((i * 3 + j) as f64 - 4.0) * 0.1);
    let h = constructors::rnn(xs.view(), w.view()).unwrap();
    let mut state = Array2::<f64>::zeros((2, 3));
    for t in 0..4 {
        state = (&xs.index_axis(Axis(0), t) + &state.dot(&w)).mapv(f64::tanh);
        for (g, want) in h.index_axis(Axis(0), t).iter().zip(state.iter()) {
            assert!((g - want).abs() < 1e-14);
        }
    }
    second_opinion(
        constructors::SOURCE,
        "rnn",
        vec![Value::from(xs), Value::from(w)],
        vec![Value::from(h)],
    );
}

mod permutations {
    scan_tests::program! {
        /// numpy's `transpose(x, axes)`: a view with axis k of the result axis `axes[k]` of x.
        pub fn permute(t: ArrayView3<f64>) -> Result<(Array3<f64>, Array3<f64>, Array2<f64>)> {
            let p = transpose(t, (1, 0, 2));
            Ok((p, transpose(t, (-1, 0, 1)), p[0] * 2.0))
        }
    }
}

#[test]
fn transpose_with_axes_follows_numpy() {
    let t = Array3::from_shape_fn((2, 3, 4), |(a, b, c)| (a * 100 + b * 10 + c) as f64);
    let got = permutations::permute(t.view()).unwrap();
    assert_eq!(got.0, t.view().permuted_axes([1, 0, 2]));
    assert_eq!(got.1, t.view().permuted_axes([2, 0, 1]));
    assert_eq!(got.1.shape(), &[4, 2, 3]);
    assert_eq!(got.2, t.index_axis(Axis(1), 0).mapv(|v| v * 2.0));
    second_opinion(
        permutations::SOURCE,
        "permute",
        vec![Value::from(t)],
        vec![Value::from(got.0), Value::from(got.1), Value::from(got.2)],
    );
}

mod reshapes {
    scan_tests::program! {
        /// numpy's `reshape`: row-major order, one length may be -1.
        pub fn reshaped(x: ArrayView2<f64>, n: i64) -> Result<(Array2<f64>, Array1<f64>, Array3<f64>)> {
            Ok((reshape(x, (n, -1)), reshape(x.t(), -1), reshape(x, (1, x.len(), -1))))
        }
    }
}

#[test]
fn reshape_follows_numpy() {
    let x = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let got = reshapes::reshaped(x.view(), 3).unwrap();
    assert_eq!(got.0, array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]);
    assert_eq!(got.1, array![1.0, 4.0, 2.0, 5.0, 3.0, 6.0], "x.T flattened");
    assert_eq!(got.2.shape(), &[1, 2, 3]);
    second_opinion(
        reshapes::SOURCE,
        "reshaped",
        vec![Value::from(x.clone()), Value::from(3i64)],
        vec![Value::from(got.0), Value::from(got.1), Value::from(got.2)],
    );
    let e = reshapes::reshaped(x.view(), 4).unwrap_err();
    assert!(
        e.to_string()
            .contains("cannot reshape an array of shape [2, 3] (6 elements) into [4, -1]"),
        "{e}"
    );
}

mod joins {
    scan_tests::program! {
        /// numpy's `concatenate` (axis 0 by default, negative axes, a tuple of arrays),
        /// `stack`, and lists `[a, b, c]` (`np.array([...])`), dtypes promoted.
        pub fn joined(a: ArrayView2<f64>, b: ArrayView2<f64>, v: ArrayView1<i32>, x: f64)
            -> Result<(Array2<f64>, Array2<f64>, Array3<f64>, Array2<i32>, Array1<f64>, Array1<f64>, Array1<bool>)> {
            Ok((
                concatenate([a, b]),
                concatenate((a, b), -1),
                stack([a, b], 1),
                stack([v, v * 2], -1),
                [x, 2.0 * x, 1],
                concatenate([v, [x, -x]]),
                [x > 0.0, false],
            ))
        }

        /// Untyped literals in a list adapt to the typed items (f32); the list itself is a
        /// typed array (f64 literals), as numpy's `y * np.array([1.0, 2.0])` is f64.
        pub fn list_dtypes(y: f32) -> Result<(Array1<f32>, Array1<f64>)> {
            Ok(([y, 1.5, 2], y * [1.0, 2.0]))
        }

        /// PyTensor's step shapes: a list of results is several outputs (not one stacked
        /// array), and `([a, b], until(c))`.
        pub fn list_results(u: ArrayView1<f64>, n: i64) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            let (a, b) = scan(|u_t, acc| [acc + u_t, u_t * 2.0], sequences = u, outputs_info = [0.0, None]);
            let (x, y) = scan(|x| ([x * 2.0, x], until(x > 10.0)), outputs_info = [1.0, None], n_steps = n);
            Ok((a, b, x, y))
        }

        /// An AR(2) residual: the step stacks its taps into a vector.
        pub fn ar2(u: ArrayView1<f64>, w: ArrayView1<f64>) -> Result<Array1<f64>> {
            let ys = scan(
                |u_tm2, u_tm1, u_t, w| u_t - dot(w, [u_tm1, u_tm2]),
                sequences = taps(u, [-2, -1, 0]),
                non_sequences = w,
            );
            Ok(ys)
        }
    }
}

#[test]
fn concatenate_stack_and_lists_follow_numpy() {
    let a = array![[1.0, 2.0], [3.0, 4.0]];
    let b = array![[5.0, 6.0], [7.0, 8.0]];
    let v = array![1, 2, 3];
    let got = joins::joined(a.view(), b.view(), v.view(), 0.5).unwrap();
    assert_eq!(
        got.0,
        array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]
    );
    assert_eq!(got.1, array![[1.0, 2.0, 5.0, 6.0], [3.0, 4.0, 7.0, 8.0]]);
    assert_eq!(
        got.2,
        array![[[1.0, 2.0], [5.0, 6.0]], [[3.0, 4.0], [7.0, 8.0]]],
        "stack on axis 1: out[i, k, j] = parts[k][i, j]"
    );
    assert_eq!(got.3, array![[1, 2], [2, 4], [3, 6]]);
    assert_eq!(got.4, array![0.5, 1.0, 1.0]);
    assert_eq!(
        got.5,
        array![1.0, 2.0, 3.0, 0.5, -0.5],
        "i32 and f64 give f64"
    );
    assert_eq!(got.6, array![true, false]);
    second_opinion(
        joins::SOURCE,
        "joined",
        vec![
            Value::from(a.clone()),
            Value::from(b),
            Value::from(v.clone()),
            Value::from(0.5),
        ],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
            Value::from(got.5),
            Value::from(got.6),
        ],
    );

    // Lengths that disagree on another axis than the one joined: an Err with both shapes,
    // from the generated code and from the evaluator.
    let c = array![[5.0, 6.0, 7.0]];
    let e = joins::joined(a.view(), c.view(), v.view(), 0.5).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid `concatenate([a, b])`: cannot concatenate arrays of shapes [2, 2] and [1, 3] \
         along axis 0: their lengths on axis 1 differ"
    );
    let e = common::evaluate_err(
        joins::SOURCE,
        "joined",
        vec![
            Value::from(a),
            Value::from(c),
            Value::from(v),
            Value::from(0.5),
        ],
    );
    assert!(
        e.contains("concatenate([a, b])") && e.contains("[2, 2] and [1, 3]"),
        "{e}"
    );

    let got = joins::list_dtypes(0.25).unwrap();
    assert_eq!(got.0, array![0.25f32, 1.5, 2.0]);
    assert_eq!(got.1, array![0.25, 0.5]);
    second_opinion(
        joins::SOURCE,
        "list_dtypes",
        vec![Value::from(0.25f32)],
        vec![Value::from(got.0), Value::from(got.1)],
    );

    let u = array![1.0, 2.0, 3.0];
    let got = joins::list_results(u.view(), 10).unwrap();
    assert_eq!(got.0, array![1.0, 3.0, 6.0]);
    assert_eq!(got.1, array![2.0, 4.0, 6.0]);
    assert_eq!(
        got.2,
        array![2.0, 4.0, 8.0, 16.0, 32.0],
        "stops after x = 16 > 10"
    );
    assert_eq!(got.3, array![1.0, 2.0, 4.0, 8.0, 16.0]);
    second_opinion(
        joins::SOURCE,
        "list_results",
        vec![Value::from(u), Value::from(10i64)],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
        ],
    );

    let u = array![1.0, 2.0, 4.0, 8.0, 16.0];
    let w = array![0.5, 0.25];
    let ys = joins::ar2(u.view(), w.view()).unwrap();
    // y_t = u_t - (0.5 u_{t-1} + 0.25 u_{t-2})
    assert_eq!(ys, array![4.0 - 1.25, 8.0 - 2.5, 16.0 - 5.0]);
    second_opinion(
        joins::SOURCE,
        "ar2",
        vec![Value::from(u), Value::from(w)],
        vec![Value::from(ys)],
    );
}

mod squeezes {
    scan_tests::program! {
        /// numpy's `squeeze` (one axis, a tuple of axes, down to a scalar) and
        /// `broadcast_to` (new leading axes, an axis of length 1 repeated, a scalar).
        pub fn reshaped(x: ArrayView3<f64>, y: ArrayView3<i32>, v: ArrayView1<f64>, n: i64)
            -> Result<(Array2<f64>, Array1<i32>, i32, Array2<f64>, Array3<f64>, f64)> {
            Ok((
                squeeze(x, 1),
                squeeze(y, (0, -1)),
                squeeze(y[(.., 0..1)], (0, 1, 2)),
                broadcast_to(v, (n, 3)),
                broadcast_to(x, (2, 2, x.shape[2])),
                sum(broadcast_to(2.0, (n, 2))),
            ))
        }

        /// Each row broadcast to a matrix's shape inside a step.
        pub fn rows(r: ArrayView2<f64>, m: ArrayView2<f64>) -> Result<Array1<f64>> {
            let out = map(|r_t| sum(broadcast_to(r_t, (2, 3)) * m), sequences = r);
            Ok(out)
        }
    }
}

#[test]
fn squeeze_and_broadcast_to_follow_numpy() {
    let x = Array3::from_shape_fn((2, 1, 3), |(i, _, k)| (i * 3 + k) as f64);
    let y = Array3::from_shape_vec((1, 3, 1), vec![7, 8, 9]).unwrap();
    let v = array![1.0, 2.0, 3.0];
    let args = |x: &Array3<f64>, v: &Array1<f64>| {
        vec![
            Value::from(x.clone()),
            Value::from(y.clone()),
            Value::from(v.clone()),
            Value::from(2i64),
        ]
    };
    let got = squeezes::reshaped(x.view(), y.view(), v.view(), 2).unwrap();
    assert_eq!(got.0, array![[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]);
    assert_eq!(got.1, array![7, 8, 9]);
    assert_eq!(got.2, 7);
    assert_eq!(got.3, array![[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]);
    assert_eq!(
        got.4,
        array![
            [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]],
            [[3.0, 4.0, 5.0], [3.0, 4.0, 5.0]]
        ]
    );
    assert_eq!(got.5, 8.0, "2.0 broadcast to (2, 2), summed");
    second_opinion(
        squeezes::SOURCE,
        "reshaped",
        args(&x, &v),
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
            Value::from(got.5),
        ],
    );

    // An axis of another length than 1, a shape the value does not broadcast to: Errs
    // with the shapes, from both.
    let x2 = Array3::<f64>::zeros((2, 2, 3));
    let e = squeezes::reshaped(x2.view(), y.view(), v.view(), 2).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid `squeeze(x, 1)`: cannot squeeze axis 1 of an array of shape [2, 2, 3]: its \
         length is 2, not 1"
    );
    let msg = common::evaluate_err(squeezes::SOURCE, "reshaped", args(&x2, &v));
    assert!(
        msg.contains("squeeze(x, 1)") && msg.contains("[2, 2, 3]"),
        "{msg}"
    );
    let v4 = array![1.0, 2.0, 3.0, 4.0];
    let e = squeezes::reshaped(x.view(), y.view(), v4.view(), 2).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid `broadcast_to(v,(n, 3))`: cannot broadcast an array of shape [4] to the \
         shape [2, 3]"
    );
    let msg = common::evaluate_err(squeezes::SOURCE, "reshaped", args(&x, &v4));
    assert!(
        msg.contains("broadcast_to(v,(n, 3))") && msg.contains("[4]"),
        "{msg}"
    );

    let r = array![[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]];
    let m = array![[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]];
    let out = squeezes::rows(r.view(), m.view()).unwrap();
    assert_eq!(out, array![6.0 + 12.0, 1.0 + 2.0]);
    second_opinion(
        squeezes::SOURCE,
        "rows",
        vec![Value::from(r), Value::from(m)],
        vec![Value::from(out)],
    );
}

mod triangles {
    scan_tests::program! {
        /// numpy's `diag` both ways (with offsets), `tril`/`triu` (of a matrix and of a
        /// stack of matrices) and PyTensor's `identity_like`.
        pub fn parts(m: ArrayView2<f64>, v: ArrayView1<i32>, k: i64)
            -> Result<(Array1<f64>, Array1<f64>, Array2<i32>, Array2<i32>, Array2<f64>, Array2<f64>, Array3<f64>, Array2<f64>, Array2<bool>)> {
            Ok((
                diag(m),
                diag(m, -1),
                diag(v),
                diag(v, k),
                tril(m),
                triu(m, 1),
                tril(stack([m, m * 10.0]), -k),
                identity_like(m),
                identity_like(m > 0.0),
            ))
        }

        /// A step's row: the sum above the diagonal of its outer product, plus its trace.
        pub fn quadratic(x: ArrayView2<f64>) -> Result<Array1<f64>> {
            let out = map(|x_t| {
                let p = outer(x_t, x_t);
                sum(triu(p, 1)) + sum(diag(p))
            }, sequences = x);
            Ok(out)
        }
    }
}

#[test]
fn diag_tril_triu_identity_like_follow_numpy() {
    let m = array![
        [1.0, 2.0, 3.0, 4.0],
        [5.0, 6.0, 7.0, 8.0],
        [9.0, 10.0, 11.0, 12.0]
    ];
    let v = array![1, 2];
    let got = triangles::parts(m.view(), v.view(), 1).unwrap();
    assert_eq!(got.0, array![1.0, 6.0, 11.0]);
    assert_eq!(got.1, array![5.0, 10.0]);
    assert_eq!(got.2, array![[1, 0], [0, 2]]);
    assert_eq!(got.3, array![[0, 1, 0], [0, 0, 2], [0, 0, 0]]);
    assert_eq!(
        got.4,
        array![
            [1.0, 0.0, 0.0, 0.0],
            [5.0, 6.0, 0.0, 0.0],
            [9.0, 10.0, 11.0, 0.0]
        ]
    );
    assert_eq!(
        got.5,
        array![
            [0.0, 2.0, 3.0, 4.0],
            [0.0, 0.0, 7.0, 8.0],
            [0.0, 0.0, 0.0, 12.0]
        ]
    );
    let below = array![
        [0.0, 0.0, 0.0, 0.0],
        [5.0, 0.0, 0.0, 0.0],
        [9.0, 10.0, 0.0, 0.0]
    ];
    assert_eq!(got.6.index_axis(Axis(0), 0), below);
    assert_eq!(got.6.index_axis(Axis(0), 1), &below * 10.0);
    assert_eq!(
        got.7,
        array![
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0]
        ]
    );
    assert_eq!(got.8, got.7.mapv(|x| x == 1.0));
    second_opinion(
        triangles::SOURCE,
        "parts",
        vec![Value::from(m), Value::from(v), Value::from(1i64)],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
            Value::from(got.5),
            Value::from(got.6),
            Value::from(got.7),
            Value::from(got.8),
        ],
    );

    let x = array![[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]];
    let q = triangles::quadratic(x.view()).unwrap();
    // [1, 2, 3]: above the diagonal 2 + 3 + 6, trace 1 + 4 + 9; [0.5, -1, 0]: -0.5, 1.25.
    assert_eq!(q, array![11.0 + 14.0, -0.5 + 1.25]);
    second_opinion(
        triangles::SOURCE,
        "quadratic",
        vec![Value::from(x)],
        vec![Value::from(q)],
    );
}

mod reversals {
    scan_tests::program! {
        /// numpy's `v[::-1]`, `v[1:6:2]`, `v[5:1:-2]`, `m[:, ::-1]`, `m[::-1, 1:]`,
        /// `flip(m, 0)`, `flip(m)`, `v[::s]` and `m[:, ::2] = -1`, spelled with Python's
        /// `slice(start, stop, step)`.
        pub fn picks(v: ArrayView1<i64>, m: ArrayView2<f64>, s: i64)
            -> Result<(Array1<i64>, Array1<i64>, Array1<i64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array1<i64>, Array2<f64>)> {
            Ok((
                v[slice(None, None, -1)],
                v[slice(1, 6, 2)],
                v[slice(5, 1, -2)],
                m[(.., slice(None, None, -1))],
                m[(slice(None, None, -1), 1..)],
                flip(m, 0),
                flip(m),
                v[slice(None, None, s)],
                set_subtensor(m[(.., slice(None, None, 2))], -1.0),
            ))
        }

        /// Each row's suffix sums: a cumulative sum of the row reversed, reversed back.
        pub fn suffix_sums(x: ArrayView2<f64>) -> Result<Array2<f64>> {
            let out = map(|x_t| cumsum(flip(x_t, 0))[slice(None, None, -1)], sequences = x);
            Ok(out)
        }
    }
}

#[test]
fn stepped_slices_and_flip_follow_numpy() {
    let v: Array1<i64> = (0..7).collect();
    let m = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let got = reversals::picks(v.view(), m.view(), -3).unwrap();
    assert_eq!(got.0, array![6, 5, 4, 3, 2, 1, 0]);
    assert_eq!(got.1, array![1, 3, 5]);
    assert_eq!(got.2, array![5, 3]);
    assert_eq!(got.3, array![[3.0, 2.0, 1.0], [6.0, 5.0, 4.0]]);
    assert_eq!(got.4, array![[5.0, 6.0], [2.0, 3.0]]);
    assert_eq!(got.5, array![[4.0, 5.0, 6.0], [1.0, 2.0, 3.0]]);
    assert_eq!(got.6, array![[6.0, 5.0, 4.0], [3.0, 2.0, 1.0]]);
    assert_eq!(got.7, array![6, 3, 0]);
    assert_eq!(got.8, array![[-1.0, 2.0, -1.0], [-1.0, 5.0, -1.0]]);
    let args = |s: i64| {
        vec![
            Value::from(v.clone()),
            Value::from(m.clone()),
            Value::from(s),
        ]
    };
    second_opinion(
        reversals::SOURCE,
        "picks",
        args(-3),
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
            Value::from(got.5),
            Value::from(got.6),
            Value::from(got.7),
            Value::from(got.8),
        ],
    );
    let e = reversals::picks(v.view(), m.view(), 0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid `v[slice(None, None, s)]`: a slice step cannot be zero"
    );
    let msg = common::evaluate_err(reversals::SOURCE, "picks", args(0));
    assert!(msg.contains("a slice step cannot be zero"), "{msg}");

    let x = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let out = reversals::suffix_sums(x.view()).unwrap();
    assert_eq!(out, array![[6.0, 5.0, 3.0], [15.0, 11.0, 6.0]]);
    second_opinion(
        reversals::SOURCE,
        "suffix_sums",
        vec![Value::from(x)],
        vec![Value::from(out)],
    );
}

mod gathers {
    scan_tests::program! {
        /// numpy's `m[idx]` (any integer dtype, negative from the end), `m[:, jdx]`,
        /// `m[idx][0]`, `take(m, jdx, 1)`, `take(m, jdx)` (flattened), `take(m, -1, 0)` (a
        /// scalar index) and `m[1:3, jdx]`.
        pub fn gathered(m: ArrayView2<f64>, idx: ArrayView1<i32>, jdx: ArrayView1<i64>)
            -> Result<(Array2<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>, Array1<f64>, Array2<f64>)> {
            Ok((
                m[idx],
                m[(.., jdx)],
                m[idx][0],
                take(m, jdx, 1),
                take(m, jdx),
                take(m, -1, 0),
                m[(1..3, jdx)],
            ))
        }

        /// An embedding lookup in a step: the rows of `emb` each step's ids name, summed.
        pub fn embed(ids: ArrayView2<i64>, emb: ArrayView2<f64>) -> Result<Array1<f64>> {
            let out = map(|ids_t| sum(emb[ids_t]), sequences = ids);
            Ok(out)
        }
    }
}

#[test]
fn index_arrays_and_take_follow_numpy() {
    let m = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]];
    let idx = array![2, 0, -1];
    let jdx = array![1i64, -1];
    let got = gathers::gathered(m.view(), idx.view(), jdx.view()).unwrap();
    assert_eq!(
        got.0,
        array![[7.0, 8.0, 9.0], [1.0, 2.0, 3.0], [7.0, 8.0, 9.0]]
    );
    assert_eq!(got.1, array![[2.0, 3.0], [5.0, 6.0], [8.0, 9.0]]);
    assert_eq!(got.2, array![7.0, 8.0, 9.0]);
    assert_eq!(got.3, got.1);
    assert_eq!(got.4, array![2.0, 9.0], "of m flattened");
    assert_eq!(got.5, array![7.0, 8.0, 9.0]);
    assert_eq!(got.6, array![[5.0, 6.0], [8.0, 9.0]]);
    let args = |idx: &Array1<i32>| {
        vec![
            Value::from(m.clone()),
            Value::from(idx.clone()),
            Value::from(jdx.clone()),
        ]
    };
    second_opinion(
        gathers::SOURCE,
        "gathered",
        args(&idx),
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
            Value::from(got.5),
            Value::from(got.6),
        ],
    );
    let bad = array![0, 3];
    let e = gathers::gathered(m.view(), bad.view(), jdx.view()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "index 3 is out of bounds for `m[idx]` with length 3"
    );
    let msg = common::evaluate_err(gathers::SOURCE, "gathered", args(&bad));
    assert!(
        msg.contains("m[idx]") && msg.contains("index 3") && msg.contains("length 3"),
        "{msg}"
    );

    let ids = array![[0i64, 2], [1, 1], [-1, 0]];
    let emb = array![[0.5, 1.0], [2.0, 4.0], [8.0, 16.0]];
    let out = gathers::embed(ids.view(), emb.view()).unwrap();
    assert_eq!(out, array![0.5 + 1.0 + 8.0 + 16.0, 2.0 * 6.0, 24.0 + 1.5]);
    second_opinion(
        gathers::SOURCE,
        "embed",
        vec![Value::from(ids), Value::from(emb)],
        vec![Value::from(out)],
    );
}

mod axis_writes {
    scan_tests::program! {
        /// numpy's `x[:, 1] += v`, `x[1, ::2] += 10`, `t[:, :, 0] = 0` (each on a copy).
        pub fn writes(x: ArrayView2<f64>, v: ArrayView1<f64>, t: ArrayView3<i64>)
            -> Result<(Array2<f64>, Array2<f64>, Array3<i64>)> {
            Ok((
                inc_subtensor(x[(.., 1)], v),
                inc_subtensor(x[(1, slice(None, None, 2))], 10.0),
                set_subtensor(t[(.., .., 0)], 0),
            ))
        }

        /// numpy's `x[idx] = v` (a repeated index keeps the last row), `x[:, idx] = 0`,
        /// PyTensor's `inc_subtensor(x[idx], v)` (`np.add.at`: a repeated index adds
        /// twice).
        pub fn scatters(x: ArrayView2<f64>, idx: ArrayView1<i32>, v: ArrayView2<f64>)
            -> Result<(Array2<f64>, Array2<f64>, Array2<f64>)> {
            Ok((
                set_subtensor(x[idx], v),
                set_subtensor(x[(.., idx)], 0.0),
                inc_subtensor(x[idx], v),
            ))
        }

        /// numpy's `x[x < 0] = 0`, `x[x < 0] += v` and a mask of rows `x[rows] = v`.
        pub fn masked(x: ArrayView2<f64>, v: ArrayView1<f64>, rows: ArrayView1<bool>)
            -> Result<(Array2<f64>, Array2<f64>, Array2<f64>)> {
            Ok((
                set_subtensor(x[x < 0.0], 0.0),
                inc_subtensor(x[x < 0.0], v),
                set_subtensor(x[rows], v),
            ))
        }

        /// numpy's `np.bincount`: a step adds one at each id, `c[[i_t]] += 1`.
        pub fn bincount(ids: ArrayView1<i64>, n: i64) -> Result<Array1<f64>> {
            let counts = scan(|i_t, c| inc_subtensor(c[[i_t]], 1.0), sequences = ids, outputs_info = zeros(n));
            Ok(counts[-1])
        }

        /// A state matrix whose first column accumulates the sequence.
        pub fn column_total(u: ArrayView1<f64>, s0: ArrayView2<f64>) -> Result<Array2<f64>> {
            let states = scan(|u_t, s| inc_subtensor(s[(.., 0)], u_t), sequences = u, outputs_info = s0);
            Ok(states[-1])
        }
    }
}

#[test]
fn set_and_inc_subtensor_on_any_axis() {
    let x = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let v = array![10.0, 20.0];
    let t = Array3::from_shape_vec((2, 2, 2), (0..8).collect()).unwrap();
    let got = axis_writes::writes(x.view(), v.view(), t.view()).unwrap();
    assert_eq!(got.0, array![[1.0, 12.0, 3.0], [4.0, 25.0, 6.0]]);
    assert_eq!(got.1, array![[1.0, 2.0, 3.0], [14.0, 5.0, 16.0]]);
    assert_eq!(got.2, array![[[0, 1], [0, 3]], [[0, 5], [0, 7]]]);
    second_opinion(
        axis_writes::SOURCE,
        "writes",
        vec![Value::from(x), Value::from(v), Value::from(t)],
        vec![Value::from(got.0), Value::from(got.1), Value::from(got.2)],
    );

    let x = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]];
    let idx = array![2, 0, 2];
    let v = array![[10.0, 20.0, 30.0], [40.0, 50.0, 60.0], [70.0, 80.0, 90.0]];
    let got = axis_writes::scatters(x.view(), idx.view(), v.view()).unwrap();
    assert_eq!(
        got.0,
        array![[40.0, 50.0, 60.0], [4.0, 5.0, 6.0], [70.0, 80.0, 90.0]]
    );
    assert_eq!(
        got.1,
        array![[0.0, 2.0, 0.0], [0.0, 5.0, 0.0], [0.0, 8.0, 0.0]]
    );
    assert_eq!(
        got.2,
        array![[41.0, 52.0, 63.0], [4.0, 5.0, 6.0], [87.0, 108.0, 129.0]]
    );
    let args = |idx: &Array1<i32>, v: &Array2<f64>| {
        vec![
            Value::from(x.clone()),
            Value::from(idx.clone()),
            Value::from(v.clone()),
        ]
    };
    second_opinion(
        axis_writes::SOURCE,
        "scatters",
        args(&idx, &v),
        vec![Value::from(got.0), Value::from(got.1), Value::from(got.2)],
    );
    let bad = array![0, -4];
    let e = axis_writes::scatters(x.view(), bad.view(), v.view()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "index -4 is out of bounds for `set_subtensor(x[idx], v)` with length 3"
    );
    let msg = common::evaluate_err(axis_writes::SOURCE, "scatters", args(&bad, &v));
    assert!(
        msg.contains("index -4") && msg.contains("length 3"),
        "{msg}"
    );
    let short = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let e = axis_writes::scatters(x.view(), idx.view(), short.view()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot broadcast shapes [3, 3] and [2, 3] together in `set_subtensor(x[idx], v)`"
    );
    let msg = common::evaluate_err(axis_writes::SOURCE, "scatters", args(&idx, &short));
    assert!(msg.contains("[2, 3]") && msg.contains("[3, 3]"), "{msg}");

    let x = array![[1.0, -2.0], [3.0, -4.0]];
    let v = array![10.0, 20.0];
    let rows = array![false, true];
    let got = axis_writes::masked(x.view(), v.view(), rows.view()).unwrap();
    assert_eq!(got.0, array![[1.0, 0.0], [3.0, 0.0]]);
    assert_eq!(got.1, array![[1.0, 8.0], [3.0, 16.0]]);
    assert_eq!(got.2, array![[1.0, -2.0], [10.0, 20.0]]);
    let args = |v: &Array1<f64>, rows: &Array1<bool>| {
        vec![
            Value::from(x.clone()),
            Value::from(v.clone()),
            Value::from(rows.clone()),
        ]
    };
    second_opinion(
        axis_writes::SOURCE,
        "masked",
        args(&v, &rows),
        vec![Value::from(got.0), Value::from(got.1), Value::from(got.2)],
    );
    let v3 = array![1.0, 2.0, 3.0];
    let e = axis_writes::masked(x.view(), v3.view(), rows.view()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot broadcast shapes [2] and [3] together in `inc_subtensor(x[x < 0.0], v)`"
    );
    let msg = common::evaluate_err(axis_writes::SOURCE, "masked", args(&v3, &rows));
    assert!(msg.contains("[2]") && msg.contains("[3]"), "{msg}");
    let rows3 = array![false, true, true];
    let e = axis_writes::masked(x.view(), v.view(), rows3.view()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid `set_subtensor(x[rows], v)`: a mask of shape [3] does not fit an array of \
         shape [2, 2] (it covers the leading axes)"
    );
    let msg = common::evaluate_err(axis_writes::SOURCE, "masked", args(&v, &rows3));
    assert!(msg.contains("[3]") && msg.contains("[2, 2]"), "{msg}");

    let ids = array![0i64, 2, 2, 1, 2];
    let counts = axis_writes::bincount(ids.view(), 3).unwrap();
    assert_eq!(counts, array![1.0, 1.0, 3.0]);
    second_opinion(
        axis_writes::SOURCE,
        "bincount",
        vec![Value::from(ids), Value::from(3i64)],
        vec![Value::from(counts)],
    );

    let u = array![1.0, 2.0, 3.0];
    let s0 = array![[0.0, 0.5], [1.0, 0.0]];
    let last = axis_writes::column_total(u.view(), s0.view()).unwrap();
    assert_eq!(last, array![[6.0, 0.5], [7.0, 0.0]]);
    second_opinion(
        axis_writes::SOURCE,
        "column_total",
        vec![Value::from(u), Value::from(s0)],
        vec![Value::from(last)],
    );
}
