// The tutorial's pitfall: an i32 initial state while the step computes in i64.
use scan_runtime::prelude::*;

scan! {
    pub fn triangular_sequence(up_to: i64) -> Result<Array1<i64>> {
        let seq = arange(up_to);
        let result = scan(
            |arange_val, sum_to_date| sum_to_date + arange_val,
            outputs_info = 0i32,
            sequences = seq,
        );
        Ok(result)
    }
}

fn main() {}
