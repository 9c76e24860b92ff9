#!/usr/bin/env python3
"""One command for the whole comparison: builds scan-bench, then for each thread count
(default 1 and 2) and each case runs scan-bench (impl=scan, impl=handwritten) and every
peer (PyTensor C and numba, JAX, PyTorch loop and nn) in the same run, and writes a
markdown table to stdout and to a file (default bench/peers/results.md; with --quick,
bench/peers/results-quick.md).

    bench/peers/install.sh                    # once: the virtualenv with the peers
    bench/peers/run_all.py [CASE ...] [--quick] [--threads 1,2] [--impls jax,torch_nn]
                           [--rounds N]

With --rounds N, each case's runs (scan-bench, then each peer) are made N times in turn,
and the table gives each implementation's median over the rounds of its medians, plus the
ratio of every peer to scan within each round: on a host whose speed drifts between
processes (seen: 10-30% on an AMD Zen 3 VM, invisible to the idle check), the paired
ratios are what can be compared. The hand-written loop runs in scan's process, the two
called in turn: its ratio in a round is scan-bench's `vs_hand`, call by call, which a
slow spell of the host (2x for seconds at a time on that VM) moves least.

Every timing run is one subprocess, taken under an exclusive lock on
/tmp/scan-bench.lock (the lock that `flock /tmp/scan-bench.lock CMD` takes, so other
benchmarks on this machine wait for it and it waits for them); 1-thread runs are pinned
with `taskset -c 0` (SPEC). Before each timed run (not with --quick) the driver waits
until no compiler or other benchmark is running and the CPUs are idle (up to
--max-wait minutes, then it goes on and says so in the table).

Standard library only (the peers themselves run in the virtualenv's python).
"""

import argparse
import datetime
import fcntl
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import spec  # noqa: E402  (numpy-free parts only: CASES, TOLERANCE)

VENV_PYTHON = os.path.join(HERE, ".venv", "bin", "python")
SCAN_BENCH = os.path.join(ROOT, "target", "release", "scan-bench")
LOCK = "/tmp/scan-bench.lock"
PEERS = ["pytensor_c", "pytensor_numba", "jax", "torch_loop", "torch_nn"]
NN_CASES = {"elman", "lstm", "elman_grad", "lstm_grad"}  # torch_nn's cases
ALL_IMPLS = ["scan", "handwritten"] + PEERS
# Processes whose presence means the machine is not idle.
BUSY_NAMES = {"cargo", "rustc", "cc1", "cc1plus", "ld", "collect2", "scan-bench",
              "rust-analyzer"}

LINE = re.compile(r"^(\w+) impl=(\w+) threads=(\d+) (.*)$")


def parse_lines(text):
    """SPEC lines -> {(case, impl, threads): {median_ms, min_ms, checksum, peak_mb} or
    {error}}; '#' lines -> notes."""
    results, notes = {}, []
    for line in text.splitlines():
        if line.startswith("# "):
            notes.append(line[2:])
            continue
        m = LINE.match(line)
        if not m:
            continue
        case, impl, threads, rest = m.group(1), m.group(2), int(m.group(3)), m.group(4)
        if rest.startswith("ERROR"):
            results[(case, impl, threads)] = dict(error=rest.partition(":")[2].strip())
        else:
            fields = dict(kv.split("=", 1) for kv in rest.split())
            results[(case, impl, threads)] = {k: float(v) for k, v in fields.items()}
    return results, notes


def other_busy_processes():
    """Names of compilers/benchmarks running that are not this driver's children."""
    mine = {os.getpid()}
    busy = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(pid) in mine:
            continue
        if comm in BUSY_NAMES or ("peers.py" in cmd and "python" in comm):
            busy.append(f"{pid}:{comm}")
    return busy


def cpu_busy_fraction(seconds=1.0):
    """Share of all CPUs' time not idle over a short sample."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]  # total, idle + iowait
    t0, i0 = sample()
    time.sleep(seconds)
    t1, i1 = sample()
    return 1.0 - (i1 - i0) / max(t1 - t0, 1)


def wait_until_idle(max_wait_s, log):
    """Waits (under no lock) until nothing else runs; returns a note if it gave up."""
    deadline = time.time() + max_wait_s
    while True:
        busy = other_busy_processes()
        load = cpu_busy_fraction()
        if not busy and load < 0.15:
            return None
        what = f"busy: {', '.join(busy) or '-'}; CPU {load:.0%} in use"
        if time.time() > deadline:
            log(f"  not idle after waiting, going on ({what})")
            return what
        log(f"  machine not idle ({what}); waiting 30 s")
        time.sleep(30)


def run_locked(cmd, timeout, check_idle, max_wait_s, log):
    """Runs cmd under the benchmark lock; returns (stdout, stderr, returncode, note)."""
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        note = wait_until_idle(max_wait_s, log) if check_idle else None
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=HERE)
            out, err, code = p.stdout, p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err, code = f"timed out after {timeout} s", -1
        finally:
            # Something that started during the run disturbed it: say so in the table.
            if check_idle and note is None:
                busy, load = other_busy_processes(), cpu_busy_fraction(0.5)
                if busy or load >= 0.15:
                    note = (f"disturbed: found right after it: {', '.join(busy) or '-'}; "
                            f"CPU {load:.0%} in use")
                    log(f"  {note}")
            fcntl.flock(lock, fcntl.LOCK_UN)
        return out, err, code, note


def cpu_model():
    info = {}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            key, _, value = line.partition(":")
            info[key.strip()] = value.strip()
    except OSError:
        pass
    flags = info.get("Flags", "").split()
    isa = ", ".join(f for f in ("avx2", "fma", "avx512f") if f in flags)
    return (f"{info.get('Model name', platform.processor())} (family {info.get('CPU family', '?')} "
            f"model {info.get('Model', '?')}; {isa}), {os.cpu_count()} CPUs, "
            f"L3 {info.get('L3 cache', '?')}")


def fmt_ms(x):
    if x is None:
        return "-"
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def fmt_ratio(x):
    if x is None:
        return "-"
    return f"{x:.2f}" if x < 10 else f"{x:.3g}" if x < 1000 else f"{x:.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="*", metavar="CASE",
                    help="cases (default: all): " + ", ".join(spec.CASES))
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: scan-bench --quick's sizes, one call each, no idle checks")
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    ap.add_argument("--impls", default=",".join(PEERS),
                    help="peers to run, comma-separated (scan-bench always runs)")
    ap.add_argument("--out", help="markdown file (default results.md, results-quick.md)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per subprocess")
    ap.add_argument("--max-wait", type=float, default=30,
                    help="minutes to wait for an idle machine before each timed run")
    ap.add_argument("--no-build", action="store_true", help="skip cargo build")
    ap.add_argument("--rounds", type=int, default=1,
                    help="runs of each case's implementations in turn (paired ratios)")
    args = ap.parse_args()

    cases = args.cases or spec.CASES
    for c in cases:
        if c not in spec.CASES:
            ap.error(f"unknown case {c!r}")
    threads = [int(t) for t in args.threads.split(",")]
    peers = [p for p in args.impls.split(",") if p]
    for p in peers:
        if p not in PEERS:
            ap.error(f"unknown impl {p!r} (one of {', '.join(PEERS)})")
    out_path = args.out or os.path.join(HERE, "results-quick.md" if args.quick else "results.md")
    if not os.path.exists(VENV_PYTHON):
        sys.exit(f"no virtualenv at {VENV_PYTHON}: run bench/peers/install.sh first")

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    started = datetime.datetime.now(datetime.timezone.utc)
    if not args.no_build:
        log("building scan-bench")
        with open(LOCK, "a") as lock:  # a build would disturb someone else's timing
            fcntl.flock(lock, fcntl.LOCK_EX)
            subprocess.run(["cargo", "build", "--release", "-p", "scan-bench"], cwd=ROOT,
                           check=True)

    results, notes, failures, idle_notes = {}, {}, [], []
    # Each implementation's result in every round, for --rounds.
    by_round = {}
    disturbed = set()  # (case, who, threads) of runs that were not alone on the machine
    max_wait_s = args.max_wait * 60
    # The machine's f32 multiply-add peak at each thread count: the rate no matrix product
    # can beat, against which the GEMM-bound cases (lstm, lstm_grad) are read.
    peaks = {}
    if not args.quick:
        for n in threads:
            pin = ["taskset", "-c", "0"] if n == 1 else []
            out, _, _, _ = run_locked(pin + [SCAN_BENCH, "--peak", "--threads", str(n)],
                                      args.timeout, True, max_wait_s, log)
            m = re.search(r"gflops=([0-9.]+) isa=(\S+)", out)
            if m:
                peaks[n] = (float(m.group(1)), m.group(2))
                log(f"[threads={n}] peak: {m.group(1)} GFLOP/s ({m.group(2)})")

    for n in threads:
        pin = ["taskset", "-c", "0"] if n == 1 else []
        quick = ["--quick"] if args.quick else []
        for case in cases:
            runs = [("scan-bench", pin + [SCAN_BENCH, "--threads", str(n), case] + quick)]
            for p in peers:
                if p == "torch_nn" and case not in NN_CASES:
                    continue
                runs.append((p, pin + [VENV_PYTHON, os.path.join(HERE, "peers.py"), p, case,
                                       "--threads", str(n)] + quick))
            for who, cmd in [r for _ in range(max(args.rounds, 1)) for r in runs]:
                log(f"[threads={n}] {case}: {who}")
                t0 = time.time()
                out, err, code, note = run_locked(cmd, args.timeout, not args.quick,
                                                  max_wait_s, log)
                if note:
                    idle_notes.append(f"{case} {who} threads={n}: {note}")
                    disturbed.add((case, who, n))
                got, got_notes = parse_lines(out)
                for line in out.splitlines():
                    if LINE.match(line):
                        log("  " + line)
                for line in got_notes:
                    notes.setdefault(who, line)
                results.update(got)
                for key, r in got.items():
                    by_round.setdefault(key, []).append(r)
                expected = ["scan", "handwritten"] if who == "scan-bench" else [who]
                for impl in expected:
                    if (case, impl, n) not in results:
                        tail = (err.strip().splitlines() or [f"exit code {code}"])[-1]
                        results[(case, impl, n)] = dict(error=f"no result ({tail[:200]})")
                        failures.append(f"{case} {impl} threads={n}: exit {code}: {tail}")
                        log(f"  {impl}: no result (exit {code}): {tail}")
                log(f"  ({time.time() - t0:.0f} s)")

    # Over several rounds, each implementation's median of its medians (its fastest min,
    # its largest peak; the checksum is the same every round).
    for key, rs in by_round.items():
        ok = [r for r in rs if "median_ms" in r]
        if len(rs) > 1 and ok:
            results[key] = dict(ok[0], median_ms=statistics.median(r["median_ms"] for r in ok),
                                min_ms=min(r["min_ms"] for r in ok),
                                peak_mb=max(r.get("peak_mb", 0.0) for r in ok))

    # The table.
    mismatches = 0
    lines = []
    title = "quick smoke run (tiny sizes, one call: times mean nothing)" if args.quick else "full run"
    lines.append(f"# scan vs peers: {title}")
    lines.append("")
    lines.append(f"- date: {started:%Y-%m-%d %H:%M} UTC "
                 f"(took {(datetime.datetime.now(datetime.timezone.utc) - started).seconds // 60} min)")
    lines.append(f"- machine: {cpu_model()}; {platform.system()} {platform.release()}")
    lines.append("- command: `bench/peers/run_all.py "
                 + " ".join(shlex.quote(a) for a in sys.argv[1:]) + "`")
    if peaks:
        lines.append("- f32 multiply-add peak (`scan-bench --peak`, every core busy): " + ", ".join(
            f"{gf:g} GFLOP/s at {n} thread{'s' if n > 1 else ''} ({isa})"
            for n, (gf, isa) in sorted(peaks.items())))
    for who, note in notes.items():
        lines.append(f"- {note}")
    if idle_notes:
        lines.append("- **not alone on the machine** (marked * below; their medians are "
                     "not to be trusted): " + "; ".join(idle_notes))
    lines.append("- figures from different runs must not be compared: the machine changes "
                 "from day to day; compare only within this table")
    lines.append("")

    def row_of(case, impl, n):
        return results.get((case, impl, n))

    def mark(case, impl, n):
        who = "scan-bench" if impl in ("scan", "handwritten") else impl
        return "*" if (case, who, n) in disturbed else ""

    lines.append("Median ms per call (ratio to scan's median in the same run; "
                 "`-`: not run, `ERR`: the peer cannot run the case, see below):")
    lines.append("")
    lines.append("| case | threads | " + " | ".join(ALL_IMPLS) + " |")
    lines.append("|---|---|" + "---|" * len(ALL_IMPLS))
    for n in threads:
        for case in cases:
            scan = row_of(case, "scan", n)
            scan_ms = scan.get("median_ms") if scan else None
            cells = []
            for impl in ALL_IMPLS:
                r = row_of(case, impl, n)
                if r is None:
                    cells.append("-")
                elif "error" in r:
                    cells.append("ERR")
                elif impl == "scan" or not scan_ms:
                    cells.append(fmt_ms(r["median_ms"]) + mark(case, impl, n))
                else:
                    cells.append(f"{fmt_ms(r['median_ms'])}{mark(case, impl, n)} "
                                 f"({fmt_ratio(r['median_ms'] / scan_ms)}x)")
            lines.append(f"| {case} | {n} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Every row: median and min of one call (ms), median / scan's median, median / "
                 "hand-written's median, checksum against the hand-written loop's (SPEC's "
                 "tolerance: 1e-4 relative for f32 cases, 1e-9 for f64/i64), peak MB (scan, "
                 "handwritten: heap bytes live during the first call, scan-bench's counting "
                 "allocator; peers: rise of the process's resident memory during one call "
                 "after the warm-up):")
    lines.append("")
    lines.append("| case | threads | impl | median ms | min ms | / scan | / hand | checksum | peak MB |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    errors = []
    for n in threads:
        for case in cases:
            scan, hand = row_of(case, "scan", n), row_of(case, "handwritten", n)
            ref = hand if hand and "checksum" in hand else scan
            for impl in ALL_IMPLS:
                r = row_of(case, impl, n)
                if r is None:
                    continue
                if "error" in r:
                    errors.append(f"- {case} {impl} threads={n}: {r['error']}")
                    lines.append(f"| {case} | {n} | {impl} | ERR | | | | | |")
                    continue
                ratio = lambda base: (fmt_ratio(r["median_ms"] / base["median_ms"])  # noqa: E731
                                      if base and base.get("median_ms") else "-")
                if ref and "checksum" in ref:
                    rel = abs(r["checksum"] - ref["checksum"]) / max(abs(ref["checksum"]), 1e-300)
                    ok = rel <= spec.TOLERANCE[case]
                    agree = f"{r['checksum']:.10e} " + ("ok" if ok else f"**MISMATCH** (rel {rel:.1e})")
                    mismatches += not ok
                else:
                    agree = f"{r['checksum']:.10e} (no reference)"
                lines.append(f"| {case} | {n} | {impl}{mark(case, impl, n)} | {fmt_ms(r['median_ms'])} | "
                             f"{fmt_ms(r['min_ms'])} | {ratio(scan)} | {ratio(hand)} | {agree} | "
                             f"{r.get('peak_mb', float('nan')):.1f} |")
    if args.rounds > 1:
        lines.append("")
        lines.append(f"Paired ratios over {args.rounds} rounds: each round's median of the "
                     "implementation / scan's median in the same round (above 1: slower than "
                     "scan; handwritten, timed in scan's process, calls alternating: the "
                     "median over that process's rounds of calls of its call / scan's call "
                     "of the same round, `1 / vs_hand`); the median of the rounds' ratios, "
                     "then every round's:")
        lines.append("")
        lines.append("| case | threads | impl | median ratio | rounds |")
        lines.append("|---|---|---|---|---|")
        for n in threads:
            for case in cases:
                scans = by_round.get((case, "scan", n), [])
                for impl in ALL_IMPLS[1:]:
                    rs = by_round.get((case, impl, n), [])
                    pairs = [r["median_ms"] / s["median_ms"] for r, s in zip(rs, scans)
                             if "median_ms" in r and s.get("median_ms")]
                    if impl == "handwritten" and scans and all(s.get("vs_hand") for s in scans):
                        # Same process: call by call (scan-bench's `vs_hand`).
                        pairs = [1.0 / s["vs_hand"] for s in scans]
                    if pairs:
                        lines.append(f"| {case} | {n} | {impl} | {fmt_ratio(statistics.median(pairs))} | "
                                     + ", ".join(fmt_ratio(x) for x in pairs) + " |")
    if errors:
        lines.append("")
        lines.append("Cases a peer could not run (the reason it gave):")
        lines.append("")
        lines.extend(errors)
    lines.append("")
    lines.append(f"Checksums: {'all agree' if not mismatches else f'{mismatches} MISMATCH(es)'}.")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(out_path, "w") as f:
        f.write(text)
    log(f"written to {out_path}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
