"""The Snakemake HTML report, opened the way a reader opens it: `snakemake --report report.html` over a scratch copy
whose tiny quick tier ran (the `tiny_render` fixture, shared with the conformance suite), loaded in headless
Chromium, which runs the report's JavaScript app.

For each paper's claims entry the test does what a reader's click does (the app's own `showCategory` and
`showResultInfo`), lets the app render, and reads the DOM it produced: the claims table (every claim id with its
PASS / FAIL / NOT RUN status, as claims.csv scored it) and each FAIL's explanation must be on the page, the figures
must be listed by their caption titles, and no caption may render as a docutils error box. Skipped, with the
reason, when no Chromium is installed (Debian: `apt-get install -y chromium`).
"""
import base64
import csv
import html
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from shared.pipeline.paper import discover_papers
from shared.pipeline.report import figure_title
from shared.pipeline.scratch import ROOT, load_scaled, snakemake, tiny_configfiles

PAPERS = discover_papers(ROOT / "replications")
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM = next((path for path in map(shutil.which, BROWSERS) if path), None)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=f"no headless Chromium found (looked for {', '.join(BROWSERS)}); "
                                                         "install it with `apt-get install -y chromium`")

# Opens each claims entry as a reader's click does, then keeps a copy of what the side panel showed.
DRIVER = """
<script>
window.addEventListener("load", () => {
  const paths = Object.keys(results).filter((p) => p.endsWith("/claims.html"));
  const kept = document.createElement("div");
  kept.id = "claims-seen";
  document.body.appendChild(kept);
  let i = 0;
  const step = () => {
    if (i > 0) {
      const section = document.createElement("section");
      section.dataset.path = paths[i - 1];
      section.innerHTML = document.querySelector("nav").innerHTML;
      kept.appendChild(section);
    }
    if (i < paths.length) {
      app.showCategory(Object.keys(categories).find(
        (c) => Object.values(categories[c]).some((sub) => sub.includes(paths[i]))));
      app.showResultInfo(paths[i]);
      i += 1;
      setTimeout(step, 500);
    } else {
      kept.dataset.done = "yes";
    }
  };
  setTimeout(step, 500);
});
</script>
"""


class Tables(HTMLParser):
    """The rows of every <table> in an HTML fragment, as lists of cell texts."""

    def __init__(self):
        super().__init__()
        self.rows, self.row, self.cell = [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.rows.append(self.row)
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def table_rows(fragment):
    parser = Tables()
    parser.feed(fragment)
    return parser.rows


def text_of(fragment):
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


@pytest.fixture(scope="module")
def html_report(tiny_render, request):
    """(paper, scratch copy, the DOM Chromium dumped after the driver opened every claims entry, results JSON)."""
    name = request.param
    repo = tiny_render(name)
    files = [str(repo / Path(f).relative_to(ROOT)) for f in tiny_configfiles(name)]
    args = ["--cores", "1", name, *(["--configfile", *files] if files else []), "--report", "report.html"]
    proc = snakemake(repo, *args, timeout=load_scaled(300))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (repo / "report_build.log").write_text(proc.stdout + proc.stderr)
    page = (repo / "report.html").read_text()
    results = json.loads(re.search(r'<script id="results">\s*var results = (\{.*?\});?\s*</script>', page, re.S)[1])
    driven = repo / "report_driven.html"
    head, _, tail = page.rpartition("</body>")  # the last one: the page's scripts hold the string too
    driven.write_text(head + DRIVER + "</body>" + tail)
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--virtual-time-budget=30000", "--dump-dom", driven.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return name, repo, done.stdout, results


def shown_status(row):
    """A claims.csv row's status as the tables show it: ", post hoc" and ", fragile" added where they apply."""
    return row["status"] + (", post hoc" if row.get("post_hoc") else "") + (
        ", fragile" if row.get("robustness") == "fragile" else "")


@pytest.mark.parametrize("html_report", PAPERS, indirect=True)
def test_html_report_shows_each_papers_claims_table(html_report):
    name, repo, dom, results = html_report
    claims = [p for p in results if p.endswith("/claims.html")]
    assert claims == [f"reports/{name}/quick/claims.html"], claims  # one claims entry per paper and tier run
    assert 'id="claims-seen" data-done="yes"' in dom, "the report's app did not finish rendering the claims entries"
    seen = re.search(r'<section data-path="reports/' + name + r'/quick/claims.html">(.*?)</section>', dom, re.S)
    assert seen, "the claims entry's panel was not shown"
    panel = seen[1]
    scored = {row["id"]: row for row in csv.DictReader(open(repo / "reports" / name / "quick" / "claims.csv"))}
    shown = {row[0]: row[2] for row in table_rows(panel) if row and row[0] in scored}
    assert shown == {cid: shown_status(row) for cid, row in scored.items()}, "the table shown differs from claims.csv"
    words = text_of(panel)
    for cid, row in scored.items():
        if row["status"] == "FAIL":
            assert re.search(rf"FAIL {re.escape(cid)} ?: \S", words), f"{cid}: no explanation line for its FAIL"
    assert "system-message" not in panel and "System Message" not in words  # docutils error boxes
    # the entry's file, opened in the main pane, is the full table with statements
    data = results[claims[0]]["data_uri"]
    full = base64.b64decode(data.split(",", 1)[1]).decode()
    assert all(f'id="claim-{cid}"' in full for cid in scored)


@pytest.mark.parametrize("html_report", PAPERS, indirect=True)
def test_html_report_lists_figures_by_title_with_clean_captions(html_report):
    name, repo, dom, results = html_report
    figures = {p: r for p, r in results.items() if p.endswith(".png")}
    assert figures
    for path, entry in figures.items():
        fig, _, ns = Path(path).stem.partition("--")
        assert entry["labels"] == {"figure": figure_title(repo / "replications" / name, fig), "analysis": ns}, path
        assert "system-message" not in entry["caption"], (path, entry["caption"][:500])
        assert entry["caption"].strip(), path
        # the job's parameters name the caption file; its text is not repeated there with literal \n
        params = entry["job_properties"]["params"]
        assert f"caption=replications/{name}/captions/{fig}.rst" in params and "\\n" not in params, path


@pytest.mark.parametrize("html_report", PAPERS, indirect=True)
def test_html_report_opens_on_the_claims_then_the_figures(html_report):
    """The first screen is the landing page (rules/report_landing.rst), not the workflow graph: the paper's claims
    table with every claim's status, then a link to each figure by its title; and building the report warned of no
    output without metadata."""
    name, repo, _, results = html_report
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--virtual-time-budget=10000", "--dump-dom", (repo / "report.html").as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    landing = done.stdout.split("Replication results", 1)
    assert len(landing) == 2, "the report does not open on the results"
    page = landing[1]
    scored = {row["id"]: shown_status(row)
              for row in csv.DictReader(open(repo / "reports" / name / "quick" / "claims.csv"))}
    shown = {row[0]: row[2] for row in table_rows(page) if row and row[0] in scored}
    assert shown == scored, "the landing page's claims table differs from claims.csv"
    words = text_of(page)
    figures = [p for p in results if p.endswith(".png")]
    titles = [f"{results[p]['labels']['figure']} ({results[p]['labels']['analysis']})" for p in figures]
    assert all(text_of(html.escape(t)) in words for t in titles), "a figure is missing from the landing page"
    assert words.index(text_of(html.escape(titles[0]))) > max(words.index(cid) for cid in scored)  # claims first
    assert "Missing metadata" not in (repo / "report_build.log").read_text()
