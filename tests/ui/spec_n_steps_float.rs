use scan_runtime::prelude::*;

scan! {
    pub fn f(x0: f64, steps: f64) -> Result<Array1<f64>> {
        let out = scan(|x| x * 2.0, outputs_info = x0, n_steps = steps);
        Ok(out)
    }
}

fn main() {}
