use scan_runtime::prelude::*;

scan! {
    pub fn f(x: ArrayView2<f64>, i: i64) -> Result<(i64, i64, i64)> {
        Ok((x.shape[2], shape(x, i), x.shape[-3]))
    }
}

fn main() {}
