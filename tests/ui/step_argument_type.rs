// Types written on step arguments are checked against what scan passes.
use scan_runtime::prelude::*;

scan! {
    pub fn f(u: ArrayView2<f64>) -> Result<Array1<f64>> {
        let out = scan(|u_t: ArrayView1<f32>, acc: f64| acc + u_t.sum(), sequences = u, outputs_info = 0.0);
        Ok(out)
    }
}

fn main() {}
