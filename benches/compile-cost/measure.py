#!/usr/bin/env python3
"""Time the compile-cost bench crates and size their expanded code.

Usage: benches/compile-cost/measure.py [--dir DIR] [--runs N] [--cargo-defaults] [LABEL...]

DIR (default target/compile-cost) holds crates/<LABEL>/ as written by
generate.py; LABELs default to every crate there (this project's variants
first, then rmcp, rig and the no-macro baseline). For each crate:

1. `cargo build` once, untimed, so that its dependencies are prebuilt (they are
   never rebuilt by what follows), then one untimed touch-and-build to warm
   the caches;
2. N rounds (default 5); in each, every crate in turn gets `touch src/lib.rs`
   and a timed `cargo build` (dev profile, that crate alone). The crates take
   turns inside a round, and the round's first crate rotates, so load from
   other work on the machine falls on all of them alike;
3. `RUSTC_BOOTSTRAP=1 cargo rustc --lib -- -Zunpretty=expanded`, with its own
   target dir (DIR/target-expand): rustc records RUSTC_BOOTSTRAP in the
   dep-info of path dependencies, so running it in the timed target dir would
   make the next timed build rebuild tool-core.

With --passes, also prints where rustc spends the build of each crate
(`-Ztime-passes`, a few phases) and the expansion size per macro
(`-Zmacro-stats`, the top rows), from one more build in the expand target dir.

Builds run with CARGO_INCREMENTAL=0 and CARGO_PROFILE_DEV_DEBUG=line-tables-only
(the development machine's settings) unless --cargo-defaults is given, which
keeps the caller's environment (cargo's defaults: incremental, full debuginfo).

Prints a Markdown table (median, min/max of the timed builds' wall time; lines
and bytes of the expanded code; median CPU time of cargo and rustc, user +
system, which the machine's other load changes less than the wall time) and the raw figures, and writes both as JSON to
DIR/results-<UTC time>.json.
"""

import argparse
import datetime
import json
import os
import pathlib
import platform
import resource
import statistics
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[2]



def describe(crate):
    """The macro named in the first line of the generated lib.rs, with the crate's label."""
    first = (crate / "src" / "lib.rs").read_text().split("\n", 1)[0]
    _, sep, what = first.partition(": ")
    what = what.rstrip(".") if sep else "?"
    return what if crate.name in ("rmcp", "rig", "plain") else f"{what} ({crate.name})"


def run(cmd, cwd, env, capture=False):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=not capture)
    if proc.returncode != 0:
        err = proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode(errors="replace")
        sys.exit(f"`{' '.join(cmd)}` in {cwd} failed with {proc.returncode}:\n{err[-4000:]}")
    return proc.stdout


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_build(crate, env):
    """(wall seconds, CPU seconds of cargo and rustc) of one touch-and-build."""
    (crate / "src" / "lib.rs").touch()
    cpu = children_cpu()
    start = time.perf_counter()
    run(["cargo", "build", "-q", "--offline"], crate, env)
    return time.perf_counter() - start, children_cpu() - cpu


def default_labels(crates):
    present = sorted(p.name for p in crates.iterdir() if (p / "Cargo.toml").is_file())
    others = [name for name in ("rmcp", "rig", "plain") if name in present]
    return [name for name in present if name not in others] + others


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=pathlib.Path, default=REPO / "target" / "compile-cost")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cargo-defaults", action="store_true")
    ap.add_argument("--passes", action="store_true")
    ap.add_argument("labels", nargs="*")
    args = ap.parse_args()
    if args.runs < 1:
        sys.exit("--runs must be at least 1")
    root = args.dir.resolve()
    crates_dir = root / "crates"
    if not crates_dir.is_dir():
        sys.exit(f"{crates_dir} does not exist: run benches/compile-cost/generate.py first")
    labels = args.labels or default_labels(crates_dir)
    for label in labels:
        if not (crates_dir / label / "Cargo.toml").is_file():
            sys.exit(f"no crate {crates_dir / label}: generate it first (generate.py --ours {label}=REPO)")

    env = dict(os.environ)
    if not args.cargo_defaults:
        env.update(CARGO_INCREMENTAL="0", CARGO_PROFILE_DEV_DEBUG="line-tables-only")
    env["CARGO_TARGET_DIR"] = str(root / "target")
    env.pop("RUSTC_BOOTSTRAP", None)
    expand_env = dict(env, CARGO_TARGET_DIR=str(root / "target-expand"), RUSTC_BOOTSTRAP="1")

    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = os.getloadavg()
    print(f"prebuilding {', '.join(labels)} (dependencies, untimed)", file=sys.stderr)
    for label in labels:
        run(["cargo", "build", "-q"], crates_dir / label, env)
    noop = {}
    for label in labels:
        start = time.perf_counter()
        run(["cargo", "build", "-q", "--offline"], crates_dir / label, env)
        noop[label] = time.perf_counter() - start
    for label in labels:
        timed_build(crates_dir / label, env)

    times = {label: [] for label in labels}
    cpu = {label: [] for label in labels}
    for r in range(args.runs):
        order = labels[r % len(labels):] + labels[: r % len(labels)]
        for label in order:
            seconds, cpu_seconds = timed_build(crates_dir / label, env)
            times[label].append(seconds)
            cpu[label].append(cpu_seconds)
            print(f"round {r + 1}/{args.runs}: {label} {seconds:.2f} s ({cpu_seconds:.2f} s CPU)", file=sys.stderr)
    load_after = os.getloadavg()

    expanded = {}
    for label in labels:
        print(f"expanding {label}", file=sys.stderr)
        text = run(
            ["cargo", "rustc", "-q", "--lib", "--", "-Zunpretty=expanded"],
            crates_dir / label,
            expand_env,
            capture=True,
        )
        expanded[label] = {"lines": text.count(b"\n"), "bytes": len(text)}

    passes = {}
    if args.passes:
        for label in labels:
            print(f"time-passes {label}", file=sys.stderr)
            (crates_dir / label / "src" / "lib.rs").touch()
            proc = subprocess.run(
                ["cargo", "rustc", "-q", "--lib", "--", "-Ztime-passes", "-Zmacro-stats"],
                cwd=crates_dir / label,
                env=expand_env,
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                sys.exit(f"time-passes of {label} failed:\n{proc.stderr[-4000:]}")
            passes[label] = proc.stderr

    rustc = run(["rustc", "--version"], REPO, env).strip()
    header = (
        f"{started:%Y-%m-%d %H:%M} UTC, {rustc}, {os.cpu_count()} cores, "
        f"load average {load_before[0]:.1f} before / {load_after[0]:.1f} after, "
        f"{args.runs} rounds, "
        + ("cargo defaults" if args.cargo_defaults else "CARGO_INCREMENTAL=0, debug=line-tables-only")
    )
    print(f"\n{header}\n")
    print(
        "| macro | median incremental build (s) | min / max (s) | expanded lines | expanded bytes "
        "| median CPU time (s) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label in labels:
        t = times[label]
        name = describe(crates_dir / label)
        print(
            f"| {name} | {statistics.median(t):.2f} | {min(t):.2f} / {max(t):.2f} "
            f"| {expanded[label]['lines']:,} | {expanded[label]['bytes']:,} "
            f"| {statistics.median(cpu[label]):.2f} |"
        )
    print("\nraw (s, in round order):")
    for label in labels:
        wall = " ".join(f"{s:.2f}" for s in times[label])
        used = " ".join(f"{s:.2f}" for s in cpu[label])
        print(f"  {label}: {wall}; CPU {used}; no-op build {noop[label]:.2f}")

    phases = ("macro_expand_crate", "type_check_crate", "MIR_borrow_checking", "codegen_crate", "LLVM_passes", "total")
    for label, text in passes.items():
        print(f"\n{label}: rustc phases (s, one build in the expand target dir)")
        for line in text.splitlines():
            fields = line.split()
            if line.startswith("time:") and fields[-1] in phases:
                print(f"  {fields[-1]:<22} {fields[1].rstrip(';')}")
        stats = [line[len("macro-stats "):] for line in text.splitlines() if line.startswith("macro-stats ")]
        print(f"{label}: expansion per macro (-Zmacro-stats, top rows)")
        for line in stats[2:10]:
            print(f"  {line}")

    result = {
        "started": started.isoformat(),
        "rustc": rustc,
        "machine": platform.platform(),
        "cores": os.cpu_count(),
        "load_before": load_before,
        "load_after": load_after,
        "cargo_defaults": args.cargo_defaults,
        "times": times,
        "cpu": cpu,
        "noop": noop,
        "expanded": expanded,
        "passes": passes,
    }
    out = root / f"results-{started:%Y%m%dT%H%M%SZ}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwritten {out}")


if __name__ == "__main__":
    main()
