use scan_runtime::prelude::*;

// numpy raises for an integer to a negative power; the exponent of `powi` is a literal, so
// the step language rejects it when compiling. Floats are fine.
scan! {
    pub fn f(k: ArrayView1<i64>, u: u8, x: ArrayView1<f64>) -> Result<(Array1<i64>, u8, Array1<f64>)> {
        Ok((powi(k, -1), powi(u, -2), powi(x, -2)))
    }
}

fn main() {}
