# Rules shared by every paper: the index of all reports and the merged per-paper claims tables.
rule index:
    input:
        [f"reports/{paper}/{TIER}/claims.csv" for paper in PAPERS],
    output:
        "reports/index.md",
        [f"reports/{paper}/claims.csv" for paper in PAPERS],
    shell:
        "{PY:q} -m shared.report index --reports reports --out reports/index.md"


rule benchmarks:
    input:
        lambda w: BENCHMARKS,
    output:
        "reports/benchmarks.json",
    run:
        from shared.files import read_json, write_json

        write_json(output[0], {Path(f).stem: read_json(f) for f in input})
