use scan_runtime::prelude::*;

scan! {
    pub fn f(x0: ArrayView1<f64>) -> Result<(Array2<f64>, Array1<f64>)> {
        // A vector of bools is not one condition: reduce it with `all` or `any`.
        let a = scan(|x| (x * 2.0, until(x > 10.0)), outputs_info = x0, n_steps = 10);
        // A number is not a condition: compare it.
        let b = scan(|s| (s + 1.0, until(s)), outputs_info = 0.0, n_steps = 10);
        Ok((a, b))
    }
}

fn main() {}
