#!/usr/bin/env python3
"""SPEC's cases (shared/bench/SPEC.md) for one peer library, in one process:

    .venv/bin/python peers.py IMPL [CASE ...] [--threads N] [--quick]

IMPL is one of pytensor_c, pytensor_numba, jax, torch_loop, torch_nn (torch_nn has only
elman, lstm and their gradients, elman_grad and lstm_grad). Prints SPEC's line per case,
plus the peak memory of one call:

    CASE impl=NAME threads=N median_ms=X min_ms=Y checksum=Z peak_mb=P

or `CASE impl=NAME threads=N ERROR: reason` where the peer cannot run the case (never a
number for it). Lines starting with '#' are information (library versions).

Threads are set before any library is imported: OMP/MKL/OpenBLAS/numba variables, XLA's
flags (1 thread: no Eigen thread pool), torch.set_num_threads. Pin 1-thread runs with
`taskset -c 0`, as SPEC says (XLA sizes its pool from the affinity mask). run_all.py runs
one process per (impl, case, threads).

Timing (SPEC): the case's setup (inputs, graph building, PyTensor's compilation) is not
timed; one warm-up call (JAX compiles here) gives the checksum; then at least 5 timed
calls, and if the median of the first 5 is under 10 ms, more until they add up to 1 s;
median and min of one call. --quick: the sizes of scan-bench --quick, warm-up plus one
timed call.

peak_mb: how far the process's resident memory (VmHWM, reset through
/proc/self/clear_refs just before) rises above its resident memory before the call,
during the first timed call, with the heap trimmed (malloc_trim) after the warm-up.
"""

import argparse
import ctypes
import gc
import importlib
import os
import statistics
import sys
import time
import traceback

import spec

# impl -> (module, extra keyword arguments of its case functions)
IMPLS = {
    "pytensor_c": ("peer_pytensor", dict(mode="FAST_RUN")),
    "pytensor_numba": ("peer_pytensor", dict(mode="NUMBA")),
    "jax": ("peer_jax", {}),
    "torch_loop": ("peer_torch_loop", {}),
    "torch_nn": ("peer_torch_nn", {}),
}

MIN_CALLS = 5
FAST_MS = 10.0
BUDGET_MS = 1000.0


def set_thread_env(n):
    """Thread counts for every library, before any of them is imported."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                "NUMBA_NUM_THREADS"):
        os.environ[var] = str(n)
    if n == 1:
        flags = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flags).strip()
    # PyTensor's C backend links the system OpenBLAS (install.sh installs it).
    if "blas__ldflags" not in os.environ.get("PYTENSOR_FLAGS", ""):
        flags = os.environ.get("PYTENSOR_FLAGS", "")
        os.environ["PYTENSOR_FLAGS"] = ",".join(f for f in (flags, "blas__ldflags=-lopenblas") if f)


def memory_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_peak_rss():
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def measure(call, quick):
    """(checksum, times in ms, peak MB) of a case's call, by SPEC's rules."""
    out = call()  # warm-up (JAX compiles here)
    check = spec.checksum(out)
    del out
    reset_peak_rss()
    before_kb = memory_kb("VmRSS")
    times = []
    while True:
        start = time.perf_counter()
        out = call()
        times.append((time.perf_counter() - start) * 1e3)
        del out  # dropped after the clock stops, as scan-bench does
        if len(times) == 1:
            peak_mb = max(memory_kb("VmHWM") - before_kb, 0) / 1024
        if quick:
            break
        if len(times) >= MIN_CALLS:
            if statistics.median(times[:MIN_CALLS]) >= FAST_MS or sum(times) >= BUDGET_MS:
                break
    return check, times, peak_mb


def reason(e):
    """An exception as one line: its type and the first line of its message."""
    first = (str(e).strip().splitlines() or [""])[0]
    return f"{type(e).__name__}: {first}"[:300]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("impl", choices=list(IMPLS))
    parser.add_argument("cases", nargs="*", metavar="CASE",
                        help="cases (default: all the impl has): " + ", ".join(spec.CASES))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true",
                        help="scan-bench --quick's sizes, one timed call (smoke test)")
    parser.add_argument("--traceback", action="store_true", help="print errors in full")
    args = parser.parse_args()
    for case in args.cases:
        if case not in spec.CASES:
            parser.error(f"unknown case {case!r} (one of {', '.join(spec.CASES)})")

    set_thread_env(args.threads)
    module_name, extra = IMPLS[args.impl]
    mod = importlib.import_module(module_name)
    if hasattr(mod, "set_threads"):
        mod.set_threads(args.threads)
    print(f"# impl={args.impl} versions: "
          + " ".join(f"{k}={v}" for k, v in mod.versions().items()), flush=True)

    cases = args.cases or [c for c in spec.CASES if hasattr(mod, c)]
    prefix = lambda case: f"{case} impl={args.impl} threads={args.threads}"  # noqa: E731
    for case in cases:
        if not hasattr(mod, case):
            print(f"{prefix(case)} ERROR: {args.impl} has no implementation of {case}",
                  flush=True)
            continue
        try:
            call = getattr(mod, case)(**extra, **spec.inputs(case, args.quick))
            check, times, peak_mb = measure(call, args.quick)
        except Exception as e:  # a peer that cannot run a case says so, with the reason
            if args.traceback:
                traceback.print_exc()
            print(f"{prefix(case)} ERROR: {reason(e)}", flush=True)
            continue
        print(f"{prefix(case)} median_ms={statistics.median(times):.4f} "
              f"min_ms={min(times):.4f} checksum={check:.10e} peak_mb={peak_mb:.2f}",
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
