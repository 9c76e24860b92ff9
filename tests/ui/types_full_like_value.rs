use scan_runtime::prelude::*;

scan! {
    pub fn f(m: ArrayView2<f64>, v: ArrayView1<f64>) -> Result<Array2<f64>> {
        Ok(full_like(m, v))
    }
}

fn main() {}
