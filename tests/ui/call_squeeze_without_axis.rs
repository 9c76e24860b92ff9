use scan_runtime::prelude::*;

scan! {
    pub fn f(m: ArrayView2<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
        Ok((squeeze(m), broadcast_to(m, (3,))))
    }
}

fn main() {}
