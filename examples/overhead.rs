//! Per-step overhead of generated loops against hand-written Rust, in one process.
//! `cargo run --release --example overhead`. Prints, for each case, the median of 11 timed
//! calls (after one warm-up) of the generated function and of a plain Rust loop computing
//! the same thing, and their ratio. Cases follow shared/bench/SPEC.md (cumsum_all, linrec2,
//! power_small) at the spec's sizes.

use std::time::Instant;

use scan_runtime::prelude::*;

mod programs {
    scan_runtime::scan! {
        pub fn cumsum_all(up_to: i64) -> Result<Array1<i64>> {
            let s = scan(|x, acc| acc + x, sequences = arange(up_to), outputs_info = 0i64);
            Ok(s)
        }

        pub fn linrec2(u: ArrayView1<f64>, x0: ArrayView1<f64>) -> Result<Array1<f64>> {
            let x = scan(
                |u_t, x_tm2, x_tm1| x_tm1 * 0.6 + x_tm2 * 0.4 + u_t,
                sequences = u,
                outputs_info = taps(x0, [-2, -1]),
            );
            Ok(x)
        }

        pub fn power_small(a: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
            let r = scan(|p, a| p * a, outputs_info = ones_like(a), non_sequences = a, n_steps = k);
            Ok(r[-1])
        }
    }
}

/// SPEC.md's deterministic inputs.
fn gen(n: usize, seed: u64, scale: f64) -> Array1<f64> {
    Array1::from_iter((0..n as u64).map(|i| {
        let v = ((i + seed * 1000003).wrapping_mul(2654435761) % (1 << 32)) as f64 / 4294967296.0;
        (v - 0.5) * scale
    }))
}

fn median_ms(mut f: impl FnMut() -> f64) -> (f64, f64) {
    let checksum = f();
    let mut times: Vec<f64> = (0..11)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], checksum)
}

fn report(case: &str, generated: (f64, f64), hand: (f64, f64)) {
    println!(
        "{case:12} generated {:9.3} ms  hand-written {:9.3} ms  ratio {:5.2}  checksums {:.10e} / {:.10e}",
        generated.0,
        hand.0,
        generated.0 / hand.0,
        generated.1,
        hand.1
    );
}

fn main() -> Result<()> {
    let up_to = 2_000_000i64;
    let g = median_ms(|| {
        programs::cumsum_all(up_to)
            .unwrap()
            .iter()
            .map(|&v| v as f64)
            .sum()
    });
    let h = median_ms(|| {
        let mut out = Vec::with_capacity(up_to as usize);
        let mut acc = 0i64;
        for x in 0..up_to {
            acc = acc.wrapping_add(x);
            out.push(acc);
        }
        out.iter().map(|&v| v as f64).sum()
    });
    report("cumsum_all", g, h);

    let u = gen(1_000_000, 2, 1.0);
    let x0 = array![0.0, 1.0];
    let g = median_ms(|| programs::linrec2(u.view(), x0.view()).unwrap().sum());
    let h = median_ms(|| {
        let mut out = Vec::with_capacity(u.len());
        let (mut a, mut b) = (0.0, 1.0);
        for &u_t in u.iter() {
            let x = b * 0.6 + a * 0.4 + u_t;
            out.push(x);
            (a, b) = (b, x);
        }
        out.iter().sum()
    });
    report("linrec2", g, h);

    let a = gen(16, 1, 1e-4).mapv(|v| v + 1.0);
    let k = 200_000;
    let g = median_ms(|| programs::power_small(a.view(), k).unwrap().sum());
    let h = median_ms(|| {
        let mut p = vec![1.0f64; a.len()];
        for _ in 0..k {
            for (p, a) in p.iter_mut().zip(a.iter()) {
                *p *= a;
            }
        }
        p.iter().sum()
    });
    report("power_small", g, h);
    Ok(())
}
