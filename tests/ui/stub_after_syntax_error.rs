// A syntax error inside a body: the block does not parse, yet every function whose
// signature parses is still declared, so the calls below type-check and the only error is
// the syntax error.
use scan_runtime::prelude::*;

scan! {
    pub fn broken(v: ArrayView1<f64>) -> Result<f64> {
        let total = reduce(|x, acc| acc + x *, sequences = v, outputs_info = 0.0);
        Ok(total)
    }

    pub fn fine(v: ArrayView1<f64>) -> Result<Array1<f64>> {
        Ok(map(|x| x * 2.0, sequences = v))
    }
}

fn main() -> Result<()> {
    let v = array![1.0, 2.0];
    let total: f64 = broken(v.view())?;
    let doubled: Array1<f64> = fine(v.view())?;
    println!("{total} {doubled}");
    Ok(())
}
