# Top-level workflow. Every folder of replications/ with a pipeline.py is a paper and joins the DAG:
#   snakemake --cores 2                 quick tier of every paper, then reports/index.md
#   snakemake --cores 2 bilinear_mlp    one paper by name (only it, and the papers it needs, are parsed)
#   snakemake --profile profiles/full   paper-scale settings (GPU recommended)
#   snakemake --cores 2 benchmarks      speed and platform ratios measured on this machine -> reports/benchmarks.json
# Each paper is a Snakemake module with a namespace of its own: its rules are named <paper>_<rule>, its globals
# are invisible to every other paper, and it reaches its validated config as `P` (shared/pipeline/paper.py).
import sys

from snakemake.utils import min_version

from shared.pipeline.config import ConfigError, check_workflow_config, validate_tier
from shared.pipeline.handlers import cancel_pending_reselection, show_failed_data_logs
from shared.pipeline.paper import discover_papers, load_papers, papers_named_by

min_version("9.11.6")  # modules declared in a loop (below); named rules in a module keep its prefix from 9.11.6

ALL_PAPERS = discover_papers(Path(workflow.basedir) / "replications")
try:  # bad input stops the run here, before any job, with one message that names the paper, file and key
    check_workflow_config(config, ALL_PAPERS)
    TIER = validate_tier(config.get("tier", "quick"))
    # only the papers the targets name (and those they need) are parsed; no target, or one over all, parses all
    PAPERS = load_papers(papers_named_by(sys.argv, ALL_PAPERS) or ALL_PAPERS, TIER, config, config.get("accelerator"))
except ConfigError as error:
    sys.exit(f"Invalid input; nothing was run.\n{error}")


wildcard_constraints:
    dataset=r"[a-z0-9_]+",


rule all:
    default_target: True
    input:
        [f"{P.reports}/report.md" for P in PAPERS.values()],
        "reports/index.md",


include: "shared/pipeline/rules/data.smk"
include: "shared/pipeline/rules/common.smk"


# profiles/default sets Snakemake's job rate limit to 10,000 jobs per 10 s: its scheduler re-selects jobs each time
# the limit's timespan passes, and each selection round while jobs wait starts one more such timer, so at the
# default (100 per 1 s) hundreds of rounds a second re-examined the waiting jobs (CPU of Snakemake's process and its
# job launchers: 22.7 s at the default, 14.4 s at 10 s, for 10 papers' tiny quick tiers, 88 jobs, 2026-12-07, a
# loaded machine). A timer still pending when the run ends would hold the process open until it fires.
onsuccess:
    cancel_pending_reselection()


onerror:
    show_failed_data_logs(DATA_RUN_STARTED)
    cancel_pending_reselection()


# One module per paper, declared in the loop by Snakemake's public syntax ("dynamic modules", Snakemake 9): the
# module's name and the `as` alias must be variables. Traps: a `localrules:` statement inside a module is not renamed
# by the prefix (the shared rules say `localrule: True` instead), and a top-level `localrules:` takes only literals.
for name, P in PAPERS.items():
    shared_name, prefix = f"{name}_shared", f"{name}_"

    module:
        name: shared_name
        snakefile:
            "shared/pipeline/rules/paper.smk"
        config:
            {"paper": P}

    use rule * from shared_name as prefix*

    if P.rules_file:  # rules.smk is optional: only a paper's unusual rules live there

        module:
            name: name
            snakefile:
                P.rules_file
            config:
                {"paper": P}

        use rule * from name as prefix*

    rule:
        name:
            name
        input:
            f"{P.reports}/report.md",
