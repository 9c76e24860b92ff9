use scan_runtime::prelude::*;

scan! {
    pub fn f(x: ArrayView4<f64>, ids: ArrayView4<i64>) -> Result<f64> {
        Ok(sum(x[ids]))
    }
}

fn main() {}
