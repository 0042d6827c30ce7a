"""Measure the benchmarks again, on request: `replicate benchmarks [NAME ...] [--cores N] [--accept-load]`.

`snakemake benchmarks` is a target like any other: once reports/benchmarks.json exists it has nothing to do. This
re-measures without --forceall and without touching the papers' results: it runs the benchmark rules in a scratch
copy of the repository (so it neither reuses results/ nor collides with a workflow running here), records the
machine, its thread settings and how much CPU the rest of the machine used meanwhile, and merges the figures into
reports/benchmarks.json. A figure taken while other work used more than LOADED_CORES cores is written to
results/benchmarks/under_load.json instead and is not made the reference, unless --accept-load.
"""
import json
import os
import re
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from shared.io.files import read_json, write_json
from shared.pipeline.job import busy_cpu_seconds, children_cpu_seconds, machine, other_load
from shared.pipeline.scratch import ROOT, copy_repo, copy_tracked, snakemake

LOADED_CORES = 0.5  # more CPU than this used by others while measuring: the figures read slow


def benchmark_stems(root=ROOT):
    """{benchmark stem: paper} for every paper's BENCHMARKS (read from the source, nothing imported), plus platform."""
    stems = {"platform": None}
    for pipeline in sorted(Path(root, "replications").glob("*/pipeline.py")):
        match = re.search(r"^BENCHMARKS\s*=\s*\(([^)]*)\)", pipeline.read_text(), re.M)
        if match:
            stems.update({s: pipeline.parent.name for s in re.findall(r"[\"']([a-z0-9_]+)[\"']", match.group(1))})
    return stems


def remeasure(names=(), cores=2, accept_load=False, root=ROOT, extra_args=()):
    """Run the named benchmarks (default: all) in a scratch copy; merge them into reports/benchmarks.json unless
    the machine was loaded. Returns (path written, the record of the measurement)."""
    stems = benchmark_stems(root)
    unknown = sorted(set(names) - set(stems))
    if unknown:
        raise SystemExit(f"unknown benchmark(s) {unknown}; known: {sorted(stems)}")
    names = list(names) or sorted(stems)
    papers = sorted({p for n in names for p in ([stems[n]] if stems[n] else [s for s in stems.values() if s])})
    with tempfile.TemporaryDirectory(prefix="remeasure-") as tmp:
        # the platform benchmark times the layout with every paper and the test suite: the whole tracked tree
        repo = copy_tracked(Path(tmp) / "repo", root) if "platform" in names else copy_repo(Path(tmp) / "repo",
                                                                                               papers, root)
        load0 = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
        busy0, cpu0, t0 = busy_cpu_seconds(), children_cpu_seconds(), time.time()
        targets = [f"results/benchmarks/{n}.json" for n in names]
        proc = snakemake(repo, *run_args(cores, targets, extra_args))
        wall = time.time() - t0
        own = children_cpu_seconds() - cpu0
        other = other_load(busy0, busy_cpu_seconds(), own, wall)
        if proc.returncode != 0:
            raise SystemExit(f"the benchmarks failed in {repo}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
        figures = {n: read_json(repo / t) for n, t in zip(names, targets)}
    record = {"measured_utc": datetime.fromtimestamp(t0, UTC).isoformat(timespec="seconds"), "cores": cores,
              "wall_s": round(wall, 1), "load_1min_at_start": load0, "other_load": other,
              "under_load": other is not None and other > LOADED_CORES, "machine": machine()}
    for figure in figures.values():
        if isinstance(figure, dict):
            figure["measured"] = record
    reference = Path(root, "reports", "benchmarks.json")
    if record["under_load"] and not accept_load:
        out = Path(root, "results", "benchmarks", "under_load.json")
        print(f"other work used {other} cores while measuring: figures written to {out}, not to {reference}")
    else:
        out = reference
        figures = {**(read_json(reference) if reference.is_file() else {}), **figures}
    write_json(out, figures)
    return out, record


SKIP_QUICK_SUITE = ("--config", "benchmark_quick_suite=false")


def run_args(cores, targets, extra_args=()):
    """Snakemake's arguments for the benchmark targets: the targets before `extra_args`, since --config takes every
    word after it (targets after it were read as config entries and the run refused)."""
    return ["--cores", str(cores), *targets, *extra_args]


def main(args):
    extra = SKIP_QUICK_SUITE if args.skip_quick_suite else ()
    out, record = remeasure(args.names, args.cores, args.accept_load, extra_args=extra)
    print(json.dumps({"written": str(out), **record}, indent=1))
    return 0
