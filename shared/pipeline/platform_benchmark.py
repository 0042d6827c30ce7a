"""Platform budgets, measured as ratios and per-paper costs within one run on this machine (never as timed tests):

* parse: seconds for `snakemake -n <paper>` with the real papers, and with the same papers plus generated copies
  of the template up to 40 papers; the budget is a 40-paper figure at most 1.5x the real one;
* tests: CPU seconds of the conformance suite plus the paper's own tests, per paper, and of the library tests
  (the fixed cost); `python -m pytest` projected to 40 papers from them (budget: 30 s CPU per paper, 40 min);
* parallel efficiency of the quick suite: its wall time at --cores 1 over its wall time at --cores 2 (budget >= 1.7).

    python -m shared.pipeline.platform_benchmark --out results/benchmarks/platform.json [--skip-quick-suite]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from shared.io.files import write_json
from shared.pipeline.cli import new_paper
from shared.pipeline.job import children_cpu_seconds
from shared.pipeline.paper import discover_papers
from shared.pipeline.report import read_csv
from shared.pipeline.scratch import ROOT, copy_repo, snakemake

TARGET_PAPERS = 40


def time_command(command, cwd, timeout=3600):
    """(wall seconds, CPU seconds of the command and everything it waited for, completed process)."""
    cpu, t0 = children_cpu_seconds(), time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    return time.perf_counter() - t0, children_cpu_seconds() - cpu, proc


def parse_seconds(repo, paper, repeats):
    """Median wall seconds of a dry run of one paper (the workflow parse plus that paper's DAG)."""
    walls = []
    for _ in range(repeats):
        wall, _, proc = time_command([sys.executable, "-m", "snakemake", "-n", "--cores", "1", paper], repo)
        if proc.returncode:
            raise RuntimeError(f"dry run of {paper} failed:\n{proc.stderr[-2000:]}")
        walls.append(wall)
    return statistics.median(walls)


def measure_parse(papers, scratch, repeats=3):
    real = copy_repo(scratch / "real", papers)
    grown = copy_repo(scratch / "grown", papers)
    for i in range(TARGET_PAPERS - len(papers)):
        new_paper(f"generated_{i:02d}", grown)
    rows = {}
    for paper in papers:
        rows[paper] = {"real_s": parse_seconds(real, paper, repeats), "with_40_s": parse_seconds(grown, paper, repeats)}
    real_s = statistics.fmean(r["real_s"] for r in rows.values())
    grown_s = statistics.fmean(r["with_40_s"] for r in rows.values())
    everything = {n: time_command([sys.executable, "-m", "snakemake", "-n", "--cores", "1"], repo)[0]
                  for n, repo in (("real", real), ("with_40", grown))}
    return {"papers_real": len(papers), "papers_grown": TARGET_PAPERS, "per_paper": rows,
            "one_paper_dry_run_s": round(real_s, 2), "one_paper_dry_run_with_40_s": round(grown_s, 2),
            "ratio_40_over_real": round(grown_s / real_s, 3), "budget_ratio": 1.5,
            "all_papers_dry_run_s": {k: round(v, 2) for k, v in everything.items()}}


def measure_tests(papers):
    fixed_wall, fixed_cpu, proc = time_command([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                         "tests/shared"], ROOT)
    per_paper = {}
    for paper in [*papers, "from_template"]:
        targets = ["tests/papers", "-k", paper]
        if (ROOT / "replications" / paper).is_dir():
            targets.append(f"replications/{paper}")
        wall, cpu, done = time_command([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *targets], ROOT)
        per_paper[paper] = {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "passed": done.returncode == 0}
    mean_wall = statistics.fmean(v["wall_s"] for v in per_paper.values())
    mean_cpu = statistics.fmean(v["cpu_s"] for v in per_paper.values())
    return {"library_tests": {"wall_s": round(fixed_wall, 1), "cpu_s": round(fixed_cpu, 1),
                              "passed": proc.returncode == 0},
            "per_paper": per_paper, "mean_cpu_s_per_paper": round(mean_cpu, 1), "budget_cpu_s_per_paper": 30,
            "pytest_projected_40_papers_min": round((fixed_wall + TARGET_PAPERS * mean_wall) / 60, 1),
            "budget_min": 40}


def measure_quick_suite(papers, scratch):
    walls = {}
    for cores in (1, 2):
        repo = copy_repo(scratch / f"quick_cores{cores}", papers)
        t0 = time.perf_counter()
        proc = snakemake(repo, "--cores", str(cores), timeout=4 * 3600)
        walls[cores] = time.perf_counter() - t0
        if proc.returncode:
            raise RuntimeError(f"quick suite at --cores {cores} failed:\n{proc.stderr[-3000:]}")
    return {"wall_s_cores_1": round(walls[1], 1), "wall_s_cores_2": round(walls[2], 1),
            "efficiency_cores1_over_cores2": round(walls[1] / walls[2], 3), "budget": 1.7,
            "claims_differing_from_committed": {n: differing_claims(scratch / f"quick_cores{n}") for n in (1, 2)}}


def differing_claims(repo):
    """{paper: [claim ids]} whose reproduced quick-tier value differs from the committed report's: a fresh run of
    the same code and seeds should give the same numbers on a CPU (timing-based claims aside)."""
    out = {}
    for committed in sorted(ROOT.glob("reports/*/quick/claims.csv")):
        fresh = repo / committed.relative_to(ROOT)
        old = {r["id"]: r["reproduced"] for r in read_csv(committed)}
        new = {r["id"]: r["reproduced"] for r in read_csv(fresh)} if fresh.is_file() else {}
        out[committed.parts[-3]] = sorted(i for i in old if old[i] != new.get(i))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--skip-quick-suite", action="store_true", help="skip the two full quick-tier runs")
    args = parser.parse_args()
    papers = discover_papers(ROOT / "replications")
    result = {"cpu_count": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="platform_benchmark_") as tmp:
        result["parse"] = measure_parse(papers, Path(tmp))
        print(result["parse"], flush=True)
        result["tests"] = measure_tests(papers)
        print(result["tests"], flush=True)
        if not args.skip_quick_suite:
            result["quick_suite"] = measure_quick_suite(papers, Path(tmp))
            print(result["quick_suite"], flush=True)
    write_json(args.out, result)


if __name__ == "__main__":
    main()
