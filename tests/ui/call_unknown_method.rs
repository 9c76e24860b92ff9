use scan_runtime::prelude::*;

scan! {
    pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
        let out = scan(|u_t, acc| (acc + u_t).tnah(), sequences = u, outputs_info = 0.0);
        let total = u.sume();
        Ok(out * total)
    }
}

fn main() {}
