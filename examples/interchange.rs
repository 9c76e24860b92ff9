//! What loop interchange buys on power_large (result_t = result_{t-1} * A over 1,000,000
//! f64 elements, 64 steps, only result[-1] read): the generated code with the rewrite (the
//! default), without it (`all_except(loop_interchange)`: 64 sweeps through memory), and a
//! hand-written interchanged loop, in one process. Prints the median of 11 timed calls
//! after one warm-up, and the ratios. `cargo run --release --example interchange`.
//!
//! The hand-written loop is also timed at several chunk sizes, which is how
//! `scan_runtime::kernels::interchange::CHUNK_BYTES` was chosen (16 f64: the chunk's
//! state and its slice of A fill the 16 SSE registers). `interchanged, k = 1` shows what a
//! call costs besides the steps (the ones_like buffer, the copy of result[-1], fresh pages).

use std::time::Instant;

use scan_runtime::prelude::*;

mod on {
    scan_runtime::scan! {
        pub fn power_large(a: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
            let result = scan(|prior_result, a| prior_result * a, outputs_info = ones_like(a), non_sequences = a, n_steps = k);
            Ok(result[-1])
        }
    }
}

mod off {
    scan_runtime::scan! {
        #![rewrites(all_except(loop_interchange))]

        pub fn power_large(a: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
            let result = scan(|prior_result, a| prior_result * a, outputs_info = ones_like(a), non_sequences = a, n_steps = k);
            Ok(result[-1])
        }
    }
}

/// The interchanged loop by hand: chunks of `C` elements, all steps on a chunk held in a
/// local array (registers, for a small `C`: full chunks have a constant trip count), then
/// the chunk's final values out.
fn hand<const C: usize>(a: &[f64], k: usize) -> Vec<f64> {
    let mut out = vec![0.0; a.len()];
    let mut chunks = out.chunks_exact_mut(C).zip(a.chunks_exact(C));
    for (o, a) in &mut chunks {
        let a: &[f64; C] = a.try_into().expect("chunks_exact");
        let mut s = [1.0f64; C];
        for _ in 0..k {
            for e in 0..C {
                s[e] *= a[e];
            }
        }
        o.copy_from_slice(&s);
    }
    let rest = a.len() / C * C;
    for (o, &a) in out[rest..].iter_mut().zip(&a[rest..]) {
        let mut s = 1.0;
        for _ in 0..k {
            s *= a;
        }
        *o = s;
    }
    out
}

/// A hand-written power loop.
type Hand = fn(&[f64], usize) -> Vec<f64>;

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

fn main() -> Result<()> {
    let n = 1_000_000;
    let k = 64;
    let a = Array1::from_shape_fn(n, |i| 1.0 + ((i * 7919) % 1000) as f64 * 1e-6);
    let slice = a.as_slice().expect("contiguous");

    let with = on::power_large(a.view(), k)?;
    let without = off::power_large(a.view(), k)?;
    let by_hand = hand::<16>(slice, k);
    assert_eq!(with, without, "the rewrite changed the numbers");
    assert_eq!(with.to_vec(), by_hand, "generated and hand-written differ");

    let (t_on, c_on) = median_ms(|| on::power_large(a.view(), k).unwrap().sum());
    let (t_off, c_off) = median_ms(|| off::power_large(a.view(), k).unwrap().sum());
    let (t_hand, c_hand) = median_ms(|| hand::<16>(slice, k).iter().sum());
    println!(
        "power_large n = {n}, k = {k}, chunk = {} f64",
        scan_runtime::__private::kernels::interchange::chunk(&[std::mem::size_of::<f64>()])
    );
    println!("  interchanged (default)      {t_on:9.3} ms  checksum {c_on:.12e}");
    println!("  steps outer (without)       {t_off:9.3} ms  checksum {c_off:.12e}");
    println!("  hand-written, chunk 16      {t_hand:9.3} ms  checksum {c_hand:.12e}");
    // What a call costs besides the steps: ones_like, the copy of result[-1], allocations.
    let (t_one, _) = median_ms(|| on::power_large(a.view(), 1).unwrap().sum());
    println!("  interchanged, k = 1         {t_one:9.3} ms  (per-call work outside the steps)");
    println!("  without / with   {:6.2}x", t_off / t_on);
    println!("  with / hand      {:6.2}x", t_on / t_hand);

    println!("hand-written by chunk size:");
    let sizes: [(usize, Hand); 7] = [
        (4, hand::<4>),
        (8, hand::<8>),
        (16, hand::<16>),
        (32, hand::<32>),
        (64, hand::<64>),
        (256, hand::<256>),
        (1024, hand::<1024>),
    ];
    for (c, f) in sizes {
        let (t, _) = median_ms(|| f(slice, k).iter().sum());
        println!("  chunk {c:5}  {t:9.3} ms");
    }
    Ok(())
}
