//! The random ops, written again from the definitions in docs/SEMANTICS.md ("Random
//! numbers"), not from the runtime's code: Philox 4x32-10 (Salmon et al., SC 2011) on a
//! key's 64 bits, its blocks addressed by `(index, family)`, and the draws made from
//! their words. Tests compare the generated code to this bit for bit, and this to
//! Random123's known answers (`tests::philox_known_answers`).

use ndarray::{ArrayD, Axis, IxDyn};

use super::value::Value;
use crate::ir::{DType, RandomOp};

/// One Philox 4x32 round of `x` under round key `k` (Random123's `_philox4x32round`).
fn round(x: [u32; 4], k: [u32; 2]) -> [u32; 4] {
    let a = (x[0] as u64).wrapping_mul(0xD251_1F53);
    let b = (x[2] as u64).wrapping_mul(0xCD9E_8D57);
    [
        ((b >> 32) as u32) ^ x[1] ^ k[0],
        b as u32,
        ((a >> 32) as u32) ^ x[3] ^ k[1],
        a as u32,
    ]
}

/// Philox 4x32 with `rounds` rounds; round r's key is the key plus r Weyl increments.
pub fn philox(ctr: [u32; 4], key: [u32; 2], rounds: u32) -> [u32; 4] {
    (0..rounds).fold(ctr, |x, r| {
        let k = [
            key[0].wrapping_add(r.wrapping_mul(0x9E37_79B9)),
            key[1].wrapping_add(r.wrapping_mul(0xBB67_AE85)),
        ];
        round(x, k)
    })
}

/// Block `index` of family `family` (0: draws, 1: derived keys) of `key`.
fn block(key: i64, index: u64, family: u32) -> [u32; 4] {
    let k = key as u64;
    let ctr = [
        (index & 0xFFFF_FFFF) as u32,
        (index >> 32) as u32,
        0,
        family,
    ];
    philox(ctr, [(k & 0xFFFF_FFFF) as u32, (k >> 32) as u32], 10)
}

fn pair(lo: u32, hi: u32) -> u64 {
    ((hi as u64) << 32) + lo as u64
}

fn derive(key: i64, i: i64) -> i64 {
    let w = block(key, i as u64, 1);
    pair(w[0], w[1]) as i64
}

/// 64-bit word `j` of `key`'s draws: the first or second half of block `j / 2`.
fn word(key: i64, j: u64) -> u64 {
    let w = block(key, j >> 1, 0);
    let h = 2 * (j & 1) as usize;
    pair(w[h], w[h + 1])
}

const TWO_M53: f64 = 1.0 / 9_007_199_254_740_992.0;

fn uniform64(w: u64) -> f64 {
    (w >> 11) as f64 * TWO_M53
}

fn uniform32(w: u64) -> f32 {
    (w >> 40) as f32 / 16_777_216.0
}

fn normal64(key: i64, j: u64) -> f64 {
    let (even, odd) = (word(key, j & !1), word(key, j | 1));
    let radius = (-2.0 * libm::log(1.0 - uniform64(even))).sqrt();
    let angle = std::f64::consts::TAU * uniform64(odd);
    radius
        * if j & 1 == 0 {
            libm::cos(angle)
        } else {
            libm::sin(angle)
        }
}

/// ln of a Gamma(a, 1) variate of element `j` from gamma family `fam` (2 or 3), by
/// Marsaglia-Tsang as SEMANTICS defines it: attempt k reads counters `[j, 2k, fam]` (the
/// normal) and `[j, 2k + 1, fam]` (the acceptance uniform, and the boost's for a < 1).
fn log_gamma(key: i64, fam: u32, j: u64, a: f64) -> f64 {
    if a.is_nan() || a <= 0.0 {
        return f64::NAN;
    }
    if a == f64::INFINITY {
        return a;
    }
    let k = key as u64;
    let keys = [(k & 0xFFFF_FFFF) as u32, (k >> 32) as u32];
    let at = |c: u32| philox([j as u32, (j >> 32) as u32, c, fam], keys, 10);
    let shape = if a < 1.0 { a + 1.0 } else { a };
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    let mut attempt = 0u32;
    while attempt < 1 << 31 {
        let z = at(2 * attempt);
        let radius = (-2.0 * libm::log(1.0 - uniform64(pair(z[0], z[1])))).sqrt();
        let x = radius * libm::cos(std::f64::consts::TAU * uniform64(pair(z[2], z[3])));
        let w = at(2 * attempt + 1);
        attempt += 1;
        let t = 1.0 + c * x;
        if t <= 0.0 {
            continue;
        }
        let v = t * t * t;
        let u = 1.0 - uniform64(pair(w[0], w[1]));
        let squeeze = u < 1.0 - 0.0331 * (x * x) * (x * x);
        if squeeze || libm::log(u) < 0.5 * (x * x) + d * (1.0 - v + libm::log(v)) {
            let g = libm::log(d * v);
            return if a < 1.0 {
                g + libm::log(1.0 - uniform64(pair(w[2], w[3]))) / a
            } else {
                g
            };
        }
    }
    f64::NAN
}

fn scalar_i64(v: &Value, what: &str, label: &str) -> Result<i64, String> {
    v.scalar_int()
        .ok_or_else(|| format!("IR error: `{label}`: {what} of {}", v.describe()))
}

fn shape_of(dims: &[Value], label: &str) -> Result<Vec<usize>, String> {
    let lengths: Vec<i64> = dims
        .iter()
        .map(|d| scalar_i64(d, "a length", label))
        .collect::<Result<_, _>>()?;
    lengths
        .iter()
        .map(|&n| {
            usize::try_from(n)
                .map_err(|_| format!("`{label}`: negative length {n} in the shape {lengths:?}"))
        })
        .collect()
}

/// Evaluates `op` on `args` (key first), its result of `dtype`.
pub fn eval(op: RandomOp, args: &[Value], dtype: DType, label: &str) -> Result<Value, String> {
    let Some(key) = args.first() else {
        return Err(format!("IR error: `{label}`: a random op without a key"));
    };
    let key = scalar_i64(key, "a key", label)?;
    let second = || {
        args.get(1)
            .ok_or_else(|| format!("IR error: `{label}`: a random op without its operand"))
    };
    Ok(match op {
        RandomOp::DeriveKey => {
            let i = scalar_i64(second()?, "a key index", label)?;
            Value::I64(ArrayD::from_elem(IxDyn(&[]), derive(key, i)))
        }
        RandomOp::Split => {
            let n = scalar_i64(second()?, "a key count", label)?;
            let n = usize::try_from(n).map_err(|_| format!("`{label}`: split into {n} keys"))?;
            Value::I64(ArrayD::from_shape_fn(IxDyn(&[n]), |i| {
                derive(key, i[0] as i64)
            }))
        }
        RandomOp::Uniform | RandomOp::Normal => {
            let shape = shape_of(&args[1..], label)?;
            let len = shape
                .iter()
                .try_fold(1usize, |n, &d| n.checked_mul(d))
                .ok_or_else(|| format!("`{label}`: the shape {shape:?} has too many elements"))?;
            let normal = op == RandomOp::Normal;
            let values = (0..len as u64).map(|j| {
                if normal {
                    normal64(key, j)
                } else {
                    uniform64(word(key, j))
                }
            });
            match dtype {
                DType::F64 => Value::F64(
                    ArrayD::from_shape_vec(IxDyn(&shape), values.collect())
                        .map_err(|e| e.to_string())?,
                ),
                DType::F32 => {
                    let v: Vec<f32> = if normal {
                        values.map(|x| x as f32).collect()
                    } else {
                        (0..len as u64).map(|j| uniform32(word(key, j))).collect()
                    };
                    Value::F32(ArrayD::from_shape_vec(IxDyn(&shape), v).map_err(|e| e.to_string())?)
                }
                other => return Err(format!("IR error: `{label}`: a draw of {other}")),
            }
        }
        RandomOp::Bernoulli => match second()? {
            Value::F64(p) => {
                let flat: Vec<bool> = p
                    .iter()
                    .enumerate()
                    .map(|(j, &p)| uniform64(word(key, j as u64)) < p)
                    .collect();
                Value::Bool(ArrayD::from_shape_vec(p.raw_dim(), flat).map_err(|e| e.to_string())?)
            }
            Value::F32(p) => {
                let flat: Vec<bool> = p
                    .iter()
                    .enumerate()
                    .map(|(j, &p)| uniform32(word(key, j as u64)) < p)
                    .collect();
                Value::Bool(ArrayD::from_shape_vec(p.raw_dim(), flat).map_err(|e| e.to_string())?)
            }
            other => {
                return Err(format!(
                    "IR error: `{label}`: bernoulli of {}",
                    other.describe()
                ))
            }
        },
        RandomOp::Gamma => {
            // Element j (row-major) from its own blocks, in f64; f32 rounded once.
            let draw = |a: &ArrayD<f64>| -> Result<ArrayD<f64>, String> {
                let flat = a
                    .iter()
                    .enumerate()
                    .map(|(j, &x)| libm::exp(log_gamma(key, 2, j as u64, x)))
                    .collect();
                ArrayD::from_shape_vec(a.raw_dim(), flat).map_err(|e| e.to_string())
            };
            match second()? {
                Value::F64(a) => Value::F64(draw(a)?),
                Value::F32(a) => Value::F32(draw(&a.mapv(f64::from))?.mapv(|x| x as f32)),
                other => {
                    return Err(format!(
                        "IR error: `{label}`: gamma of {}",
                        other.describe()
                    ))
                }
            }
        }
        RandomOp::Beta => {
            let third = args
                .get(2)
                .ok_or_else(|| format!("IR error: `{label}`: beta without b"))?;
            let (a, b, single) = match (second()?, third) {
                (Value::F64(a), Value::F64(b)) => (a.clone(), b.clone(), false),
                (Value::F32(a), Value::F32(b)) => (a.mapv(f64::from), b.mapv(f64::from), true),
                (a, b) => {
                    return Err(format!(
                        "IR error: `{label}`: beta of {} and {}",
                        a.describe(),
                        b.describe()
                    ))
                }
            };
            let shape =
                super::elemwise::broadcast_shape(&[a.shape(), b.shape()]).ok_or_else(|| {
                    format!(
                        "`{label}`: shapes {:?} and {:?} do not broadcast",
                        a.shape(),
                        b.shape()
                    )
                })?;
            let (a, b) = (
                a.broadcast(IxDyn(&shape))
                    .ok_or("IR error: broadcast")?
                    .to_owned(),
                b.broadcast(IxDyn(&shape))
                    .ok_or("IR error: broadcast")?
                    .to_owned(),
            );
            let flat: Vec<f64> = a
                .iter()
                .zip(b.iter())
                .enumerate()
                .map(|(j, (&a, &b))| {
                    let (lx, ly) = (
                        log_gamma(key, 2, j as u64, a),
                        log_gamma(key, 3, j as u64, b),
                    );
                    1.0 / (1.0 + libm::exp(ly - lx))
                })
                .collect();
            let out = ArrayD::from_shape_vec(IxDyn(&shape), flat).map_err(|e| e.to_string())?;
            if single {
                Value::F32(out.mapv(|x| x as f32))
            } else {
                Value::F64(out)
            }
        }
        RandomOp::Categorical => {
            let logits: ArrayD<f64> = match second()? {
                Value::F64(a) => a.clone(),
                Value::F32(a) => a.mapv(f64::from),
                other => {
                    return Err(format!(
                        "IR error: `{label}`: categorical of {}",
                        other.describe()
                    ))
                }
            };
            let Some(&n) = logits.shape().last() else {
                return Err(format!("IR error: `{label}`: categorical of a scalar"));
            };
            if n == 0 {
                return Err(format!(
                    "`{label}`: categorical over an empty last axis (logits of shape {:?})",
                    logits.shape()
                ));
            }
            // Rows in row-major order; element (r, c) is flat index r * n + c.
            let rows = logits.len() / n;
            let flat = logits
                .as_standard_layout()
                .into_owned()
                .into_shape_with_order((rows, n))
                .map_err(|e| e.to_string())?;
            let mut picks = Vec::with_capacity(rows);
            for (r, row) in flat.axis_iter(Axis(0)).enumerate() {
                let noisy = row.iter().enumerate().map(|(c, &x)| {
                    let w = word(key, (r * n + c) as u64);
                    let u = ((w >> 11) as f64 + 0.5) * TWO_M53;
                    x + -libm::log(-libm::log(u))
                });
                // numpy's argmax: the first largest, or the first NaN.
                let mut pick: Option<(usize, f64)> = None;
                for (c, v) in noisy.enumerate() {
                    pick = match pick {
                        None => Some((c, v)),
                        Some((_, b)) if b.is_nan() => pick,
                        Some((_, b)) if v.is_nan() || v > b => Some((c, v)),
                        keep => keep,
                    };
                }
                picks.push(pick.map_or(0, |(c, _)| c as i64));
            }
            let out_shape = &logits.shape()[..logits.ndim() - 1];
            Value::I64(ArrayD::from_shape_vec(IxDyn(out_shape), picks).map_err(|e| e.to_string())?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn philox_known_answers() {
        // Random123's kat_vectors.
        assert_eq!(
            philox([0; 4], [0; 2], 10),
            [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
        );
        assert_eq!(
            philox([u32::MAX; 4], [u32::MAX; 2], 10),
            [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
        );
        assert_eq!(
            philox(
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0],
                10
            ),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
        assert_eq!(
            philox([0; 4], [0; 2], 7),
            [0x5f6fb709, 0x0d893f64, 0x4f121f81, 0x4f730a48]
        );
    }
}
