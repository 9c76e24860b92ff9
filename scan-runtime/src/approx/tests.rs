//! Accuracy and special values of the approximations over the whole float range, and the
//! same bits on every instruction set.
//!
//! f32 results are compared with f64 std functions (accurate to about 2^-52, so the exact
//! value for an f32 ulp), in ulps of the exact value. f64 results are compared with std on
//! many points (std's own error, up to about 1 ulp for `tanh`, is part of the allowed
//! difference) and with correctly rounded values computed with mpmath at 300 bits.

use super::*;
use crate::kernels::isa;

/// A deterministic xorshift64 generator, so no random-number crate is needed.
struct Rng(u64);

impl Rng {
    fn bits(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in [lo, hi).
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.bits() >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// Position of `x` in the ordered sequence of f64 values (-0 and +0 one apart).
fn order(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    if b < 0 {
        i64::MIN - b
    } else {
        b
    }
}

/// How many f64 values apart `a` and `b` are; 0 for two NaNs.
fn ulps_apart(a: f64, b: f64) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    order(a).abs_diff(order(b))
}

/// Error of an f32 result in ulps of the exact value `exact` (an f64 close enough to be
/// exact at f32's precision), counting f32's subnormal spacing and its overflow threshold.
fn ulp_error_f32(got: f32, exact: f64) -> f64 {
    if exact.is_nan() {
        return if got.is_nan() { 0.0 } else { f64::INFINITY };
    }
    // Values beyond f32::MAX plus half an ulp round to infinity.
    let overflow = f64::from(f32::MAX) + 2f64.powi(103);
    if exact.abs() >= overflow {
        let same = got.is_infinite() && (got > 0.0) == (exact > 0.0);
        return if same { 0.0 } else { f64::INFINITY };
    }
    if !got.is_finite() {
        return f64::INFINITY;
    }
    let e = exact.abs();
    let exponent = if e == 0.0 {
        -126
    } else {
        (e.log2().floor() as i32).max(-126)
    };
    (f64::from(got) - exact).abs() / 2f64.powi(exponent - 23)
}

/// The f64 reference of sigmoid: std's exp, arranged so that it never overflows.
fn sigmoid_ref(x: f64) -> f64 {
    if x < 0.0 {
        let e = x.exp();
        e / (1.0 + e)
    } else {
        1.0 / (1.0 + (-x).exp())
    }
}

/// A function, its f64 reference and its error bound in ulps: measured over all 2^32
/// inputs (docs/SEMANTICS.md), rounded up. `log` is computed in f64 and rounded once.
type Pair32 = (&'static str, fn(f32) -> f32, fn(f64) -> f64, f64);

fn functions_f32() -> [Pair32; 4] {
    [
        ("exp", exp_f32, f64::exp, 1.0),
        ("log", log_f32, f64::ln, 0.5001),
        ("tanh", tanh_f32, f64::tanh, 1.5),
        ("sigmoid", sigmoid_f32, sigmoid_ref, 2.5),
    ]
}

/// f32 inputs: a dense sweep of [-20, 20] (step 2^-10) and of [0.5, 0.6] (every 7th f32),
/// every 4099th bit pattern (all exponents, subnormals, both signs, NaNs), and random bit
/// patterns.
fn inputs_f32() -> Vec<f32> {
    let mut xs: Vec<f32> = (-20 * 1024..=20 * 1024)
        .map(|i| i as f32 / 1024.0)
        .collect();
    xs.extend(
        (0.5f32.to_bits()..0.6f32.to_bits())
            .step_by(7)
            .map(f32::from_bits),
    );
    xs.extend((0..=u32::MAX).step_by(4099).map(f32::from_bits));
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    xs.extend((0..200_000).map(|_| f32::from_bits(rng.bits() as u32)));
    xs
}

#[test]
fn f32_functions_are_within_their_bounds() {
    let xs = inputs_f32();
    for (name, f, reference, bound) in functions_f32() {
        let mut worst = (0.0f64, 0.0f32);
        for &x in &xs {
            let got = f(x);
            if x.is_nan() {
                assert!(got.is_nan(), "{name}(NaN) = {got}");
                continue;
            }
            let err = ulp_error_f32(got, reference(f64::from(x)));
            if err > worst.0 {
                worst = (err, x);
            }
        }
        assert!(
            worst.0 <= bound,
            "{name}: {} ulp at x = {:e} ({:#010x})",
            worst.0,
            worst.1,
            worst.1.to_bits()
        );
    }
}

type Pair64 = (&'static str, fn(f64) -> f64, fn(f64) -> f64, u64);

/// Each function with its std reference and the largest difference allowed from it, in
/// ulps: ours (< 1) plus the reference's own (about 0.5 for exp and log, about 1 for tanh,
/// and 2 for sigmoid's formula on std's exp).
fn functions_f64() -> [Pair64; 4] {
    [
        ("exp", exp_f64, f64::exp, 1),
        ("log", log_f64, f64::ln, 1),
        ("tanh", tanh_f64, f64::tanh, 2),
        ("sigmoid", sigmoid_f64, sigmoid_ref, 3),
    ]
}

#[test]
fn f64_functions_agree_with_std_over_the_whole_range() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut xs: Vec<f64> = (-40 * 512..=40 * 512).map(|i| i as f64 / 512.0).collect();
    for _ in 0..100_000 {
        xs.push(rng.uniform(-2.0, 2.0));
        xs.push(rng.uniform(-750.0, 750.0));
        xs.push(rng.uniform(0.5, 0.6));
        // Every exponent, both signs, subnormals.
        xs.push(f64::from_bits(rng.bits()));
        xs.push(f64::from_bits(rng.bits() >> 1));
    }
    for (name, f, reference, allowed) in functions_f64() {
        let mut worst = (0u64, 0.0f64);
        for &x in &xs {
            let apart = ulps_apart(f(x), reference(x));
            if apart > worst.0 {
                worst = (apart, x);
            }
        }
        assert!(
            worst.0 <= allowed,
            "{name}: {} ulps from std at x = {:e} ({:#018x})",
            worst.0,
            worst.1,
            worst.1.to_bits()
        );
    }
}

const EXP_F64: &[(u64, u64)] = &[
    (0xc08748cccccccccd, 0x0000000000000001), // exp(-745.1) = 5e-324
    (0xc087200000000000, 0x0000000000000055), // exp(-740.0) = 4.2e-322
    (0xc086840000000000, 0x00000005cf08fff0), // exp(-720.5) = 1.2326102893e-313
    (0xc086240000000000, 0x000e6cf6d08897ac), // exp(-708.5) = 2.006132305331306e-308
    (0xc086226666666666, 0x00119e98b83de7a3), // exp(-708.3) = 2.450295530965988e-308
    (0xc059000000000000, 0x36ea8c1f14e2af5d), // exp(-100.0) = 3.720075976020836e-44
    (0xc034800000000000, 0x3e157a3afeed00ab), // exp(-20.5) = 1.2501528663867426e-09
    (0xbff0000000000000, 0x3fd78b56362cef38), // exp(-1.0) = 0.36787944117144233
    (0xbfe0000000000000, 0x3fe368b2fc6f960a), // exp(-0.5) = 0.6065306597126334
    (0xbddb7cdfd9d7bdbb, 0x3feffffffff24190), // exp(-1e-10) = 0.9999999999
    (0x01a56e1fc2f8f359, 0x3ff0000000000000), // exp(1e-300) = 1.0
    (0x3c8cd2b297d889bc, 0x3ff0000000000000), // exp(5e-17) = 1.0
    (0x3e45798ee2308c3a, 0x3ff0000002af31dc), // exp(1e-08) = 1.00000001
    (0x3fd76634c7b82ed8, 0x3ff70ff6e2e89269), // exp(0.3656131697068594) = 1.4413975585568102
    (0x3fe0000000000000, 0x3ffa61298e1e069c), // exp(0.5) = 1.6487212707001282
    (0x3ff0000000000000, 0x4005bf0a8b145769), // exp(1.0) = 2.718281828459045
    (0x3ff8000000000000, 0x4011ed3fe64fc541), // exp(1.5) = 4.4816890703380645
    (0x4000000000000000, 0x401d8e64b8d4ddae), // exp(2.0) = 7.38905609893065
    (0x4024000000000000, 0x40d5829dcf950560), // exp(10.0) = 22026.465794806718
    (0x40387f0129ee1538, 0x4224420b2330d70d), // exp(24.49611150801249) = 43503686040.42002
    (0x4059000000000000, 0x48f3494a9b171bf5), // exp(100.0) = 2.6881171418161356e+43
    (0x407f400000000000, 0x6d045ba2a9f7e439), // exp(500.0) = 1.4035922178528375e+217
    (0x4085e00000000000, 0x7f0d945df4f8ec8e), // exp(700.0) = 1.0142320547350045e+304
    (0x4086280000000000, 0x7fdd422d2be5dc9b), // exp(709.0) = 8.218407461554972e+307
    (0x40862e3d70a3d70a, 0x7fefe9ce5c4c52b4), // exp(709.78) = 1.7928227943945155e+308
];
const LOG_F64: &[(u64, u64)] = &[
    (0x0000000000000001, 0xc0874385446d71c3), // log(5e-324) = -744.4400719213812
    (0x000012688b70e62b, 0xc0864e69394d9508), // log(1e-310) = -713.8013788281542
    (0x0010000000000000, 0xc086232bdd7abcd2), // log(2.2250738585072014e-308) = -708.3964185322641
    (0x01a56e1fc2f8f359, 0xc085963447f87fb5), // log(1e-300) = -690.7755278982137
    (0x2b2bff2ee48e0530, 0xc06cc845b54b54f2), // log(1e-100) = -230.25850929940458
    (0x3ddb7cdfd9d7bdbb, 0xc037069e2aa2aa5b), // log(1e-10) = -23.025850929940457
    (0x3fb999999999999a, 0xc0026bb1bbb55515), // log(0.1) = -2.3025850929940455
    (0x3fe0000000000000, 0xbfe62e42fefa39ef), // log(0.5) = -0.6931471805599453
    (0x3fe68cab188cc6fb, 0xbfd666c99166aedf), // log(0.7046714286318257) = -0.35002364348723164
    (0x3fe6a0902de00d1b, 0xbfd62e6b3842a25e), // log(0.7071) = -0.346583180371942
    (0x3feccccccccccccd, 0xbfbaf8e8210a415c), // log(0.9) = -0.10536051565782628
    (0x3feffffde7210be9, 0xbeb0c6f82d74d230), // log(0.999999) = -1.000000500029089e-06
    (0x3ff000001ad7f29b, 0x3e7ad7f2847b6492), // log(1.0000001) = 9.999999505838704e-08
    (0x3ff4000000000000, 0x3fcc8ff7c79a9a22), // log(1.25) = 0.22314355131420976
    (0x3ff6a0902de00d1b, 0x3fd62e1ac5b1d181), // log(1.4142) = 0.3465640001880033
    (0x3ff8000000000000, 0x3fd9f323ecbf984c), // log(1.5) = 0.4054651081081644
    (0x4000000000000000, 0x3fe62e42fefa39ef), // log(2.0) = 0.6931471805599453
    (0x4005bf0a8b145769, 0x3ff0000000000000), // log(2.718281828459045) = 1.0
    (0x4024000000000000, 0x40026bb1bbb55516), // log(10.0) = 2.302585092994046
    (0x4034010b7029f784, 0x4007f7ad72532431), // log(20.004080782171073) = 2.995936291849397
    (0x4202a05f20000000, 0x4037069e2aa2aa5b), // log(10000000000.0) = 23.025850929940457
    (0x54b249ad2594c37d, 0x406cc845b54b54f2), // log(1e+100) = 230.25850929940458
    (0x7e37e43c8800759c, 0x4085963447f87fb5), // log(1e+300) = 690.7755278982137
    (0x7fefffffffffffff, 0x40862e42fefa39ef), // log(1.7976931348623157e+308) = 709.782712893384
];
const TANH_F64: &[(u64, u64)] = &[
    (0x0000000000000001, 0x0000000000000001), // tanh(5e-324) = 5e-324
    (0x01a56e1fc2f8f359, 0x01a56e1fc2f8f359), // tanh(1e-300) = 1e-300
    (0x3e112e0be826d695, 0x3e112e0be826d695), // tanh(1e-09) = 1e-09
    (0x3f50624dd2f1a9fc, 0x3f50624d77516ce2), // tanh(0.001) = 0.0009999996666668
    (0x3fb999999999999a, 0x3fb983d7795f413a), // tanh(0.1) = 0.09966799462495582
    (0xbfc9f9abbd06e200, 0xbfc99fde7a2035c5), // tanh(-0.20293184976414125) = -0.20019131625342204
    (0x3fd0000000000000, 0x3fcf597ea69a1c86), // tanh(0.25) = 0.24491866240370913
    (0x3fe0000000000000, 0x3fdd9353d7568af3), // tanh(0.5) = 0.46211715726000974
    (0x3fe081992efd8620, 0x3fde5dad0e468d03), // tanh(0.5158201139240113) = 0.47446752924061303
    (0x3fe1916872b020c5, 0x3fdffc3cce48227e), // tanh(0.549) = 0.4997703566046211
    (0x3fe194af4f0d844d, 0x3fe000939d825d75), // tanh(0.5494) = 0.500070388446075
    (0x3fe1d95cbdf483a8, 0x3fe033dd1a1146f5), // tanh(0.5577834806500634) = 0.5063310155039448
    (0x3fe8000000000000, 0x3fe45323e552f228), // tanh(0.75) = 0.6351489523872873
    (0x3ff0000000000000, 0x3fe85efab514f394), // tanh(1.0) = 0.7615941559557649
    (0xbff8000000000000, 0xbfecf6f9786df577), // tanh(-1.5) = -0.9051482536448664
    (0x4000000000000000, 0x3feed9505e1bc3d4), // tanh(2.0) = 0.9640275800758169
    (0x4008000000000000, 0x3fefd77d111a0b00), // tanh(3.0) = 0.9950547536867305
    (0x4014000000000000, 0x3fefff419668df11), // tanh(5.0) = 0.9999092042625951
    (0x4024000000000000, 0x3feffffffdc96f35), // tanh(10.0) = 0.9999999958776927
    (0x4032000000000000, 0x3feffffffffffffc), // tanh(18.0) = 0.9999999999999996
    (0x4033000000000000, 0x3fefffffffffffff), // tanh(19.0) = 0.9999999999999999
    (0x4034000000000000, 0x3ff0000000000000), // tanh(20.0) = 1.0
];
const SIGMOID_F64: &[(u64, u64)] = &[
    (0xc087480000000000, 0x0000000000000001), // sigmoid(-745.0) = 5e-324
    (0xc087200000000000, 0x0000000000000055), // sigmoid(-740.0) = 4.2e-322
    (0xc086300000000000, 0x00033802fd28b3c3), // sigmoid(-710.0) = 4.47628622567513e-309
    (0xc086200000000000, 0x0017c8ab2288c9ab), // sigmoid(-708.0) = 3.307553003638408e-308
    (0xc07f400000000000, 0x12d9265e78d4438d), // sigmoid(-500.0) = 7.124576406741286e-218
    (0xc05ffa6521883490, 0x3466079ecdf3ad0e), // sigmoid(-127.91242254544545) = 2.807635478031929e-56
    (0xc044000000000000, 0x3c539792499b1a24), // sigmoid(-40.0) = 4.248354255291589e-18
    (0xc034000000000000, 0x3e21b4865556b5d5), // sigmoid(-20.0) = 2.0611536181902037e-09
    (0xc014000000000000, 0x3f7b69f67d638f8e), // sigmoid(-5.0) = 0.0066928509242848554
    (0xbfffdcc91a7dd1e6, 0x3fbebf6eeb639797), // sigmoid(-1.9914027247260662) = 0.12010854002764258
    (0xbff0000000000000, 0x3fd136561454ba86), // sigmoid(-1.0) = 0.2689414213699951
    (0xbfe0000000000000, 0x3fd829a0565978df), // sigmoid(-0.5) = 0.37754066879814546
    (0xbe50217903dcedc4, 0x3fdffffffbf7a1bf), // sigmoid(-1.5022934222341967e-08) = 0.49999999624426644
    (0x81a56e1fc2f8f359, 0x3fe0000000000000), // sigmoid(-1e-300) = 0.5
    (0x01a56e1fc2f8f359, 0x3fe0000000000000), // sigmoid(1e-300) = 0.5
    (0x3e45798ee2308c3a, 0x3fe00000015798ee), // sigmoid(1e-08) = 0.5000000025
    (0x3fe0000000000000, 0x3fe3eb2fd4d34391), // sigmoid(0.5) = 0.6224593312018546
    (0x3ff0000000000000, 0x3fe764d4f5d5a2bd), // sigmoid(1.0) = 0.7310585786300049
    (0x4000000000000000, 0x3fec2f7d5a8a79ca), // sigmoid(2.0) = 0.8807970779778824
    (0x4014000000000000, 0x3fefc92c130538e1), // sigmoid(5.0) = 0.9933071490757152
    (0x4034000000000000, 0x3feffffffee4b79b), // sigmoid(20.0) = 0.9999999979388464
    (0x4042000000000000, 0x3feffffffffffffe), // sigmoid(36.0) = 0.9999999999999998
    (0x4042800000000000, 0x3fefffffffffffff), // sigmoid(37.0) = 0.9999999999999999
];

#[test]
fn f64_functions_are_within_an_ulp_of_the_correctly_rounded_value() {
    type Table = (&'static str, fn(f64) -> f64, &'static [(u64, u64)]);
    let tables: [Table; 4] = [
        ("exp", exp_f64, EXP_F64),
        ("log", log_f64, LOG_F64),
        ("tanh", tanh_f64, TANH_F64),
        ("sigmoid", sigmoid_f64, SIGMOID_F64),
    ];
    for (name, f, table) in tables {
        for &(x, y) in table {
            let (x, y) = (f64::from_bits(x), f64::from_bits(y));
            let got = f(x);
            assert!(
                ulps_apart(got, y) <= 1,
                "{name}({x:e}) = {got:e}, not {y:e}"
            );
        }
    }
    // tanh is odd.
    for &(x, y) in TANH_F64 {
        let (x, y) = (f64::from_bits(x), f64::from_bits(y));
        assert!(ulps_apart(tanh_f64(-x), -y) <= 1, "tanh({:e})", -x);
    }
}

/// The same checks for f32 and f64: `$exp` etc. name the functions, `$t` the type.
macro_rules! special_values {
    ($test:ident, $t:ident, $exp:ident, $log:ident, $tanh:ident, $sigmoid:ident) => {
        #[test]
        fn $test() {
            let (inf, nan) = ($t::INFINITY, $t::NAN);
            let tiny = $t::from_bits(1); // the smallest subnormal
            let sub = $t::MIN_POSITIVE / 3.0;
            let bits = |x: $t| x.to_bits();
            // NaN propagates through every function, whatever its sign or payload.
            for x in [nan, -nan, $t::from_bits(bits(nan) | 1)] {
                assert!($exp(x).is_nan() && $log(x).is_nan());
                assert!($tanh(x).is_nan() && $sigmoid(x).is_nan());
            }
            // exp
            assert_eq!($exp(0.0), 1.0);
            assert_eq!($exp(-0.0), 1.0);
            assert_eq!($exp(inf), inf);
            assert_eq!(bits($exp(-inf)), 0);
            assert_eq!($exp(tiny), 1.0);
            assert_eq!($exp(-tiny), 1.0);
            assert_eq!($exp(sub), 1.0);
            assert_eq!($exp($t::MAX), inf);
            assert_eq!(bits($exp($t::MIN)), 0);
            // log
            assert_eq!($log(1.0).to_bits(), 0);
            assert_eq!($log(0.0), -inf);
            assert_eq!($log(-0.0), -inf);
            assert_eq!($log(inf), inf);
            assert!($log(-1.0).is_nan() && $log(-inf).is_nan() && $log(-tiny).is_nan());
            assert!($log(tiny).is_finite() && $log(tiny) < $log(sub));
            assert!($log($t::MAX).is_finite() && $log($t::MAX) > 88.0);
            // tanh: odd, exactly +-1 when saturated, x itself for tiny x.
            assert_eq!(bits($tanh(0.0)), bits(0.0));
            assert_eq!(bits($tanh(-0.0)), bits(-0.0));
            assert_eq!($tanh(inf), 1.0);
            assert_eq!($tanh(-inf), -1.0);
            for x in [20.0, 22.5, 100.0, 1e30, $t::MAX] {
                assert_eq!($tanh(x), 1.0, "tanh({x})");
                assert_eq!($tanh(-x), -1.0, "tanh(-{x})");
            }
            for x in [tiny, sub, $t::MIN_POSITIVE, 1e-20] {
                assert_eq!($tanh(x), x);
                assert_eq!($tanh(-x), -x);
            }
            // sigmoid: 1/2 at 0, exactly 1 when saturated, 0 at -inf.
            assert_eq!($sigmoid(0.0), 0.5);
            assert_eq!($sigmoid(-0.0), 0.5);
            assert_eq!($sigmoid(tiny), 0.5);
            assert_eq!($sigmoid(inf), 1.0);
            assert_eq!(bits($sigmoid(-inf)), 0);
            assert_eq!(bits($sigmoid($t::MIN)), 0);
            for x in [40.0, 100.0, 1e30, $t::MAX] {
                assert_eq!($sigmoid(x), 1.0, "sigmoid({x})");
            }
        }
    };
}

special_values!(
    special_values_f64,
    f64,
    exp_f64,
    log_f64,
    tanh_f64,
    sigmoid_f64
);
special_values!(
    special_values_f32,
    f32,
    exp_f32,
    log_f32,
    tanh_f32,
    sigmoid_f32
);

#[test]
fn exp_f64_overflow_and_underflow_thresholds() {
    // fdlibm's thresholds: the largest x with a finite e^x, and the smallest x whose e^x
    // rounds to the smallest subnormal rather than 0.
    let over = f64::from_bits(0x4086_2e42_fefa_39ef); // 709.782712893384
    let under = f64::from_bits(0xc087_4910_d52d_3051); // -745.1332191019411
    assert!(exp_f64(over).is_finite() && exp_f64(over) > 1.79e308);
    assert_eq!(exp_f64(f64::from_bits(over.to_bits() + 1)), f64::INFINITY);
    assert_eq!(exp_f64(under), f64::from_bits(1));
    assert_eq!(exp_f64(-745.2), 0.0);
    assert_eq!(exp_f64(-1000.0), 0.0);
    // Subnormal results decrease with x, by one rounding each (known values above).
    let mut last = f64::MIN_POSITIVE;
    let mut x = -708.4;
    while x > -745.0 {
        let y = exp_f64(x);
        assert!(y <= last && y > 0.0, "exp({x}) = {y:e}");
        assert!(
            ulps_apart(y, x.exp()) <= 1,
            "exp({x}) = {y:e}, std {:e}",
            x.exp()
        );
        last = y;
        x -= 0.37;
    }
}

#[test]
fn exp_f32_overflow_and_underflow_thresholds() {
    // The largest f32 x with a finite e^x is 88.72283 (0x42b17217).
    assert!(exp_f32(f32::from_bits(0x42b1_7217)).is_finite());
    assert_eq!(exp_f32(f32::from_bits(0x42b1_7218)), f32::INFINITY);
    // e^x for x down to -103.97 is subnormal, then 0.
    assert_eq!(exp_f32(-103.0), (-103.0f64).exp() as f32);
    assert!(exp_f32(-103.9) > 0.0);
    assert_eq!(exp_f32(-104.0), 0.0);
    assert_eq!(exp_f32(-87.5), (-87.5f64).exp() as f32);
    assert!(exp_f32(-87.5) < f32::MIN_POSITIVE);
}

#[test]
fn sigmoid_underflows_through_the_subnormals() {
    // f64: sigmoid(x) = e^x (1 - e^x + ...) below -40, subnormal below -708.4, 0 below -745.2.
    let mut last = sigmoid_f64(-40.0);
    let mut x = -40.0;
    while x > -745.0 {
        let y = sigmoid_f64(x);
        assert!(y > 0.0 && y <= last, "sigmoid({x}) = {y:e}");
        assert!(ulps_apart(y, x.exp()) <= 1, "sigmoid({x}) = {y:e}");
        last = y;
        x -= 1.3;
    }
    assert!(sigmoid_f64(-740.0) > 0.0 && sigmoid_f64(-740.0) < f64::MIN_POSITIVE);
    assert_eq!(sigmoid_f64(-746.0), 0.0);
    // f32: subnormal from -87.4, 0 from -104.
    assert!(sigmoid_f32(-100.0) > 0.0 && sigmoid_f32(-100.0) < f32::MIN_POSITIVE);
    assert_eq!(sigmoid_f32(-100.0), (-100.0f64).exp() as f32);
    assert_eq!(sigmoid_f32(-104.0), 0.0);
    assert_eq!(sigmoid_f32(-1000.0), 0.0);
    // Saturation at +large: f64, 1 - sigmoid(x) < half an ulp below 1 from 37.5. f32:
    // 1 + e^{-x} rounds to 1 from 24 ln 2 = 16.64 on (the correctly rounded value reaches
    // 1 at 17.33; in between the result is 1 instead of 1 - 2^-24, under an ulp away).
    assert!(sigmoid_f64(37.0) < 1.0);
    assert_eq!(sigmoid_f64(37.5), 1.0);
    assert!(sigmoid_f32(16.6) < 1.0);
    assert_eq!(sigmoid_f32(16.7), 1.0);
}

#[test]
fn tanh_saturates_where_it_rounds_to_one() {
    // f64: 1 - tanh x < 2^-54 (rounds to 1) from 19.06 on; f32: 1 - tanh x < 2^-25 from 9.02.
    let mut x = 19.1f64;
    while x < 30.0 {
        assert_eq!(tanh_f64(x), 1.0, "tanh({x})");
        assert_eq!(tanh_f64(-x), -1.0);
        x += 0.01;
    }
    assert!(tanh_f64(18.0) < 1.0);
    let mut x = 9.1f32;
    while x < 15.0 {
        assert_eq!(tanh_f32(x), 1.0, "tanh({x})");
        assert_eq!(tanh_f32(-x), -1.0);
        x += 0.01;
    }
    assert!(tanh_f32(8.0) < 1.0);
}

#[test]
fn log_of_subnormals_and_extremes() {
    // log(2^k) = k ln 2 for every exponent, subnormal ones included.
    let pow2_64 = |k: i32| {
        // 2^k from its bits, subnormal ones included.
        if k >= -1022 {
            f64::from_bits(((k + 1023) as u64) << 52)
        } else {
            f64::from_bits(1u64 << (k + 1074))
        }
    };
    for k in -1074..=1023 {
        let x = pow2_64(k);
        let expected = f64::from(k) * std::f64::consts::LN_2;
        assert!(ulps_apart(log_f64(x), expected) <= 1, "log(2^{k})");
    }
    for k in -149..=127 {
        let x = pow2_64(k) as f32;
        let err = ulp_error_f32(log_f32(x), f64::from(k) * std::f64::consts::LN_2);
        assert!(err <= 0.5001, "log(2^{k}) f32: {err} ulp");
    }
}

// ---------------------------------------------------------------------------------------
// The same bits on every instruction set.
// ---------------------------------------------------------------------------------------

/// `out[i] = f(xs[i])`.
#[inline(always)]
fn apply<T: Copy>(out: &mut [T], xs: &[T], f: impl Fn(T) -> T) {
    for (o, &x) in out.iter_mut().zip(xs) {
        *o = f(x);
    }
}

/// The four functions over `xs`, each as a slice loop (inlined into whatever calls it, so
/// compiled for AVX2 inside `with_best_isa`).
#[inline(always)]
fn four_f64(xs: &[f64], out: &mut [[f64; 4]]) {
    let n = xs.len();
    let mut cols = vec![vec![0.0; n]; 4];
    apply(&mut cols[0], xs, exp_f64);
    apply(&mut cols[1], xs, log_f64);
    apply(&mut cols[2], xs, tanh_f64);
    apply(&mut cols[3], xs, sigmoid_f64);
    for (i, o) in out.iter_mut().enumerate() {
        *o = [cols[0][i], cols[1][i], cols[2][i], cols[3][i]];
    }
}

#[inline(always)]
fn four_f32(xs: &[f32], out: &mut [[f32; 4]]) {
    let n = xs.len();
    let mut cols = vec![vec![0.0; n]; 4];
    apply(&mut cols[0], xs, exp_f32);
    apply(&mut cols[1], xs, log_f32);
    apply(&mut cols[2], xs, tanh_f32);
    apply(&mut cols[3], xs, sigmoid_f32);
    for (i, o) in out.iter_mut().enumerate() {
        *o = [cols[0][i], cols[1][i], cols[2][i], cols[3][i]];
    }
}

/// The four functions' results on `xs` are the same bits on both paths.
fn assert_same_bits<T: Copy + std::fmt::LowerExp>(
    xs: &[T],
    plain: &[[T; 4]],
    best: &[[T; 4]],
    bits: impl Fn(T) -> u64,
) {
    for (i, (p, b)) in plain.iter().zip(best).enumerate() {
        for k in 0..4 {
            assert_eq!(bits(p[k]), bits(b[k]), "x = {:e}, function {k}", xs[i]);
        }
    }
}

#[test]
fn avx2_and_default_code_give_the_same_bits() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut xs: Vec<f64> = (0..50_000).map(|_| rng.uniform(-30.0, 30.0)).collect();
    xs.extend((0..50_000).map(|_| f64::from_bits(rng.bits())));
    xs.extend((0..20_000).map(|_| rng.uniform(-750.0, 720.0)));
    let mut plain = vec![[0.0; 4]; xs.len()];
    let mut best = plain.clone();
    four_f64(&xs, &mut plain);
    isa::with_best_isa(
        #[inline(always)]
        || four_f64(&xs, &mut best),
    );
    assert_same_bits(&xs, &plain, &best, |v| v.to_bits());
    let xs: Vec<f32> = xs
        .iter()
        .map(|&x| x as f32)
        .chain((0..50_000).map(|_| f32::from_bits(rng.bits() as u32)))
        .collect();
    let mut plain = vec![[0.0; 4]; xs.len()];
    let mut best = plain.clone();
    four_f32(&xs, &mut plain);
    isa::with_best_isa(
        #[inline(always)]
        || four_f32(&xs, &mut best),
    );
    assert_same_bits(&xs, &plain, &best, |v| u64::from(v.to_bits()));
}

/// tanh's one-factor `e^{2|x|}` ([`exp_small_f32`], no clamp) is `exp_f32` to the bit
/// wherever tanh uses it, [0, 20]: the same tanh as with `exp_f32`, only faster.
#[test]
fn tanh_s_exponential_gives_exp_f32_s_bits() {
    let top = 20.0f32.to_bits();
    let mut checked = 0;
    for bits in (0..=top).step_by(101).chain([top]) {
        let x = f32::from_bits(bits);
        assert_eq!(exp_small_f32(x).to_bits(), exp_f32(x).to_bits(), "e^{x:e}");
        checked += 1;
    }
    assert!(checked > 10_000_000);
}
