use scan_runtime::prelude::*;

scan! {
    pub fn f(v: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>, f64)> {
        Ok((v[slice(None, None, 0)], v[slice(0, 1, 2, 3)], sum(slice(0, 2))))
    }
}

fn main() {}
