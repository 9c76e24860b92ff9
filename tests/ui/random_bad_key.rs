use scan_runtime::prelude::*;

scan! {
    /// A key is an i64 scalar: not a float.
    pub fn float_key(x: f64) -> Result<Array1<f64>> {
        let (_, u) = uniform(x, 3);
        Ok(u)
    }

    /// Nor an array of keys.
    pub fn array_of_keys(keys: ArrayView1<i64>) -> Result<Array1<f64>> {
        let (_, z) = normal(keys, 3);
        Ok(z)
    }

    /// A draw returns the next key and the values.
    pub fn one_value(seed: i64) -> Result<Array1<f64>> {
        Ok(uniform(rng_key(seed), 3))
    }

    /// Draws are floats of f32 or f64.
    pub fn int_draws(seed: i64) -> Result<Array1<i32>> {
        let (_, u) = uniform(rng_key(seed), 3, dtype = i32);
        Ok(u)
    }

    /// Only the draws take keyword arguments.
    pub fn keyword_elsewhere(x: ArrayView1<f64>) -> Result<f64> {
        Ok(sum(x, axis = 0))
    }

    /// Categories lie along an axis.
    pub fn scalar_logits(seed: i64, l: f64) -> Result<i64> {
        let (_, c) = categorical(rng_key(seed), l);
        Ok(c)
    }
}

fn main() {}
