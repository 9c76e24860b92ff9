//! The scan tutorial's RNN (scan-bench's seed_taps) as the rewrite tests feed it
//! (tests/stack_dots.rs, tests/group_projections.rs): its inputs, the loop by hand with
//! numpy's broadcasting, and a comparison of rows.

use super::{assert_allclose, matrix, Value};
use scan_runtime::ndarray::{Array1, Array2, ArrayView1, ArrayView2};

/// The RNN's inputs: `rows` rows of u (`rows - 4` steps), n_u = 3, and the given n_x, n_y
/// and columns of w_in_2 and w_feedback (n_x, or 1: that product broadcasts over the
/// others).
pub struct Rnn {
    pub u: Array2<f64>,
    pub x0: Array2<f64>,
    pub y0: Array1<f64>,
    pub w: Array2<f64>,
    pub w_in_1: Array2<f64>,
    pub w_in_2: Array2<f64>,
    pub w_feedback: Array2<f64>,
    pub w_out: Array2<f64>,
}

/// A generated `rnn` (each test file compiles it under several rewrite settings).
pub type RnnFn = fn(
    ArrayView2<'_, f64>,
    ArrayView2<'_, f64>,
    ArrayView1<'_, f64>,
    ArrayView2<'_, f64>,
    ArrayView2<'_, f64>,
    ArrayView2<'_, f64>,
    ArrayView2<'_, f64>,
    ArrayView2<'_, f64>,
) -> scan_runtime::Result<(Array2<f64>, Array2<f64>)>;

impl Rnn {
    pub fn new(
        rows: usize,
        n_x: usize,
        n_y: usize,
        in_2_columns: usize,
        feedback_columns: usize,
    ) -> Rnn {
        let n_u = 3;
        Rnn {
            u: matrix(rows, n_u, 1),
            x0: matrix(3, n_x, 2),
            y0: matrix(1, n_y, 3).row(0).to_owned(),
            w: matrix(n_x, n_x, 4),
            w_in_1: matrix(n_u, n_x, 5),
            w_in_2: matrix(n_u, in_2_columns, 6),
            w_feedback: matrix(n_y, feedback_columns, 7),
            w_out: matrix(n_x, n_y, 8),
        }
    }

    /// The generated `rnn` on these inputs.
    pub fn run(&self, rnn: RnnFn) -> scan_runtime::Result<(Array2<f64>, Array2<f64>)> {
        rnn(
            self.u.view(),
            self.x0.view(),
            self.y0.view(),
            self.w.view(),
            self.w_in_1.view(),
            self.w_in_2.view(),
            self.w_feedback.view(),
            self.w_out.view(),
        )
    }

    /// The loop by hand, with numpy's broadcasting of a one-column projection.
    pub fn by_hand(&self) -> (Vec<Array1<f64>>, Vec<Array1<f64>>) {
        let steps = self.u.nrows() - 4;
        let n_x = self.w.ncols();
        let mut xs: Vec<Array1<f64>> = self.x0.rows().into_iter().map(|r| r.to_owned()).collect();
        let mut ys = vec![self.y0.clone()];
        for t in 0..steps {
            let past_input = self.u.row(t).dot(&self.w_in_2);
            let past_input = past_input.broadcast(n_x).expect("1 or n_x columns");
            let feedback = ys[t].dot(&self.w_feedback);
            let feedback = feedback.broadcast(n_x).expect("1 or n_x columns");
            let pre = xs[t + 2].dot(&self.w)
                + self.u.row(t + 4).dot(&self.w_in_1)
                + past_input
                + feedback;
            let y = xs[t].dot(&self.w_out);
            xs.push(pre.mapv(f64::tanh));
            ys.push(y);
        }
        (xs.split_off(3), ys.split_off(1))
    }

    /// The inputs for the reference evaluator.
    pub fn args(&self) -> Vec<Value> {
        [&self.u, &self.x0]
            .into_iter()
            .map(|m| Value::from(m.clone()))
            .chain([Value::from(self.y0.clone())])
            .chain(
                [
                    &self.w,
                    &self.w_in_1,
                    &self.w_in_2,
                    &self.w_feedback,
                    &self.w_out,
                ]
                .map(|m| Value::from(m.clone())),
            )
            .collect()
    }
}

/// Every row of `got` against `want`'s rows within 1e-12.
pub fn rows_close(got: &Array2<f64>, want: &[Array1<f64>]) {
    assert_eq!(got.nrows(), want.len());
    for (row, want) in got.rows().into_iter().zip(want) {
        assert_allclose(&row.to_vec(), &want.to_vec(), 1e-12);
    }
}
