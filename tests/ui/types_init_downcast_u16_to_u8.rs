// A u8 initial state while the step computes in u16: no implicit downcast (u8 -> u16 is
// an upcast; the other way loses values).
use scan_runtime::prelude::*;

scan! {
    pub fn f(xs: ArrayView1<u16>) -> Result<Array1<u8>> {
        let r = scan(|x_t, acc| acc + x_t, sequences = xs, outputs_info = 0u8);
        Ok(r)
    }
}

fn main() {}
