//! The benchmark suite of shared/bench/SPEC.md for this project: each case's `scan!`
//! program (impl=scan; with `--rewrites-off` also impl=scan_norewrite, the same program with
//! `#![rewrites(none)]`) against the best hand-written Rust loop (impl=handwritten), timed
//! in the same process, alternating calls.
//!
//!     cargo run --release -p scan-bench -- [CASE ...] [--threads N] [--quick] [--rewrites-off] [--peak] [--only IMPL]
//!
//! Prints SPEC's line per implementation, `CASE impl=NAME threads=N median_ms=X min_ms=Y
//! checksum=Z peak_mb=P` (and, but for the hand-written loop's, `vs_hand=R`: the median
//! over rounds of its call / the hand-written loop's call of the same round), then a
//! summary of the ratios of medians and the paired ratios to the hand-written loop. Exits
//! non-zero if a checksum disagrees with the hand-written one (a `MISMATCH` line) or a
//! program returned an `Err` (an `ERROR` line).
//!
//! Threads (`--threads N`, default 1) are set before anything runs: the runtime's setting
//! (`scan_runtime::set_num_threads(N)`, which the generated code's products follow), faer's
//! global parallelism for the hand-written loops (`Par::Seq` for 1, else `Par::rayon(N)`),
//! and the environment variables RAYON_NUM_THREADS (the rayon pool both use) and
//! MATMUL_NUM_THREADS (matrixmultiply, when scan-runtime is built with that backend) to N.
//! Pin 1-thread runs with `taskset -c 0` as SPEC says.

use std::process::ExitCode;

use clap::Parser;

mod alloc;
mod cases;
mod inputs;
mod kernels;
mod peak;
mod timing;

use timing::{measure, sci, Impl, Measurement};

#[derive(Parser)]
#[command(about = "SPEC cases: scan! programs against hand-written Rust loops")]
struct Cli {
    /// Cases to run (default: all, in SPEC's order)
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(cases::ALL.iter().map(|(n, _)| *n)))]
    cases: Vec<String>,
    /// Threads for the matrix products (scan-runtime, faer, rayon, matrixmultiply).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    threads: u16,
    /// Smoke test: every size shrunk (about 100x), one call per implementation.
    #[arg(long)]
    quick: bool,
    /// Also time impl=scan_norewrite: each program compiled with `#![rewrites(none)]`.
    #[arg(long)]
    rewrites_off: bool,
    /// First print the f32 multiply-add peak of --threads cores at once (GFLOP/s), the
    /// rate no matrix product can beat; with no CASE named, only that.
    #[arg(long)]
    peak: bool,
    /// Time only this implementation (for a profiler: nothing to compare, no summary).
    #[arg(long, value_parser = ["scan", "scan_norewrite", "handwritten"])]
    only: Option<String>,
}

/// The dtype of a case's outputs, which sets SPEC's agreement tolerance.
#[derive(Clone, Copy)]
pub enum DType {
    F32,
    F64,
    I64,
}

impl DType {
    /// SPEC: checksums agree to a relative 1e-4 for f32, 1e-9 for f64 (and integers).
    fn tolerance(self) -> f64 {
        match self {
            DType::F32 => 1e-4,
            DType::F64 | DType::I64 => 1e-9,
        }
    }
}

/// One case's medians, for the summary.
struct Summary {
    case: &'static str,
    scan_ms: f64,
    norewrite_ms: Option<f64>,
    hand_ms: f64,
    /// scan's `vs_hand` (its calls / the hand-written loop's, round by round).
    scan_paired: Option<f64>,
    status: &'static str,
}

/// The run's settings and what has been measured so far.
pub struct Bench {
    quick: bool,
    threads: usize,
    rewrites_off: bool,
    only: Option<String>,
    summaries: Vec<Summary>,
    failed: bool,
}

impl Bench {
    /// A size: `full` as SPEC says, or with `--quick` divided by `div` but at least `min`.
    pub fn size(&self, full: usize, div: usize, min: usize) -> usize {
        if self.quick {
            (full / div).max(min)
        } else {
            full
        }
    }

    /// Times a case's implementations, prints their lines, checks their checksums
    /// against the hand-written one.
    pub fn run(
        &mut self,
        case: &'static str,
        dtype: DType,
        scan: Impl<'_>,
        norewrite: Impl<'_>,
        hand: Impl<'_>,
    ) {
        let mut impls = vec![scan];
        if self.rewrites_off || self.only.as_deref() == Some("scan_norewrite") {
            impls.push(norewrite);
        }
        impls.push(hand);
        if let Some(only) = &self.only {
            let mut alone: Vec<Impl<'_>> = impls.into_iter().filter(|i| i.name == only).collect();
            for m in measure(&mut alone, self.quick) {
                self.print_line(case, &m, None);
            }
            return;
        }
        let results = measure(&mut impls, self.quick);
        let hand = results.last().expect("the hand-written loop is last");
        for m in &results {
            let paired = (m.name != hand.name)
                .then(|| m.paired_ratio(hand))
                .flatten();
            self.print_line(case, m, paired);
        }
        let mut status = "ok";
        for m in &results {
            if m.error.is_some() {
                status = "ERROR";
                continue;
            }
            let rel =
                (m.checksum - hand.checksum).abs() / hand.checksum.abs().max(f64::MIN_POSITIVE);
            if rel.is_nan() || rel > dtype.tolerance() {
                println!(
                    "MISMATCH {case} impl={} checksum={} handwritten={} relative_difference={rel:.3e} tolerance={:.0e}",
                    m.name,
                    sci(m.checksum),
                    sci(hand.checksum),
                    dtype.tolerance()
                );
                if status == "ok" {
                    status = "MISMATCH";
                }
            }
        }
        if status != "ok" {
            self.failed = true;
        }
        let median = |name: &str| {
            results
                .iter()
                .find(|m| m.name == name)
                .map(Measurement::median_ms)
        };
        self.summaries.push(Summary {
            case,
            scan_ms: median("scan").unwrap_or(f64::NAN),
            norewrite_ms: median("scan_norewrite"),
            hand_ms: hand.median_ms(),
            scan_paired: results
                .iter()
                .find(|m| m.name == "scan")
                .and_then(|m| m.paired_ratio(hand)),
            status,
        });
    }

    /// SPEC's line, then `vs_hand=R` when given: [`Measurement::paired_ratio`] to the
    /// hand-written loop.
    fn print_line(&self, case: &str, m: &Measurement, vs_hand: Option<f64>) {
        let threads = self.threads;
        match &m.error {
            Some(e) => println!("{case} impl={} threads={threads} ERROR: {e}", m.name),
            None => println!(
                "{case} impl={} threads={threads} median_ms={:.4} min_ms={:.4} checksum={} peak_mb={:.2}{}",
                m.name,
                m.median_ms(),
                m.min_ms(),
                sci(m.checksum),
                m.peak_bytes as f64 / (1024.0 * 1024.0),
                vs_hand.map_or(String::new(), |r| format!(" vs_hand={r:.4}")),
            ),
        }
    }

    fn print_summary(&self) {
        if self.only.is_some() {
            return;
        }
        println!();
        print!("{:<13} {:>12} ", "case", "scan_ms");
        if self.rewrites_off {
            print!("{:>14} ", "norewrite_ms");
        }
        print!(
            "{:>14} {:>10} {:>8} ",
            "handwritten_ms", "scan/hand", "paired"
        );
        if self.rewrites_off {
            print!("{:>15} ", "norewrite/hand");
        }
        println!("status");
        for s in &self.summaries {
            print!("{:<13} {:>12.3} ", s.case, s.scan_ms);
            if let Some(n) = s.norewrite_ms {
                print!("{n:>14.3} ");
            }
            let paired = s.scan_paired.unwrap_or(f64::NAN);
            print!(
                "{:>14.3} {:>10.2} {paired:>8.2} ",
                s.hand_ms,
                s.scan_ms / s.hand_ms
            );
            if let Some(n) = s.norewrite_ms {
                print!("{:>15.2} ", n / s.hand_ms);
            }
            println!("{}", s.status);
        }
    }
}

/// Thread counts for every library, before any of their pools exists.
fn set_threads(n: usize) {
    // Safe in edition 2021; nothing else runs yet, so no thread reads the environment.
    std::env::set_var("RAYON_NUM_THREADS", n.to_string());
    std::env::set_var("MATMUL_NUM_THREADS", n.to_string());
    scan_runtime::set_num_threads(n);
    faer::set_global_parallelism(if n == 1 {
        faer::Par::Seq
    } else {
        faer::Par::rayon(n)
    });
    // Start the pools now, so their start-up is not charged to the first case.
    let mut c = vec![0.0f64; 64 * 64];
    kernels::gemm(
        &mut c,
        &vec![1.0; 64 * 64],
        &vec![1.0; 64 * 64],
        64,
        64,
        64,
        false,
    );
    let a = scan_runtime::ndarray::Array2::<f64>::ones((64, 64));
    std::hint::black_box(a.dot(&a));
    // And a product the runtime splits over its threads: faer reserves its packing memory
    // once per thread that runs a product (twice the L3 size of address space, 64 MiB on
    // a 32 MiB L3, of which only the pages a product packs into are touched), lazily. The
    // hand-written loops' faer products reserve it on this thread, which the call above
    // has done; the runtime's split runs on rayon's workers. Reserved here, it is charged
    // to no implementation's first call (`peak_mb`), as it is to no call but the first of
    // a process.
    let a = scan_runtime::ndarray::Array2::<f32>::ones((256, 256));
    let mut c = scan_runtime::ndarray::Array2::<f32>::zeros((256, 256));
    scan_runtime::kernels::dot::dot_mm(&mut c, a.view(), a.view(), "warm-up")
        .expect("square operands of one size");
    std::hint::black_box(&c);
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let threads = usize::from(cli.threads);
    set_threads(threads);
    if cli.peak {
        println!(
            "peak impl=fma_f32 threads={threads} gflops={:.1} isa={}",
            peak::peak_gflops(threads),
            peak::isa()
        );
        if cli.cases.is_empty() {
            return ExitCode::SUCCESS;
        }
    }
    let mut bench = Bench {
        quick: cli.quick,
        threads,
        rewrites_off: cli.rewrites_off,
        only: cli.only,
        summaries: Vec::new(),
        failed: false,
    };
    for (name, run) in cases::ALL {
        if cli.cases.is_empty() || cli.cases.iter().any(|c| c == name) {
            run(&mut bench);
        }
    }
    bench.print_summary();
    if bench.failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
