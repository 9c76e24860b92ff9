use scan_runtime::prelude::*;

scan! {
    pub fn f(t: ArrayView3<f64>) -> Result<Array3<f64>> {
        Ok(transpose(t, (0, 0, 1)))
    }
}

fn main() {}
