"""Platform budgets, measured as ratios and per-paper costs within one run on this machine (never as timed tests):

* parse: seconds for `snakemake -n <paper>` with the real papers, and with the same papers plus generated copies
  of the template up to 40 papers; the budget is a 40-paper figure at most 1.5x the real one;
* tests: wall and CPU seconds of `python -m pytest` (the README's test command; budget: 10 min wall), of the
  library tests (the fixed cost) and of the conformance suite, whose CPU per paper (what one more paper adds) has a
  budget of 15 s; the suite projected to 40 papers (budget: 20 min wall), the CPU beyond the library's growing with
  the papers;
* the quick suite (the default run) at --cores 1 and 2: parallel efficiency, its wall time at --cores 1 over its wall
  time at --cores 2 (budget >= 1.7), and Snakemake's own share of its CPU: everything but the script jobs' own
  cost records, i.e. Snakemake's processes and its bookkeeping jobs (budget <= 10 %).
CPU seconds count jobs forked by the warm worker (shared.pipeline.worker), which are no children of the run: each
server appends its CPU, its jobs' included, to $REPLICATE_WORKER_CPU_LOG when it exits.

    python -m shared.pipeline.platform_benchmark --out results/benchmarks/platform.json [--skip-quick-suite]
        [--skip-pytest] [--papers NAME ...]     (a subset, to try the benchmark out; the budgets need all papers)
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
from shared.pipeline import worker
from shared.pipeline.cli import new_paper
from shared.pipeline.job import children_cpu_seconds, read_costs
from shared.pipeline.paper import discover_papers
from shared.pipeline.report import read_csv
from shared.pipeline.scratch import ROOT, copy_repo

TARGET_PAPERS = 40


def time_command(command, cwd, timeout=3600, runs_jobs=False):
    """(wall seconds, CPU seconds of the command and everything it waited for, completed process, [own CPU seconds of
    each warm-worker server it started]); with `runs_jobs`, the CPU counts the servers it started and their jobs."""
    with tempfile.NamedTemporaryFile("r", prefix="worker_cpu_", suffix=".log") as worker_log:
        cpu, t0 = children_cpu_seconds(), time.perf_counter()
        # the servers keep the idle time the suite runs with: a shorter one would restart them between papers
        proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1",
                                   "REPLICATE_WORKER_CPU_LOG": worker_log.name})
        wall = time.perf_counter() - t0
        if runs_jobs:
            time.sleep(worker.IDLE_S + 5)  # the servers exit IDLE_S after their last job, and then log their CPU
        servers = [[float(x) for x in line.split()] for line in worker_log.read().splitlines()]
        cpu = children_cpu_seconds() - cpu + sum(own + jobs for own, jobs in servers)
    return wall, cpu, proc, [own for own, _ in servers]


def parse_seconds(repo, paper, repeats):
    """Median wall seconds of a dry run of one paper (the workflow parse plus that paper's DAG)."""
    walls = []
    for _ in range(repeats):
        wall, _, proc, _ = time_command([sys.executable, "-m", "snakemake", "-n", "--cores", "1", paper], repo)
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


def pytest_run(*targets):
    wall, cpu, proc, servers = time_command([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *targets],
                                            ROOT, timeout=4 * 3600, runs_jobs=True)
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "passed": proc.returncode == 0,
            "worker_servers_started": len(servers)}


def measure_tests(papers, whole_suite=True):
    """The library tests, the conformance suite of `papers` and the template's paper, and the whole suite.

    The library tests and the conformance suite run on one worker (`-n 0`: their CPU without xdist's two worker
    start-ups); the whole suite runs as the README runs it (`-n 2`). A paper's conformance CPU is what it adds: the
    suite for `papers` and the template less the suite for the template alone (pytest's start, the template paper,
    the full-tier dry runs), over the number of papers. Figures before 2026-12-06 divided the whole suite's CPU by the
    papers plus one instead (kept as `conformance_cpu_s_per_paper_with_fixed`)."""
    result = {"library_tests": pytest_run("-n", "0", "tests/shared")}
    conformance = pytest_run("-n", "0", "tests/papers/test_conformance.py", "-k", " or ".join([*papers, "from_template"]))
    fixed = pytest_run("-n", "0", "tests/papers/test_conformance.py", "-k", "from_template")
    result |= {"conformance": conformance, "conformance_template_only": fixed,
               "conformance_cpu_s_per_paper": round((conformance["cpu_s"] - fixed["cpu_s"]) / len(papers), 1),
               "conformance_cpu_s_per_paper_with_fixed": round(conformance["cpu_s"] / (len(papers) + 1), 1),
               "budget_conformance_cpu_s_per_paper": 15}
    if whole_suite:
        suite = pytest_run()
        growing = max(0.0, suite["cpu_s"] - result["library_tests"]["cpu_s"])  # what grows with the papers
        every = len(discover_papers(ROOT / "replications"))  # the whole suite tests them all, whatever `papers` is
        scale = (result["library_tests"]["cpu_s"] + growing * TARGET_PAPERS / every) / suite["cpu_s"]
        result |= {"pytest": suite, "budget_pytest_wall_min": 10,
                   "pytest_projected_40_papers_min": round(suite["wall_s"] * scale / 60, 1), "budget_40_papers_min": 20}
    return result


def measure_quick_suite(papers, scratch, targets=()):
    """The default run (or `targets`) of a copy holding `papers`, at --cores 1 and 2."""
    walls, shares = {}, {}
    for cores in (1, 2):
        repo = copy_repo(scratch / f"quick_cores{cores}", papers)
        wall, cpu, proc, servers = time_command([sys.executable, "-m", "snakemake", "--cores", str(cores), *targets],
                                                repo, timeout=4 * 3600, runs_jobs=True)
        if proc.returncode:
            raise RuntimeError(f"quick suite at --cores {cores} failed:\n{proc.stderr[-3000:]}")
        records = [r for log in repo.glob("results/*/quick/logs") for r in read_costs(log)]
        jobs, worker_cpu = sum(r["cpu_s"] for r in records), sum(servers)
        walls[cores] = wall
        # the warm worker's own CPU (its imports, once instead of in every job) counts with the jobs; the figure
        # jobs, which have cost records, are jobs here: their CPU is shown for the reader
        shares[cores] = {"cpu_s": round(cpu, 1), "script_jobs_cpu_s": round(jobs, 1),
                         "worker_cpu_s": round(worker_cpu, 1),
                         "figure_jobs_cpu_s": round(sum(r["cpu_s"] for r in records if " figure_" in r["job"]), 1),
                         "snakemake_share": round(1 - (jobs + worker_cpu) / cpu, 3)}
    return {"wall_s_cores_1": round(walls[1], 1), "wall_s_cores_2": round(walls[2], 1),
            "efficiency_cores1_over_cores2": round(walls[1] / walls[2], 3), "budget": 1.7,
            "cpu_by_cores": shares, "snakemake_share": shares[1]["snakemake_share"], "budget_snakemake_share": 0.1,
            "claims_differing_from_committed": {n: differing_claims(scratch / f"quick_cores{n}", papers)
                                                for n in (1, 2)}}


def differing_claims(repo, papers):
    """{paper: [claim ids]} whose reproduced quick-tier value differs from the committed report's: a fresh run of
    the same code and seeds should give the same numbers on a CPU (timing-based claims aside)."""
    out = {}
    for committed in sorted(ROOT.glob("reports/*/quick/claims.csv")):
        if committed.parts[-3] not in papers:
            continue
        fresh = repo / committed.relative_to(ROOT)
        old = {r["id"]: r["reproduced"] for r in read_csv(committed)}
        new = {r["id"]: r["reproduced"] for r in read_csv(fresh)} if fresh.is_file() else {}
        out[committed.parts[-3]] = sorted(i for i in old if old[i] != new.get(i))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--skip-quick-suite", action="store_true", help="skip the two full quick-tier runs")
    parser.add_argument("--skip-pytest", action="store_true", help="skip the run of the whole test suite")
    parser.add_argument("--papers", nargs="+", help="measure these papers only (a trial: budgets need them all)")
    args = parser.parse_args()
    papers = args.papers or discover_papers(ROOT / "replications")
    result = {"cpu_count": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="platform_benchmark_") as tmp:
        result["parse"] = measure_parse(papers, Path(tmp))
        print(result["parse"], flush=True)
        result["tests"] = measure_tests(papers, whole_suite=not args.skip_pytest)
        print(result["tests"], flush=True)
        if not args.skip_quick_suite:
            result["quick_suite"] = measure_quick_suite(papers, Path(tmp), args.papers or ())
            print(result["quick_suite"], flush=True)
    write_json(args.out, result)


if __name__ == "__main__":
    main()
