//! Whole programs of the kind people port from PyTensor and JAX, written the natural way
//! (numpy's vocabulary, no workarounds), each checked against an independent hand-written
//! Rust loop and against the reference evaluator: an HMM forward-backward pass in log space,
//! a GARCH(1,1) likelihood, a CRF Viterbi decode with its backtrace, a masked LSTM over a
//! batch with its gates cut from one merged pre-activation by column slices, an AR(3)
//! likelihood whose step stacks its taps into a vector, and a bidirectional GRU (one step
//! function for both directions) whose directions are concatenated on the feature axis.

mod common;

use common::{assert_floats, matrix, second_opinion, Value};
use scan_runtime::prelude::*;

mod programs {
    scan_tests::program! {
        /// HMM forward-backward in log space: `log_e[t, k]` is the log-likelihood of the
        /// observation at t under state k. The forward messages alpha_1.. (alpha_0 is
        /// `log_pi + log_e[0]`), the backward messages computed backwards from beta_{T-1} =
        /// 0 (in the order computed: beta_{T-2} first), and the log-likelihood.
        pub fn hmm(
            log_pi: ArrayView1<f64>,
            log_a: ArrayView2<f64>,
            log_e: ArrayView2<f64>,
        ) -> Result<(Array2<f64>, Array2<f64>, f64)> {
            let alpha0 = log_pi + log_e[0];
            let alphas = scan(
                |e_t, alpha_tm1, log_a| logsumexp(alpha_tm1[(.., None)] + log_a, 0) + e_t,
                sequences = log_e[1..],
                outputs_info = alpha0,
                non_sequences = log_a,
            );
            let betas = scan(
                |e_next, beta_next, log_a| logsumexp(log_a + e_next + beta_next, 1),
                sequences = log_e[1..],
                outputs_info = zeros_like(log_pi),
                non_sequences = log_a,
                go_backwards = true,
            );
            let loglik = logsumexp(alphas[-1]);
            Ok((alphas, betas, loglik))
        }

        /// GARCH(1,1): sigma2_t = omega + alpha r_{t-1}^2 + beta sigma2_{t-1} from sigma2_0,
        /// and the Gaussian log-likelihood of r_1.. under it.
        pub fn garch(
            r: ArrayView1<f64>,
            sigma2_0: f64,
            omega: f64,
            alpha: f64,
            beta: f64,
        ) -> Result<(Array1<f64>, f64)> {
            let (sigma2, ll) = scan(
                |r_tm1, r_t, s_tm1, omega, alpha, beta| {
                    let s = omega + alpha * r_tm1 * r_tm1 + beta * s_tm1;
                    (s, -0.5 * (log(2.0 * pi) + log(s) + r_t * r_t / s))
                },
                sequences = taps(r, [-1, 0]),
                outputs_info = [sigma2_0, None],
                non_sequences = [omega, alpha, beta],
            );
            Ok((sigma2, sum(ll)))
        }

        /// CRF Viterbi decode: the best score of each tag at each step and its back
        /// pointer, then the backtrace, going backwards from the best last tag.
        pub fn viterbi(
            emissions: ArrayView2<f64>,
            transitions: ArrayView2<f64>,
        ) -> Result<(f64, i64, Array1<i64>)> {
            let (deltas, pointers) = scan(
                |e_t, delta_tm1, transitions| {
                    let s = delta_tm1[(.., None)] + transitions;
                    (max(s, 0) + e_t, argmax(s, 0))
                },
                sequences = emissions[1..],
                outputs_info = [emissions[0], None],
                non_sequences = transitions,
            );
            let last = argmax(deltas[-1]);
            let tags = scan(
                |pointers_t, tag_next| pointers_t[tag_next],
                sequences = pointers,
                outputs_info = last,
                go_backwards = true,
            );
            Ok((max(deltas[-1]), last, tags))
        }

        /// An LSTM over a batch with a mask: rows whose mask is 0 at step t keep their
        /// state. The gates i, f, g, o are column blocks of one merged pre-activation.
        pub fn masked_lstm(
            x: ArrayView3<f64>,
            mask: ArrayView2<f64>,
            w_x: ArrayView2<f64>,
            w_h: ArrayView2<f64>,
            b: ArrayView1<f64>,
        ) -> Result<Array3<f64>> {
            let zero = zeros((x.shape[1], w_h.shape[0]));
            let (h, c) = scan(
                |x_t, m_t, h_tm1, c_tm1, w_x, w_h, b| {
                    let z = x_t.dot(w_x) + h_tm1.dot(w_h) + b;
                    let n = h_tm1.shape[1];
                    let i = sigmoid(z[(.., ..n)]);
                    let f = sigmoid(z[(.., n..2 * n)]);
                    let g = tanh(z[(.., 2 * n..3 * n)]);
                    let o = sigmoid(z[(.., 3 * n..)]);
                    let c_new = f * c_tm1 + i * g;
                    let h_new = o * tanh(c_new);
                    let m = m_t[(.., None)];
                    (m * h_new + (1.0 - m) * h_tm1, m * c_new + (1.0 - m) * c_tm1)
                },
                sequences = [x, mask],
                outputs_info = [zero, zero],
                non_sequences = [w_x, w_h, b],
            );
            Ok(h)
        }
    }
}

/// log(sum(exp(v))) with the largest element taken out first.
fn logsumexp(v: &[f64]) -> f64 {
    let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// A row-stochastic matrix's logarithm, from a deterministic one with entries > 0.
fn log_stochastic(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
    let p = matrix(rows, cols, seed).mapv(|v| v + 0.75);
    let mut out = p.clone();
    for (mut r, pr) in out.rows_mut().into_iter().zip(p.rows()) {
        let s: f64 = pr.sum();
        r.assign(&pr.mapv(|v| (v / s).ln()));
    }
    out
}

#[test]
fn hmm_forward_backward_agrees_with_a_plain_loop_and_with_itself() {
    let (t_len, k) = (9, 4);
    let log_pi = log_stochastic(1, k, 1).row(0).to_owned();
    let log_a = log_stochastic(k, k, 2);
    let log_e = matrix(t_len, k, 3).mapv(|v| v * 3.0 - 2.0);
    let (alphas, betas, loglik) = programs::hmm(log_pi.view(), log_a.view(), log_e.view()).unwrap();

    // The plain loops.
    let mut alpha: Vec<Vec<f64>> = vec![(0..k).map(|j| log_pi[j] + log_e[[0, j]]).collect()];
    for t in 1..t_len {
        let prev = alpha[t - 1].clone();
        alpha.push(
            (0..k)
                .map(|j| {
                    let terms: Vec<f64> = (0..k).map(|i| prev[i] + log_a[[i, j]]).collect();
                    logsumexp(&terms) + log_e[[t, j]]
                })
                .collect(),
        );
    }
    let mut beta = vec![vec![0.0; k]; t_len];
    for t in (0..t_len - 1).rev() {
        beta[t] = (0..k)
            .map(|i| {
                let terms: Vec<f64> = (0..k)
                    .map(|j| log_a[[i, j]] + log_e[[t + 1, j]] + beta[t + 1][j])
                    .collect();
                logsumexp(&terms)
            })
            .collect();
    }
    let want_alphas: Vec<f64> = alpha[1..].iter().flatten().copied().collect();
    assert_floats(alphas.as_slice().unwrap(), &want_alphas, 1e-13);
    // Computed backwards: betas[0] is beta_{T-2}.
    let want_betas: Vec<f64> = (0..t_len - 1).rev().flat_map(|t| beta[t].clone()).collect();
    assert_floats(betas.as_slice().unwrap(), &want_betas, 1e-13);
    assert_floats(&[loglik], &[logsumexp(&alpha[t_len - 1])], 1e-13);
    // The identity forward-backward rests on: logsumexp(alpha_t + beta_t) is the
    // log-likelihood at every t.
    for t in 0..t_len {
        let a_t: Vec<f64> = if t == 0 {
            alpha[0].clone()
        } else {
            alphas.row(t - 1).to_vec()
        };
        let b_t: Vec<f64> = if t == t_len - 1 {
            vec![0.0; k]
        } else {
            betas.row(t_len - 2 - t).to_vec()
        };
        let sum: Vec<f64> = a_t.iter().zip(&b_t).map(|(a, b)| a + b).collect();
        assert_floats(&[logsumexp(&sum)], &[loglik], 1e-12);
    }
    second_opinion(
        programs::SOURCE,
        "hmm",
        vec![Value::from(log_pi), Value::from(log_a), Value::from(log_e)],
        vec![Value::from(alphas), Value::from(betas), Value::from(loglik)],
    );
}

#[test]
fn garch_likelihood_agrees_with_a_plain_loop() {
    let r: Array1<f64> = (0..40).map(|i| ((i as f64) * 0.77).sin() * 0.3).collect();
    let (s0, omega, alpha, beta) = (0.05, 0.01, 0.1, 0.85);
    let (sigma2, ll) = programs::garch(r.view(), s0, omega, alpha, beta).unwrap();
    let mut s = s0;
    let mut want_s = Vec::new();
    let mut want_ll = 0.0;
    for t in 1..r.len() {
        s = omega + alpha * r[t - 1] * r[t - 1] + beta * s;
        want_s.push(s);
        want_ll += -0.5 * ((2.0 * std::f64::consts::PI).ln() + s.ln() + r[t] * r[t] / s);
    }
    assert_eq!(sigma2.len(), r.len() - 1);
    assert_floats(sigma2.as_slice().unwrap(), &want_s, 1e-15);
    assert_floats(&[ll], &[want_ll], 1e-13);
    second_opinion(
        programs::SOURCE,
        "garch",
        vec![
            Value::from(r),
            Value::from(s0),
            Value::from(omega),
            Value::from(alpha),
            Value::from(beta),
        ],
        vec![Value::from(sigma2), Value::from(ll)],
    );
}

#[test]
fn viterbi_decodes_the_best_path_of_a_plain_loop() {
    let (t_len, k) = (12, 5);
    let emissions = matrix(t_len, k, 7).mapv(|v| v * 4.0);
    let transitions = matrix(k, k, 8).mapv(|v| v * 2.0);
    let (score, last, tags) = programs::viterbi(emissions.view(), transitions.view()).unwrap();

    // The plain loop: scores and back pointers (first of equal maxima), then the path.
    let mut delta: Vec<f64> = emissions.row(0).to_vec();
    let mut pointers: Vec<Vec<usize>> = Vec::new();
    for t in 1..t_len {
        let mut next = vec![0.0; k];
        let mut bp = vec![0; k];
        for j in 0..k {
            let (mut best, mut arg) = (f64::NEG_INFINITY, 0);
            for (i, d) in delta.iter().enumerate() {
                let s = d + transitions[[i, j]];
                if s > best {
                    (best, arg) = (s, i);
                }
            }
            next[j] = best + emissions[[t, j]];
            bp[j] = arg;
        }
        delta = next;
        pointers.push(bp);
    }
    let (mut best, mut tag) = (f64::NEG_INFINITY, 0);
    for (j, &d) in delta.iter().enumerate() {
        if d > best {
            (best, tag) = (d, j);
        }
    }
    assert_eq!(score, best);
    assert_eq!(last, tag as i64);
    // The backtrace in the order computed: tag_{T-2}, tag_{T-3}, .., tag_0.
    let mut want = Vec::new();
    for bp in pointers.iter().rev() {
        tag = bp[tag];
        want.push(tag as i64);
    }
    assert_eq!(tags.to_vec(), want);
    // The path's score, summed along it, is the best score.
    let mut path: Vec<usize> = want.iter().rev().map(|&t| t as usize).collect();
    path.push(last as usize);
    let mut along = emissions[[0, path[0]]];
    for t in 1..t_len {
        along += transitions[[path[t - 1], path[t]]] + emissions[[t, path[t]]];
    }
    assert!((along - score).abs() < 1e-12, "{along} vs {score}");
    second_opinion(
        programs::SOURCE,
        "viterbi",
        vec![Value::from(emissions), Value::from(transitions)],
        vec![Value::from(score), Value::from(last), Value::from(tags)],
    );
}

#[test]
fn masked_lstm_keeps_the_state_of_masked_rows() {
    // Gates of 5 columns (too short for the row loops: element by element), of 24 (the
    // gate sums computed per slice, row by row) and 64 x 256 (rows split over two threads).
    // The reference evaluator's second opinion (every rewrite setting, every loop length)
    // on the two smaller ones.
    for (t_len, batch, inputs, hidden, evaluate) in [
        (6, 3, 4, 5, true),
        (4, 5, 3, 24, true),
        (2, 64, 3, 256, false),
    ] {
        masked_lstm_case(t_len, batch, inputs, hidden, evaluate);
    }
}

fn masked_lstm_case(t_len: usize, batch: usize, inputs: usize, hidden: usize, evaluate: bool) {
    let x = Array3::from_shape_vec(
        (t_len, batch, inputs),
        matrix(t_len * batch, inputs, 11)
            .into_raw_vec_and_offset()
            .0,
    )
    .unwrap();
    // Row 1 is masked at steps 2 and 3, row 2 from step 4 on (when there are such steps).
    let mask = Array2::from_shape_fn((t_len, batch), |(t, b)| match b {
        1 if t == 2 || t == 3 => 0.0,
        2 if t >= 4 => 0.0,
        _ => 1.0,
    });
    let w_x = matrix(inputs, 4 * hidden, 12);
    let w_h = matrix(hidden, 4 * hidden, 13);
    let b = matrix(1, 4 * hidden, 14).row(0).to_owned();
    let h = programs::masked_lstm(x.view(), mask.view(), w_x.view(), w_h.view(), b.view()).unwrap();

    let sig = |v: f64| 1.0 / (1.0 + (-v).exp());
    let mut hs = vec![vec![0.0; hidden]; batch];
    let mut cs = vec![vec![0.0; hidden]; batch];
    let mut want = Vec::new();
    for t in 0..t_len {
        for r in 0..batch {
            let z: Vec<f64> = (0..4 * hidden)
                .map(|j| {
                    let from_x: f64 = (0..inputs).map(|i| x[[t, r, i]] * w_x[[i, j]]).sum();
                    let from_h: f64 = (0..hidden).map(|i| hs[r][i] * w_h[[i, j]]).sum();
                    from_x + from_h + b[j]
                })
                .collect();
            if mask[[t, r]] == 1.0 {
                for j in 0..hidden {
                    let (i, f) = (sig(z[j]), sig(z[hidden + j]));
                    let (g, o) = (z[2 * hidden + j].tanh(), sig(z[3 * hidden + j]));
                    cs[r][j] = f * cs[r][j] + i * g;
                    hs[r][j] = o * cs[r][j].tanh();
                }
            }
            want.extend(hs[r].iter().copied());
        }
    }
    assert_eq!(h.dim(), (t_len, batch, hidden));
    assert_floats(h.as_slice().unwrap(), &want, 1e-14);
    // Masked rows hold their state exactly.
    if t_len == 6 {
        assert_eq!(h.slice(s![2, 1, ..]), h.slice(s![1, 1, ..]));
        assert_eq!(h.slice(s![3, 1, ..]), h.slice(s![1, 1, ..]));
        assert_eq!(h.slice(s![5, 2, ..]), h.slice(s![3, 2, ..]));
    }
    if !evaluate {
        return;
    }
    second_opinion(
        programs::SOURCE,
        "masked_lstm",
        vec![
            Value::from(x),
            Value::from(mask),
            Value::from(w_x),
            Value::from(w_h),
            Value::from(b),
        ],
        vec![Value::from(h)],
    );
}

mod more {
    scan_tests::program! {
        /// AR(p) Gaussian log-likelihood, p = 3: the step stacks its three taps into a
        /// vector and takes its dot with the coefficients.
        pub fn ar3(y: ArrayView1<f64>, phi: ArrayView1<f64>, sigma: f64) -> Result<f64> {
            let ll = scan(
                |y_tm3, y_tm2, y_tm1, y_t, phi, sigma| {
                    let mean = dot(phi, [y_tm1, y_tm2, y_tm3]);
                    let e = (y_t - mean) / sigma;
                    -0.5 * e * e - log(sigma) - 0.5 * log(2.0 * pi)
                },
                sequences = taps(y, [-3, -2, -1, 0]),
                non_sequences = [phi, sigma],
            );
            Ok(sum(ll))
        }

        /// A bidirectional GRU over a batch: one step function for both directions, the
        /// backward states flipped back into time order and concatenated with the forward
        /// ones on the feature axis.
        pub fn bigru(
            x: ArrayView3<f64>,
            w: ArrayView2<f64>,
            u: ArrayView2<f64>,
        ) -> Result<Array3<f64>> {
            let h0 = zeros((x.shape[1], u.shape[0]));
            let gru = |x_t, h_tm1, w, u| {
                let n = h_tm1.shape[1];
                let xw = x_t.dot(w);
                let hu = h_tm1.dot(u[(.., ..2 * n)]);
                let z = sigmoid(xw[(.., ..n)] + hu[(.., ..n)]);
                let r = sigmoid(xw[(.., n..2 * n)] + hu[(.., n..)]);
                let c = tanh(xw[(.., 2 * n..)] + (r * h_tm1).dot(u[(.., 2 * n..)]));
                (1.0 - z) * c + z * h_tm1
            };
            let forward = scan(gru, sequences = x, outputs_info = h0, non_sequences = [w, u]);
            let backward = scan(gru, sequences = x, outputs_info = h0, non_sequences = [w, u], go_backwards = true);
            Ok(concatenate([forward, flip(backward, 0)], 2))
        }
    }
}

#[test]
fn an_ar3_likelihood_stacks_its_taps() {
    let y: Array1<f64> = (0..30)
        .map(|i| ((i as f64) * 0.9).sin() + 0.1 * i as f64)
        .collect();
    let phi = array![0.5, -0.2, 0.1];
    let sigma = 0.7;
    let ll = more::ar3(y.view(), phi.view(), sigma).unwrap();
    let mut want = 0.0;
    for t in 3..y.len() {
        let mean = phi[0] * y[t - 1] + phi[1] * y[t - 2] + phi[2] * y[t - 3];
        let e = (y[t] - mean) / sigma;
        want += -0.5 * e * e - f64::ln(sigma) - 0.5 * (2.0 * std::f64::consts::PI).ln();
    }
    assert_floats(&[ll], &[want], 1e-13);
    second_opinion(
        more::SOURCE,
        "ar3",
        vec![Value::from(y), Value::from(phi), Value::from(sigma)],
        vec![Value::from(ll)],
    );
}

#[test]
fn a_bidirectional_gru_concatenates_its_directions() {
    let (t_len, batch, inputs, hidden) = (5, 2, 3, 4);
    let x = Array3::from_shape_vec(
        (t_len, batch, inputs),
        matrix(t_len * batch, inputs, 21)
            .into_raw_vec_and_offset()
            .0,
    )
    .unwrap();
    let w = matrix(inputs, 3 * hidden, 22);
    let u = matrix(hidden, 3 * hidden, 23);
    let out = more::bigru(x.view(), w.view(), u.view()).unwrap();
    assert_eq!(out.dim(), (t_len, batch, 2 * hidden));

    let sig = |v: f64| 1.0 / (1.0 + (-v).exp());
    // One direction: the states h_t for the steps in `order`, stored at their time index.
    let run = |order: Vec<usize>| {
        let mut states = vec![vec![vec![0.0; hidden]; batch]; t_len];
        let mut h = vec![vec![0.0; hidden]; batch];
        for t in order {
            for r in 0..batch {
                let xw: Vec<f64> = (0..3 * hidden)
                    .map(|j| (0..inputs).map(|i| x[[t, r, i]] * w[[i, j]]).sum())
                    .collect();
                let hu = |v: &[f64], j: usize| (0..hidden).map(|i| v[i] * u[[i, j]]).sum::<f64>();
                let z: Vec<f64> = (0..hidden).map(|j| sig(xw[j] + hu(&h[r], j))).collect();
                let rg: Vec<f64> = (0..hidden)
                    .map(|j| sig(xw[hidden + j] + hu(&h[r], hidden + j)))
                    .collect();
                let rh: Vec<f64> = (0..hidden).map(|j| rg[j] * h[r][j]).collect();
                let c: Vec<f64> = (0..hidden)
                    .map(|j| (xw[2 * hidden + j] + hu(&rh, 2 * hidden + j)).tanh())
                    .collect();
                h[r] = (0..hidden)
                    .map(|j| (1.0 - z[j]) * c[j] + z[j] * h[r][j])
                    .collect();
            }
            states[t] = h.clone();
        }
        states
    };
    let fwd = run((0..t_len).collect());
    let bwd = run((0..t_len).rev().collect());
    let mut want = Vec::new();
    for t in 0..t_len {
        for r in 0..batch {
            want.extend(fwd[t][r].iter().copied());
            want.extend(bwd[t][r].iter().copied());
        }
    }
    assert_floats(out.as_slice().unwrap(), &want, 1e-14);
    second_opinion(
        more::SOURCE,
        "bigru",
        vec![Value::from(x), Value::from(w), Value::from(u)],
        vec![Value::from(out)],
    );
}
