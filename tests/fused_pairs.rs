//! Fused passes with two results in generated code (the fusion rewrite's second result: a
//! chain and a value it reads that is needed elsewhere too, in one pass): an LSTM cell's
//! state and output, both kept whole (each written into its trace's row in place); SPEC's
//! LSTM, whose gates are column slices of one sum (thirteen arrays in the pass); two map
//! outputs (their first rows in buffers of their own, the others in place); a second
//! result broadcast further by the chain (the run-time check sends it to the two maps).
//! Checked against hand-written loops with the rewrites on and off.

use scan_runtime::ndarray::{Array, Array1, Array2, Array3, Axis, Dimension};

macro_rules! variants {
    ($($module:ident: [$($setting:tt)*];)*) => {$(
        mod $module {
            scan_tests::program! {
                #![rewrites($($setting)*)]

                /// An LSTM cell over the gate pre-activations `z` ([T, B, 4H]), returning
                /// every h and every c.
                pub fn cell(z: ArrayView3<f64>, c0: ArrayView2<f64>) -> Result<(Array3<f64>, Array3<f64>)> {
                    let (h, c) = scan(
                        |z_t, h_tm1, c_tm1| {
                            let n = c_tm1.shape[1];
                            let i = sigmoid(z_t[(.., ..n)]);
                            let f = sigmoid(z_t[(.., n..2 * n)]);
                            let g = tanh(z_t[(.., 2 * n..3 * n)]);
                            let o = sigmoid(z_t[(.., 3 * n..)]);
                            let c_t = f * c_tm1 + i * g + 0.0 * h_tm1;
                            (o * tanh(c_t), c_t)
                        },
                        sequences = z,
                        outputs_info = [c0, c0],
                    );
                    Ok((h, c))
                }

                /// SPEC's LSTM: the gates cut from `x_t.dot(w_x) + h_tm1.dot(w_h) + b` by
                /// column slices. slice_operands slices the sum's operands, so the state
                /// and the output are one pass over thirteen arrays (`pair13`).
                pub fn lstm(x: ArrayView3<f64>, w_x: ArrayView2<f64>, w_h: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(Array3<f64>, Array3<f64>)> {
                    let zero = zeros((x.shape[1], w_h.shape[0]));
                    let (h, c) = scan(
                        |x_t, h_tm1, c_tm1, w_x, w_h, b| {
                            let z = x_t.dot(w_x) + h_tm1.dot(w_h) + b;
                            let n = h_tm1.shape[1];
                            let i = sigmoid(z[(.., ..n)]);
                            let f = sigmoid(z[(.., n..2 * n)]);
                            let g = tanh(z[(.., 2 * n..3 * n)]);
                            let o = sigmoid(z[(.., 3 * n..)]);
                            let c_t = f * c_tm1 + i * g;
                            (o * tanh(c_t), c_t)
                        },
                        sequences = x,
                        outputs_info = [zero, zero],
                        non_sequences = [w_x, w_h, b],
                    );
                    Ok((h, c))
                }

                /// Two map outputs from one pass: `e = exp(u_t)` and `e * 2 + u_t`.
                pub fn maps(u: ArrayView2<f64>) -> Result<(Array2<f64>, Array2<f64>)> {
                    let (y, e) = scan(
                        |u_t| {
                            let e = exp(u_t);
                            (e * 2.0 + u_t, e)
                        },
                        sequences = u,
                    );
                    Ok((y, e))
                }

                /// `e = exp(u_t)` (one row, `[1, n]`) read by `e * m` (`[k, n]`): the pass
                /// cannot give `e` whole, the two maps run.
                pub fn broadcast(u: ArrayView3<f64>, m: ArrayView2<f64>) -> Result<(Array3<f64>, Array3<f64>)> {
                    let (y, e) = scan(
                        |u_t, m| {
                            let e = exp(u_t);
                            (sin(e * m), e)
                        },
                        sequences = u,
                        non_sequences = m,
                    );
                    Ok((y, e))
                }
            }
        }
    )*};
}

variants! {
    all: [all];
    none: [none];
}

/// `got` and `want` of one shape, each element within `tol` (relative to `want`'s).
fn assert_close<D: Dimension>(got: &Array<f64, D>, want: &Array<f64, D>, tol: f64, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}: {g} against {w}"
        );
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn values(shape: &[usize], seed: f64) -> Vec<f64> {
    let n: usize = shape.iter().product();
    (0..n)
        .map(|i| ((i as f64) * 0.731 + seed).sin() * 1.5)
        .collect()
}

#[test]
fn an_lstm_cell_s_state_and_output_agree_with_a_loop() {
    for (t, b, h) in [(0usize, 2usize, 3usize), (1, 2, 3), (5, 3, 20), (4, 8, 64)] {
        let z = Array3::from_shape_vec((t, b, 4 * h), values(&[t, b, 4 * h], 0.3)).unwrap();
        let c0 = Array2::from_shape_vec((b, h), values(&[b, h], 1.1)).unwrap();
        let (mut hs, mut cs) = (Array3::zeros((t, b, h)), Array3::zeros((t, b, h)));
        let mut c = c0.clone();
        for s in 0..t {
            for r in 0..b {
                for j in 0..h {
                    let zz = |k: usize| z[[s, r, k * h + j]];
                    let c_t = sigmoid(zz(1)) * c[[r, j]] + sigmoid(zz(0)) * zz(2).tanh();
                    c[[r, j]] = c_t;
                    cs[[s, r, j]] = c_t;
                    hs[[s, r, j]] = sigmoid(zz(3)) * c_t.tanh();
                }
            }
        }
        for (name, got) in [
            ("all", all::cell(z.view(), c0.view()).unwrap()),
            ("none", none::cell(z.view(), c0.view()).unwrap()),
        ] {
            assert_close(&got.0, &hs, 1e-12, &format!("{name}: h, {t} steps"));
            assert_close(&got.1, &cs, 1e-12, &format!("{name}: c, {t} steps"));
        }
        // The rewrites' pass gives the bits of the maps it replaces.
        let (a, n) = (
            all::cell(z.view(), c0.view()).unwrap(),
            none::cell(z.view(), c0.view()).unwrap(),
        );
        assert_eq!(a, n, "{t} steps");
    }
}

#[test]
fn spec_s_lstm_agrees_with_a_loop() {
    for (t, b, i, h) in [
        (0usize, 2usize, 3usize, 4usize),
        (1, 2, 3, 4),
        (6, 3, 5, 20),
        (3, 8, 16, 64),
    ] {
        let x = Array3::from_shape_vec((t, b, i), values(&[t, b, i], 0.4)).unwrap();
        let w_x = Array2::from_shape_vec((i, 4 * h), values(&[i, 4 * h], 1.3)).unwrap() * 0.3;
        let w_h = Array2::from_shape_vec((h, 4 * h), values(&[h, 4 * h], 2.1)).unwrap() * 0.2;
        let bias = Array1::from_vec(values(&[4 * h], 0.8));
        let (mut hs, mut cs) = (Array3::zeros((t, b, h)), Array3::zeros((t, b, h)));
        let (mut hp, mut c) = (Array2::<f64>::zeros((b, h)), Array2::<f64>::zeros((b, h)));
        for s in 0..t {
            let z = x.index_axis(Axis(0), s).dot(&w_x) + hp.dot(&w_h) + &bias;
            for r in 0..b {
                for j in 0..h {
                    let zz = |k: usize| z[[r, k * h + j]];
                    let c_t = sigmoid(zz(1)) * c[[r, j]] + sigmoid(zz(0)) * zz(2).tanh();
                    c[[r, j]] = c_t;
                    hp[[r, j]] = sigmoid(zz(3)) * c_t.tanh();
                }
            }
            hs.index_axis_mut(Axis(0), s).assign(&hp);
            cs.index_axis_mut(Axis(0), s).assign(&c);
        }
        for (name, got) in [
            (
                "all",
                all::lstm(x.view(), w_x.view(), w_h.view(), bias.view()).unwrap(),
            ),
            (
                "none",
                none::lstm(x.view(), w_x.view(), w_h.view(), bias.view()).unwrap(),
            ),
        ] {
            assert_close(&got.0, &hs, 1e-12, &format!("{name}: h, {t} steps"));
            assert_close(&got.1, &cs, 1e-12, &format!("{name}: c, {t} steps"));
        }
    }
}

#[test]
fn two_map_outputs_from_one_pass_agree_with_a_loop() {
    for t in [1usize, 2, 7] {
        let u = Array2::from_shape_vec((t, 40), values(&[t, 40], 0.7)).unwrap();
        let e = u.mapv(f64::exp);
        let y = &e * 2.0 + &u;
        for (name, got) in [
            ("all", all::maps(u.view()).unwrap()),
            ("none", none::maps(u.view()).unwrap()),
        ] {
            assert_close(&got.0, &y, 1e-13, &format!("{name}: y, {t} steps"));
            assert_close(&got.1, &e, 1e-13, &format!("{name}: e, {t} steps"));
        }
        assert_eq!(all::maps(u.view()).unwrap(), none::maps(u.view()).unwrap());
    }
    // No step: the same (empty) results either way.
    let u = Array2::<f64>::zeros((0, 40));
    assert_eq!(all::maps(u.view()).unwrap(), none::maps(u.view()).unwrap());
}

#[test]
fn a_second_result_broadcast_further_takes_the_two_maps() {
    let u = Array3::from_shape_vec((3, 1, 16), values(&[3, 16], 0.2)).unwrap();
    let m = Array2::from_shape_vec((4, 16), values(&[4, 16], 0.9)).unwrap();
    let e = u.mapv(f64::exp);
    let mut y = Array3::zeros((3, 4, 16));
    for (s, mut ys) in y.axis_iter_mut(Axis(0)).enumerate() {
        ys.assign(&(&m * &e.index_axis(Axis(0), s)).mapv(f64::sin));
    }
    let (ya, ea) = all::broadcast(u.view(), m.view()).unwrap();
    assert_close(&ya, &y, 1e-13, "y");
    assert_close(&ea, &e, 1e-13, "e");
    assert_eq!((ya, ea), none::broadcast(u.view(), m.view()).unwrap());
    // Shapes that do not broadcast: an error either way (the rewrites compute the map over
    // every step before the loop, so they name `u`'s whole shape; a fused chain names the
    // whole chain, `sin(e * m)`, where the operation alone names `e * m`).
    let bad = Array2::<f64>::zeros((4, 15));
    for e in [
        all::broadcast(u.view(), bad.view()).unwrap_err(),
        none::broadcast(u.view(), bad.view()).unwrap_err(),
    ] {
        let text = e.to_string();
        assert!(text.starts_with("cannot broadcast shapes ["), "{text}");
        assert!(text.contains(", 16] and [4, 15] together in `"), "{text}");
    }
}
