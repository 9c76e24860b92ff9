use scan_runtime::prelude::*;

scan! {
    pub fn f(u: ArrayView1<f64>, v: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
        let a = scan(|u_t, acc| acc + u_t, sequences = u, outputs_info = 0.0, sequences = v);
        // Positionally, `v` is already the sequences (PyTensor's order).
        let b = scan(|u_t, acc| acc + u_t, v, outputs_info = 0.0, sequences = u);
        Ok((a, b))
    }
}

fn main() {}
