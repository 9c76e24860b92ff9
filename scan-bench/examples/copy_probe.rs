//! The runtime's copy (`scan_runtime::kernels::copy::copy_elems`) against
//! `copy_from_slice`, with the destination a given number of bytes past the source in the
//! 4 KB page (4K aliasing stalls a forward copy at 1 to 256 bytes).
//!
//!     cargo run --release -p scan-bench --example copy_probe -- [ELEMENTS] [ROUNDS]
//!
//! Prints, for each distance, the median time of one copy of ELEMENTS f64 (default 4096)
//! by each, timed in alternation.

use std::hint::black_box;
use std::time::Instant;

use scan_runtime::kernels::copy::copy_elems;

const PAGE: usize = 4096;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(4096);
    let rounds: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let src_buf: Vec<f64> = (0..n + PAGE).map(|i| i as f64).collect();
    let mut dst_buf = vec![0.0f64; n + PAGE];
    println!("copy of {n} f64, median of {rounds} calls each, in alternation");
    println!(
        "{:>6} {:>14} {:>12} {:>7}",
        "gap", "copy_from_slice", "copy_elems", "ratio"
    );
    for gap in [
        0usize, 8, 16, 24, 32, 40, 48, 56, 64, 96, 128, 192, 256, 512, 2048, 4088,
    ] {
        // The source `gap` bytes before the destination in the page.
        let at = dst_buf.as_ptr() as usize;
        let k = (at.wrapping_sub(gap).wrapping_sub(src_buf.as_ptr() as usize) % PAGE) / 8;
        let src = &src_buf[k..k + n];
        let mut times = [Vec::new(), Vec::new()];
        for _ in 0..rounds {
            for (which, t) in times.iter_mut().enumerate() {
                let dst = &mut dst_buf[..n];
                let start = Instant::now();
                if which == 0 {
                    dst.copy_from_slice(black_box(src));
                } else {
                    copy_elems(dst, black_box(src));
                }
                black_box(&dst_buf);
                t.push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
        let [plain, ours] = times.map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        });
        println!(
            "{gap:>6} {plain:>12.3}µs {ours:>10.3}µs {:>7.2}",
            ours / plain
        );
    }
}
