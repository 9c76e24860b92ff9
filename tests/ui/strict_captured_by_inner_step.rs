use scan_runtime::prelude::*;

scan! {
    // A strict inner step reading a value of the outer step it was not passed.
    pub fn f(m: ArrayView2<f64>, w: f64) -> Result<Array1<f64>> {
        let totals = map(
            |row| {
                let scale = w * 2.0;
                reduce(|x, acc| acc + x * scale, sequences = row, outputs_info = 0.0, strict = true)
            },
            sequences = m,
        );
        Ok(totals)
    }
}

fn main() {}
