use scan_runtime::prelude::*;

scan! {
    pub fn no_derivative(x: ArrayView1<f64>) -> Result<Array1<f64>> {
        Ok(grad(sum(digamma(x)), x))
    }

    pub fn no_rule(key: i64, a: ArrayView1<f64>) -> Result<Array1<f64>> {
        let (k, g) = gamma(key, a);
        Ok(grad(sum(g), a))
    }

    // The vectors past min(m, n) of a full svd and a complete qr are an arbitrary basis.
    pub fn full_svd_vectors(a: ArrayView2<f64>) -> Result<Array2<f64>> {
        let (u, s, vh) = svd(a);
        Ok(grad(sum(u) + sum(s), a))
    }

    pub fn complete_qr(a: ArrayView2<f64>) -> Result<Array2<f64>> {
        let (q, r) = qr(a, mode = "complete");
        Ok(grad(sum(q * q) + sum(r), a))
    }
}

fn main() {}
