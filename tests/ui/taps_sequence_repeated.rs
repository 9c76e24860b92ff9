use scan_runtime::prelude::*;

scan! {
    pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
        let out = scan(|a, b, acc| acc + a * b, sequences = taps(u, [0, 0]), outputs_info = 0.0);
        Ok(out)
    }
}

fn main() {}
