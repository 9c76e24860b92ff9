use scan_runtime::prelude::*;

scan! {
    pub fn rows(m: ArrayView2<f64>, x0: f64) -> Result<Array1<f64>> {
        let out = scan(|row, acc| acc + row, sequences = m, outputs_info = x0);
        Ok(out)
    }
}

fn main() {}
