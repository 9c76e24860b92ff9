use scan_runtime::prelude::*;

scan! {
    // A keyword with no close match: reported once, with no "needs sequences or n_steps"
    // and no step-argument count after it.
    pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
        let out = scan(|u_t, acc| acc + u_t, seqs = u, outputs_info = 0.0);
        Ok(out)
    }
}

fn main() {}
