use scan_runtime::prelude::*;

scan! {
    pub fn f(a: ArrayView1<i64>, b: ArrayView1<i64>, x: ArrayView1<f64>) -> Result<(Array1<bool>, Array1<i64>)> {
        // `&` is numpy's logical and of bool arrays; integers have no bitwise operations.
        let m = a & b;
        // Shifts are not part of the step language.
        let s = a << 2;
        Ok((m | x, s))
    }
}

fn main() {}
