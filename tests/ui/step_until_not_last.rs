use scan_runtime::prelude::*;

scan! {
    pub fn f(limit: f64) -> Result<Array1<f64>> {
        let out = scan(
            |p| (until(p > limit), p * 2.0),
            outputs_info = 1.0,
            n_steps = 10,
        );
        Ok(out)
    }
}

fn main() {}
