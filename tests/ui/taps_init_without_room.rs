// Taps [-3, -1] need an initial state with a leading axis of 3 rows; this one is a scalar.
use scan_runtime::prelude::*;

scan! {
    pub fn f(x0: f64) -> Result<Array1<f64>> {
        let out = scan(|x_tm3, x_tm1| x_tm3 + x_tm1, outputs_info = taps(x0, [-3, -1]), n_steps = 4);
        Ok(out)
    }
}

fn main() {}
