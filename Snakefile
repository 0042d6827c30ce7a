# Top-level workflow: every folder in replications/ with a rules.smk is a paper and joins the DAG.
#   snakemake --cores 2                 quick tier of every paper, then reports/index.md
#   snakemake --cores 2 bilinear_mlp    one paper by name
#   snakemake --profile profiles/full   paper-scale settings (GPU recommended)
#   snakemake --cores 2 benchmarks      speed ratios measured on this machine -> reports/benchmarks.json
import sys
from pathlib import Path

from shared.workflow import discover_papers, validate_tier

PY = sys.executable  # shell rules run the interpreter Snakemake runs under, never whatever `python` is on PATH
TIER = validate_tier(config.get("tier", "quick"))
PAPERS = discover_papers(Path(workflow.basedir) / "replications")
BENCHMARKS = []  # each paper's rules.smk appends the benchmark files it can produce

wildcard_constraints:
    dataset=r"[a-z0-9_]+",


rule all:
    default_target: True
    input:
        [f"reports/{paper}/{TIER}/report.md" for paper in PAPERS],
        "reports/index.md",


include: "shared/rules/data.smk"
include: "shared/rules/common.smk"


for paper in PAPERS:

    include: f"replications/{paper}/rules.smk"
