use scan_runtime::prelude::*;

scan! {
    // PyTensor's `dict(initial=None, taps=[-1])`: a fed-back output needs an initial state.
    pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
        let out = scan(|u_t, x_tm1| x_tm1 + u_t, sequences = u, outputs_info = [taps(None, [-1])]);
        Ok(out)
    }
}

fn main() {}
