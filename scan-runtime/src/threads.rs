//! How many threads the runtime's matrix products may use: one setting for the process.
//!
//! - [`set_num_threads`]`(n)`, at any time, from any thread; `0` goes back to the default;
//! - otherwise the environment variable `SCAN_NUM_THREADS` ([`ENV_VAR`]), read once, by
//!   the first product that asks (a value that is not a positive integer is ignored);
//! - otherwise every core (`std::thread::available_parallelism`).
//!
//! With 1, every product runs on the calling thread. With `n > 1`, a float matrix product
//! (both operands matrices) of at least [`PAR_MIN_WORK`] multiply-adds is cut into `n`
//! parts (along the output's longer axis) computed by rayon's global pool through
//! `rayon::join`, each part one sequential faer product (so at most the pool's size of
//! threads work at once: `RAYON_NUM_THREADS` or every core). Smaller products, products with
//! a vector operand (memory bound) and integer products stay on the calling thread. The
//! split happens inside each call: a loop of steps drives the pool from the calling thread,
//! one product at a time.
//!
//! Allocation: a product allocates nothing after the first one on each thread that runs it
//! (faer's packing memory is a buffer per thread, reserved once: twice the L3 size of
//! address space, of which only the pages a product packs into are ever touched). A split
//! product's only allocation is rayon's: its queue of jobs injected from outside the pool
//! grows by blocks of 63 jobs, so a loop calling from outside the pool allocates once
//! every 63 split products, on the calling thread. `scan-runtime/tests/no_alloc.rs` (every
//! thread counted) and `tests/no_alloc.rs` (the calling thread, per step) pin this at 1
//! and 2 threads.
//!
//! Products by a packed matrix (`kernels::PackedMatrix`, a step's product by a loop's
//! fixed weights) are shared from `kernels::packed::SPLIT_MIN_WORK` multiply-adds on, by
//! ranges of columns each thread takes as it becomes free ([`spin::share`]), between the
//! calling thread and [`spin`]'s helper thread, which keeps spinning
//! between a loop's steps (rayon's workers sleep between them, and waking one cost more
//! than elman's step product saved); with more than two threads allowed, products from
//! [`PAR_MIN_WORK`] on go to rayon's pool in one part per thread as above.
//!
//! The `matrixmultiply` backend (a cargo feature) does not read this setting: it has its
//! own, the environment variable `MATMUL_NUM_THREADS`, read once by matrixmultiply.

use std::sync::atomic::{AtomicUsize, Ordering};

pub mod spin;

/// The environment variable giving the default number of threads.
pub const ENV_VAR: &str = "SCAN_NUM_THREADS";

/// A float matrix product is split over threads only from this many multiply-adds
/// (`m * k * n`, 16 M) on: below it, waking the pool's threads costs more than they save.
/// Measured on a 2-core AMD EPYC (Zen 4) VM, f32: called back to back, a `32 x 512 x 512`
/// product (elman's step, 8.4 M) takes 155 µs on one thread and 97-104 µs on two, and
/// `32 x 256 x 256` (2.1 M) is even; but in a loop whose steps also do elementwise work
/// (137 µs of tanh here), rayon's threads fall asleep between products and waking them
/// costs about 100 µs, so the same split step product takes 216-220 µs. lstm's step
/// (`32 x 512 x 2048`, 33.5 M) still gains in that loop: 750-810 µs on one thread, 490-500 µs
/// on two.
pub const PAR_MIN_WORK: usize = 16 << 20;

/// Unit tests that set or read the process-wide setting hold this.
#[cfg(test)]
pub(crate) static TEST_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The setting; 0 until [`set_num_threads`] or the first [`num_threads`] decides it.
static SETTING: AtomicUsize = AtomicUsize::new(0);

/// Sets the number of threads matrix products may use, for the whole process. `0`
/// restores the default: `SCAN_NUM_THREADS` when it is set to a positive integer, else
/// every core.
pub fn set_num_threads(n: usize) {
    SETTING.store(n, Ordering::Relaxed);
}

/// The number of threads matrix products may use (at least 1).
pub fn num_threads() -> usize {
    match SETTING.load(Ordering::Relaxed) {
        0 => {
            let n = default_threads();
            // A concurrent `set_num_threads` wins over the default computed here.
            match SETTING.compare_exchange(0, n, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => n,
                Err(set) if set > 0 => set,
                Err(_) => n,
            }
        }
        n => n,
    }
}

/// How many threads a product of `work` multiply-adds with two matrix operands should use.
#[cfg_attr(
    not(all(feature = "faer", not(feature = "matrixmultiply"))),
    allow(dead_code)
)]
pub(crate) fn threads_for(work: usize) -> usize {
    if work < PAR_MIN_WORK {
        1
    } else {
        num_threads()
    }
}

fn default_threads() -> usize {
    parse(std::env::var(ENV_VAR).ok().as_deref()).unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    })
}

/// `SCAN_NUM_THREADS`'s value as a thread count: a positive integer, spaces allowed.
fn parse(value: Option<&str>) -> Option<usize> {
    value?.trim().parse::<usize>().ok().filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_is_a_positive_integer() {
        assert_eq!(parse(Some("3")), Some(3));
        assert_eq!(parse(Some(" 2\n")), Some(2));
        assert_eq!(parse(Some("0")), None);
        assert_eq!(parse(Some("-1")), None);
        assert_eq!(parse(Some("all")), None);
        assert_eq!(parse(Some("")), None);
        assert_eq!(parse(None), None);
    }

    #[test]
    fn default_is_at_least_one_thread() {
        assert!(default_threads() >= 1);
    }

    #[test]
    fn set_get_reset_and_the_split_rule() {
        let _guard = TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        set_num_threads(3);
        assert_eq!(num_threads(), 3);
        assert_eq!(threads_for(PAR_MIN_WORK), 3);
        assert_eq!(threads_for(PAR_MIN_WORK - 1), 1);
        set_num_threads(1);
        assert_eq!(threads_for(usize::MAX), 1);
        set_num_threads(0);
        assert_eq!(num_threads(), default_threads());
        assert_eq!(threads_for(0), 1);
    }
}
