use scan_runtime::prelude::*;

scan! {
    pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
        // Typos: a keyword of scan and a function of the step language.
        let out = scan(|u_t, x_tm1| tnah(x_tm1 + u_t), sequence = u, outputs_info = 0.0);
        Ok(out)
    }
}

fn main() {}
