use scan_runtime::prelude::*;

scan! {
    // Python's `outputs_info=(a, None)`: a tuple in PyTensor, a list here.
    pub fn f(u: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
        let (acc, sq) = scan(|u_t, acc| (acc + u_t, u_t * u_t), sequences = u, outputs_info = (0.0, None));
        Ok((acc, sq))
    }
}

fn main() {}
