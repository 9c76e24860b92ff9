use scan_runtime::prelude::*;

scan! {
    pub fn f(x: ArrayView2<f64>) -> Result<f64> {
        Ok(x[(0, 1, 2)])
    }
}

fn main() {}
