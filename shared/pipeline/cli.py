"""`replicate`: the command line of the monorepo (also `python -m shared.pipeline.cli`).

    replicate check-claims [--tier quick] [--reports reports] [PAPER ...]   exit 0 ok, 1 a FAIL, 2 no results
    replicate index [--reports reports] [--out reports/index.md] [--replications replications]
    replicate new-paper NAME [--root .]
    replicate benchmarks [NAME ...] [--cores 2] [--accept-load]   measure again (shared.pipeline.remeasure)
    replicate drift [PAPER ...] [--cores 2] [--threads 1] [--set KEY=VALUE]   values on other kernels (.drift)
    replicate seeds [PAPER ...] [--seeds 1 2] [--cores 2]   values and statuses at other seeds (.seeds)
    replicate smoke [PAPER ...] [--cores 2] [--steps 3] [--limit 90] [--dry-run]   the full tier, loops capped (.smoke)
"""
import argparse
import json
import keyword
import shutil
import sys
import tempfile
from pathlib import Path

from shared.io.files import atomic_path, write_text
from shared.pipeline import report
from shared.pipeline.claims import FAIL
from shared.pipeline.tiers import TIERS

TEMPLATE_DIR = Path(__file__).resolve().parents[1] / "templates" / "paper"
PLACEHOLDER = "__PAPER__"


def check_claims(tier="quick", reports_dir="reports", papers=()):
    """Print the FAILs of `tier`; return 2 if a paper has no results, 1 if a claim FAILs, else 0."""
    reports_dir = Path(reports_dir)
    papers = list(papers) or sorted(p.parent.parent.name for p in reports_dir.glob(f"*/{tier}/claims.csv"))
    if not papers:
        print(f"no results for tier {tier!r} under {reports_dir}/", file=sys.stderr)
        return 2
    missing, fails, rows_all = [], [], []
    for paper in papers:
        path = reports_dir / paper / tier / "claims.csv"
        if not path.is_file():
            missing.append(paper)
            continue
        rows = report.read_csv(path)
        fails += [(paper, row) for row in rows if row["status"] == FAIL]
        rows_all += rows
    if fails:
        print(_fail_table(fails))
    print(f"{tier}: {report.kind_counts_text(rows_all)} in {len(papers) - len(missing)} paper(s)")
    for paper in missing:
        print(f"{paper}: no results for tier {tier!r} ({reports_dir / paper / tier / 'claims.csv'} missing)",
              file=sys.stderr)
    # Missing results outrank FAILs: an incomplete check must not look like a clean one.
    return 2 if missing else 1 if fails else 0


def _fail_table(fails):
    rows = [("paper", "claim", "kind", "reproduced", "expected", "reason")]
    rows += [(paper, r["id"], r.get("kind", ""), r["reproduced"], r["expected"], r["reason"]) for paper, r in fails]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(row, widths)) + "  " + row[5] for row in rows)


def new_paper(name, root="."):
    """Copy the paper template to <root>/replications/<name>, replacing __PAPER__ in names and text."""
    if not (name.isascii() and name.isidentifier() and name == name.lower() and not keyword.iskeyword(name)):
        raise SystemExit(f"replicate new-paper: {name!r} is not a lowercase Python identifier (e.g. bilinear_mlp)")
    target = Path(root) / "replications" / name
    if target.exists():
        raise SystemExit(f"replicate new-paper: {target} already exists; refusing to overwrite it")
    target.parent.mkdir(parents=True, exist_ok=True)
    # Build beside the target and rename at the end, so a failure never leaves a half-made paper.
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{name}."))
    try:
        for src in sorted(TEMPLATE_DIR.rglob("*")):
            if "__pycache__" in src.parts:
                continue
            dest = staging / str(src.relative_to(TEMPLATE_DIR)).replace(PLACEHOLDER, name)
            if src.is_dir():
                dest.mkdir(parents=True, exist_ok=True)
                continue
            try:
                write_text(dest, src.read_text().replace(PLACEHOLDER, name))
            except UnicodeDecodeError:  # binary file: copy untouched
                with atomic_path(dest) as tmp:
                    shutil.copyfile(src, tmp)
            shutil.copymode(src, dest)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print(f"created {target}")
    return target


def rerun_seeds(papers, seeds, cores):
    """`replicate seeds`: the quick tier at other seeds (shared.pipeline.seeds), then each paper's report re-rendered
    with its fragile claims marked, and the index."""
    from shared.pipeline.scratch import ROOT as root  # the scratch machinery only when asked
    from shared.pipeline.seeds import FRAGILE, TIER, measure_seeds

    for paper, doc in measure_seeds(papers, seeds, cores, root).items():
        if (root / "reports" / paper / TIER / "metrics").is_dir():
            results = report.rerender(paper, TIER, root / "reports", root / "replications")
            fragile = [r.id for r in results if r.robustness == FRAGILE]
        else:
            fragile = ["(no committed report to compare with)"]
        cpu = {seed: run["cpu_s"] for seed, run in doc["runs"].items()}
        print(paper, json.dumps({"job_cpu_s_per_seed": cpu, "fragile": fragile}))
    report.index(root / "reports", None, root / "replications")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="replicate", description="Replications of papers on neural-network layers.")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check-claims", help="exit 1 if any claim of the tier FAILs, 2 if results are missing")
    check.add_argument("--tier", default="quick", choices=TIERS)
    check.add_argument("--reports", default="reports")
    check.add_argument("papers", nargs="*", metavar="PAPER", help="default: every paper with results")
    report.add_index_arguments(sub.add_parser("index", help="write reports/index.md and merged claims.csv files"))
    new = sub.add_parser("new-paper", help="start replications/NAME from the template")
    new.add_argument("name", metavar="NAME")
    new.add_argument("--root", default=".")
    bench = sub.add_parser("benchmarks", help="measure the benchmarks again in a scratch copy; merge into "
                                              "reports/benchmarks.json unless the machine was busy")
    bench.add_argument("names", nargs="*", metavar="NAME", help="benchmark stems (default: all)")
    bench.add_argument("--cores", type=int, default=2)
    bench.add_argument("--accept-load", action="store_true", help="keep figures measured on a busy machine")
    bench.add_argument("--skip-quick-suite", action="store_true",
                       help="the platform benchmark without its two quick-suite runs")
    drift = sub.add_parser("drift", help="rerun the quick tier with other float kernels and threads in a scratch copy; "
                                         "write reports/<paper>/quick/drift.json")
    drift.add_argument("papers", nargs="*", metavar="PAPER", help="default: every paper")
    drift.add_argument("--cores", type=int, default=2)
    drift.add_argument("--threads", type=int, default=1, help="threads per job (2 adds thread drift)")
    drift.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="an environment setting for the rerun (beside ATEN_CPU_CAPABILITY=avx2, "
                            "MKL_CBWR=COMPATIBLE)")
    seeds = sub.add_parser("seeds", help="rerun the quick tier with other seeds in a scratch copy; write "
                                         "reports/<paper>/quick/seeds.json, re-render the reports and the index")
    seeds.add_argument("papers", nargs="*", metavar="PAPER", help="default: every paper")
    seeds.add_argument("--seeds", type=int, nargs="+", default=[1, 2], metavar="K",
                       help="one rerun per K, every seed of the quick config raised by 1000 x K (default: 1 2)")
    seeds.add_argument("--cores", type=int, default=2)
    smoke = sub.add_parser("smoke", help="run the full tier with every training loop capped to a few steps in a "
                                         "scratch copy; write reports/<paper>/full/smoke.json")
    smoke.add_argument("papers", nargs="*", metavar="PAPER", help="default: every paper")
    smoke.add_argument("--cores", type=int, default=2)
    smoke.add_argument("--steps", type=int, default=3, help="the cap on every training loop (at least 2)")
    smoke.add_argument("--limit", type=float, default=90, help="seconds a paper's run may take; then it is stopped")
    smoke.add_argument("--dry-run", action="store_true", help="only plan each full tier with its smoke.yaml overlay")
    args = parser.parse_args(argv)
    if args.command == "seeds":
        return rerun_seeds(args.papers, args.seeds, args.cores)
    if args.command == "smoke":
        from shared.pipeline import smoke as smoke_module

        return smoke_module.main(args)
    if args.command == "drift":
        from shared.pipeline import drift as drift_module

        return drift_module.main(args)
    if args.command == "benchmarks":
        from shared.pipeline import remeasure  # imports the scratch machinery only when asked

        return remeasure.main(args)
    if args.command == "check-claims":
        return check_claims(args.tier, args.reports, args.papers)
    if args.command == "index":
        report.index(args.reports, args.out, args.replications)
    else:
        new_paper(args.name, args.root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
