//! Run-time choice of the instruction set for element loops.
//!
//! The runtime, like its users' crates, is built for the default target (x86-64: SSE2).
//! [`with_best_isa`] runs a closure inside a function compiled for AVX-512 (F, DQ, VL, BW),
//! or else for AVX2 and FMA, when the CPU has them (`is_x86_feature_detected!`, which
//! caches its answer), so that the closure, inlined into it, is vectorized with 512-bit or
//! 256-bit registers: the map kernels' loops over contiguous data (`kernels::elementwise`)
//! and the interchanged scan loop (`emit/interchange.rs`) run through it. Measured on a
//! 2-core Intel Xeon (AVX-512), an LSTM's gate map (two sigmoids, a tanh, two products and
//! a sum per element, f32, 32 x 512): 70 µs with AVX2, 47 µs with AVX-512.
//!
//! Results are the same bits either way: Rust never contracts `a * b + c` into an FMA (LLVM
//! fuses only an explicit `mul_add`, which the element formulas do not use), and the
//! transcendental functions are plain arithmetic (`crate::approx`), not libm calls.

/// Whether [`with_best_isa`] takes the AVX2 + FMA path on this CPU.
#[inline]
pub fn has_avx2_fma() -> bool {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        false
    }
}

/// Runs `f`, compiled for AVX-512 or else AVX2 and FMA when the CPU has them (the closure
/// is inlined into a `#[target_feature(enable = ...)]` function), else as built.
///
/// Pass the closure as `with_best_isa(#[inline(always)] || { ... })` (an attribute Rust
/// accepts on a closure in argument position): `f` is called from three places, the AVX-512
/// and AVX2 functions and the fallback, and without the attribute LLVM inlines a large closure into
/// none, so the AVX-512 and AVX2 functions would only call the default code. Whatever `f` calls must
/// be inlined into it as well (`#[inline]` functions usually are; the element formulas of
/// `crate::math` and `crate::approx` are `#[inline(always)]`).
#[inline(always)]
pub fn with_best_isa<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        if has_avx512() {
            // SAFETY: checked just above.
            return unsafe { avx512(f) };
        }
        if has_avx2_fma() {
            // SAFETY: `avx2_fma` only requires the CPU to support AVX2 and FMA, checked
            // just above; it has no other precondition.
            return unsafe { avx2_fma(f) };
        }
    }
    f()
}

/// Whether the CPU has AVX-512 F, DQ, VL and BW (with AVX2 and FMA).
#[inline]
pub fn has_avx512() -> bool {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        has_avx2_fma()
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512bw")
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        false
    }
}

/// `f()`, with AVX-512 enabled for the code inlined into it.
///
/// # Safety
/// The CPU must support AVX-512 F, DQ, VL, BW, AVX2 and FMA.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")]
#[inline]
unsafe fn avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// `f()`, with AVX2 and FMA enabled for the code inlined into it.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn avx2_fma<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math;

    /// Inputs over the interesting range of every function, including special values.
    fn inputs() -> Vec<f64> {
        let mut xs: Vec<f64> = (0..4000).map(|i| (i as f64 - 2000.0) * 0.0137).collect();
        xs.extend([
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e-310,
            -1e-310,
            709.9,
            -745.0,
            -800.0,
            1e300,
        ]);
        xs
    }

    /// `out[i] = f(xs[i])`.
    #[inline(always)]
    fn apply<T: Copy>(out: &mut [T], xs: &[T], f: impl Fn(T) -> T) {
        for (o, &x) in out.iter_mut().zip(xs) {
            *o = f(x);
        }
    }

    /// Every function over `xs`, as plain slice loops (inlined into the AVX2 function, so
    /// that they are compiled for it).
    #[inline(always)]
    fn all_functions<T: crate::element::Float>(xs: &[T]) -> Vec<T> {
        let n = xs.len();
        let mut out = vec![T::ZERO; 5 * n];
        let (e, rest) = out.split_at_mut(n);
        let (l, rest) = rest.split_at_mut(n);
        let (t, rest) = rest.split_at_mut(n);
        let (s, m) = rest.split_at_mut(n);
        apply(e, xs, math::exp);
        apply(l, xs, math::log);
        apply(t, xs, math::tanh);
        apply(s, xs, math::sigmoid);
        apply(m, xs, |x| math::mul(math::add(x, x), x));
        out
    }

    #[test]
    fn the_best_path_computes_the_same_bits_as_the_default_one() {
        let xs = inputs();
        let plain = all_functions(&xs);
        let best = with_best_isa(
            #[inline(always)]
            || all_functions(&xs),
        );
        assert_eq!(plain.len(), best.len());
        for (i, (p, b)) in plain.iter().zip(&best).enumerate() {
            assert_eq!(p.to_bits(), b.to_bits(), "f64 #{i}: {p} vs {b}");
        }
        let xs: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
        let plain = all_functions(&xs);
        let best = with_best_isa(
            #[inline(always)]
            || all_functions(&xs),
        );
        for (i, (p, b)) in plain.iter().zip(&best).enumerate() {
            assert_eq!(p.to_bits(), b.to_bits(), "f32 #{i}: {p} vs {b}");
        }
        // The best path ran on a CPU with AVX-512 or AVX2 (this machine's); say so when it
        // had neither.
        if !has_avx2_fma() {
            eprintln!("no AVX2 + FMA on this CPU: only the default path was compared");
        }
    }

    #[test]
    fn with_best_isa_returns_the_closure_value_and_runs_it_once() {
        let mut calls = 0;
        let v = with_best_isa(
            #[inline(always)]
            || {
                calls += 1;
                41 + 1
            },
        );
        assert_eq!((v, calls), (42, 1));
    }

    #[test]
    fn the_avx2_function_runs_its_closure() {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if has_avx2_fma() {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            let v = unsafe { avx2_fma(|| math::tanh(0.5f64)) };
            assert_eq!(v.to_bits(), math::tanh(0.5f64).to_bits());
        }
    }

    /// The AVX2 path, taken explicitly on a CPU that also has AVX-512 (where
    /// `with_best_isa` takes the AVX-512 one), computes the same bits as the default code.
    #[test]
    fn the_avx2_path_computes_the_same_bits_on_an_avx512_cpu_too() {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if has_avx2_fma() {
            let xs = inputs();
            let plain = all_functions(&xs);
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            let avx2 = unsafe {
                avx2_fma(
                    #[inline(always)]
                    || all_functions(&xs),
                )
            };
            for (i, (p, b)) in plain.iter().zip(&avx2).enumerate() {
                assert_eq!(p.to_bits(), b.to_bits(), "f64 #{i}: {p} vs {b}");
            }
            let xs: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
            let plain = all_functions(&xs);
            // SAFETY: as above.
            let avx2 = unsafe {
                avx2_fma(
                    #[inline(always)]
                    || all_functions(&xs),
                )
            };
            for (i, (p, b)) in plain.iter().zip(&avx2).enumerate() {
                assert_eq!(p.to_bits(), b.to_bits(), "f32 #{i}: {p} vs {b}");
            }
        }
    }
}
