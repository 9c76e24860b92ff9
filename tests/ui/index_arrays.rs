use scan_runtime::prelude::*;

scan! {
    pub fn f(m: ArrayView2<f64>, mask: ArrayView1<bool>, ij: ArrayView2<i64>, idx: ArrayView1<i64>, w: ArrayView1<f64>)
        -> Result<(Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array1<f64>, Array1<bool>, Array1<i64>, Array2<f64>, Array1<i64>, Array1<f64>)> {
        Ok((
            m[(.., mask)],
            set_subtensor(m[ij], 0.0),
            set_subtensor(m[0..2][idx], 0.0),
            m[(idx, idx)],
            m[(0, idx)],
            inc_subtensor(mask[idx], true),
            set_subtensor(idx[m > 0.0], 0),
            m[w],
            idx[m > 0.0],
            take(w, mask),
        ))
    }
}

fn main() {}
