use scan_runtime::prelude::*;

scan! {
    // Python's `return [x * 2], until(x > 10)`: in a closure the comma ends the step.
    pub fn f(x0: f64) -> Result<Array1<f64>> {
        let out = scan(|x| [x * 2.0], until(x > 10.0), outputs_info = x0, n_steps = 20);
        Ok(out)
    }
}

fn main() {}
