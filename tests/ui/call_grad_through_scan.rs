use scan_runtime::prelude::*;

scan! {
    // The step's operation without a gradient rule is named, on the `grad` call.
    pub fn step_without_rule(x: ArrayView1<f64>) -> Result<Array1<f64>> {
        let total = scan(|x_t, acc| acc + digamma(x_t), sequences = x, outputs_info = 0.0);
        Ok(grad(total[-1], x))
    }

    pub fn truncate_zero(x: ArrayView1<f64>) -> Result<Array1<f64>> {
        let total = scan(|x_t, acc| acc + x_t, sequences = x, outputs_info = 0.0, truncate_gradient = 0);
        Ok(total)
    }

    pub fn truncate_not_literal(x: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
        let total = map(|x_t| x_t * 2.0, sequences = x, truncate_gradient = k);
        Ok(total)
    }

    pub fn truncate_on_foldl(x: ArrayView1<f64>) -> Result<f64> {
        let total = foldl(|x_t, acc| acc + x_t, sequences = x, outputs_info = 0.0, truncate_gradient = 2);
        Ok(total)
    }
}

fn main() {}
