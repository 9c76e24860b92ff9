//! A second thread that keeps spinning between a loop's steps, for splitting a step's work
//! in two ([`join`]) or sharing its parts between two threads ([`share`]).
//!
//! rayon's workers fall asleep a few microseconds after their last job, and waking one
//! costs about as much as half of elman's step product (141 µs): split through
//! `rayon::join`, the product made its loop slower. The helper here, made on first use,
//! waits for work by spinning for [`SPIN`] after each job (then parks), so the next step's
//! half is picked up at once. It serves one caller at a time: a `join` that finds it busy
//! (another thread's, or a nested one) runs both halves itself. A job costs no allocation
//! (it lives on the caller's stack, which waits for it), so a loop that splits every step
//! still allocates nothing per step.

use std::cell::UnsafeCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long the helper spins for the next job before it parks.
pub const SPIN: Duration = Duration::from_micros(300);

const IDLE: u8 = 0;
const READY: u8 = 1;
const DONE: u8 = 2;

/// A job on the caller's stack: `call(data)` runs it.
#[derive(Clone, Copy)]
struct Job {
    data: *mut (),
    call: unsafe fn(*mut ()),
}

struct Helper {
    /// Claimed by the caller whose job the helper runs.
    busy: AtomicBool,
    /// IDLE, READY (a job in `job`), DONE (it ran; `panicked` says how).
    state: AtomicU8,
    job: UnsafeCell<Option<Job>>,
    panicked: AtomicBool,
    thread: Thread,
}

// SAFETY: `job` is written only by the caller holding `busy`, before it publishes READY
// (release), and read only by the helper after it sees READY (acquire); the caller does
// not touch it again until it sees DONE (acquire), which the helper publishes (release)
// after its last use. The raw pointer inside points to a `Send` closure (see `join`).
unsafe impl Sync for Helper {}
// SAFETY: as above; the helper is only ever reached through a `&'static`.
unsafe impl Send for Helper {}

static HELPER: OnceLock<Option<&'static Helper>> = OnceLock::new();

/// The helper, started on first use; `None` if no thread could be started.
fn helper() -> Option<&'static Helper> {
    *HELPER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<&'static Helper>();
        let spawned = std::thread::Builder::new()
            .name("scan-spin".to_string())
            .spawn(move || {
                let me: &'static Helper = Box::leak(Box::new(Helper {
                    busy: AtomicBool::new(false),
                    state: AtomicU8::new(IDLE),
                    job: UnsafeCell::new(None),
                    panicked: AtomicBool::new(false),
                    thread: std::thread::current(),
                }));
                if tx.send(me).is_err() {
                    return;
                }
                run(me)
            });
        spawned.ok().and_then(|_| rx.recv().ok())
    })
}

/// Spins between two readings of the clock while the helper waits: a reading costs more
/// than a spin (tens of nanoseconds through the vDSO, a system call where the clock source
/// has none), and [`SPIN`] need not be kept to the nanosecond.
const SPINS_PER_CLOCK: u32 = 64;

/// The helper's loop: spin for a job, park after [`SPIN`] without one, run it, say DONE.
fn run(me: &'static Helper) -> ! {
    loop {
        let mut since = Instant::now();
        let mut spins = 0u32;
        while me.state.load(Ordering::Acquire) != READY {
            spins = spins.wrapping_add(1);
            if !spins.is_multiple_of(SPINS_PER_CLOCK) || since.elapsed() < SPIN {
                std::hint::spin_loop();
            } else {
                std::thread::park();
                since = Instant::now();
            }
        }
        // SAFETY: READY was published (release) after the caller wrote `job`, and the
        // caller leaves it alone until DONE (see the `Sync` impl).
        let job = unsafe { *me.job.get() };
        let ok = match job {
            // SAFETY: `call` is `call_once::<B>` for the `Option<B>` at `data`, which the
            // caller keeps alive until it sees DONE (its frame waits, see `join`).
            Some(job) => catch_unwind(AssertUnwindSafe(|| unsafe { (job.call)(job.data) })).is_ok(),
            None => true,
        };
        me.panicked.store(!ok, Ordering::Relaxed);
        me.state.store(DONE, Ordering::Release);
    }
}

/// Runs the closure in the `Option<B>` at `data` (once).
///
/// # Safety
/// `data` must point to a live `Option<B>` that nothing else accesses during the call.
unsafe fn call_once<B: FnOnce()>(data: *mut ()) {
    // SAFETY: the caller's contract.
    let slot = unsafe { &mut *data.cast::<Option<B>>() };
    if let Some(f) = slot.take() {
        f();
    }
}

/// Waits, on the caller's side, for the helper to finish the job it was given; on drop,
/// so that a panic in the caller's own half still waits before its frame (which holds the
/// job) unwinds.
struct Wait<'a> {
    helper: &'a Helper,
}

impl Wait<'_> {
    /// Whether the job panicked.
    fn finish(self) -> bool {
        let panicked = self.wait();
        std::mem::forget(self);
        panicked
    }

    fn wait(&self) -> bool {
        let h = self.helper;
        let mut spins = 0u32;
        while h.state.load(Ordering::Acquire) != DONE {
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(1024) {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        let panicked = h.panicked.load(Ordering::Relaxed);
        h.state.store(IDLE, Ordering::Relaxed);
        h.busy.store(false, Ordering::Release);
        panicked
    }
}

impl Drop for Wait<'_> {
    fn drop(&mut self) {
        self.wait();
    }
}

/// Runs `a` on this thread and `b` on the helper, and returns when both are done; both here,
/// one after the other, when the helper is busy or could not be started. A panic in `b`
/// becomes a panic here (after both finished).
pub fn join<A: FnOnce(), B: FnOnce() + Send>(a: A, b: B) {
    let Some(h) = helper() else {
        return both_here(a, b);
    };
    if h.busy
        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        return both_here(a, b);
    }
    let mut slot: Option<B> = Some(b);
    // SAFETY: `busy` is ours, so the helper is IDLE and reads `job` only after READY.
    unsafe {
        *h.job.get() = Some(Job {
            data: (&mut slot as *mut Option<B>).cast(),
            call: call_once::<B>,
        });
    }
    h.state.store(READY, Ordering::Release);
    h.thread.unpark();
    let wait = Wait { helper: h };
    a();
    if wait.finish() {
        panic!("the second half of a split step panicked on the scan-spin thread");
    }
    // `slot` (the job) outlived the helper's use of it: `finish` saw DONE.
    drop(slot);
}

/// Runs `work` on every part given (`Some`), on this thread and the helper: each takes the
/// next part not yet taken, in the array's order, until none is left. Where one core runs
/// slower than the other (another process on it, or the host's), it does fewer parts
/// instead of keeping the other waiting at the end, as a split in two halves would.
pub fn share<T: Send, const N: usize>(parts: [Option<T>; N], work: impl Fn(T) + Sync) {
    let slots = parts.map(Mutex::new);
    let next = AtomicUsize::new(0);
    let drain = || {
        while let Some(slot) = slots.get(next.fetch_add(1, Ordering::Relaxed)) {
            // Each index is taken once, so the lock is never contended; a panic in `work`
            // cannot happen while it is held, so it is never poisoned either.
            let part = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
            if let Some(part) = part {
                work(part);
            }
        }
    };
    join(drain, drain);
}

/// Both halves on this thread, `b` also when `a` panics (the panic then continues after
/// it), as when the helper runs `b`: a join's halves both run whoever runs them.
fn both_here<A: FnOnce(), B: FnOnce()>(a: A, b: B) {
    let first = catch_unwind(AssertUnwindSafe(a));
    b();
    if let Err(panic) = first {
        std::panic::resume_unwind(panic);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_halves_run_and_their_writes_are_seen() {
        for n in 0..2000usize {
            let (mut x, mut y) = (0usize, 0usize);
            join(|| x = n * 2, || y = n * 3);
            assert_eq!((x, y), (n * 2, n * 3));
        }
    }

    #[test]
    fn joins_from_several_threads_and_nested_joins_all_complete() {
        let total = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..500 {
                        join(
                            || {
                                join(
                                    || {
                                        total.fetch_add(1, Ordering::Relaxed);
                                    },
                                    || {
                                        total.fetch_add(1, Ordering::Relaxed);
                                    },
                                )
                            },
                            || {
                                total.fetch_add(1, Ordering::Relaxed);
                            },
                        );
                    }
                });
            }
        });
        assert_eq!(total.load(Ordering::Relaxed), 4 * 500 * 3);
    }

    #[test]
    fn a_panic_in_either_half_is_a_panic_of_the_join_after_both_ran() {
        let ran = AtomicUsize::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            join(
                || {
                    ran.fetch_add(1, Ordering::Relaxed);
                },
                || panic!("helper half"),
            )
        }));
        assert!(r.is_err());
        assert_eq!(ran.load(Ordering::Relaxed), 1);
        let r = catch_unwind(AssertUnwindSafe(|| {
            join(
                || panic!("caller half"),
                || {
                    std::thread::sleep(Duration::from_millis(5));
                    ran.fetch_add(1, Ordering::Relaxed);
                },
            )
        }));
        assert!(r.is_err());
        assert_eq!(
            ran.load(Ordering::Relaxed),
            2,
            "the helper's half finished first"
        );
        // And the helper still works.
        let mut z = 0;
        join(|| {}, || z = 7);
        assert_eq!(z, 7);
    }

    /// Every part given runs once, none of the missing ones; both threads take parts (the
    /// helper, spinning, takes some while this thread runs a slow first one). Another
    /// test's join may hold the helper (then this thread runs every part): a few tries.
    #[test]
    fn shared_parts_all_run_once_on_both_threads() {
        let here = std::thread::current().id();
        let mut helped = false;
        for _ in 0..20 {
            let runs: [AtomicUsize; 8] = Default::default();
            let elsewhere = AtomicUsize::new(0);
            let mut parts: [Option<usize>; 8] = std::array::from_fn(Some);
            parts[5] = None;
            share(parts, |i| {
                if i == 0 {
                    std::thread::sleep(Duration::from_millis(5));
                }
                if std::thread::current().id() != here {
                    elsewhere.fetch_add(1, Ordering::Relaxed);
                }
                runs[i].fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(runs.map(|r| r.into_inner()), [1, 1, 1, 1, 1, 0, 1, 1]);
            helped |= elsewhere.into_inner() > 0;
        }
        assert!(helped, "the helper never took a part");
    }

    /// The fallback that runs both halves here (the helper busy with another caller's
    /// join, or no helper) runs the second half too when the first panics: the test
    /// above failed when another test's join held the helper.
    #[test]
    fn run_here_a_panic_in_the_first_half_still_runs_the_second() {
        let ran = AtomicUsize::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            both_here(
                || panic!("first half"),
                || {
                    ran.fetch_add(1, Ordering::Relaxed);
                },
            )
        }));
        assert!(r.is_err());
        assert_eq!(ran.load(Ordering::Relaxed), 1);
    }
}
