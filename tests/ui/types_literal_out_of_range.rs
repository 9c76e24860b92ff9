// Integer literals out of range: for the dtype an untyped literal takes from the other
// operand (numpy 2 raises OverflowError for `np.uint8(x) + 300`), for its suffix, and an
// unsigned suffix under a minus. `300 as u8` is an explicit cast and wraps: no error.
use scan_runtime::prelude::*;

scan! {
    pub fn f(x: ArrayView1<u8>, y: i8) -> Result<(Array1<u8>, i8, u8, u32, u8)> {
        Ok((x + 300, y * 128, 256u8, -1u32, 300 as u8))
    }
}

fn main() {}
