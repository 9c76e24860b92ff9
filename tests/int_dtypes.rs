//! The integer dtypes i8, i16, u8, u16, u32, u64 beside i32 and i64 (docs/SEMANTICS.md,
//! "Dtypes"): signature types, literal suffixes, casts, numpy 2's promotion (NEP 50),
//! wrapping at the edges, floor division and remainder, sums in numpy's accumulators,
//! reductions, comparisons, indexing by unsigned indices, and scans carrying small
//! integer states. The expected numbers are numpy 2.4.6's, printed by
//! tools/int_dtypes.py (or Rust's `as` where numpy's behaviour is platform-defined); every
//! program also runs through the reference evaluator.

mod common;

use common::{second_opinion, Value};
use scan_runtime::prelude::*;

mod arith {
    scan_tests::program! {
        /// Wrapping at the edges: u8 255 + 1, i8 -128 - 1, u16 0 - 1, -u8, abs of u8, an
        /// untyped literal taking the operand's dtype, i8 100 * 3.
        pub fn edges(
            a: ArrayView1<u8>,
            b: ArrayView1<i8>,
            c: ArrayView1<u16>,
        ) -> Result<(Array1<u8>, Array1<i8>, Array1<u16>, Array1<u8>, Array1<u8>, Array1<u8>, Array1<i8>)> {
            Ok((a + 1u8, b - 1i8, c - 1, -a, abs(a), a + 10, b * 3))
        }

        /// numpy's mixed-signedness promotion: u8 with i8 in i16, u32 with i32 in i64, u64
        /// with i64 in f64; comparisons in the promoted dtype (u8 200 < i8 -1 is false).
        pub fn mixed(
            a: ArrayView1<u8>,
            b: ArrayView1<i8>,
            p: u32,
            q: i32,
            r: u64,
            s: i64,
        ) -> Result<(Array1<i16>, Array1<bool>, i64, f64)> {
            Ok((a + b, a < b, p + q, r + s))
        }

        /// Floor division and remainder (numpy's signs), by zero (0), true division in f64.
        pub fn division(
            x: ArrayView1<i8>,
            u: ArrayView1<u8>,
        ) -> Result<(Array1<i8>, Array1<i8>, Array1<i8>, Array1<i8>, Array1<u8>, Array1<u8>, Array1<f64>)> {
            let zero = 0i8;
            Ok((
                floor_div(x, 2i8),
                x % 3,
                floor_div(x, zero),
                x % zero,
                floor_div(u, 3u8),
                u % 3,
                u / 2u8,
            ))
        }

        /// Floats with small integers: i16 with f32 stays f32 (numpy 2), i32 with f32 is f64,
        /// a float literal among u8 gives f64, a float-only function computes in f64.
        pub fn with_floats(
            a: ArrayView1<i16>,
            f: f32,
            n: i32,
            u: ArrayView1<u8>,
        ) -> Result<(Array1<f32>, f64, Array1<f64>, Array1<f64>)> {
            Ok((a + f, n + f, u * 2.5, sqrt(u)))
        }

        /// u64 beyond i64: a literal of u64's range, u64::MAX, wrapping past it.
        pub fn wide(x: ArrayView1<u64>) -> Result<(Array1<u64>, u64, Array1<u64>)> {
            Ok((x + 18446744073709551615u64, u64::MAX - 1, x * 2))
        }
    }
}

#[test]
fn integers_wrap_at_the_edges() {
    let a = array![255u8, 0, 200];
    let b = array![-128i8, 127, 0];
    let c = array![0u16, 65535, 7];
    let got = arith::edges(a.view(), b.view(), c.view()).unwrap();
    // numpy: np.uint8(255) + 1 == 0, np.int8(-128) - 1 == 127, np.uint16(0) - 1 == 65535,
    // -np.uint8(1) == 255, abs of uint8 is itself, np.int8(100) * 3 == 44.
    assert_eq!(got.0, array![0u8, 1, 201]);
    assert_eq!(got.1, array![127i8, 126, -1]);
    assert_eq!(got.2, array![65535u16, 65534, 6]);
    assert_eq!(got.3, array![1u8, 0, 56]);
    assert_eq!(got.4, array![255u8, 0, 200]);
    assert_eq!(got.5, array![9u8, 10, 210]);
    assert_eq!(got.6, array![-128i8, 125, 0]);
    let b100 = array![100i8, 1, -43];
    let got6 = arith::edges(a.view(), b100.view(), c.view()).unwrap().6;
    assert_eq!(got6, array![44i8, 3, 127]);
    second_opinion(
        arith::SOURCE,
        "edges",
        vec![Value::from(&a), Value::from(&b), Value::from(&c)],
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

#[test]
fn mixed_signedness_promotes_as_numpy_2() {
    let a = array![3u8, 200, 5];
    let b = array![-4i8, -1, 127];
    let got = arith::mixed(a.view(), b.view(), 7, -9, 7, -9).unwrap();
    // numpy: np.uint8(3) + np.int8(-4) == -1 (int16), np.uint32(7) + np.int32(-9) == -2
    // (int64), np.uint64(7) + np.int64(-9) == -2.0 (float64), np.uint8(200) < np.int8(-1)
    // is False.
    assert_eq!(got.0, array![-1i16, 199, 132]);
    assert_eq!(got.1, array![false, false, true]);
    assert_eq!(got.2, -2i64);
    assert_eq!(got.3, -2.0f64);
    second_opinion(
        arith::SOURCE,
        "mixed",
        vec![
            Value::from(&a),
            Value::from(&b),
            Value::from(7u32),
            Value::from(-9i32),
            Value::from(7u64),
            Value::from(-9i64),
        ],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
        ],
    );
}

#[test]
fn floor_division_and_remainder_follow_numpy() {
    let x = array![-7i8, -128, -1, 5, 0];
    let u = array![7u8, 200, 0];
    let got = arith::division(x.view(), u.view()).unwrap();
    // numpy 2.4.6 (tools/int_dtypes.py): x // 2, x % 3, x // 0, x % 0 of int8, u // 3,
    // u % 3 of uint8, and uint8 / uint8 in float64.
    assert_eq!(got.0, array![-4i8, -64, -1, 2, 0]);
    assert_eq!(got.1, array![2i8, 1, 2, 2, 0]);
    assert_eq!(got.2, array![0i8, 0, 0, 0, 0]);
    assert_eq!(got.3, array![0i8, 0, 0, 0, 0]);
    assert_eq!(got.4, array![2u8, 66, 0]);
    assert_eq!(got.5, array![1u8, 2, 0]);
    assert_eq!(got.6, array![3.5f64, 100.0, 0.0]);
    second_opinion(
        arith::SOURCE,
        "division",
        vec![Value::from(&x), Value::from(&u)],
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

#[test]
fn small_integers_with_floats_follow_numpy_2() {
    let a = array![3i16, -30000];
    let u = array![3u8, 16];
    let got = arith::with_floats(a.view(), 1.5, 3, u.view()).unwrap();
    // numpy 2: int16 + float32 is float32, int32 + float32 float64, uint8 * 2.5 float64.
    assert_eq!(got.0, array![4.5f32, -29998.5]);
    assert_eq!(got.1, 4.5f64);
    assert_eq!(got.2, array![7.5f64, 40.0]);
    assert_eq!(got.3, array![3f64.sqrt(), 4.0]);
    second_opinion(
        arith::SOURCE,
        "with_floats",
        vec![
            Value::from(&a),
            Value::from(1.5f32),
            Value::from(3i32),
            Value::from(&u),
        ],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
        ],
    );
}

#[test]
fn u64_holds_values_beyond_i64() {
    let x = array![0u64, 1, 1 << 63];
    let got = arith::wide(x.view()).unwrap();
    assert_eq!(got.0, array![u64::MAX, 0, (1 << 63) - 1]);
    assert_eq!(got.1, u64::MAX - 1);
    assert_eq!(got.2, array![0u64, 2, 0]);
    second_opinion(
        arith::SOURCE,
        "wide",
        vec![Value::from(&x)],
        vec![Value::from(got.0), Value::from(got.1), Value::from(got.2)],
    );
}

mod reductions {
    scan_tests::program! {
        /// numpy's accumulators: sum, prod and cumsum of u8 in u64, of i8 in i64; max and
        /// argmax keep the dtype / give i64; mean in f64; a dot of u8 wraps in u8.
        pub fn totals(
            u: ArrayView1<u8>,
            i: ArrayView1<i8>,
            m: ArrayView2<u8>,
            v: ArrayView1<u8>,
        ) -> Result<(u64, u64, Array1<u64>, i64, u8, i64, f64, Array1<u8>, Array1<u64>)> {
            Ok((sum(u), prod(u), cumsum(u), sum(i), max(u), argmax(u), mean(u), dot(m, v), sum(m, 0)))
        }
    }
}

#[test]
fn sums_of_small_integers_do_not_overflow() {
    let u = array![200u8, 100, 255, 1];
    let i = array![100i8, 100, -128];
    let m = array![[200u8, 100], [1, 2]];
    let v = array![2u8, 3];
    let got = reductions::totals(u.view(), i.view(), m.view(), v.view()).unwrap();
    // numpy: sum 556 (uint64), prod 5100000 (uint64), cumsum [200, 300, 555, 556]
    // (uint64), sum of int8 72 (int64), max 255, argmax 2; np.dot of uint8 wraps:
    // 200*2 + 100*3 = 700 -> 188; the column sums of a uint8 matrix in uint64.
    assert_eq!(got.0, 556);
    assert_eq!(got.1, 5_100_000);
    assert_eq!(got.2, array![200u64, 300, 555, 556]);
    assert_eq!(got.3, 72);
    assert_eq!(got.4, 255);
    assert_eq!(got.5, 2);
    assert_eq!(got.6, 139.0);
    assert_eq!(got.7, array![188u8, 8]);
    assert_eq!(got.8, array![201u64, 102]);
    second_opinion(
        reductions::SOURCE,
        "totals",
        vec![
            Value::from(&u),
            Value::from(&i),
            Value::from(&m),
            Value::from(&v),
        ],
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
}

mod casts {
    scan_tests::program! {
        /// `as` is Rust's: float to integer truncates toward zero and saturates (NaN is 0),
        /// integers wrap to narrower ones, `300 as u8` wraps as an i64 would.
        pub fn casts(
            f: ArrayView1<f64>,
            a: ArrayView1<i64>,
        ) -> Result<(Array1<u8>, Array1<i8>, Array1<u8>, Array1<u16>, u8, Array1<f32>)> {
            Ok((f as u8, f as i8, a as u8, a as u16, 300 as u8, a as u8 as f32))
        }
    }
}

#[test]
fn casts_are_rust_as() {
    let f = array![300.0, -5.0, 255.9, 1e20, f64::NAN, -200.7];
    let a = array![-1i64, 256, 65537, 200, 0, 7];
    let got = casts::casts(f.view(), a.view()).unwrap();
    // numpy's float -> uint8 of out-of-range values is platform-defined ([44, 251, 255,
    // 0, 0, ..] on x86-64); the step language's is Rust's saturating `as`.
    assert_eq!(got.0, array![255u8, 0, 255, 255, 0, 0]);
    assert_eq!(got.1, array![127i8, -5, 127, 127, 0, -128]);
    // Integer to narrower integer wraps (numpy's astype).
    assert_eq!(got.2, array![255u8, 0, 1, 200, 0, 7]);
    assert_eq!(got.3, array![65535u16, 256, 1, 200, 0, 7]);
    assert_eq!(got.4, 44);
    assert_eq!(got.5, array![255f32, 0.0, 1.0, 200.0, 0.0, 7.0]);
    second_opinion(
        casts::SOURCE,
        "casts",
        vec![Value::from(&f), Value::from(&a)],
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

mod loops {
    scan_tests::program! {
        /// A u8 running total that wraps, a u16 state from a parameter, a map over a u32
        /// sequence, an unsigned index and a u8 index array.
        pub fn loops(
            xs: ArrayView1<u8>,
            h0: u16,
            seq: ArrayView1<u32>,
            k: u32,
            idx: ArrayView1<u8>,
        ) -> Result<(Array1<u8>, Array1<u16>, Array1<u32>, u32, Array1<u32>)> {
            let totals = scan(|x_t, acc| acc + x_t, sequences = xs, outputs_info = 0u8);
            let hs = scan(|h| h * 3 + 1, outputs_info = h0, n_steps = 4);
            let tripled = map(|s| s * 3u32 + k, sequences = seq);
            Ok((totals, hs, tripled, seq[k], seq[idx]))
        }

        /// An upcast of the step's u8 result into an i16 state is safe and inserted.
        pub fn upcast(xs: ArrayView1<u8>, h0: i16) -> Result<Array1<i16>> {
            let r = scan(|x_t, h| x_t, sequences = xs, outputs_info = h0);
            Ok(r)
        }
    }
}

#[test]
fn scans_carry_small_unsigned_states() {
    let xs = array![100u8, 100, 100, 10];
    let seq = array![1u32, 4_000_000_000, 5];
    let idx = array![2u8, 0, 2];
    let got = loops::loops(xs.view(), 30000, seq.view(), 1, idx.view()).unwrap();
    // 100, 200, 300 -> 44, 54 (u8 wraps); 30000 * 3 + 1 = 90001 -> 24465 (u16), then
    // 24465 * 3 + 1 = 73396 -> 7860, 7860 * 3 + 1 = 23581, 23581 * 3 + 1 = 70744 -> 5208;
    // 4e9 * 3 + 1 wraps in u32.
    assert_eq!(got.0, array![100u8, 200, 44, 54]);
    assert_eq!(got.1, array![24465u16, 7860, 23581, 5208]);
    assert_eq!(
        got.2,
        array![4u32, 4_000_000_000u32.wrapping_mul(3).wrapping_add(1), 16]
    );
    assert_eq!(got.3, 4_000_000_000);
    assert_eq!(got.4, array![5u32, 1, 5]);
    second_opinion(
        loops::SOURCE,
        "loops",
        vec![
            Value::from(&xs),
            Value::from(30000u16),
            Value::from(&seq),
            Value::from(1u32),
            Value::from(&idx),
        ],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
        ],
    );
    let up = loops::upcast(xs.view(), -1).unwrap();
    assert_eq!(up, array![100i16, 100, 100, 10]);
    second_opinion(
        loops::SOURCE,
        "upcast",
        vec![Value::from(&xs), Value::from(-1i16)],
        vec![Value::from(up)],
    );
}

mod seeds {
    scan_tests::program! {
        /// A u8 seed is read as an i64, as an i32 seed is.
        pub fn key(seed: u8) -> Result<(i64, f64)> {
            let k = rng_key(seed);
            let (_, u) = uniform(k, ());
            Ok((k, u))
        }

        pub fn key64(seed: i64) -> Result<(i64, f64)> {
            let k = rng_key(seed);
            let (_, u) = uniform(k, ());
            Ok((k, u))
        }
    }
}

#[test]
fn a_u8_seed_is_an_i64_seed() {
    let got = seeds::key(200).unwrap();
    assert_eq!(got, seeds::key64(200).unwrap());
    assert_eq!(got.0, 200);
    second_opinion(
        seeds::SOURCE,
        "key",
        vec![Value::from(200u8)],
        vec![Value::from(got.0), Value::from(got.1)],
    );
}

/// The messages of `source`'s compile errors, in order.
fn errors(source: &str) -> Vec<String> {
    match scan_codegen::builder::check(source) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.iter().map(|e| e.message().to_string()).collect(),
    }
}

#[test]
fn linear_algebra_refuses_integer_matrices_and_draws_read_integers_as_floats() {
    let got = errors(
        "pub fn f(m: ArrayView2<u8>, b: ArrayView1<u16>) -> Result<Array2<f64>> {
            Ok(cholesky(m))
        }
        pub fn g(m: ArrayView2<u8>, b: ArrayView1<u16>) -> Result<Array1<f64>> {
            Ok(solve(m as f64, b))
        }",
    );
    assert_eq!(
        got,
        [
            "`cholesky` computes in f32 or f64, found a matrix of u8: cast it (`m as f64`)",
            "`solve` computes in f32 or f64, found a vector of u16: cast it (`b as f64`)",
        ]
    );
    // A u8 probability and shape parameter are read in f64, as an i32 one is.
    assert_eq!(
        errors(
            "pub fn f(p: ArrayView1<u8>, a: u16) -> Result<(Array1<bool>, f64)> {
                let (k, hits) = bernoulli(rng_key(1u8), p);
                let (_, g) = gamma(k, a);
                Ok((hits, g))
            }"
        ),
        Vec::<String>::new()
    );
}

#[test]
fn literals_out_of_range_are_compile_errors_on_the_literal() {
    assert_eq!(
        errors("pub fn f(x: u64) -> Result<u64> { Ok(x + 18446744073709551615) }"),
        ["integer literal `18446744073709551615` is out of range for i64, the dtype of an untyped integer literal: give it the suffix u64 (`18446744073709551615u64`)"]
    );
    assert_eq!(
        errors("pub fn f(x: u16) -> Result<u16> { Ok(x - 70000) }"),
        ["integer literal `70000` is out of range for u16, the dtype it takes from the other operands (u16 holds 0..=65535; numpy raises OverflowError): cast the other operand to a wider dtype (`x as i64`) or write a value in range"]
    );
    // In range at the edges: no error.
    assert_eq!(
        errors(
            "pub fn f(x: i8, y: u64) -> Result<(i8, i8, u64, i64)> {
                Ok((x + -128, -128i8, y + 18446744073709551615u64, -9223372036854775808))
            }"
        ),
        Vec::<String>::new()
    );
}
