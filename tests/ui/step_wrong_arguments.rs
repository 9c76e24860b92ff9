use scan_runtime::prelude::*;

scan! {
    pub fn f(u: ArrayView1<f64>, w: f64) -> Result<Array1<f64>> {
        let out = scan(
            |u_t, x_tm1| x_tm1 * w + u_t,
            sequences = [taps(u, [-1, 0])],
            outputs_info = 0.0,
        );
        Ok(out)
    }
}

fn main() {}
