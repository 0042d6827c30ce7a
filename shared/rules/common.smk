# Rules every paper uses. A paper's rules.smk registers what they need in four dictionaries (keyed by paper):
#   PAPER_CONFIGS[p]  its resolved, validated config         PAPER_METRICS[p]  metrics files its report scores
#   PAPER_FIGURES[p]  figures its report shows               PAPER_SKIPPED[p]  {namespace: reason} not run here
# and provides results/<p>/<tier>/analysis/<ns>.npz for each figure reports/<p>/<tier>/figures/<fig>_<ns>.png,
# drawn by replications/<p>/plot_<fig>.py and captioned by replications/<p>/captions/<fig>.rst.
import json

PAPER_CONFIGS, PAPER_METRICS, PAPER_FIGURES, PAPER_SKIPPED = {}, {}, {}, {}


wildcard_constraints:
    paper="|".join(PAPERS) or "none",
    fig=r"[a-z]+",
    ns=r"[a-z0-9_]+",


rule paper_config:
    output:
        f"results/{{paper}}/{TIER}/config.json",
    params:
        cfg=lambda w: json.dumps(PAPER_CONFIGS[w.paper], sort_keys=True),
    run:
        from shared.files import write_text

        write_text(output[0], params.cfg + "\n")


rule paper_figure:
    input:
        arrays=f"results/{{paper}}/{TIER}/analysis/{{ns}}.npz",
        script="replications/{paper}/plot_{fig}.py",
    output:
        # Snakemake captions cannot name a file by wildcards: one Jinja caption shows the paper's caption text
        report(f"reports/{{paper}}/{TIER}/figures/{{fig}}_{{ns}}.png", caption="figure_caption.rst",
               category="{paper}", subcategory="{ns}"),
    params:
        caption=lambda w: Path(f"replications/{w.paper}/captions/{w.fig}.rst").read_text(),
    threads: 1
    shell:
        "{PY:q} {input.script:q} --arrays {input.arrays:q} --out {output:q} --title {wildcards.ns}"


rule paper_report:
    input:
        config=f"results/{{paper}}/{TIER}/config.json",
        claims="replications/{paper}/claims.yaml",
        deviations="replications/{paper}/deviations.md",
        metrics=lambda w: PAPER_METRICS[w.paper],
        figures=lambda w: PAPER_FIGURES[w.paper],
    output:
        f"reports/{{paper}}/{TIER}/report.md",
        f"reports/{{paper}}/{TIER}/claims.csv",
        f"reports/{{paper}}/{TIER}/provenance.json",
    params:
        skipped=lambda w: json.dumps(PAPER_SKIPPED.get(w.paper, {})),
    shell:
        "{PY:q} -m shared.report render --paper {wildcards.paper} --tier {TIER} --paper-dir replications/{wildcards.paper} "
        "--metrics {input.metrics} --figures {input.figures} --out-dir reports/{wildcards.paper}/{TIER} "
        "--config {input.config:q} --skipped {params.skipped:q}"


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
