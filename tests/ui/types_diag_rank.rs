use scan_runtime::prelude::*;

scan! {
    pub fn f(t: ArrayView3<f64>, v: ArrayView1<f64>) -> Result<(Array2<f64>, Array1<f64>, Array1<f64>)> {
        Ok((diag(t), tril(v), identity_like(v)))
    }
}

fn main() {}
