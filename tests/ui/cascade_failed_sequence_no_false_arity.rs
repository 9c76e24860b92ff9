use scan_runtime::prelude::*;

scan! {
    // A typo in a sequence and in a non-sequence: each is reported once, and the step still
    // counts their arguments (no "the step takes 3 arguments but scan passes 1").
    pub fn f(u: ArrayView1<f64>, w: f64) -> Result<Array1<f64>> {
        let out = scan(
            |u_t, x_tm1, w| x_tm1 * w + u_t,
            sequences = uu,
            outputs_info = 0.0,
            non_sequences = ww,
        );
        Ok(out)
    }
}

fn main() {}
