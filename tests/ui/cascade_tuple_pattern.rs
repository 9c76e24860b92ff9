use scan_runtime::prelude::*;

scan! {
    // One output bound to a tuple: reported once, not again at each use of `a` and `b`.
    pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
        let (a, b) = scan(|u_t, acc| acc + u_t, sequences = u, outputs_info = 0.0);
        let (c, d, e) = scan(|u_t, acc, n| (acc + u_t, n + 1.0), sequences = u, outputs_info = [0.0, 0.0]);
        Ok(a + b + c + d + e)
    }
}

fn main() {}
