use scan_runtime::prelude::*;

scan! {
    // A typo in an initial state: one error, and the step is still checked.
    pub fn f(u: ArrayView1<f64>, x0: f64) -> Result<Array1<f64>> {
        let out = scan(|u_t, acc| acc + u_t, sequences = u, outputs_info = xo);
        Ok(out * 2.0)
    }
}

fn main() {}
