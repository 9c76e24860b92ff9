use scan_runtime::prelude::*;

scan! {
    pub fn f(v: ArrayView1<f64>) -> Result<ArrayView1<f64>> {
        Ok(v)
    }

    pub fn g(v: ArrayView1<f64>) -> Array1<f64> {
        Ok(v * 2.0)
    }
}

fn main() {}
