use scan_runtime::prelude::*;

scan! {
    pub fn cost_not_scalar(x: ArrayView1<f64>) -> Result<Array1<f64>> {
        Ok(grad(x * x, x))
    }

    pub fn not_a_name(x: ArrayView1<f64>) -> Result<Array1<f64>> {
        Ok(grad(sum(x * x), x * 2.0))
    }

    pub fn integer(x: ArrayView1<f64>, n: i64) -> Result<(Array1<f64>, f64)> {
        let y = sum(x) * (n as f64);
        let (gx, gn) = grad(y, [x, n]);
        Ok((gx, gn))
    }

    pub fn disconnected(x: ArrayView1<f64>, w: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
        let (gx, gw) = grad(sum(x * x), [x, w]);
        Ok((gx, gw))
    }
}

fn main() {}
