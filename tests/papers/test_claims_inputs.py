"""Every paper's claims.yaml passes the input checks a run makes (shared.pipeline.claims): its `paper:` field is its
folder's name, no counterexample passes its own check, every claim reads a namespace an analysis of its tier writes,
and every metric key a committed report scored is one its analysis wrote. Fast: no Snakemake run."""
from pathlib import Path

import pytest

from shared.pipeline.claims import check_claims_inputs, check_metrics_written, load_claims, load_metrics
from shared.pipeline.paper import discover_papers, load_papers
from shared.pipeline.tiers import TIERS

ROOT = Path(__file__).resolve().parents[2]
PAPERS = discover_papers(ROOT / "replications")


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("paper", PAPERS)
def test_claims_inputs_pass_the_checks_made_before_any_job(paper, tier):
    loaded = load_papers([paper], tier, {}, root=ROOT)[paper]  # runs them too; called here to be plain about it
    check_claims_inputs(loaded.claims, paper, tier, set(loaded.analyses) | set(loaded.skipped),
                        f"replications/{paper}/claims.yaml")


@pytest.mark.parametrize("report", sorted(p.parent for p in (ROOT / "reports").glob("*/*/provenance.json")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_metric_a_committed_report_scored_was_written(report):
    paths = sorted((report / "metrics").glob("*.json"))
    if not paths:
        pytest.skip("the report kept no metrics files")
    metrics, skipped = load_metrics(paths)
    doc = load_claims(ROOT / "replications" / report.parent.name / "claims.yaml")
    check_metrics_written(doc, report.name, metrics, skipped, paths, f"replications/{report.parent.name}/claims.yaml")
