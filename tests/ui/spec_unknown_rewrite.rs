use scan_runtime::prelude::*;

scan! {
    #![rewrites(save_mem, push_out_everything)]
    pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
        let out = map(|u_t| u_t * 2.0, sequences = u);
        Ok(out)
    }
}

fn main() {}
