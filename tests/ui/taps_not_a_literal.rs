use scan_runtime::prelude::*;

scan! {
    pub fn f(u: ArrayView1<f64>, k: i64) -> Result<Array1<f64>> {
        let out = scan(|u_tmk, acc| acc + u_tmk, sequences = taps(u, [k]), outputs_info = 0.0);
        Ok(out)
    }
}

fn main() {}
