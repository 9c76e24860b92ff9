use scan_runtime::prelude::*;

scan! {
    pub fn no_derivative(x: ArrayView1<f64>) -> Result<Array1<f64>> {
        Ok(grad(sum(digamma(x)), x))
    }

    pub fn no_rule(a: ArrayView2<f64>) -> Result<Array2<f64>> {
        Ok(grad(sum(cholesky(a)), a))
    }
}

fn main() {}
