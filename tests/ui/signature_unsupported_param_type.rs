use scan_runtime::prelude::*;

scan! {
    pub fn f(
        v: Vec<f64>,
        r: &ArrayView1<f64>,
        o: Array1<f64>,
        big: ArrayView5<f64>,
        n: u128,
    ) -> Result<f64> {
        Ok(1.0)
    }
}

fn main() {}
