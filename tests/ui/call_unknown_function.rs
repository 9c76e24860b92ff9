use scan_runtime::prelude::*;

scan! {
    pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
        let out = map(|u_t| gelu(u_t), sequences = u);
        Ok(out)
    }
}

fn main() {}
