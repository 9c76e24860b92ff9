use scan_runtime::prelude::*;

scan! {
    pub fn fib(init: ArrayView1<f64>) -> Result<Array1<f64>> {
        let a = scan(|x_tm2, x_tm1| x_tm2 + x_tm1, outputs_info = taps(init, [-2, 0]), n_steps = 5);
        let b = scan(|x_tm1, y_tm1| x_tm1 + y_tm1, outputs_info = taps(init, [-1, -1]), n_steps = 5);
        Ok(a + b)
    }
}

fn main() {}
