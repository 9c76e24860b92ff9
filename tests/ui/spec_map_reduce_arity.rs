use scan_runtime::prelude::*;

scan! {
    pub fn f(u: ArrayView1<f64>, w: f64) -> Result<(Array1<f64>, f64)> {
        // map passes one row of each sequence, then the non_sequences.
        let a = map(|u_t, v_t| u_t * v_t, sequences = u);
        let b = map(|u_t| u_t * w, sequences = u, non_sequences = w);
        // reduce passes the sequences' rows, then the accumulator.
        let c = reduce(|acc| acc * 2.0, sequences = u, outputs_info = 0.0);
        Ok((a + b, c))
    }
}

fn main() {}
