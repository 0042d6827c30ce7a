"""What the reader sees beside the numbers, checked for every discovered paper and the template (no run needed):
  * every caption file is valid reStructuredText: docutils renders it (as Snakemake's HTML report does) without a
    system message of level warning or above, which the HTML report would show as an error box;
  * every claim that FAILs in a committed report has an explanation: its `if_fail`, or a deviations.md passage that
    names its id (report.md never prints 'NO EXPLANATION RECORDED' for it);
  * the claims table the HTML report shows (claims.rst, scored from each committed report's kept metrics) renders
    without a warning too.
"""
import csv

import docutils.core
import pytest

from shared.pipeline.claims import FAIL, load_claims, load_metrics, score
from shared.pipeline.paper import discover_papers
from shared.pipeline.report import _caption, claims_rst, explanation, rst_problems
from shared.pipeline.scratch import ROOT
from shared.pipeline.tiers import TIERS

TEMPLATE = ROOT / "shared" / "templates" / "paper"
PAPER_DIRS = {name: ROOT / "replications" / name for name in discover_papers(ROOT / "replications")}
PAPER_DIRS["template"] = TEMPLATE
CAPTIONS = sorted(p for d in PAPER_DIRS.values() for p in (d / "captions").glob("*.rst"))
REPORTS = sorted(ROOT.glob("reports/*/*/claims.csv"))



@pytest.mark.parametrize("path", CAPTIONS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_caption_is_valid_restructuredtext(path):
    title, body = _caption(path)
    assert title and body, f"{path}: a title line, then the caption"
    for what, text in (("file", path.read_text()), ("caption the HTML report shows", body)):
        problems = rst_problems(text)
        assert not problems, (f"{path.relative_to(ROOT)} ({what}) is not clean reStructuredText; escape markup "
                              f"characters (\\|, \\*) or use ``literals``:\n{problems}")


@pytest.mark.parametrize("csv_path", REPORTS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_every_committed_fail_is_explained(csv_path):
    paper, tier = csv_path.parent.parent.name, csv_path.parent.name
    if tier not in TIERS or paper not in PAPER_DIRS:
        pytest.skip(f"{csv_path} is no paper's tier report")
    claims = {c["id"]: c for c in load_claims(PAPER_DIRS[paper] / "claims.yaml")["claims"]}
    fails = [row for row in csv.DictReader(open(csv_path)) if row["status"] == FAIL and row["id"] in claims]

    class Result:  # what explanation() reads of a scored claim
        def __init__(self, cid):
            self.id, self.if_fail = cid, claims[cid].get("if_fail")

    unexplained = [row["id"] for row in fails if not explanation(Result(row["id"]), PAPER_DIRS[paper])]
    assert not unexplained, (
        f"{paper} ({tier}): these claims FAIL with no explanation; give each an `if_fail` in claims.yaml (what the "
        f"failure means, from deviations.md where it says) or name its id in deviations.md: {unexplained}")


def test_no_committed_report_prints_no_explanation():
    unexplained = [p.relative_to(ROOT).as_posix() for p in sorted(ROOT.glob("reports/**/*.md"))
                   if "NO EXPLANATION RECORDED" in p.read_text()]
    assert REPORTS and not unexplained, f"reports with an unexplained FAIL: {unexplained}"


@pytest.mark.parametrize("report_dir", [p.parent for p in REPORTS if (p.parent / "metrics").is_dir()],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_claims_table_for_the_html_report_is_valid_restructuredtext(report_dir):
    paper, tier = report_dir.parent.name, report_dir.name
    doc = load_claims(PAPER_DIRS[paper] / "claims.yaml")
    metrics, skipped = load_metrics(sorted((report_dir / "metrics").glob("*.json")))
    results = score(doc, metrics, skipped, tier)
    text = claims_rst(doc["title"], tier, results, {r.id: explanation(r, PAPER_DIRS[paper]) for r in results
                                                    if r.status == FAIL})
    assert not rst_problems(text), rst_problems(text)
    body = docutils.core.publish_parts(text, writer="html")["body"]
    assert all(r.id in body for r in results)
