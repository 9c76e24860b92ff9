use scan_runtime::prelude::*;

scan! {
    pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
        let out = map(|u_t, acc| acc + u_t, sequences = u, outputs_info = 0.0);
        Ok(out)
    }
}

fn main() {}
