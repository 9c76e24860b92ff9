use scan_runtime::prelude::*;

scan! {
    pub fn f(v: ArrayView1<f64>) -> Result<f64> {
        Ok(sum(slice(0, 2)))
    }
}

fn main() {}
