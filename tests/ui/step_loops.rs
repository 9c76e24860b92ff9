use scan_runtime::prelude::*;

scan! {
    pub fn f(m: ArrayView2<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
        let a = map(|row| { for x in row { x } }, sequences = m);
        let b = map(|row| { while true { row } }, sequences = m);
        let c = map(|row| { loop { row } }, sequences = m);
        Ok((a, b, c))
    }
}

fn main() {}
