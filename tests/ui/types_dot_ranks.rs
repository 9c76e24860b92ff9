use scan_runtime::prelude::*;

scan! {
    pub fn f(t: ArrayView3<f64>, m: ArrayView2<f64>, v: ArrayView1<f64>) -> Result<(Array2<f64>, Array1<f64>)> {
        Ok((dot(t, t), v.dot(2.0)))
    }
}

fn main() {}
