"""What makes a paper's claims trustworthy, checked for every discovered paper and the template (no run needed):
  * every finding names a counterexample, and its check FAILs it at every tier: a check no plausible outcome can
    fail is caught when it is written;
  * deviations.md says which expectations were fixed before the first run and which analysis choices were made
    after seeing results (the report's header shows both);
  * a committed quick report is not stale: its claims.yaml, deviations.md, config and the code that produced its
    metrics are what it was rendered from.
"""
import pytest

from shared.pipeline.claims import FINDING, counterexample_outcomes, load_claims
from shared.pipeline.paper import discover_papers
from shared.pipeline.report import CHOSEN_AFTER, FIXED_BEFORE, deviation_sections
from shared.pipeline.scratch import ROOT
from shared.pipeline.staleness import check_report

TEMPLATE = ROOT / "shared" / "templates" / "paper"
PAPER_DIRS = {name: ROOT / "replications" / name for name in discover_papers(ROOT / "replications")}
PAPER_DIRS["template"] = TEMPLATE


@pytest.mark.parametrize("name", PAPER_DIRS)
def test_every_finding_has_a_counterexample_that_fails(name):
    doc = load_claims(PAPER_DIRS[name] / "claims.yaml")  # the schema requires kind, and a counterexample per finding
    assert any(c["kind"] == FINDING for c in doc["claims"]) or name == "template"
    passing = [(cid, tier) for cid, tier, passed in counterexample_outcomes(doc) if passed]
    assert not passing, f"{name}: these counterexamples PASS their own check (the check cannot fail): {passing}"


@pytest.mark.parametrize("name", PAPER_DIRS)
def test_deviations_state_when_expectations_and_choices_were_made(name):
    sections = deviation_sections(PAPER_DIRS[name])
    for title in (FIXED_BEFORE, CHOSEN_AFTER):
        assert sections.get(title), f"{name}: deviations.md needs a non-empty section '## {title}'"


@pytest.mark.parametrize("name", [n for n in PAPER_DIRS if (ROOT / "reports" / n / "quick").is_dir()])
def test_committed_quick_report_is_not_stale(name):
    state = check_report(ROOT / "reports" / name / "quick", PAPER_DIRS[name], "quick")
    assert not state.stale, (
        f"reports/{name}/quick (rendered {state.rendered}) is stale: {'; '.join(state.reasons)}. Re-render it: "
        f"`python -m shared.pipeline.report rerender --paper {name} --tier quick` when only claims.yaml or "
        f"deviations.md changed, else `snakemake --cores 2 {name}`.")
