// After an error the function is still declared, with the signature the compiler would
// have given it (fully qualified types, so this file's own `Result` and its missing
// imports do not matter) and a body that never runs: the calls below type-check, and the
// only error is the scan! one.
use scan_runtime::ndarray::{array, Array1};
use scan_runtime::scan;

#[allow(dead_code)]
type Result<T> = std::result::Result<T, String>;

scan! {
    pub fn cumulative(v: ArrayView1<f64>, scale: f64, n: usize) -> Result<(Array1<f64>, f64)> {
        let sums = scan(|x, acc| acc + x * scale, sequences = v, outputs_info = 0);
        Ok((sums, sums[-1]))
    }
}

fn main() -> std::result::Result<(), scan_runtime::Error> {
    let v = array![1.0, 2.0];
    let (sums, last): (Array1<f64>, f64) = cumulative(v.view(), 2.0, 3)?;
    println!("{} {}", sums.sum(), last);
    Ok(())
}
