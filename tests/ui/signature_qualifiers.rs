use scan_runtime::prelude::*;

scan! {
    pub async fn f(x: f64) -> Result<f64> {
        Ok(x)
    }

    pub fn g<T>(x: f64) -> Result<f64> {
        Ok(x)
    }

    pub fn h((a, b): (f64, f64)) -> Result<f64> {
        Ok(a)
    }

    pub fn k(x: f64) {
        Ok(x)
    }
}

fn main() {}
