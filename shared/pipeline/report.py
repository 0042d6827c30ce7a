"""Render a paper's report (report.md, claims.csv, provenance.json) and the index of all reports.

    python -m shared.pipeline.report render --paper P --tier quick --paper-dir replications/P \
        --metrics results/P/quick/metrics/*.json --figures reports/P/quick/figures/*.png \
        --out-dir reports/P/quick [--config results/P/quick/config.json]
    python -m shared.pipeline.report index [--reports reports] [--out reports/index.md] [--replications replications]
"""
import argparse
import csv
import io
import json
import os
import re
from pathlib import Path

import yaml

from shared.io.files import write_json, write_text
from shared.pipeline import provenance
from shared.pipeline.claims import (
    FAIL,
    NOT_RUN,
    PASS,
    counts,
    format_value,
    load_claims,
    load_metrics,
    read_metrics_file,
    score,
)
from shared.pipeline.tiers import TIERS

CSV_COLUMNS = ["id", "kind", "tier", "status", "paper_value", "reproduced", "check", "expected", "reason",
               "metric", "secondary", "source", "statement", "note", "if_fail"]
STATUS_BADGE = {PASS: "✅ PASS", FAIL: "❌ **FAIL**", NOT_RUN: "⏸️ NOT RUN"}
QUICK_DISCLAIMER = (
    "Quick-tier numbers come from a scaled-down setting (less data, smaller models, fewer steps; see "
    "each claim's note) and are never a claim that the paper's number was matched: they only check "
    "that the paper's effect shows up at small scale."
)


# ---------------------------------------------------------------- markdown and csv helpers

def cell(value):
    """Text safe inside a GitHub table cell."""
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def table(headers, rows):
    lines = ["| " + " | ".join(map(cell, headers)) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]  # rows arrive already escaped
    return "\n".join(lines)


def write_csv(path, rows):
    columns = CSV_COLUMNS + sorted({key for row in rows for key in row} - set(CSV_COLUMNS))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_text(path, buffer.getvalue())


def read_csv(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


# ---------------------------------------------------------------- render

def render(paper, tier, paper_dir, metrics_paths, figure_paths, out_dir, config_path=None, skipped_namespaces=None):
    """Score the claims of one paper at one tier and write report.md, claims.csv, provenance.json.

    `skipped_namespaces` ({namespace: reason}) names analyses that could not run in this invocation (their
    experiment's dataset was left out, say): every claim reading them is NOT RUN with that reason.
    """
    paper_dir, out_dir = Path(paper_dir), Path(out_dir)
    claims_doc = load_claims(paper_dir / "claims.yaml")
    metrics, skipped = load_metrics(metrics_paths)
    for claim in claims_doc["claims"]:
        namespace = claim["metric"].split(".", 1)[0]
        if namespace in (skipped_namespaces or {}):
            skipped[claim["metric"]] = skipped_namespaces[namespace]
    results = score(claims_doc, metrics, skipped, tier)
    infos = {Path(p).name: read_metrics_file(p)["info"] for p in metrics_paths}
    config = _read_config(config_path) if config_path else None
    prov = provenance.collect(
        config, seeds=_gather(infos, config, ("seeds", "seed")), device=_gather(infos, config, ("device",)),
        extra={"paper": paper, "tier": tier, "config_path": str(config_path) if config_path else None,
               "metrics_info": infos, "figures": [Path(f).name for f in figure_paths]},
    )
    write_csv(out_dir / "claims.csv", [r.as_row() for r in results])
    write_json(out_dir / "provenance.json", prov)
    sections = [
        _summary(claims_doc, tier, results),
        _claims_table(tier, results),
        _figures(paper_dir, out_dir, figure_paths),
        _deviations(paper_dir, results),
        _all_metrics(metrics),
        _provenance(prov),
    ]
    write_text(out_dir / "report.md", "\n\n".join(sections) + "\n")
    return results


def _read_config(path):
    text = Path(path).read_text()
    return json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)


def _gather(infos, config, keys):
    """Distinct values of e.g. seeds / device across the config and every metrics file's info."""
    values = []
    for source in [config or {}, *infos.values()]:
        for key in keys:
            found = source.get(key) if isinstance(source, dict) else None
            for item in found if isinstance(found, list) else [found]:
                if item is not None and item not in values:
                    values.append(item)
    return values or None


def _summary(claims_doc, tier, results):
    n = counts(results)
    text = (f"Tier **{tier}**: {len(results)} claims, {n[PASS]} PASS, {n[FAIL]} FAIL, {n[NOT_RUN]} NOT RUN. "
            "Every status is computed from this run's metrics files; none is edited by hand.")
    if tier == "quick":
        text += " " + QUICK_DISCLAIMER
    return f"# {claims_doc['title']}\n\n{text}"


def _claims_table(tier, results):
    rows = []
    for r in results:
        notes = "; ".join(x for x in (r.note, r.reason) if x)
        paper_value = r.as_row()["paper_value"] or "—"
        rows.append([f"`{cell(r.id)}`", cell(r.statement), cell(r.source), cell(paper_value),
                     cell(r.expected or "—"), cell(r.reproduced or "—"), STATUS_BADGE[r.status], cell(notes)])
    headers = ["ID", "Claim", "Source", "Paper", f"Expected ({tier})", "Reproduced", "Status", "Notes"]
    return "## Claims\n\n" + (table(headers, rows) if rows else "_No claims listed in claims.yaml._")


def _figures(paper_dir, out_dir, figure_paths):
    parts = ["## Figures"]
    for figure in map(Path, figure_paths):
        # a figure drawn from an analysis (`<figure>--<analysis>.png`) is captioned by captions/<figure>.rst
        fig, _, ns = figure.stem.partition("--")
        title, caption = _caption(paper_dir / "captions" / f"{fig}.rst")
        if title and ns:
            title = f"{title} ({ns})"
        link = Path(os.path.relpath(figure, out_dir)).as_posix()
        parts.append(f"### {title or figure.stem}\n\n![{title or figure.stem}]({link})" + (f"\n\n{caption}" if caption else ""))
    if len(parts) == 1:
        parts.append("_No figures were produced._")
    return "\n\n".join(parts)


def _caption(path):
    """(title, caption) from a caption .rst: first line is the title, the rest the caption."""
    if not path.is_file():
        return None, ""
    lines = path.read_text().strip().splitlines()
    title, rest = lines[0].strip(), lines[1:]
    if rest and re.fullmatch(r"([=\-~^\"'`#*+])\1+", rest[0].strip()):  # drop an rst title underline
        rest = rest[1:]
    return title, "\n".join(rest).strip()


def _all_metrics(metrics):
    """Every number this run measured, claimed or not, so explanations can point at them."""
    rows = [[f"`{cell(name)}`", cell(format_value(value))] for name, value in sorted(metrics.items())]
    body = table(["Metric", "Value"], rows) if rows else "_No metrics._"
    return f"## All metrics of this run\n\n<details><summary>{len(rows)} values</summary>\n\n{body}\n\n</details>"


def _deviations(paper_dir, results):
    parts = ["## Deviations from the paper"]
    hand_written = paper_dir / "deviations.md"
    if hand_written.is_file():
        parts.append(hand_written.read_text().strip())
    parts.append("### Failed claims in this run")
    fails = [r for r in results if r.status == FAIL]
    if not fails:
        parts.append("No claim failed at this tier.")
    for r in fails:
        explanation = r.if_fail or ("**⚠️ NO EXPLANATION RECORDED** — add `if_fail` to this claim in "
                                    "claims.yaml or explain it in deviations.md.")
        parts.append(f"- **FAIL `{r.id}`** ({r.source}): {r.statement}\n"
                     f"  - measured: {r.reproduced or '—'}; expected: {r.expected}; {r.reason or 'check failed'}\n"
                     f"  - explanation: {explanation}")
    return "\n\n".join(parts)


def _provenance(prov):
    commit = f"`{prov['git_commit']}`" if prov["git_commit"] else "unknown (no git commit)"
    if prov["git_dirty"]:
        commit += " (working tree had uncommitted changes)"
    packages = ", ".join(f"{name} {version}" for name, version in prov["packages"].items()) or "—"
    lines = [
        "## Provenance", "",
        f"- Commit: {commit}",
        f"- Config hash: `{prov['config_hash']}`" if prov["config_hash"] else "- Config hash: — (no config given)",
        f"- Seeds: {_compact(prov['seeds'])}",
        f"- Device: {_compact(prov['device'])}",
        f"- Python {prov['python']} on {prov['platform']}, {prov['cpu_count']} CPUs",
        f"- Packages: {packages}",
        f"- Rendered at {prov['timestamp_utc']}; full record in `provenance.json`.",
    ]
    infos = prov["extra"]["metrics_info"]
    trained = {name: info["trained"] for name, info in infos.items() if info.get("trained")}
    if trained:  # recorded when the models were trained, which may be another commit or machine than this render
        rows = [[f"`{cell(name)}`", f"`{(t['git_commit'] or 'unknown')[:12]}`" + (" (dirty)" if t["git_dirty"] else ""),
                 f"`{t['config_hash']}`", cell(t["device"]), cell(t["timestamp_utc"])] for name, t in trained.items()]
        lines += ["", "Models as trained (provenance recorded at training time):", "",
                  table(["Metrics file", "Commit", "Hash of its parameters", "Device", "Trained at (UTC)"], rows)]
    if infos:
        rows = [[f"`{cell(name)}`", cell("; ".join(f"{k}={_compact(v)}" for k, v in info.items() if k != "trained")
                                         or "—")] for name, info in infos.items()]
        lines += ["", table(["Metrics file", "Info"], rows)]
    return "\n".join(lines)


def _compact(value):
    if value is None:
        return "—"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


# ---------------------------------------------------------------- index

def index(reports_dir="reports", out=None, replications_dir="replications"):
    """Merge each paper's per-tier claims.csv into reports/<paper>/claims.csv and write the index."""
    reports_dir = Path(reports_dir)
    out = Path(out) if out else reports_dir / "index.md"
    papers = {}
    for csv_path in sorted(reports_dir.glob("*/*/claims.csv")):
        paper, tier = csv_path.parent.parent.name, csv_path.parent.name
        if tier in TIERS:
            papers.setdefault(paper, {})[tier] = [{**row, "tier": tier} for row in read_csv(csv_path)]
    for paper, tiers in sorted(papers.items()):
        write_csv(reports_dir / paper / "claims.csv", [row for t in TIERS for row in tiers.get(t, [])])
    write_text(out, "# Replication reports\n\nClaims PASS / total per tier, computed from each run's metrics. "
                    "Quick-tier numbers come from scaled-down settings.\n\n"
                    + _status_table(papers, reports_dir, out.parent, replications_dir) + "\n")
    readme = reports_dir.parent / "README.md"
    if readme.is_file():
        _update_readme(readme, _status_table(papers, reports_dir, readme.parent, replications_dir))
    return papers


README_START, README_END = "<!-- claims-table:start -->", "<!-- claims-table:end -->"


def _status_table(papers, reports_dir, base, replications_dir):
    """One row per paper: PASS / total per tier, with links relative to `base`."""
    rel = lambda path: Path(os.path.relpath(path, base)).as_posix()
    rows = []
    for paper, tiers in sorted(papers.items()):
        cells = [cell(paper), cell(_paper_title(Path(replications_dir), paper))]
        for tier in TIERS:
            if tier not in tiers:
                cells.append("—")
                continue
            n = counts(tiers[tier])
            cells.append(f"[{n[PASS]} / {len(tiers[tier])} PASS]({rel(reports_dir / paper / tier / 'report.md')})"
                         + (f", {n[FAIL]} FAIL" if n[FAIL] else ""))
        rows.append(cells + [f"[claims.csv]({rel(reports_dir / paper / 'claims.csv')})"])
    return table(["Paper", "Title", *TIERS, "All claims"], rows) if rows else "_No reports yet._"


def _update_readme(readme, body):
    """Keep the README's status table equal to the index (between its two markers; untouched without them)."""
    text = readme.read_text()
    if README_START in text and README_END in text:
        head, rest = text.split(README_START, 1)
        _, tail = rest.split(README_END, 1)
        write_text(readme, f"{head}{README_START}\n{body}\n{README_END}{tail}")


def _paper_title(replications_dir, paper):
    try:
        return yaml.safe_load((replications_dir / paper / "claims.yaml").read_text())["title"]
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return paper


# ---------------------------------------------------------------- command line

def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m shared.pipeline.report", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("render", help="render one paper's report at one tier")
    r.add_argument("--paper", required=True)
    r.add_argument("--tier", required=True, choices=TIERS)
    r.add_argument("--paper-dir", required=True)
    r.add_argument("--metrics", nargs="*", default=[])
    r.add_argument("--figures", nargs="*", default=[])
    r.add_argument("--skipped", default="{}", help="JSON {namespace: reason} of analyses that could not run")
    r.add_argument("--out-dir", required=True)
    r.add_argument("--config")
    i = sub.add_parser("index", help="merge per-tier claims.csv files and write the index")
    add_index_arguments(i)
    args = parser.parse_args(argv)
    if args.command == "render":
        render(args.paper, args.tier, args.paper_dir, args.metrics, args.figures, args.out_dir, args.config,
               json.loads(args.skipped))
    else:
        index(args.reports, args.out, args.replications)


def add_index_arguments(parser):
    parser.add_argument("--reports", default="reports")
    parser.add_argument("--out", default=None, help="default: <reports>/index.md")
    parser.add_argument("--replications", default="replications")


if __name__ == "__main__":
    main()
