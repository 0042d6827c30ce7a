# Rules over all papers: the index of every report, and the benchmarks.
# A paper adds benchmarks by declaring BENCHMARKS (file stems) in its pipeline.py; its rules write them.
# `replicate benchmarks` measures them again in a scratch copy (shared/pipeline/remeasure.py).
from shared.pipeline.config import as_flag


# The HTML report (`snakemake --report report.html`) opens on this page: every paper's claims table, then its figures.
# (It opens there, not on the workflow graph, because profiles/default gives it report_metadata.yaml.)
report: "report_landing.rst"


localrules:
    index,
    benchmarks,


rule index:
    input:
        [f"{P.reports}/claims.csv" for P in PAPERS.values()],
        # the README's references are generated from each paper's BibTeX
        [f"{P.dir}/references.bib" for P in PAPERS.values()],
    output:
        "reports/index.md",
        [f"reports/{name}/claims.csv" for name in PAPERS],
        # README.md's claims table is rewritten in place (update: Snakemake must not delete it before the job)
        update("README.md"),
    log:
        "logs/index.log",
    params:
        python=sys.executable,
    shell:
        "{params.python:q} -m shared.pipeline.report index --reports reports --out reports/index.md > {log:q} 2>&1"


rule benchmarks:
    input:
        [f"results/benchmarks/{stem}.json" for P in PAPERS.values() for stem in getattr(P.module, "BENCHMARKS", ())],
        "results/benchmarks/platform.json",
    output:
        "reports/benchmarks.json",
    log:
        "logs/benchmarks.log",
    run:
        from shared.io.files import read_json, write_json

        write_json(output[0], {Path(f).stem: read_json(f) for f in input})


rule platform_benchmark:
    output:
        "results/benchmarks/platform.json",
    log:
        "logs/platform_benchmark.log",
    threads: 64  # Snakemake caps it at --cores: the benchmark runs Snakemake and pytest itself, alone on the machine
    params:
        python=sys.executable,
        # the two full quick-tier runs (--cores 1 and 2) take most of this rule's time; skip them with
        # --config benchmark_quick_suite=false
        skip="" if as_flag("benchmark_quick_suite", config.get("benchmark_quick_suite", True)) else "--skip-quick-suite",
    shell:
        "{params.python:q} -m shared.pipeline.platform_benchmark --out {output:q} {params.skip} > {log:q} 2>&1"
