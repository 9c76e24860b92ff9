use scan_runtime::prelude::*;

scan! {
    pub fn f(u: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
        let (a, b) = scan(|u_t, acc| (acc + u_t, acc * u_t), sequences = u, outputs_info = [0.0]);
        Ok((a, b))
    }
}

fn main() {}
