// Every mistake is reported, not only the first.
use scan_runtime::prelude::*;

scan! {
    pub fn f(u: ArrayView1<f64>, m: ArrayView2<f64>) -> Result<Array1<f64>> {
        let a = map(|u_t| u_t.dot(u_t) + unknown_name, sequences = u);
        let b = scan(|x| (x, until(x)), outputs_info = 1.0, n_steps = 3);
        let c = m.dot(m).dot(u).dot(u).dot(m);
        Ok(a)
    }
}

fn main() {}
