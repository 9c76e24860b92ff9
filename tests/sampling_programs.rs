//! Whole sampling programs written the natural way, with a random key carried through the
//! loop like any recurrent output: an RBM's Gibbs chain (Bernoulli draws) and a GARCH(1,1)
//! path (normal innovations). Each is checked against a hand-written Rust loop that calls
//! the runtime's generator (`scan_runtime::random`) with the same key sequence, against
//! the reference evaluator (its own Philox) bit for bit, and the chain against the same
//! chain written two other ways: the noise drawn before the loop and passed as sequences,
//! and the per-step keys made before the loop and passed as a sequence.

mod common;

use common::{evaluate, matrix, rewrites_agree, Value};
use scan_runtime::prelude::*;
use scan_runtime::random;

mod programs {
    scan_tests::program! {
        /// k steps of block Gibbs sampling in a binary RBM, visible -> hidden -> visible,
        /// the key carried as a recurrent output.
        pub fn gibbs(v0: ArrayView1<f64>, w: ArrayView2<f64>, b: ArrayView1<f64>, c: ArrayView1<f64>, seed: i64, k: usize) -> Result<(Array2<f64>, Array2<f64>)> {
            let (hs, vs, _) = scan(
                |v, key| {
                    let (key, h) = bernoulli(key, sigmoid(v.dot(w) + c));
                    let h = h as f64;
                    let (key, v_new) = bernoulli(key, sigmoid(w.dot(h) + b));
                    (h, v_new as f64, key)
                },
                outputs_info = [None, v0, rng_key(seed)],
                n_steps = k,
            );
            Ok((hs, vs))
        }

        /// The same chain with its noise drawn before the loop, by a loop of its own that
        /// advances the key as the chain does, and passed in as two sequences.
        pub fn gibbs_noise_first(v0: ArrayView1<f64>, w: ArrayView2<f64>, b: ArrayView1<f64>, c: ArrayView1<f64>, seed: i64, k: usize) -> Result<(Array2<f64>, Array2<f64>)> {
            let (n_visible, n_hidden) = (b.len(), c.len());
            let (_, uh, uv) = scan(
                |key| {
                    let (key, uh) = uniform(key, n_hidden);
                    let (key, uv) = uniform(key, n_visible);
                    (key, uh, uv)
                },
                outputs_info = [rng_key(seed), None, None],
                n_steps = k,
            );
            let (hs, vs) = scan(
                |uh_t, uv_t, v| {
                    let h = (uh_t < sigmoid(v.dot(w) + c)) as f64;
                    (h, (uv_t < sigmoid(w.dot(h) + b)) as f64)
                },
                sequences = [uh, uv],
                outputs_info = [None, v0],
            );
            Ok((hs, vs))
        }

        /// The same chain with one key per step made before the loop (the chain's key at
        /// that step) and passed in as a sequence.
        pub fn gibbs_keys_first(v0: ArrayView1<f64>, w: ArrayView2<f64>, b: ArrayView1<f64>, c: ArrayView1<f64>, seed: i64, k: usize) -> Result<(Array2<f64>, Array2<f64>)> {
            // A step draws twice, so the chain's key advances twice per step.
            let (_, keys) = scan(
                |key| {
                    let (once, _) = split(key);
                    let (twice, _) = split(once);
                    (twice, key)
                },
                outputs_info = [rng_key(seed), None],
                n_steps = k,
            );
            let (hs, vs) = scan(
                |key, v| {
                    let (key, h) = bernoulli(key, sigmoid(v.dot(w) + c));
                    let h = h as f64;
                    let (_, v_new) = bernoulli(key, sigmoid(w.dot(h) + b));
                    (h, v_new as f64)
                },
                sequences = keys,
                outputs_info = [None, v0],
            );
            Ok((hs, vs))
        }

        /// A GARCH(1,1) path: sigma2_t = omega + alpha r_{t-1}^2 + beta sigma2_{t-1},
        /// r_t = sqrt(sigma2_t) z_t with z_t standard normal from the carried key.
        pub fn garch_path(omega: f64, alpha: f64, beta: f64, sigma2_0: f64, seed: i64, n: usize) -> Result<(Array1<f64>, Array1<f64>, i64)> {
            let (sigma2, r, keys) = scan(
                |s2_tm1, r_tm1, key| {
                    let s2 = omega + alpha * r_tm1 * r_tm1 + beta * s2_tm1;
                    let (key, z) = normal(key, ());
                    (s2, sqrt(s2) * z, key)
                },
                outputs_info = [sigma2_0, 0.0, rng_key(seed)],
                n_steps = n,
            );
            Ok((sigma2, r, keys[-1]))
        }
    }
}

fn sigmoid(x: f64) -> f64 {
    // The runtime's own sigmoid, so that p is the program's to the last bit (a draw is
    // `u < p`: a p off by an ulp could flip one in 2^52).
    scan_runtime::math::sigmoid(x)
}

/// The chain written by hand: `(hs, vs)` rows, drawing with the runtime's generator.
fn gibbs_by_hand(
    v0: &Array1<f64>,
    w: &Array2<f64>,
    b: &Array1<f64>,
    c: &Array1<f64>,
    seed: i64,
    k: usize,
) -> (Vec<f64>, Vec<f64>) {
    let (nv, nh) = (b.len(), c.len());
    let mut key = random::key_from_seed(seed);
    let mut v = v0.to_vec();
    let (mut hs, mut vs) = (Vec::new(), Vec::new());
    for _ in 0..k {
        let h: Vec<f64> = (0..nh)
            .map(|j| {
                let a = (0..nv).map(|i| v[i] * w[[i, j]]).sum::<f64>() + c[j];
                f64::from(u8::from(
                    random::uniform_at::<f64>(key, j as u64) < sigmoid(a),
                ))
            })
            .collect();
        key = random::next_key(key);
        v = (0..nv)
            .map(|i| {
                let a = (0..nh).map(|j| w[[i, j]] * h[j]).sum::<f64>() + b[i];
                f64::from(u8::from(
                    random::uniform_at::<f64>(key, i as u64) < sigmoid(a),
                ))
            })
            .collect();
        key = random::next_key(key);
        hs.extend(&h);
        vs.extend(&v);
    }
    (hs, vs)
}

fn bits(values: &[Value]) -> Vec<String> {
    values.iter().map(|v| format!("{v:?}")).collect()
}

#[test]
fn an_rbm_gibbs_chain_with_a_carried_key() {
    let (nv, nh, k) = (6, 4, 40);
    let w = matrix(nv, nh, 21) * 6.0;
    let b = matrix(1, nv, 22).row(0).to_owned();
    let c = matrix(1, nh, 23).row(0).to_owned();
    let v0 = Array1::from_shape_fn(nv, |i| (i % 2) as f64);
    let (hs, vs) = programs::gibbs(v0.view(), w.view(), b.view(), c.view(), 17, k).unwrap();
    assert_eq!((hs.dim(), vs.dim()), ((k, nh), (k, nv)));
    let (want_h, want_v) = gibbs_by_hand(&v0, &w, &b, &c, 17, k);
    assert_eq!(hs.as_slice().unwrap(), &want_h[..]);
    assert_eq!(vs.as_slice().unwrap(), &want_v[..]);
    // The chain moves: samples are binary, not all equal, and differ between steps.
    assert!(vs.iter().all(|&x| x == 0.0 || x == 1.0));
    let ones = vs.iter().filter(|&&x| x == 1.0).count();
    assert!(ones > 10 && ones < k * nv - 10, "{ones}");
    assert!((1..k).any(|t| vs.row(t) != vs.row(t - 1)));
    // Another seed, another chain.
    let (_, other) = programs::gibbs(v0.view(), w.view(), b.view(), c.view(), 18, k).unwrap();
    assert_ne!(other, vs);

    let args = vec![
        Value::from(v0.clone()),
        Value::from(w.clone()),
        Value::from(b.clone()),
        Value::from(c.clone()),
        Value::from(17i64),
        Value::from(k as i64),
    ];
    let generated = vec![Value::from(hs.clone()), Value::from(vs.clone())];
    assert_eq!(
        bits(&generated),
        bits(&evaluate(programs::SOURCE, "gibbs", args.clone()))
    );
    rewrites_agree(programs::SOURCE, "gibbs", args.clone());

    // The noise drawn before the loop, or the keys made before it: identical samples.
    for function in ["gibbs_noise_first", "gibbs_keys_first"] {
        let f = match function {
            "gibbs_noise_first" => programs::gibbs_noise_first,
            _ => programs::gibbs_keys_first,
        };
        let (hs2, vs2) = f(v0.view(), w.view(), b.view(), c.view(), 17, k).unwrap();
        assert_eq!((&hs2, &vs2), (&hs, &vs), "{function}");
        assert_eq!(
            bits(&generated),
            bits(&evaluate(programs::SOURCE, function, args.clone())),
            "{function}"
        );
        rewrites_agree(programs::SOURCE, function, args.clone());
    }
}

#[test]
fn a_garch_path_with_normal_innovations_from_a_carried_key() {
    let (omega, alpha, beta, s0, n) = (0.05, 0.1, 0.85, 1.0, 500);
    let (sigma2, r, last) = programs::garch_path(omega, alpha, beta, s0, 99, n).unwrap();
    // The hand-written loop, one normal draw per step from the chain's key.
    let mut key = random::key_from_seed(99);
    let (mut s2, mut r_prev) = (s0, 0.0);
    for t in 0..n {
        s2 = omega + alpha * r_prev * r_prev + beta * s2;
        let z = random::normal_at::<f64>(key, 0);
        key = random::next_key(key);
        r_prev = s2.sqrt() * z;
        assert_eq!(sigma2[t].to_bits(), s2.to_bits(), "sigma2[{t}]");
        assert_eq!(r[t].to_bits(), r_prev.to_bits(), "r[{t}]");
    }
    assert_eq!(last, key);
    // The path's unconditional variance omega / (1 - alpha - beta) = 1, roughly.
    let var = r.iter().map(|x| x * x).sum::<f64>() / n as f64;
    assert!((0.7..1.4).contains(&var), "{var}");
    let args = vec![
        Value::from(omega),
        Value::from(alpha),
        Value::from(beta),
        Value::from(s0),
        Value::from(99i64),
        Value::from(n as i64),
    ];
    let generated = vec![Value::from(sigma2), Value::from(r), Value::from(last)];
    assert_eq!(
        bits(&generated),
        bits(&evaluate(programs::SOURCE, "garch_path", args.clone()))
    );
    rewrites_agree(programs::SOURCE, "garch_path", args);
}
