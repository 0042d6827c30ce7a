# The rules every paper shares, loaded once per paper as a Snakemake module with that paper as `P`
# (shared.pipeline.paper.Paper): the resolved config, one rule per analysis namespace, its figures, the report.
# The Snakefile names them <paper>_config, <paper>_analyze, <paper>_figure, <paper>_report.
import os
import sys

from shared.pipeline.paper import Caption, path_args, step_shell

P = config["paper"]


wildcard_constraints:
    ns="|".join(P.analyses) or "none",
    fig="|".join({f for a in P.analyses.values() for f in a.figures}) or "none",


rule config:
    output:
        P.out("config.json"),
    log:
        P.log("config"),
    params:
        cfg=P.params(P.cfg),
    run:
        from shared.io.files import write_text

        write_text(output[0], f"{params.cfg}\n")


rule analyze:
    input:
        unpack(lambda w: {"code": P.code(P.analyses[w.ns].script), **P.analyses[w.ns].reads}),
    output:
        metrics=P.out("metrics/{ns}.json"),
        arrays=P.out("analysis/{ns}.npz"),
    log:
        P.log("analyze_{ns}"),
    threads: lambda w: P.threads(P.analyses[w.ns].resources)
    resources:
        gpu=lambda w: P.resources(P.analyses[w.ns].resources)["gpu"],
        mem_mb=lambda w: P.resources(P.analyses[w.ns].resources)["mem_mb"],
        runtime=lambda w: P.resources(P.analyses[w.ns].resources)["runtime"],
    params:
        python=sys.executable,
        module=lambda w: P.module_name(P.analyses[w.ns].script),
        p=lambda w: P.params(P.analyses[w.ns].params),
        paths=lambda w, input, output: path_args([*input.items(), *output.items()]),
    shell:
        step_shell()


rule figure:
    input:
        code=lambda w: P.code(f"plot_{w.fig}"),
        arrays=P.out("analysis/{ns}.npz"),
    output:
        # Snakemake captions cannot name a file by wildcards: one Jinja caption shows the paper's caption text,
        # read when the HTML report is built (a Caption is no rerun trigger: editing it re-renders only the report)
        report(
            f"{P.reports}/figures/{{fig}}--{{ns}}.png",
            caption="figure_caption.rst",
            category=P.name,
            subcategory="{ns}",
        ),
    log:
        P.log("figure_{fig}--{ns}"),
    params:
        python=sys.executable,
        module=lambda w: P.module_name(f"plot_{w.fig}"),
        caption=lambda w: Caption(f"{P.dir}/captions/{w.fig}.rst"),
    shell:
        "{params.python:q} -m {params.module} --arrays {input.arrays:q} --out {output:q} --title {wildcards.ns} "
        "> {log:q} 2>&1"


rule report:
    input:
        config=P.out("config.json"),
        claims=f"{P.dir}/claims.yaml",
        deviations=f"{P.dir}/deviations.md",
        captions=P.captions(),
        metrics=P.metrics(),
        figures=P.figures(),
    output:
        f"{P.reports}/report.md",
        f"{P.reports}/claims.csv",
        f"{P.reports}/provenance.json",
    log:
        P.log("report"),
    params:
        python=sys.executable,
        skipped=P.params(P.skipped),
        name=P.name,
        tier=P.tier,
        out_dir=lambda w, output: os.path.dirname(output[0]),
        paper_dir=lambda w, input: os.path.dirname(input.claims),
    shell:
        "{params.python:q} -m shared.pipeline.report render --paper {params.name} --tier {params.tier} "
        "--paper-dir {params.paper_dir:q} --metrics {input.metrics} --figures {input.figures} --out-dir {params.out_dir:q} "
        "--config {input.config:q} --skipped {params.skipped:q} > {log:q} 2>&1"
