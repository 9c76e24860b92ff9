use scan_runtime::prelude::*;

scan! {
    pub fn f(u: ArrayView1<f64>, x: f64, flags: ArrayView1<bool>) -> Result<(Array1<f64>, Array1<f64>)> {
        let a = scan(|u_t, acc| acc + u_t, sequences = u, outputs_info = 0.0, go_backwards = x);
        let b = scan(|u_t, acc| acc + u_t, sequences = u, outputs_info = 0.0, go_backwards = flags);
        Ok((a, b))
    }
}

fn main() {}
