use scan_runtime::prelude::*;

scan! {
    // A sequence that does not parse (`x.T`): one error, no false step-argument count
    // and no "needs sequences or n_steps".
    pub fn f(m: ArrayView2<f64>) -> Result<Array2<f64>> {
        let out = scan(|col, acc| acc + col, sequences = m.T, outputs_info = [zeros(3)]);
        Ok(out)
    }
}

fn main() {}
