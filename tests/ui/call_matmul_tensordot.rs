use scan_runtime::prelude::*;

scan! {
    pub fn f(x: ArrayView4<f64>, t: ArrayView3<f64>, m: ArrayView2<f64>)
        -> Result<(Array3<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array3<f64>, Array2<f64>)> {
        Ok((
            matmul(x, m),
            matmul(2.0, m),
            tensordot(m, m),
            tensordot(m, m, 2),
            tensordot(t, t, 1),
            tensordot(m, m, ([2], [0])),
        ))
    }
}

fn main() {}
