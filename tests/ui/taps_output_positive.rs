use scan_runtime::prelude::*;

scan! {
    // A positive output tap would read a step not yet computed.
    pub fn f(init: ArrayView1<f64>) -> Result<Array1<f64>> {
        let out = scan(|x_tm1, x_tp1| x_tm1 + x_tp1, outputs_info = taps(init, [-1, 1]), n_steps = 5);
        Ok(out)
    }
}

fn main() {}
