//! The join_slices rewrite in generated code: zeros incremented at slices of one axis that
//! meet end to end (an LSTM gradient's adjoint of its gate block, built from the four
//! gates' adjoints) are made by writing each increment into its slice when the slices tile
//! the axis at run time and each increment has its slice's shape, else by the increments
//! as before. Checked against hand-written loops (a BPTT for the LSTM, the zeros and
//! additions for a step that builds its state from blocks) with the rewrite on, off, alone
//! and with everything else, where the run-time shapes make the fallback necessary too
//! (slices short of the axis, an increment of one column that broadcasts, empty slices),
//! and by the reference evaluator.

mod common;

use common::{assert_allclose, matrix, second_opinion, Value};
use scan_runtime::ndarray::{s, Array3, Axis};
use scan_runtime::prelude::*;

macro_rules! variants {
    ($($module:ident: [$($setting:tt)*];)*) => {$(
        #[allow(dead_code)]
        mod $module {
            scan_tests::program! {
                #![rewrites($($setting)*)]

                /// scan-bench's lstm_grad in f64: the gradients of every h_t summed.
                pub fn lstm_grad(x: ArrayView3<f64>, w_x: ArrayView2<f64>, w_h: ArrayView2<f64>,
                                 b: ArrayView1<f64>) -> Result<(Array2<f64>, Array2<f64>, Array1<f64>)> {
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
                    let (g_w_x, g_w_h, g_b) = grad(sum(h), [w_x, w_h, b]);
                    Ok((g_w_x, g_w_h, g_b))
                }

                /// The same in f32, as the benchmark runs it.
                pub fn lstm_grad32(x: ArrayView3<f32>, w_x: ArrayView2<f32>, w_h: ArrayView2<f32>,
                                   b: ArrayView1<f32>) -> Result<(Array2<f32>, Array2<f32>, Array1<f32>)> {
                    let zero = zeros((x.shape[1], w_h.shape[0])) as f32;
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
                    let (g_w_x, g_w_h, g_b) = grad(sum(h), [w_x, w_h, b]);
                    Ok((g_w_x, g_w_h, g_b))
                }

                /// A state built each step from two blocks of zeros: `tanh(a_t + s[:, :k])`
                /// in columns `..k`, `sin(b_t)` in `k..2k` (b_t of k columns, or of one,
                /// broadcast over the block). The blocks tile the state only when it has
                /// 2k columns; with more, the rest stays zero. Then 0.5 is added to its last
                /// column: that increment takes the joined value's buffer over and leaves
                /// it its own of the step before, so a join that read what its buffer held
                /// (0.5 in the last column) would be seen.
                pub fn blocks(a: ArrayView3<f64>, b: ArrayView3<f64>, s0: ArrayView2<f64>, k: usize) -> Result<Array3<f64>> {
                    let n = k as i64;
                    let states = scan(
                        |a_t, b_t, s| {
                            let z = zeros_like(s);
                            let left = inc_subtensor(z[(.., ..n)], tanh(a_t + s[(.., ..n)]));
                            let joined = inc_subtensor(left[(.., n..2 * n)], sin(b_t));
                            inc_subtensor(joined[(.., -1)], 0.5)
                        },
                        sequences = [a, b],
                        outputs_info = s0,
                    );
                    Ok(states)
                }
            }
        }
    )*};
}

variants! {
    all: [all];
    none: [none];
    alone: [join_slices];
    without: [all_except(join_slices)];
}

/// An LSTM's inputs: x `[T, B, I]`, W_x `[I, 4n]`, W_h `[n, 4n]`, b `[4n]`.
struct Lstm {
    x: Array3<f64>,
    w_x: Array2<f64>,
    w_h: Array2<f64>,
    b: Array1<f64>,
}

impl Lstm {
    fn new(steps: usize, batch: usize, inputs: usize, n: usize) -> Lstm {
        Lstm {
            x: Array3::from_shape_fn((steps, batch, inputs), |(t, i, j)| {
                ((t * 13 + i * 7 + j) as f64 * 0.29).sin()
            }),
            w_x: matrix(inputs, 4 * n, 1),
            w_h: matrix(n, 4 * n, 2),
            b: matrix(1, 4 * n, 3).row(0).to_owned(),
        }
    }

    /// Backpropagation through time by hand: the loss is the sum of every h_t.
    fn by_hand(&self) -> (Array2<f64>, Array2<f64>, Array1<f64>) {
        let (steps, batch, _) = self.x.dim();
        let n = self.w_h.nrows();
        let sig = |v: f64| 1.0 / (1.0 + (-v).exp());
        let mut h = Array2::<f64>::zeros((batch, n));
        let mut c = Array2::<f64>::zeros((batch, n));
        // Per step: h_{t-1}, c_{t-1}, the gates i, f, g, o and c_t.
        let mut saved = Vec::new();
        for t in 0..steps {
            let z = self.x.index_axis(Axis(0), t).dot(&self.w_x) + h.dot(&self.w_h) + &self.b;
            let i = z.slice(s![.., ..n]).mapv(sig);
            let f = z.slice(s![.., n..2 * n]).mapv(sig);
            let g = z.slice(s![.., 2 * n..3 * n]).mapv(f64::tanh);
            let o = z.slice(s![.., 3 * n..]).mapv(sig);
            let c_t = &f * &c + &i * &g;
            let h_t = &o * &c_t.mapv(f64::tanh);
            saved.push((h.clone(), c.clone(), i, f, g, o, c_t.clone()));
            (h, c) = (h_t, c_t);
        }
        let mut g_w_x = Array2::<f64>::zeros(self.w_x.dim());
        let mut g_w_h = Array2::<f64>::zeros(self.w_h.dim());
        let mut g_b = Array1::<f64>::zeros(4 * n);
        let mut dh_next = Array2::<f64>::zeros((batch, n));
        let mut dc_next = Array2::<f64>::zeros((batch, n));
        for t in (0..steps).rev() {
            let (h_prev, c_prev, i, f, g, o, c_t) = &saved[t];
            let tc = c_t.mapv(f64::tanh);
            let dh = dh_next.mapv(|v| v + 1.0);
            let dc = &dc_next + &(&dh * o * &tc.mapv(|v| 1.0 - v * v));
            let mut dz = Array2::<f64>::zeros((batch, 4 * n));
            dz.slice_mut(s![.., ..n])
                .assign(&(&dc * g * &i.mapv(|v| v * (1.0 - v))));
            dz.slice_mut(s![.., n..2 * n])
                .assign(&(&dc * c_prev * &f.mapv(|v| v * (1.0 - v))));
            dz.slice_mut(s![.., 2 * n..3 * n])
                .assign(&(&dc * i * &g.mapv(|v| 1.0 - v * v)));
            dz.slice_mut(s![.., 3 * n..])
                .assign(&(&dh * &tc * &o.mapv(|v| v * (1.0 - v))));
            g_w_x += &self.x.index_axis(Axis(0), t).t().dot(&dz);
            g_w_h += &h_prev.t().dot(&dz);
            g_b += &dz.sum_axis(Axis(0));
            dh_next = dz.dot(&self.w_h.t());
            dc_next = &dc * f;
        }
        (g_w_x, g_w_h, g_b)
    }

    fn args(&self) -> Vec<Value> {
        vec![
            Value::from(self.x.clone()),
            Value::from(self.w_x.clone()),
            Value::from(self.w_h.clone()),
            Value::from(self.b.clone()),
        ]
    }
}

macro_rules! run_lstm {
    ($module:ident, $l:expr) => {
        $module::lstm_grad($l.x.view(), $l.w_x.view(), $l.w_h.view(), $l.b.view())
    };
}

fn flat<D: scan_runtime::ndarray::Dimension>(a: &Array<f64, D>) -> Vec<f64> {
    a.iter().copied().collect()
}

#[test]
fn lstm_gradients_agree_with_a_hand_written_bptt() {
    // 1, 2 and 6 steps; gate blocks of 3, 20 and 256 columns (a block of 64 x 256 is
    // written in two halves of its rows when two threads are allowed).
    for (steps, batch, inputs, n) in [(1, 2, 3, 3), (2, 3, 4, 3), (6, 3, 5, 20), (2, 64, 4, 256)] {
        let l = Lstm::new(steps, batch, inputs, n);
        let (w_x, w_h, b) = l.by_hand();
        for (name, got) in [
            ("all", run_lstm!(all, l)),
            ("none", run_lstm!(none, l)),
            ("alone", run_lstm!(alone, l)),
            ("without", run_lstm!(without, l)),
        ] {
            let (gx, gh, gb) = got.unwrap_or_else(|e| panic!("{name}, {steps} steps: {e}"));
            assert_allclose(&flat(&gx), &flat(&w_x), 1e-10);
            assert_allclose(&flat(&gh), &flat(&w_h), 1e-10);
            assert_allclose(&flat(&gb), &flat(&b), 1e-10);
        }
        // The rewrite alone changes no bit: each increment written into its slice is what
        // adding it to zeros gave.
        let (joined, unjoined) = (run_lstm!(alone, l).unwrap(), run_lstm!(none, l).unwrap());
        let bits = |g: &(Array2<f64>, Array2<f64>, Array1<f64>)| -> Vec<u64> {
            g.0.iter()
                .chain(&g.1)
                .chain(&g.2)
                .map(|v| v.to_bits())
                .collect()
        };
        assert_eq!(bits(&joined), bits(&unjoined), "{steps} steps");
        if n < 50 {
            let (gx, gh, gb) = run_lstm!(all, l).unwrap();
            second_opinion(
                all::SOURCE,
                "lstm_grad",
                l.args(),
                vec![gx.into(), gh.into(), gb.into()],
            );
        }
    }
}

macro_rules! run_lstm32 {
    ($module:ident, $x:expr, $w_x:expr, $w_h:expr, $b:expr) => {
        $module::lstm_grad32($x.view(), $w_x.view(), $w_h.view(), $b.view()).unwrap()
    };
}

#[test]
fn the_f32_lstm_gradient_joined_is_the_one_without_rewrites() {
    let l = Lstm::new(4, 3, 5, 8);
    let f32s = |a: &Array2<f64>| a.mapv(|v| v as f32);
    let x = l.x.mapv(|v| v as f32);
    let (w_x, w_h) = (f32s(&l.w_x), f32s(&l.w_h));
    let b = l.b.mapv(|v| v as f32);
    let alone = run_lstm32!(alone, x, w_x, w_h, b);
    assert_eq!(alone, run_lstm32!(none, x, w_x, w_h, b));
    let (gx, gh, gb) = run_lstm32!(all, x, w_x, w_h, b);
    let (want_x, want_h, want_b) = l.by_hand();
    let close = |got: Vec<f32>, want: &[f64]| {
        let got: Vec<f64> = got.into_iter().map(f64::from).collect();
        assert_allclose(&got, want, 1e-4);
    };
    close(gx.into_iter().collect(), &flat(&want_x));
    close(gh.into_iter().collect(), &flat(&want_h));
    close(gb.into_iter().collect(), &flat(&want_b));
}

/// `blocks` by hand: zeros, `tanh(a_t + s[:, :k])` added into `..k`, `sin(b_t)`
/// (broadcast) into `k..2k`, numpy's clamping of both slices; 0.5 added to the last column.
fn blocks_by_hand(a: &Array3<f64>, b: &Array3<f64>, s0: &Array2<f64>, k: usize) -> Array3<f64> {
    let (rows, cols) = s0.dim();
    let (k1, k2) = (k.min(cols), (2 * k).min(cols));
    let mut s = s0.clone();
    let mut out = Array3::<f64>::zeros((a.len_of(Axis(0)), rows, cols));
    for t in 0..a.len_of(Axis(0)) {
        let mut next = Array2::<f64>::zeros((rows, cols));
        let left = (&a.index_axis(Axis(0), t) + &s.slice(s![.., ..k1])).mapv(f64::tanh);
        let mut block = next.slice_mut(s![.., ..k1]);
        block += &left;
        let right = b.index_axis(Axis(0), t).mapv(f64::sin);
        let mut block = next.slice_mut(s![.., k1..k2]);
        block += &right.broadcast(block.raw_dim()).expect("k or 1 columns");
        next.column_mut(cols - 1).mapv_inplace(|v| v + 0.5);
        out.index_axis_mut(Axis(0), t).assign(&next);
        s = next;
    }
    out
}

#[test]
fn blocks_written_in_place_or_added_to_zeros_agree_with_a_hand_written_loop() {
    // (state columns, k, b's columns): the blocks tile (in place); b of one column (its
    // block copied, broadcast); 2k + 3 columns (the blocks stop short: zeros and
    // additions); k = 0 (both slices empty: zeros); a state of one row.
    for (rows, cols, k, b_cols) in [
        (3, 8, 4, 4),
        (3, 8, 4, 1),
        (3, 11, 4, 4),
        (3, 11, 4, 1),
        (2, 3, 0, 1),
        (1, 40, 20, 20),
    ] {
        for steps in [0usize, 1, 2, 5] {
            let a = Array3::from_shape_fn((steps, rows, k), |(t, i, j)| {
                ((t * 11 + i * 5 + j) as f64 * 0.37).cos()
            });
            let b = Array3::from_shape_fn((steps, rows, b_cols), |(t, i, j)| {
                ((t * 3 + i * 17 + j) as f64 * 0.53).sin()
            });
            let s0 = matrix(rows, cols, 9);
            let want = blocks_by_hand(&a, &b, &s0, k);
            let (a_v, b_v, s_v) = (a.view(), b.view(), s0.view());
            for (name, got) in [
                ("all", all::blocks(a_v, b_v, s_v, k)),
                ("none", none::blocks(a_v, b_v, s_v, k)),
                ("alone", alone::blocks(a_v, b_v, s_v, k)),
                ("without", without::blocks(a_v, b_v, s_v, k)),
            ] {
                let got = got.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(got.dim(), want.dim(), "{name}");
                assert_allclose(&flat(&got), &flat(&want), 1e-12);
            }
            // The rewrite alone changes no bit.
            let (joined, unjoined) = (
                alone::blocks(a_v, b_v, s_v, k).unwrap(),
                none::blocks(a_v, b_v, s_v, k).unwrap(),
            );
            let bits = |x: &Array3<f64>| x.iter().map(|v| v.to_bits()).collect::<Vec<u64>>();
            assert_eq!(bits(&joined), bits(&unjoined), "{cols} columns, k = {k}");
            if steps == 5 {
                let got = all::blocks(a_v, b_v, s_v, k).unwrap();
                let args = vec![
                    Value::from(a.clone()),
                    Value::from(b.clone()),
                    Value::from(s0.clone()),
                    Value::from(k as i64),
                ];
                second_opinion(all::SOURCE, "blocks", args, vec![got.into()]);
            }
        }
    }
}

#[test]
fn an_increment_that_does_not_fit_its_block_is_the_same_error() {
    // b of 3 columns for a block of 4: numpy cannot broadcast it, with the rewrite or not.
    let (a, b) = (
        Array3::<f64>::zeros((2, 3, 4)),
        Array3::<f64>::zeros((2, 3, 3)),
    );
    let s0 = matrix(3, 8, 1);
    let with = all::blocks(a.view(), b.view(), s0.view(), 4).unwrap_err();
    let without = none::blocks(a.view(), b.view(), s0.view(), 4).unwrap_err();
    assert_eq!(with.to_string(), without.to_string());
    assert!(with.to_string().contains("[3, 4]"), "{with}");
}
