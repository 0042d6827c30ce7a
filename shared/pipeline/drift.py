"""How far a paper's quick-tier values move on another machine: `replicate drift [PAPER ...]`.

Float results depend on the kernels a machine runs: its vector instructions change the order of every sum, and
training amplifies the last-digit differences. This runs the quick tier again in a scratch copy of the repository
with other kernels (by default PyTorch's AVX2 kernels instead of AVX-512 and MKL's compatibility code path, as on an
older CPU; `--threads 2` also changes how each matmul splits its sums) and compares every claim's reproduced value
with the committed report's.
The result, reports/<paper>/quick/drift.json, is what the report shows: each claim's value there and here, and a
flag on every claim whose status differs between the two runs.

    replicate drift [PAPER ...] [--cores 2] [--threads 1] [--set KEY=VALUE ...]
"""
import csv
import json
import math
import os
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from shared.io.files import write_json
from shared.pipeline.job import machine
from shared.pipeline.paper import discover_papers
from shared.pipeline.scratch import ROOT, copy_repo, snakemake

# another machine's kernels: ATen's AVX2 paths (no AVX-512) and MKL's compatibility path. Both change float results
# at the cost of little time; ATEN_CPU_CAPABILITY=default (scalar kernels) costs 5x the CPU.
OTHER_KERNELS = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE"}
THREADS_PER_JOB = 1  # as the quick tier; 2 measures thread drift too, but runs one job at a time on 2 cores


def number(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def read_claims(path):
    with open(path, newline="") as f:
        return {row["id"]: row for row in csv.DictReader(f)}


def compare(committed, rerun):
    """Per claim: both values and statuses, the absolute and relative change; then the paper's summary."""
    claims, relative = {}, []
    for cid, row in committed.items():
        other = rerun.get(cid)
        if other is None:
            continue
        a, b = number(row["reproduced"]), number(other["reproduced"])
        entry = {"here": row["reproduced"], "there": other["reproduced"], "status_here": row["status"],
                 "status_there": other["status"], "flips": row["status"] != other["status"]}
        if a is not None and b is not None:
            entry["abs_change"] = abs(a - b)
            entry["rel_change"] = abs(a - b) / max(abs(a), abs(b), 1e-12) if (a or b) else 0.0
            relative.append(entry["rel_change"])
        claims[cid] = entry
    changed = [r for r in relative if r > 0]
    return {"claims": claims, "summary": {
        "compared": len(claims), "numeric": len(relative), "changed": len(changed),
        "median_rel_change": statistics.median(relative) if relative else None,
        "max_rel_change": max(relative) if relative else None,
        "flipped": sorted(cid for cid, e in claims.items() if e["flips"])}}


def measure(papers=(), cores=2, env=None, threads_per_job=THREADS_PER_JOB, root=ROOT, configfiles=()):
    """Rerun the papers' quick tier in a scratch copy with other kernels; write reports/<paper>/quick/drift.json.
    `configfiles` (paths relative to `root`) are passed on, as for a paper's tiny config in the tests."""
    root = Path(root)
    papers = sorted(papers) or discover_papers(root / "replications")
    env = {**OTHER_KERNELS, **(env or {})}
    written = {}
    with tempfile.TemporaryDirectory(prefix="drift-") as tmp:
        repo = copy_repo(Path(tmp) / "repo", papers, root)
        rules = [line.strip() for line in snakemake(repo, "--list-rules").stdout.splitlines() if line.strip()]
        threads = [f"{rule}={threads_per_job}" for rule in rules if rule.replace("_", "").isalnum()]
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            t0 = time.time()
            configs = ["--configfile", *(str(repo / f) for f in configfiles)] if configfiles else []
            proc = snakemake(repo, "--cores", str(cores), *configs, "--set-threads", *threads, "--", *papers)
        finally:
            for k, v in saved.items():
                os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
        if proc.returncode != 0:
            raise SystemExit(f"the rerun failed in {repo}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
        for paper in papers:
            committed, rerun = root / "reports" / paper / "quick" / "claims.csv", repo / "reports" / paper / "quick"
            if not committed.is_file() or not (rerun / "claims.csv").is_file():
                continue
            provenance = json.loads((root / "reports" / paper / "quick" / "provenance.json").read_text())
            result = compare(read_claims(committed), read_claims(rerun / "claims.csv"))
            doc = {"measured_utc": datetime.fromtimestamp(t0, UTC).isoformat(timespec="seconds"),
                   "against": {"git_commit": provenance.get("git_commit"), "rendered": provenance.get("timestamp_utc"),
                               "config_hash": provenance.get("config_hash")},
                   "setting": {**env, "threads_per_job": threads_per_job}, "machine": machine(), **result}
            out = root / "reports" / paper / "quick" / "drift.json"
            write_json(out, doc)
            written[paper] = result["summary"]
    return written


def main(args):
    env = dict(item.split("=", 1) for item in args.set)
    for paper, summary in measure(args.papers, args.cores, env, args.threads).items():
        print(paper, json.dumps(summary))
    return 0
