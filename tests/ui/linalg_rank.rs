use scan_runtime::prelude::*;

scan! {
    pub fn f(t: ArrayView3<f64>, a: ArrayView2<f64>, k: ArrayView2<i64>, b: ArrayView1<f64>) -> Result<(Array2<f64>, Array1<f64>, f64, Array1<f64>, Array2<f64>, Array1<f64>)> {
        Ok((
            cholesky(t),
            solve(a, b, assume_a = "positive"),
            det(k),
            solve_triangular(a, b, lowr = true),
            cholesky(a, lower = b.len() > 2),
            sum(b, axis = 0),
        ))
    }
}

fn main() {}
