use scan_runtime::prelude::*;

scan! {
    pub fn relu_sums(u: ArrayView1<f64>) -> Result<Array1<f64>> {
        let out = scan(
            |u_t, acc| if u_t > 0.0 { acc + u_t } else { acc },
            sequences = u,
            outputs_info = 0.0,
        );
        Ok(out)
    }
}

fn main() {}
