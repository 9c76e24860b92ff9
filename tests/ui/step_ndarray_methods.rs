use scan_runtime::prelude::*;

scan! {
    // ndarray's own methods are not the step language: each error says what to write.
    pub fn f(m: ArrayView2<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
        let a = map(|row| row.mapv(|v| v * 2.0).sum(), sequences = m);
        let b = map(|row| row.iter().sum(), sequences = m);
        let c = map(|row| row.to_owned().max(), sequences = m);
        let d = m.sum_axis(Axis(0));
        Ok((a, b, c, d))
    }
}

fn main() {}
