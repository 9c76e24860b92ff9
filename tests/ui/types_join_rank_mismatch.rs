use scan_runtime::prelude::*;

scan! {
    pub fn f(m: ArrayView2<f64>, v: ArrayView1<f64>, x: f64) -> Result<(Array2<f64>, Array1<f64>, Array2<f64>)> {
        Ok((concatenate([m, m, v]), concatenate([v, x]), [v, m]))
    }
}

fn main() {}
