use scan_runtime::prelude::*;

scan! {
    pub fn helper(x: ArrayView1<f64>, by: f64) -> Result<Array1<f64>> {
        // `outer` is the caller's: a function sees only its parameters and its own lets.
        Ok(x * by + outer)
    }

    pub fn again(x: ArrayView1<f64>) -> Result<Array1<f64>> {
        Ok(again(x))
    }

    pub fn caller(x: ArrayView1<f64>, n: i64) -> Result<Array1<f64>> {
        let outer = x * 2.0;
        let a = helper(x);
        let b = helper(x, n);
        let c = helper(outer, 1.0);
        Ok(a + b + c)
    }
}


scan! {
    pub fn steps(x: ArrayView1<f64>) -> Result<Array1<f64>> {
        let step = |x_t, acc| acc + x_t;
        let wrong = step * 2.0;
        let a = scan(stpe, sequences = x, outputs_info = 0.0);
        let b = scan(step, sequences = x, outputs_info = 0.0);
        Ok(b + (|v| v))
    }
}

fn main() {}
