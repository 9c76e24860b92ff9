use scan_runtime::prelude::*;

scan! {
    pub fn f(a: ArrayView2<f64>) -> Result<(Array1<f64>, Array1<f64>, Array2<f64>, Array1<f64>)> {
        let (w, _) = eigh(a, UPLO = "X");
        let (q, _) = qr(a, mode = "raw");
        let (_, s) = svd(a);
        Ok((w, s, q, svd(a, compute_uv = 0)))
    }
}

fn main() {}
