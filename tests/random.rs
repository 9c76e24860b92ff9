//! Random numbers (docs/SEMANTICS.md, "Random numbers"): the runtime's Philox 4x32-10
//! against Random123's known answers, the draws of generated code against the runtime's
//! generator called directly and against the reference evaluator (its own Philox) bit for
//! bit, determinism, thread counts, streams that differ between steps and splits, and the
//! statistics of 10^5 draws.

mod common;

use common::{evaluate, evaluate_err, rewrites_agree, Value};
use scan_runtime::prelude::*;
use scan_runtime::random;

mod programs {
    scan_tests::program! {
        /// Four draws in a row from one seed, each advancing the key.
        pub fn draws(seed: i64, n: usize) -> Result<(Array1<f64>, Array1<f64>, Array1<f32>, Array1<f32>, i64)> {
            let key = rng_key(seed);
            let (key, u) = uniform(key, n);
            let (key, z) = normal(key, n);
            let (key, u32) = uniform(key, n, dtype = f32);
            let (key, z32) = normal(key, (n,), dtype = f32);
            Ok((u, z, u32, z32, key))
        }

        /// Draws of two axes, scalar draws, and the key after them.
        pub fn shapes(key: i64, rows: i64, cols: i64) -> Result<(Array2<f64>, Array2<f32>, f64, f32, i64)> {
            let (k1, a) = normal(key, (rows, cols));
            let (k2, b) = uniform(k1, (rows, cols), dtype = f32);
            let (k3, s) = normal(k2, ());
            let (k4, t) = uniform(k3, (), dtype = f32);
            Ok((a, b, s, t, k4))
        }

        /// `split(key)` and `split(key, n)`.
        pub fn splits(key: i64, n: usize) -> Result<(i64, i64, Array1<i64>)> {
            let (a, b) = split(key);
            Ok((a, b, split(key, n)))
        }

        /// A key carried through a loop: each step's draws come from that step's key.
        pub fn per_step(seed: i64, steps: usize, n: usize) -> Result<(Array2<f64>, Array1<i64>)> {
            let (rows, keys) = scan(
                |key| {
                    let (next, u) = uniform(key, n);
                    (u, next)
                },
                outputs_info = [None, rng_key(seed)],
                n_steps = steps,
            );
            Ok((rows, keys))
        }

        /// bernoulli(key, p) is uniform(key, p.shape) < p, in p's dtype.
        pub fn coins(key: i64, p: ArrayView2<f64>, q: ArrayView1<f32>, r: f64) -> Result<(Array2<bool>, Array2<bool>, Array1<bool>, Array1<bool>, bool, bool)> {
            let (_, heads) = bernoulli(key, p);
            let (_, u) = uniform(key, (p.shape[0], p.shape[1]));
            let (_, heads32) = bernoulli(key, q);
            let (_, u32) = uniform(key, q.len(), dtype = f32);
            let (_, one) = bernoulli(key, r);
            let (_, v) = uniform(key, ());
            Ok((heads, u < p, heads32, u32 < q, one, v < r))
        }

        /// Categorical draws over the last axis, of a matrix and of a vector.
        pub fn pick(key: i64, logits: ArrayView2<f64>, l32: ArrayView1<f32>) -> Result<(Array1<i64>, i64, i64)> {
            let (k, rows) = categorical(key, logits);
            let (_, one) = categorical(k, l32);
            Ok((rows, one, k))
        }

        /// Draws repeated with the same key are the same numbers (cse may merge them),
        /// and an advanced key gives others.
        /// Gamma and beta variates: of arrays (f64 and f32), scalars, broadcast beta
        /// parameters, and a carried key drawing a gamma shape per step.
        pub fn variates(key: i64, a: ArrayView1<f64>, b: ArrayView2<f32>, c: f32) -> Result<(Array1<f64>, Array2<f32>, f64, Array2<f32>, Array2<f64>)> {
            let (key, g) = gamma(key, a);
            let (key, g32) = gamma(key, b);
            let (key, s) = beta(key, 2.0, 3.0);
            let (key, bb) = beta(key, b, c);
            let (_, steps) = scan(
                |k, a| {
                    let (k, x) = gamma(k, a);
                    (k, x)
                },
                outputs_info = [key, None],
                non_sequences = a,
                n_steps = 3,
            );
            Ok((g, g32, s, bb, steps))
        }

        pub fn repeat(key: i64, n: usize) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
            let (k, a) = uniform(key, n);
            let (_, b) = uniform(key, n);
            let (_, c) = uniform(k, n);
            Ok((a, b, c))
        }
    }
}

/// The two values' elements have the same bits (floats compared by `{:?}`, exact).
fn same_bits(generated: &[Value], evaluated: &[Value]) {
    assert_eq!(generated.len(), evaluated.len());
    for (i, (g, e)) in generated.iter().zip(evaluated).enumerate() {
        assert_eq!(format!("{g:?}"), format!("{e:?}"), "result {i}");
    }
}

/// Generated code and evaluator give the same bits; the rewrites change nothing.
fn check_evaluator(function: &str, args: Vec<Value>, generated: Vec<Value>) {
    same_bits(
        &generated,
        &evaluate(programs::SOURCE, function, args.clone()),
    );
    rewrites_agree(programs::SOURCE, function, args);
}

#[test]
fn philox_4x32_10_known_answers_through_the_public_function() {
    // Random123's kat_vectors: counter, key -> output.
    assert_eq!(
        random::philox4x32_10([0; 4], [0; 2]),
        [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
    );
    assert_eq!(
        random::philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
        [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
    );
    assert_eq!(
        random::philox4x32_10(
            [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
            [0xa4093822, 0x299f31d0]
        ),
        [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
    );
    // Key 0's first word of draws is that first block's first two words.
    assert_eq!(random::word(0, 0), 0xe169c58d_6627e8d5);
    assert_eq!(
        random::uniform_at::<f64>(0, 0),
        (0xe169c58d_6627e8d5_u64 >> 11) as f64 / (1u64 << 53) as f64
    );
}

#[test]
fn draws_are_the_generators_numbers_and_the_evaluators() {
    let n = 9;
    let (u, z, u32, z32, last) = programs::draws(42, n).unwrap();
    // The hand-written chain: each draw uses its key, then the key advances.
    let k0 = random::key_from_seed(42);
    let k1 = random::next_key(k0);
    let k2 = random::next_key(k1);
    let k3 = random::next_key(k2);
    for j in 0..n {
        let jj = j as u64;
        assert_eq!(u[j].to_bits(), random::uniform_at::<f64>(k0, jj).to_bits());
        assert_eq!(z[j].to_bits(), random::normal_at::<f64>(k1, jj).to_bits());
        assert_eq!(
            u32[j].to_bits(),
            random::uniform_at::<f32>(k2, jj).to_bits()
        );
        assert_eq!(z32[j].to_bits(), random::normal_at::<f32>(k3, jj).to_bits());
    }
    assert_eq!(last, random::next_key(k3));
    assert!(u.iter().all(|&x| (0.0..1.0).contains(&x)));
    assert!(u32.iter().all(|&x| (0.0..1.0).contains(&x)));
    // Same seed, same numbers; another seed, others.
    let again = programs::draws(42, n).unwrap();
    assert_eq!((&again.0, &again.1, again.4), (&u, &z, last));
    let other = programs::draws(43, n).unwrap();
    assert!(other.0.iter().zip(&u).all(|(a, b)| a != b));
    check_evaluator(
        "draws",
        vec![Value::from(42i64), Value::from(n as i64)],
        vec![
            Value::from(u),
            Value::from(z),
            Value::from(u32),
            Value::from(z32),
            Value::from(last),
        ],
    );
}

#[test]
fn draws_of_two_axes_and_scalars_take_elements_in_row_major_order() {
    let key = -7_i64; // any 64-bit value is a key
    let (a, b, s, t, last) = programs::shapes(key, 3, 4).unwrap();
    assert_eq!(a.dim(), (3, 4));
    let k1 = random::next_key(key);
    for ((r, c), &x) in a.indexed_iter() {
        assert_eq!(x, random::normal_at::<f64>(key, (r * 4 + c) as u64));
        assert_eq!(b[[r, c]], random::uniform_at::<f32>(k1, (r * 4 + c) as u64));
    }
    let k2 = random::next_key(k1);
    assert_eq!(s, random::normal_at::<f64>(k2, 0));
    assert_eq!(t, random::uniform_at::<f32>(random::next_key(k2), 0));
    assert_eq!(last, random::next_key(random::next_key(k2)));
    check_evaluator(
        "shapes",
        vec![Value::from(key), Value::from(3i64), Value::from(4i64)],
        vec![
            Value::from(a),
            Value::from(b),
            Value::from(s),
            Value::from(t),
            Value::from(last),
        ],
    );
    // A negative length is an Err naming the expression.
    let err = programs::shapes(key, -2, 4).unwrap_err().to_string();
    assert!(err.contains("`normal(key,(rows, cols))`"), "{err}");
    assert!(err.contains("negative length -2"), "{err}");
    let e = evaluate_err(
        programs::SOURCE,
        "shapes",
        vec![Value::from(key), Value::from(-2i64), Value::from(4i64)],
    );
    assert!(e.contains("negative length -2"), "{e}");
}

#[test]
fn gamma_and_beta_are_the_generators_variates_and_the_evaluators() {
    let key = 99_i64;
    let a = Array1::from(vec![0.2, 1.0, 4.5, 50.0]);
    let b = Array2::from_shape_vec((2, 3), vec![0.5f32, 1.0, 2.0, 3.0, 7.0, 0.05]).unwrap();
    let c = 1.5f32;
    let (g, g32, s, bb, steps) = programs::variates(key, a.view(), b.view(), c).unwrap();
    for j in 0..4 {
        assert_eq!(g[j], random::gamma_at(key, j as u64, a[j]));
    }
    let k1 = random::next_key(key);
    for ((r, col), &x) in g32.indexed_iter() {
        assert_eq!(x, random::gamma_at(k1, (r * 3 + col) as u64, b[[r, col]]));
    }
    let k2 = random::next_key(k1);
    assert_eq!(s, random::beta_at(k2, 0, 2.0, 3.0));
    let k3 = random::next_key(k2);
    for ((r, col), &x) in bb.indexed_iter() {
        assert_eq!(x, random::beta_at(k3, (r * 3 + col) as u64, b[[r, col]], c));
        assert!((0.0..=1.0).contains(&x));
    }
    // The loop: step t draws from the key advanced t times after k3's successor.
    let mut k = random::next_key(k3);
    for t in 0..3 {
        for j in 0..4 {
            assert_eq!(
                steps[[t, j]],
                random::gamma_at(k, j as u64, a[j]),
                "step {t}"
            );
        }
        k = random::next_key(k);
    }
    check_evaluator(
        "variates",
        vec![
            Value::from(key),
            Value::from(a),
            Value::from(b),
            Value::from(c),
        ],
        vec![
            Value::from(g),
            Value::from(g32),
            Value::from(s),
            Value::from(bb),
            Value::from(steps),
        ],
    );
}

#[test]
fn split_gives_distinct_keys_and_split_of_two_is_the_pair() {
    let (a, b, keys) = programs::splits(5, 6).unwrap();
    assert_eq!((keys[0], keys[1]), (a, b));
    assert_eq!(a, random::next_key(5));
    for i in 0..6 {
        assert_eq!(keys[i], random::derive_key(5, i as i64));
        assert_ne!(keys[i], 5);
        for j in 0..i {
            assert_ne!(keys[i], keys[j]);
        }
    }
    // Split keys' streams differ from each other and from the parent's.
    let mut firsts: Vec<u64> = keys.iter().map(|&k| random::word(k, 0)).collect();
    firsts.push(random::word(5, 0));
    firsts.sort_unstable();
    firsts.dedup();
    assert_eq!(firsts.len(), 7);
    check_evaluator(
        "splits",
        vec![Value::from(5i64), Value::from(6i64)],
        vec![Value::from(a), Value::from(b), Value::from(keys)],
    );
    let err = programs::splits(5, 0).unwrap();
    assert_eq!(err.2.len(), 0);
}

#[test]
fn different_steps_never_reuse_a_stream() {
    let (steps, n) = (50, 8);
    let (rows, keys) = programs::per_step(2024, steps, n).unwrap();
    assert_eq!(rows.dim(), (steps, n));
    // keys[t] is the key after step t; step t drew from the key before it.
    let mut key = random::key_from_seed(2024);
    for t in 0..steps {
        for j in 0..n {
            assert_eq!(rows[[t, j]], random::uniform_at::<f64>(key, j as u64));
        }
        key = random::next_key(key);
        assert_eq!(keys[t], key);
    }
    let mut all: Vec<u64> = rows.iter().map(|x| x.to_bits()).collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), steps * n, "a value repeated across steps");
    check_evaluator(
        "per_step",
        vec![
            Value::from(2024i64),
            Value::from(steps as i64),
            Value::from(n as i64),
        ],
        vec![Value::from(rows), Value::from(keys)],
    );
}

#[test]
fn bernoulli_is_a_uniform_below_p() {
    let p = array![[0.0, 0.25, 0.5], [0.75, 1.0, 0.9]];
    let q = array![0.1f32, 0.5, 0.99, 0.0];
    let (heads, want, heads32, want32, one, want_one) =
        programs::coins(11, p.view(), q.view(), 0.3).unwrap();
    assert_eq!(heads, want);
    assert_eq!(heads32, want32);
    assert_eq!(one, want_one);
    assert!(!heads[[0, 0]] && heads[[1, 1]], "p = 0 never, p = 1 always");
    check_evaluator(
        "coins",
        vec![
            Value::from(11i64),
            Value::from(p),
            Value::from(q),
            Value::from(0.3f64),
        ],
        vec![
            Value::from(heads),
            Value::from(want),
            Value::from(heads32),
            Value::from(want32),
            Value::from(one),
            Value::from(want_one),
        ],
    );
}

#[test]
fn categorical_draws_follow_the_softmax_of_the_logits() {
    let probs = [0.2, 0.3, 0.5];
    let n = 100_000;
    let logits = Array2::from_shape_fn((n, 3), |(_, c)| f64::ln(probs[c]) + 7.0);
    let l32 = array![0.0f32, 1.0, 2.0, -1.0];
    let (rows, one, k) = programs::pick(99, logits.view(), l32.view()).unwrap();
    // The Gumbel-max rule, written out: the first largest logit + noise.
    for r in 0..50 {
        let noisy: Vec<f64> = (0..3)
            .map(|c| logits[[r, c]] + random::gumbel_at(99, (r * 3 + c) as u64))
            .collect();
        let best = (0..3).fold(0, |b, c| if noisy[c] > noisy[b] { c } else { b });
        assert_eq!(rows[r], best as i64);
    }
    for (c, &p) in probs.iter().enumerate() {
        let count = rows.iter().filter(|&&x| x == c as i64).count() as f64;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!(
            (count / n as f64 - p).abs() < 4.0 * se,
            "category {c}: {} vs {p}",
            count / n as f64
        );
    }
    assert!((0..4).contains(&one));
    assert_eq!(k, random::next_key(99));
    check_evaluator(
        "pick",
        vec![
            Value::from(99i64),
            Value::from(logits.slice(s![..40, ..]).to_owned()),
            Value::from(l32.clone()),
        ],
        {
            let (r, o, k) = programs::pick(99, logits.slice(s![..40, ..]), l32.view()).unwrap();
            vec![Value::from(r), Value::from(o), Value::from(k)]
        },
    );
    // Nothing to draw from: an Err naming the expression, in both.
    let empty = Array2::<f64>::zeros((2, 0));
    let err = programs::pick(1, empty.view(), l32.view())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("categorical(key, logits)") && err.contains("[2, 0]"),
        "{err}"
    );
    evaluate_err(
        programs::SOURCE,
        "pick",
        vec![Value::from(1i64), Value::from(empty), Value::from(l32)],
    );
}

#[test]
fn a_hundred_thousand_draws_have_the_moments_they_should() {
    let n = 100_000;
    let (u, z, u32, z32, _) = programs::draws(7, n).unwrap();
    let moments = |x: &mut dyn Iterator<Item = f64>| {
        let v: Vec<f64> = x.collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|a| (a - mean) * (a - mean)).sum::<f64>() / v.len() as f64;
        (mean, var)
    };
    let nf = n as f64;
    // Uniform: mean 1/2 (sd 1/sqrt(12 n)), variance 1/12 (sd sqrt(1/180 n)).
    for (mean, var) in [
        moments(&mut u.iter().copied()),
        moments(&mut u32.iter().map(|&x| f64::from(x))),
    ] {
        assert!((mean - 0.5).abs() < 4.0 / (12.0 * nf).sqrt(), "{mean}");
        assert!(
            (var - 1.0 / 12.0).abs() < 4.0 * (1.0 / (180.0 * nf)).sqrt(),
            "{var}"
        );
    }
    // Normal: mean 0 (sd 1/sqrt(n)), variance 1 (sd sqrt(2/n)); and the tails.
    for (mean, var) in [
        moments(&mut z.iter().copied()),
        moments(&mut z32.iter().map(|&x| f64::from(x))),
    ] {
        assert!(mean.abs() < 4.0 / nf.sqrt(), "{mean}");
        assert!((var - 1.0).abs() < 4.0 * (2.0 / nf).sqrt(), "{var}");
    }
    let beyond2 = z.iter().filter(|x| x.abs() > 2.0).count() as f64 / nf;
    let p2 = 0.0455002638963584;
    assert!(
        (beyond2 - p2).abs() < 4.0 * (p2 * (1.0 - p2) / nf).sqrt(),
        "{beyond2}"
    );
    // Neighbours (a Box-Muller pair) are uncorrelated.
    let corr = (0..n / 2).map(|m| z[2 * m] * z[2 * m + 1]).sum::<f64>() / (nf / 2.0);
    assert!(corr.abs() < 4.0 / (nf / 2.0).sqrt(), "{corr}");
}

#[test]
fn the_numbers_do_not_depend_on_the_thread_count() {
    let n = 3 * random::PAR_MIN_DRAWS + 5;
    scan_runtime::set_num_threads(1);
    let one = programs::draws(3, n).unwrap();
    scan_runtime::set_num_threads(2);
    let two = programs::draws(3, n).unwrap();
    scan_runtime::set_num_threads(0);
    let bits = |a: &Array1<f64>| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&one.0), bits(&two.0));
    assert_eq!(bits(&one.1), bits(&two.1));
    assert_eq!(one.2, two.2);
    assert_eq!(one.3, two.3);
    assert_eq!(one.4, two.4);
}

#[test]
fn the_same_key_gives_the_same_draw() {
    let (a, b, c) = programs::repeat(8, 5).unwrap();
    assert_eq!(a, b);
    assert!(a.iter().zip(&c).all(|(x, y)| x != y));
    check_evaluator(
        "repeat",
        vec![Value::from(8i64), Value::from(5i64)],
        vec![Value::from(a), Value::from(b), Value::from(c)],
    );
}

/// How many nodes of `op` (`random.uniform`, ...) the printed graphs of `source` hold after
/// every rewrite.
fn count_after_rewrites(source: &str, op: &str) -> usize {
    let config = scan_codegen::rewrite::Config::all();
    let (functions, _) = scan_codegen::compile_with(source, &config).unwrap();
    functions
        .iter()
        .map(|f| scan_codegen::ir::print::function(f).matches(op).count())
        .sum()
}

#[test]
fn cse_merges_draws_of_one_key_only_and_loop_invariant_draws_leave_the_loop() {
    // `repeat`: two draws of `key` are one; the draw of the advanced key stays.
    let repeat =
        "pub fn repeat(key: i64, n: usize) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
        let (k, a) = uniform(key, n);
        let (_, b) = uniform(key, n);
        let (_, c) = uniform(k, n);
        Ok((a, b, c))
    }";
    assert_eq!(count_after_rewrites(repeat, "random.uniform"), 2);
    // A draw from a key the step does not change is the same every step: computed once,
    // before the loop (push_out_nonseq), with the same numbers.
    let invariant = "pub fn invariant(key: i64, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let n = x.shape[1];
        Ok(scan(|x_t| { let (_, u) = uniform(key, n); x_t + u }, sequences = x))
    }";
    let (functions, fired) =
        scan_codegen::compile_with(invariant, &scan_codegen::rewrite::Config::all()).unwrap();
    assert!(
        fired.iter().any(|f| f.pass == "push_out_nonseq"),
        "{fired:?}"
    );
    let printed = scan_codegen::ir::print::function(&functions[0]);
    assert!(
        printed.find("random.uniform") < printed.find("scan"),
        "{printed}"
    );
    let x = common::matrix(4, 3, 1);
    let got = evaluate(
        invariant,
        "invariant",
        vec![Value::from(9i64), Value::from(x.clone())],
    );
    let u: Vec<f64> = (0..3).map(|j| random::uniform_at::<f64>(9, j)).collect();
    let want = Array2::from_shape_fn((4, 3), |(t, j)| x[[t, j]] + u[j]);
    same_bits(&got, &[Value::from(want)]);
    rewrites_agree(
        invariant,
        "invariant",
        vec![Value::from(9i64), Value::from(x)],
    );
}
