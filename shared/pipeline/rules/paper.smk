# The rules every paper shares, loaded once per paper as a Snakemake module with that paper as `P`
# (shared.pipeline.paper.Paper): the resolved config, one rule per declared Step, one rule over the analysis
# namespaces, their figures, the report. The Snakefile names them <paper>_config, <paper>_<step>, <paper>_analyze,
# <paper>_figure, <paper>_report. Config, figure and report are cheap bookkeeping, never sent to a cluster.
import os
import sys

from shared.pipeline.paper import path_args, step_shell
from shared.pipeline.report import FigureCaption, ReportText, figure_title

P = config["paper"]


wildcard_constraints:
    ns="|".join(P.analyses) or "none",
    fig="|".join({f for a in P.analyses.values() for f in a.figures}) or "none",


rule config:
    output:
        P.out("config.json"),
    log:
        P.log("config"),
    localrule: True
    params:
        cfg=P.params(P.cfg),
    run:
        from shared.io.files import write_text

        write_text(output[0], f"{params.cfg}\n")


# One rule per Step of pipeline.py (train, data, ...), named by the step. Before Snakemake 9.11.6 a rule named this way
# lost the module's <paper>_ prefix (hence the Snakefile's min_version).
for step in P.steps.values():

    rule:
        name:
            step.name
        input:
            **P.step_inputs(step),
        output:
            **step.outputs,
        log:
            P.log(step.log_name()),
        wildcard_constraints:
            **step.wildcards,
        priority: step.priority
        threads: P.threads(step.resources or step.name)
        resources:
            **P.resources(step.resources or step.name),
        params:
            **P.step(step.script),
            p=P.step_params(step),
        shell:
            step_shell()


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
        # Snakemake captions cannot name a file by wildcards: one Jinja caption shows the body of the paper's
        # captions/<fig>.rst, read when the HTML report is built (a FigureCaption is no rerun trigger: editing it
        # re-renders only the report); the report lists the figure by that caption's title and its analysis
        png=report(
            P.out("figures/{fig}--{ns}.png"),
            caption="figure_caption.rst",
            category=P.name,
            subcategory="{ns}",
            labels=lambda w: {"figure": figure_title(P.dir, w.fig), "analysis": w.ns},
        ),
        # the same figure as a vector PDF (plots.save writes both)
        pdf=P.out("figures/{fig}--{ns}.pdf"),
    log:
        P.log("figure_{fig}--{ns}"),
    localrule: True
    params:
        python=sys.executable,
        module=lambda w: P.module_name(f"plot_{w.fig}"),
        caption=lambda w: FigureCaption(f"{P.dir}/captions/{w.fig}.rst"),
        # the figure's title says what it shows: its caption's title line and the analysis, as report.md heads it
        title=lambda w: f"{figure_title(P.dir, w.fig)} ({w.ns})",
    shell:
        "{params.python:q} -m shared.pipeline.job {log:q} -- "
        "{params.python:q} -m {params.module} --arrays {input.arrays:q} --out {output.png:q} --title {params.title:q}"


rule report:
    input:
        config=P.out("config.json"),
        claims=f"{P.dir}/claims.yaml",
        deviations=f"{P.dir}/deviations.md",
        captions=P.captions(),
        metrics=P.metrics(),
        figures=P.figures(),
    # update(): Snakemake neither deletes the committed report before the job nor after a failed one (it restores
    # it); the render itself replaces the report, its figures and provenance all at once, or not at all
    output:
        md=update(f"{P.reports}/report.md"),
        csv=update(f"{P.reports}/claims.csv"),
        provenance=update(f"{P.reports}/provenance.json"),
        # the claims table in Snakemake's HTML report, beside the figures: the full table as the entry's file, a
        # compact one (claims.rst, with each FAIL's explanation) as its caption
        claims_html=update(
            report(
                f"{P.reports}/claims.html",
                caption="claims_caption.rst",
                category=P.name,
                subcategory=f"claims ({P.tier} tier)",
                labels={"table": "scored claims", "tier": P.tier},
            )
        ),
        claims_rst=update(f"{P.reports}/claims.rst"),
    log:
        P.log("report"),
    localrule: True
    params:
        python=sys.executable,
        skipped=P.params(P.skipped),
        name=P.name,
        tier=P.tier,
        out_dir=lambda w, output: os.path.dirname(output.md),
        paper_dir=lambda w, input: os.path.dirname(input.claims),
        claims_table=ReportText(f"{P.reports}/claims.rst"),
        costs_dir=os.path.dirname(P.log("report")),
    shell:
        "{params.python:q} -m shared.pipeline.report render --paper {params.name} --tier {params.tier} "
        "--paper-dir {params.paper_dir:q} --metrics {input.metrics} --figures {input.figures} --out-dir {params.out_dir:q} "
        "--config {input.config:q} --skipped {params.skipped:q} --costs-dir {params.costs_dir:q} > {log:q} 2>&1"
