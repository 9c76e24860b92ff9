use scan_runtime::prelude::*;

scan! {
    // numpy's attributes: `x.shape[0]` is supported, `x.T` and a bare `x.shape` are not.
    pub fn f(m: ArrayView2<f64>) -> Result<(Array2<f64>, i64, i64)> {
        Ok((m.T, m.shape, m.ndim))
    }
}

fn main() {}
