use scan_runtime::prelude::*;

scan! {
    // `checkpoints = n` takes a positive integer literal: the steps between two states a
    // gradient's forward pass stores.
    pub fn zero(x: ArrayView1<f64>) -> Result<f64> {
        let total = scan(|x_t, acc| acc + x_t, sequences = x, outputs_info = 0.0, checkpoints = 0);
        Ok(grad(total[-1], x).sum())
    }

    pub fn negative(x: ArrayView1<f64>) -> Result<f64> {
        let total = reduce(|x_t, acc| acc * x_t, sequences = x, outputs_info = 1.0, checkpoints = -4);
        Ok(total)
    }

    pub fn not_a_literal(x: ArrayView1<f64>, n: usize) -> Result<Array1<f64>> {
        let total = map(|x_t| x_t * 2.0, sequences = x, checkpoints = n);
        Ok(total)
    }

    pub fn a_float(x: ArrayView1<f64>) -> Result<f64> {
        let total = foldl(|x_t, acc| acc + x_t, sequences = x, outputs_info = 0.0, checkpoints = 2.0);
        Ok(total)
    }

    // Truncated backpropagation stops inside a segment.
    pub fn with_truncate(x: ArrayView1<f64>) -> Result<Array1<f64>> {
        let total = scan(|x_t, acc| acc + x_t, sequences = x, outputs_info = 0.0, truncate_gradient = 3, checkpoints = 2);
        Ok(total)
    }
}

fn main() {}
