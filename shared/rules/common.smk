# Rules shared by every paper: the index of all reports and the merged per-paper claims tables.
rule index:
    input:
        [f"reports/{paper}/{TIER}/claims.csv" for paper in PAPERS],
    output:
        "reports/index.md",
        [f"reports/{paper}/claims.csv" for paper in PAPERS],
    shell:
        "{PY:q} -m shared.report index --reports reports --out reports/index.md"
