"""Render a paper's report (report.md, claims.csv, claims.html, claims.rst, provenance.json) and the index of all
reports.

    python -m shared.pipeline.report render --paper P --tier quick --paper-dir replications/P \
        --metrics results/P/quick/metrics/*.json --figures reports/P/quick/figures/*.png \
        --out-dir reports/P/quick [--config results/P/quick/config.json]
    python -m shared.pipeline.report rerender --paper P --tier full [--reports reports] [--replications replications]
    python -m shared.pipeline.report index [--reports reports] [--out reports/index.md] [--replications replications]

`render` copies the metrics files it scored into <out-dir>/metrics/ and the resolved config to <out-dir>/config.json,
so that `rerender` can score an edited claims.yaml from a committed report without running anything again.
claims.html (the full claims table) and claims.rst (a compact one, its caption) are what Snakemake's HTML report
(`snakemake --report report.html`) shows of the claims beside the figures: report.md's table, as HTML.
A render also reads <out-dir>/seeds.json (`replicate seeds`) and <out-dir>/drift.json (`replicate drift`) when they
are there: a claim whose status differs at another seed or on other kernels is fragile (shared.pipeline.seeds).
"""
import argparse
import csv
import html
import io
import json
import os
import re
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path

import yaml

from shared.io.files import write_json, write_text
from shared.io.smoke import cap as smoke_cap
from shared.pipeline import provenance, seeds, staleness
from shared.pipeline.job import busy_wall_seconds, read_costs, summarize_costs
from shared.pipeline.claims import (
    FAIL,
    FINDING,
    FINDING_BUCKETS,
    FRAGILE,
    IDENTITY,
    NOT_RUN,
    PASS,
    POST_HOC_FINDING,
    ROBUST_PASS,
    ClaimsError,
    counts_by_group,
    format_value,
    load_claims,
    load_metrics,
    read_metrics_file,
    score,
)
from shared.pipeline.claims import check_metrics_written  # the input checks, kept apart
from shared.pipeline.config import PAPER_SCALE, ConfigError, committed_config_hashes
from shared.pipeline.tiers import TIERS, config_hash

# new columns go at the end, so that a reader of an older claims.csv finds every column where it was
CSV_COLUMNS = ["id", "kind", "tier", "status", "paper_value", "reproduced", "check", "expected", "reason",
               "metric", "secondary", "source", "statement", "note", "if_fail",
               "post_hoc", "control", "control_value", "robustness", "spread"]
STATUS_BADGE = {PASS: "✅ PASS", FAIL: "❌ **FAIL**", NOT_RUN: "⏸️ NOT RUN"}
QUICK_DISCLAIMER = (
    "Quick-tier numbers come from a scaled-down setting (less data, smaller models, fewer steps; see "
    "each claim's note) and are never a claim that the paper's number was matched: they only check "
    "that the paper's effect shows up at small scale."
)
KIND_NOTE = (
    "A finding is an empirical result the paper reports: its PASS is a reproduction. An identity is an exact "
    "property the implementation must satisfy: its PASS is a test of the code, not a reproduction. A control shows "
    "that a check can tell the difference. An extension is this suite's own addition, not the paper's. A finding "
    "is robust when other seeds and other float kernels give it the same status, fragile when one of them does not; "
    "a post-hoc finding, whose check was chosen after seeing results, is counted apart."
)
PLURAL = {"finding": "findings", POST_HOC_FINDING: "post-hoc findings", "extension": "extensions",
          "identity": "identities", "control": "controls"}
NO_EXPLANATION = ("**⚠️ NO EXPLANATION RECORDED** — add `if_fail` to this claim in claims.yaml or explain it in "
                  "deviations.md (naming its id).")
FIXED_BEFORE = "Expectations fixed before the first run"
CHOSEN_AFTER = "Analysis choices made after seeing results"


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

def render(paper, tier, paper_dir, metrics_paths, figure_paths, out_dir, config_path=None, skipped_namespaces=None,
           costs_dir=None, cost=None):
    """Score the claims of one paper at one tier and write report.md, claims.csv, provenance.json.

    `skipped_namespaces` ({namespace: reason}) names analyses that could not run in this invocation (their
    experiment's dataset was left out, say): every claim reading them is NOT RUN with that reason. `costs_dir` holds
    the jobs' cost records (shared.pipeline.job, <log>.cost.json); `cost` is a cost already summarized (a re-render).

    All or nothing: everything is written into a copy of out_dir that replaces it only when the whole render
    succeeded (`staged`); `figure_paths` are copied into its figures/ then, so a run that fails midway leaves the
    last report and its figures as they were. A config that differs from the committed one is named at the top.
    """
    with staged(out_dir) as stage:
        return _render(paper, tier, Path(paper_dir), metrics_paths, figure_paths, Path(out_dir), stage, config_path,
                       skipped_namespaces, costs_dir, cost)


def _render(paper, tier, paper_dir, metrics_paths, figure_paths, out_dir, stage, config_path, skipped_namespaces,
            costs_dir, cost):
    claims_doc = load_claims(paper_dir / "claims.yaml")
    metrics, skipped = load_metrics(metrics_paths)
    for claim in claims_doc["claims"]:
        namespace = claim["metric"].split(".", 1)[0]
        if namespace in (skipped_namespaces or {}):
            skipped[claim["metric"]] = skipped_namespaces[namespace]
    config = _read_config(config_path) if config_path else None
    overrides = config_overrides(paper_dir, tier, config)
    # a config that differs from config.yaml's tier and is still committed: the declared paper-scale part
    paper_scale = bool(overrides) and config_hash(config) in committed_config_hashes(paper_dir, tier)
    skipped.update(check_metrics_written(claims_doc, tier, metrics, skipped, metrics_paths, f"{paper_dir}/claims.yaml",
                                         overridden=bool(overrides)))
    # a smoke run trains a few steps, so its controls pass like its results: each such claim FAILs there instead of
    # stopping the render (the full tier's report must still be reached)
    results = score(claims_doc, metrics, skipped, tier, refuse_passing_controls=smoke_cap() is None)
    infos = {Path(p).name: read_metrics_file(p)["info"] for p in metrics_paths}
    prov = provenance.collect(
        config, seeds=_gather(infos, config, ("seeds", "seed")), device=devices_that_ran(infos, config),
        extra={"paper": paper, "tier": tier, "config_path": str(config_path) if config_path else None,
               "metrics_info": {name: _without_code(info) for name, info in infos.items()},
               # the orders as listed (a JSON object's keys are written sorted), for rerender
               "metrics": list(infos), "figures": [Path(f).name for f in figure_paths], "skipped_namespaces": skipped_namespaces or {}},
    )
    prov["inputs"] = staleness.report_inputs(paper_dir, config, infos)
    drift, seeds_doc = _read_drift(out_dir / "drift.json"), seeds.read(out_dir / "seeds.json")
    if drift and drift.get("against", {}).get("config_hash") not in (None, prov["inputs"]["config"]):
        drift = {**drift, "stale": "measured against another config"}
    seeds_stale = seeds.stale_reasons(seeds_doc, prov["inputs"]) if seeds_doc else []
    runs = seeds.other_runs(claims_doc, tier, None if seeds_stale else seeds_doc,
                            None if drift is None or drift.get("stale") else drift)
    seeds.mark_robustness(results, runs)
    if costs_dir is not None:
        records = [r for r in read_costs(costs_dir) if not r["job"].endswith(" report")]
        cost = {"summary": summarize_costs(records), "jobs": [{k: r.get(k) for k in COST_COLUMNS} for r in records]}
    prov["cost"] = cost
    prov["extra"]["config_overrides"] = overrides
    prov["extra"]["paper_scale"] = paper_scale
    _keep_metrics(metrics_paths, stage / "metrics")
    if config_path and Path(config_path).resolve() != (out_dir / "config.json").resolve():
        shutil.copyfile(config_path, stage / "config.json")
    figure_paths = [out_dir / "figures" / name for name in publish_figures(figure_paths, stage / "figures")]
    write_csv(stage / "claims.csv", [r.as_row() for r in results])
    write_json(stage / "provenance.json", prov)
    explanations = {r.id: explanation(r, paper_dir) for r in results if r.status == FAIL}
    for cid, text in explanations.items():
        if text is None:  # shown in the report, and said in the job's log
            print(f"warning: {paper} ({tier}): claim {cid} FAILs and has no explanation: give it an `if_fail` in "
                  "claims.yaml or name it in deviations.md", file=sys.stderr)
    write_text(stage / "claims.html", claims_html(claims_doc["title"], tier, results, explanations))
    write_text(stage / "claims.rst", claims_rst(claims_doc["title"], tier, results, explanations))
    sections = [
        with_override_banner(_summary(claims_doc, tier, results, paper_dir, runs), overrides, paper_dir, tier,
                             paper_scale),
        _claims_table(tier, results, runs),
        _seeds(seeds_doc, seeds_stale, results, runs),
        _drift(drift),
        _figures(paper_dir, out_dir, figure_paths),
        _deviations(paper_dir, results, explanations),
        _all_metrics(metrics),
        _cost(prov.get("cost")),
        _provenance(prov),
    ]
    write_text(stage / "report.md", "\n\n".join(sections) + "\n")
    return results


# ---------------------------------------------------------------- overrides marked, reports written all or nothing

@contextmanager
def staged(out_dir):
    """Yield a copy of `out_dir` to write into; it replaces `out_dir` (two renames) only if the block finishes, so a
    render that fails leaves the last report whole. Leftovers of a render killed midway are removed first."""
    out_dir = Path(out_dir)
    stage, old = out_dir.with_name(f".{out_dir.name}.rendering"), out_dir.with_name(f".{out_dir.name}.replaced")
    for leftover in (stage, old):
        shutil.rmtree(leftover, ignore_errors=True)
    if out_dir.is_dir():
        shutil.copytree(out_dir, stage)
    else:
        stage.mkdir(parents=True)
    try:
        yield stage
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    if out_dir.exists():
        os.replace(out_dir, old)
    os.replace(stage, out_dir)
    shutil.rmtree(old, ignore_errors=True)


def publish_figures(figure_paths, figures_dir):
    """Make `figures_dir` hold exactly these figures (each .png with the .pdf drawn beside it); return their names.
    Figures are drawn under results/ and reach reports/ only here, with the report that shows them."""
    sources = [Path(p) for p in figure_paths]
    sources += [p.with_suffix(".pdf") for p in sources if p.with_suffix(".pdf").is_file()]
    kept = {p.name: p.read_bytes() for p in sources}  # read first: a re-render's sources are these very files
    figures_dir.mkdir(parents=True, exist_ok=True)
    for old in [*figures_dir.glob("*.png"), *figures_dir.glob("*.pdf")]:
        old.unlink()
    for name, data in kept.items():
        (figures_dir / name).write_bytes(data)
    return [Path(p).name for p in figure_paths]


def config_overrides(paper_dir, tier, config):
    """[{key, committed, used}]: every dotted key where the resolved `config` a run used differs from the committed
    config.yaml at `tier` (by --config, --configfile or a profile); empty when none differs, None when there is no
    config to compare (no config recorded, or a paper folder without config.yaml)."""
    from shared.pipeline.config import load_paper_config

    if config is None or not (Path(paper_dir) / "config.yaml").is_file():
        return None
    committed = json.loads(json.dumps(load_paper_config(paper_dir, tier)))  # as config.json stores it
    return [{"key": key, "committed": a, "used": b} for key, a, b in _differences(committed, config)]


_ABSENT = "(absent)"


def _differences(committed, used, prefix=""):
    for key in sorted(set(committed) | set(used), key=str):
        a, b = committed.get(key, _ABSENT), used.get(key, _ABSENT)
        if isinstance(a, dict) and isinstance(b, dict):
            yield from _differences(a, b, f"{prefix}{key}.")
        elif a != b:
            yield f"{prefix}{key}", a, b


def with_override_banner(summary, overrides, paper_dir, tier, paper_scale=False):
    """The report's header with, under its title, the list of every key this run changed, when it changed any."""
    if not overrides:
        return summary
    title, _, rest = summary.partition("\n\n")
    where = Path(paper_dir).as_posix()
    if paper_scale:
        lines = [f"> **The paper-scale part of the full tier** (`{where}/{PAPER_SCALE}`, committed): the full tier's "
                 f"settings except the {len(overrides)} key(s) below, which that file changes; it says what they "
                 "leave out and why. Claims that read only what was left out are NOT RUN.", ">"]
    else:
        lines = [f"> ⚠️ **Not the committed config.** This run changed {len(overrides)} key(s) of "
                 f"`{where}/config.yaml` ({tier} tier) by --config, --configfile or a profile; its "
                 "numbers are not those of the committed settings:", ">"]
    lines += [f"> - `{o['key']}`: {_compact(o['committed'])} → {_compact(o['used'])}" for o in overrides]
    return "\n\n".join([title, "\n".join(lines), rest])


def override_mark(report_dir):
    """For the index and README: a note on a report rendered from a config other than the committed one."""
    path = Path(report_dir) / "provenance.json"
    extra = json.loads(path.read_text()).get("extra", {}) if path.is_file() else {}
    overrides = extra.get("config_overrides")
    if not overrides:
        return ""
    keys = [o["key"] for o in overrides]
    shown = ", ".join(f"`{k}`" for k in keys[:SHOWN_KEYS]) + (f" and {len(keys) - SHOWN_KEYS} more" if len(keys) > SHOWN_KEYS else "")
    if extra.get("paper_scale"):
        return f"<br>the paper-scale part ({PAPER_SCALE}): {shown}"
    return f"<br>⚠️ **not the committed config**: {shown}"


SHOWN_KEYS = 3


def rerender(paper, tier, reports_dir="reports", replications_dir="replications", skipped_namespaces=None):
    """Score the paper's claims.yaml again from the metrics and figures a rendered report kept (no run); analyses
    that were skipped then (plus `skipped_namespaces`, {namespace: reason}) read NOT RUN with their reason."""
    out_dir = Path(reports_dir) / paper / tier
    prov = json.loads((out_dir / "provenance.json").read_text()) if (out_dir / "provenance.json").is_file() else {}
    recorded = prov.get("extra", {})
    # in the order the last render listed them (a Snakemake render: the paper's declared order), so that a re-render
    # writes the same report as the render it repeats
    listed = recorded.get("metrics", recorded.get("metrics_info", {}))  # reports from before "metrics" was recorded
    metrics = _in_order((out_dir / "metrics").glob("*.json"), listed)
    if not metrics:
        raise SystemExit(f"{out_dir}/metrics holds no metrics files: run the pipeline for {paper} ({tier}) instead")
    config_path = out_dir / "config.json"  # without it the report records no config, and the index marks it stale
    figures = _in_order((out_dir / "figures").glob("*.png"), recorded.get("figures", []))
    skipped = {**prov.get("extra", {}).get("skipped_namespaces", {}), **(skipped_namespaces or {})}
    return render(paper, tier, Path(replications_dir) / paper, metrics, figures, out_dir,
                  config_path if config_path.is_file() else None, skipped, cost=prov.get("cost"))


def _in_order(paths, names):
    """`paths` ordered as their file names appear in `names`; any not there after them, by name."""
    position = {name: i for i, name in enumerate(names)}
    return sorted(paths, key=lambda path: (position.get(path.name, len(position)), path.name))


def _keep_metrics(metrics_paths, keep_dir):
    """Copy the scored metrics files beside the report (replacing the last run's), for `rerender`."""
    sources = [Path(p).resolve() for p in metrics_paths]
    if keep_dir.resolve() in {p.parent for p in sources}:
        return  # re-rendering from the kept files themselves
    keep_dir.mkdir(parents=True, exist_ok=True)
    for old in keep_dir.glob("*.json"):
        old.unlink()
    for path in sources:
        shutil.copyfile(path, keep_dir / path.name)


def _without_code(info):
    """A metrics file's info without the per-file code hashes (provenance.json keeps them once, under inputs)."""
    info = {k: v for k, v in info.items() if k != "code"}
    if isinstance(info.get("trained"), dict):
        info["trained"] = {k: v for k, v in info["trained"].items() if k != "code"}
    return info


def _read_config(path):
    text = Path(path).read_text()
    return json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)


def devices_that_ran(infos, config=None):
    """The devices the jobs ran on, as their metrics files (from the checkpoint's metadata) recorded them. The config's
    request ('auto', say) is only shown, marked as such, when no job recorded one."""
    devices = _gather(infos, None, ("device",))
    trained = [info["trained"].get("device") for info in infos.values() if isinstance(info.get("trained"), dict)]
    for device in trained:
        if device is not None and device not in (devices or []):
            devices = [*(devices or []), device]
    if devices:
        return devices
    requested = (config or {}).get("device") if isinstance(config, dict) else None
    return [f"{requested} (requested in the config; no job recorded the device it ran on)"] if requested else None


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


def _summary(claims_doc, tier, results, paper_dir, runs=()):
    rerun = ", ".join(label for label, _ in runs) or "none (a PASS is counted 'PASS not rerun')"
    text = (f"Tier **{tier}**, {len(results)} claims: {kind_counts_text(results)}. {KIND_NOTE} Runs the statuses "
            f"were compared with: {rerun}. Every status is computed from this run's metrics files; none is edited "
            "by hand.")
    if tier == "quick":
        text += " " + QUICK_DISCLAIMER
    sections = deviation_sections(paper_dir)
    header = [f"# {claims_doc['title']}", text]
    for title in (FIXED_BEFORE, CHOSEN_AFTER):
        body = sections.get(title) or f"**⚠️ Not stated**: deviations.md has no section '## {title}'."
        header.append(f"### {title}\n\n{body}")
    return "\n\n".join(header)


def kind_counts_text(results, link=None):
    """'findings 16 robust PASS / 2 fragile / 4 FAIL / 2 NOT RUN of 24; post-hoc findings 1 robust PASS of 1;
    identities 30 / 30 PASS; controls 3 / 3 PASS' (a PASS no other run scored: 'PASS not rerun')."""
    parts = []
    for group, n in counts_by_group(results).items():
        total = sum(n.values())
        name = PLURAL.get(group, group)
        if group in (FINDING, POST_HOC_FINDING):
            others = "".join(f" / {n[b]} {b}" for b in FINDING_BUCKETS[1:] if n[b])
            text = f"{name} {n[ROBUST_PASS]} {ROBUST_PASS}{others} of {total}"
        else:
            text = f"{name} {n[PASS]} / {total} PASS"
            if n[FAIL]:
                text += f" ({n[FAIL]} FAIL{' — a bug' if group == IDENTITY else ''})"
        parts.append(f"[{text}]({link})" if link and group == FINDING else text)
    return "; ".join(parts) or "no claims"


def deviation_sections(paper_dir):
    """{heading: body} of the `## ` sections of deviations.md."""
    path = Path(paper_dir) / "deviations.md"
    if not path.is_file():
        return {}
    sections, title = {}, None
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            title = line[3:].strip()
            sections[title] = []
        elif title is not None:
            sections[title].append(line)
    return {t: "\n".join(lines).strip() for t, lines in sections.items()}


def _claims_table(tier, results, runs=()):
    rows = []
    for r in results:
        c = _claim_row(r)
        status = STATUS_BADGE[r.status] + (", post hoc" if r.post_hoc else "")
        if r.robustness == FRAGILE:
            status += " ⚠️ fragile: " + "; ".join(f"{s} at {label} ({v or '—'})"
                                                  for label, v, s in seeds.differing(r, runs))
        rows.append([f"`{cell(r.id)}`", cell(r.kind), cell(r.statement), cell(r.source), cell(c["paper"]),
                     cell(c["expected"]), cell(c["reproduced"]), status, cell(c["notes"])])
    headers = ["ID", "Kind", "Claim", "Source", "Paper", f"Expected ({tier})", "Reproduced", "Status", "Notes"]
    return "## Claims\n\n" + (table(headers, rows) if rows else "_No claims listed in claims.yaml._")


def _claim_row(r):
    """The cells report.md's claims table shows for one result (plain text)."""
    paper_value = (r.as_row()["paper_value"] or "—") + (" (secondary)" if r.secondary else "")
    reproduced = (r.reproduced or "—") + (f" (control: {r.control_value})" if r.control else "")
    status = r.status + (", post hoc" if r.post_hoc else "") + (f", {r.robustness}" if r.robustness == FRAGILE else "")
    notes = [r.note, r.reason, f"post hoc: {r.post_hoc}" if r.post_hoc else "",
             f"control: {r.control}" if r.control else "", f"spread over runs: {r.spread}" if r.spread else ""]
    return {"id": r.id, "kind": r.kind, "statement": r.statement, "source": r.source, "paper": paper_value,
            "expected": r.expected or "—", "reproduced": reproduced, "status": status,
            "notes": "; ".join(x for x in notes if x)}


HTML_STYLE = """
body { font-family: system-ui, sans-serif; font-size: 14px; margin: 1em; color: #222; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #ccc; padding: 4px 6px; vertical-align: top; text-align: left; }
th { background: #f3f3f3; position: sticky; top: 0; }
td.id { font-family: monospace; width: 1%; min-width: 11em; }
td.claim, td.explanation { min-width: 20em; }
td.status { white-space: nowrap; font-weight: bold; }
tr.PASS td.status { color: #176b2c; } tr.FAIL td.status { color: #b00020; } tr.NOT-RUN td.status { color: #666; }
tr.FAIL { background: #fff3f3; }
p.note { color: #555; }
"""


def claims_html(title, tier, results, explanations):
    """report.md's claims table (and each FAIL's explanation) as a standalone HTML page, for the HTML report."""
    esc = lambda value: html.escape("" if value is None else str(value))
    head = ["ID", "Kind", "Claim", "Source", "Paper", f"Expected ({tier})", "Reproduced", "Status", "Notes",
            "Explanation of a FAIL"]
    rows = []
    for r in results:
        c = _claim_row(r)
        explained = plain(explanations.get(r.id) or (NO_EXPLANATION if r.status == FAIL else ""))
        rows.append(f'<tr class="{r.status.replace(" ", "-")}" id="claim-{esc(r.id)}">'
                    f'<td class="id">{esc(r.id)}</td><td>{esc(c["kind"])}</td><td class="claim">{esc(c["statement"])}</td>'
                    f'<td>{esc(c["source"])}</td><td>{esc(c["paper"])}</td><td>{esc(c["expected"])}</td>'
                    f'<td>{esc(c["reproduced"])}</td><td class="status">{esc(c["status"])}</td><td>{esc(c["notes"])}</td>'
                    f'<td class="explanation">{esc(explained)}</td></tr>')
    body = ("<table><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr></thead><tbody>\n"
            + "\n".join(rows) + "\n</tbody></table>") if rows else "<p>No claims listed in claims.yaml.</p>"
    summary = f"Tier {tier}, {len(results)} claims: {kind_counts_text(results)}."
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Claims: {esc(title)} ({esc(tier)})'
            f"</title><style>{HTML_STYLE}</style></head><body>\n<h1>Claims: {esc(title)}</h1>\n<p>{esc(summary)} "
            f"{esc(KIND_NOTE)}</p>\n" + (f'<p class="note">{esc(QUICK_DISCLAIMER)}</p>\n' if tier == "quick" else "")
            + body + "\n</body></html>\n")


def plain(text):
    """Markdown's bold and code marks dropped (for the HTML and reStructuredText tables)."""
    return re.sub(r"`([^`]*)`", r"\1", ("" if text is None else str(text)).replace("**", ""))


RST_SPECIAL = re.compile(r"([\\`*_|\[\]<>])")


def rst_text(value):
    """Plain text as reStructuredText inline text: markup characters escaped, one line."""
    return RST_SPECIAL.sub(r"\\\1", " ".join(("" if value is None else str(value)).split())) or "—"


def rst_problems(text):
    """docutils' system messages of level >= warning for `text`, as Snakemake's HTML report would show them in an
    error box ('' when clean). docutils comes with Snakemake, which renders captions with it."""
    import docutils.core

    stream = io.StringIO()
    docutils.core.publish_parts(text, writer="html", settings_overrides={
        "warning_stream": stream, "report_level": 2, "halt_level": 5, "file_insertion_enabled": False,
        "raw_enabled": False})
    return stream.getvalue()


def claims_rst(title, tier, results, explanations):
    """A compact claims table in reStructuredText (id, kind, status, reproduced against expected), then each FAIL's
    explanation: the caption of claims.html in Snakemake's HTML report, rendered without warnings by docutils."""
    lines = [f"Claims of *{rst_text(title)}*, tier **{tier}**: {rst_text(kind_counts_text(results))}. The full table "
             "(statements, sources, notes) is this entry's file.", ""]
    if results:
        lines += [".. list-table::", "   :header-rows: 1", "", "   * - ID", "     - Kind", "     - Status",
                  "     - Reproduced", "     - Expected", ""]
        for r in results:
            c = _claim_row(r)
            lines += [f"   * - {rst_text(r.id)}", f"     - {rst_text(r.kind)}", f"     - {rst_text(c['status'])}",
                      f"     - {rst_text(c['reproduced'])}", f"     - {rst_text(c['expected'])}"]
        lines.append("")
    fails = [r for r in results if r.status == FAIL]
    if fails:
        lines += ["Failed claims and their explanations:", ""]
        for r in fails:
            lines.append(f"- **FAIL {rst_text(r.id)}**: {rst_text(plain(explanations.get(r.id) or NO_EXPLANATION))}")
        lines.append("")
    return "\n".join(lines)


class ReportText:
    """A text file a job wrote, read only when Snakemake's HTML report is built (in a caption: `{{
    snakemake.params.<name>.text }}`). Its str() is its path, which is what the report's job parameters list shows."""

    def __init__(self, path):
        self.path = str(path)

    def __str__(self):
        return self.path

    @property
    def text(self):
        return Path(self.path).read_text()


class FigureCaption(ReportText):
    """A figure's caption file (captions/<figure>.rst: a title line, then the caption in reStructuredText), for
    the figure rule: `.title` labels the figure in the HTML report, `.body` is its caption there."""

    @property
    def title(self):
        return _caption(Path(self.path))[0] or Path(self.path).stem

    @property
    def body(self):
        return _caption(Path(self.path))[1]


def figure_title(paper_dir, fig):
    """The title line of captions/<fig>.rst, else the figure's name."""
    return _caption(Path(paper_dir) / "captions" / f"{fig}.rst")[0] or fig


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


def explanation(result, paper_dir):
    """Why a FAIL failed: the claim's `if_fail`, else the deviations.md bullet(s) or paragraph(s) that name its id
    (quoted, with their section), else None. The section on when expectations were fixed names ids only to date
    their thresholds, so it explains nothing."""
    if result.if_fail:
        return result.if_fail
    found = []
    for title, body in deviation_sections(paper_dir).items():
        if title == FIXED_BEFORE:
            continue
        for block in _blocks(body):
            if re.search(rf"(?<![A-Za-z0-9_.-]){re.escape(result.id)}(?![A-Za-z0-9_-])", block):
                found.append((title, " ".join(block.split())))
    if not found:
        return None
    return " ".join(f"deviations.md, section '{title}': {text}" for title, text in found[:2])


def _blocks(body):
    """A deviations section's top-level bullets (each with its sub-bullets) or paragraphs."""
    blocks, current = [], []
    for line in body.splitlines():
        starts = line.startswith(("- ", "* ")) or (not line.strip())
        if starts and current:
            blocks.append("\n".join(current))
            current = []
        if line.strip():
            current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def _deviations(paper_dir, results, explanations=None):
    parts = ["## Deviations from the paper"]
    hand_written = paper_dir / "deviations.md"
    if hand_written.is_file():
        parts.append(_without_sections(hand_written.read_text(), (FIXED_BEFORE, CHOSEN_AFTER)).strip())
    parts.append("### Failed claims in this run")
    fails = [r for r in results if r.status == FAIL]
    if not fails:
        parts.append("No claim failed at this tier.")
    explanations = explanations if explanations is not None else {r.id: explanation(r, paper_dir) for r in fails}
    for r in fails:
        parts.append(f"- **FAIL `{r.id}`** ({r.source}): {r.statement}\n"
                     f"  - measured: {r.reproduced or '—'}; expected: {r.expected}; {r.reason or 'check failed'}\n"
                     f"  - explanation: {explanations.get(r.id) or NO_EXPLANATION}")
    return "\n\n".join(parts)


def _without_sections(text, titles):
    """deviations.md without the `## ` sections the header already shows."""
    kept, skipping = [], False
    for line in text.splitlines():
        if line.startswith("## "):
            skipping = line[3:].strip() in titles
        if not skipping:
            kept.append(line)
    return "\n".join(kept)


def _seeds(doc, stale, results, runs):
    """Each claim's value at this run's seeds and at the other seeds of seeds.json (shared.pipeline.seeds)."""
    title = "## Other seeds"
    if not doc:
        return (f"{title}\n\nNot measured for this paper (`replicate seeds PAPER` reruns its quick tier with other "
                "seeds and records every claim's value per seed).")
    if stale:
        return (f"{title}\n\nseeds.json (measured {doc.get('measured_utc', '')[:10]}) is **stale**: "
                + "; ".join(stale) + ". Its runs are not used; `replicate seeds PAPER` measures them again.")
    labels = [label for label, _ in runs if label.startswith("seeds +")]
    scored = dict(runs)
    rows = []
    for r in results:
        if r.status not in (PASS, FAIL) or not any(r.id in scored[label] for label in labels):
            continue
        values = [cell(f"{scored[label][r.id][0] or '—'} ({scored[label][r.id][1]})") if r.id in scored[label]
                  else "—" for label in labels]
        rows.append([f"`{cell(r.id)}`", cell(r.kind), cell(f"{r.reproduced or '—'} ({r.status})"), *values,
                     cell(r.spread or "—"), "⚠️ **fragile**" if r.robustness == FRAGILE else cell(r.robustness)])
    fragile = [r.id for r in results if r.robustness == FRAGILE]
    cpu = [run.get("cpu_s") for run in doc.get("runs", {}).values() if run.get("cpu_s") is not None]
    lines = [title, "",
             f"The quick tier ran again on {doc.get('measured_utc', '')[:10]} in a scratch copy once per other seed, "
             "every seed of the config raised by the amount named (`replicate seeds`)"
             + (f", {sum(cpu) / len(cpu) / 60:.1f} CPU-minutes of jobs per seed" if cpu else "")
             + ". Their metrics are scored here with this claims.yaml. A claim whose status differs at another seed "
             "or on other kernels (the drift run, below) is fragile: "
             + (", ".join(f"`{c}`" for c in fragile) or "none") + ".", "",
             table(["Claim", "Kind", "This run", *labels, "Spread (all runs)", "Robustness"], rows)
             if rows else "_No claim was scored at the other seeds._"]
    return "\n".join(lines)


def _read_drift(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def drift_text(summary):
    if not summary.get("numeric"):
        return "no numeric values to compare"
    return (f"{summary['changed']} of {summary['numeric']} numeric values changed (median relative change "
            f"{summary['median_rel_change']:.1e}, largest {summary['max_rel_change']:.1e}); status changed: "
            + (", ".join(f"`{c}`" for c in summary["flipped"]) or "none"))


def _drift(drift):
    """How the claims' values moved when the quick tier ran again on other float kernels (shared.pipeline.drift)."""
    if not drift:
        return ("## Drift on other machines\n\nNot measured for this paper (`replicate drift PAPER` reruns its quick "
                "tier on other float kernels and threads and records how its values move).")
    setting = ", ".join(f"{k}={v}" for k, v in drift["setting"].items())
    rows = [[f"`{cid}`", cell(e["here"]), cell(e["there"]),
             cell(f"{e['rel_change']:.1e}" if "rel_change" in e else "—"),
             cell(f"{e['status_here']} → {e['status_there']}" if e["flips"] else "same")]
            for cid, e in drift["claims"].items() if e["flips"] or e.get("rel_change", 0) > 1e-3]
    stale = (f" **Not used**: {drift['stale']}." if drift.get("stale") else "")
    lines = ["## Drift on other machines", "",
             f"The quick tier ran again on {drift['measured_utc'][:10]} in a scratch copy with other float kernels "
             f"({setting}), against the report rendered at {drift['against'].get('rendered')}: "
             f"{drift_text(drift['summary'])}. Differences come from the order of floating-point sums, which "
             "training amplifies; a claim whose status changed is flagged fragile in the claims table: its status on "
             "this machine is not robust." + stale]
    if rows:
        lines += ["", "Values that moved by more than 0.1%, or whose status changed:", "",
                  table(["Claim", "Here", "Other kernels", "Relative change", "Status"], rows)]
    return "\n".join(lines)


COST_COLUMNS = ("job", "started_utc", "wall_s", "cpu_s", "threads", "other_load", "exit_status")


def machine_text(machine):
    return f"{machine.get('cpu_count')} cores, {machine.get('cpu_model')}, {machine.get('platform')}"


def _cost(cost):
    """What the jobs behind these metrics and figures cost, from their own records (not the config, data and
    report steps; a job not re-run keeps the record of its last run)."""
    if not cost or not cost.get("summary"):
        return "## What this run cost\n\nNo job cost records (rendered before they were kept, or re-rendered)."
    total = cost["summary"]
    lines = ["## What this run cost", "",
             f"{total['jobs']} jobs: {total['cpu_s'] / 60:.1f} CPU-minutes, {total['wall_s'] / 60:.1f} minutes of wall "
             f"time while at least one ran, on {machine_text(total['machine'])}"
             + (f" ({total['jobs_on_other_machines']} jobs elsewhere)" if total["jobs_on_other_machines"] else "")
             + ". The most CPU cores used by anything else during one of these jobs (other papers' jobs of the same "
             "run included; the README's table discounts them): "
             + (f"{total['max_other_load']:.2f} cores" if total["max_other_load"] is not None else "not measured")
             + (" (timings taken under load read long)." if (total["max_other_load"] or 0) > 0.5 else "."),
             "", table(["Job", "Started (UTC)", "Wall s", "CPU s", "Threads", "Other load", "Exit"],
                       [[cell(j.get(c)) for c in COST_COLUMNS] for j in cost["jobs"]])]
    return "\n".join(lines)


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
    write_text(out, "# Replication reports\n\nClaims per tier, computed from each run's metrics, findings apart from "
                    "identities and controls. " + KIND_NOTE + " Quick-tier numbers come from scaled-down settings. "
                    "A report whose claims, config or code changed since it was rendered is marked stale.\n\n"
                    + _status_table(papers, reports_dir, out.parent, replications_dir) + "\n")
    readme = reports_dir.parent / "README.md"
    if readme.is_file():
        _update_readme(readme, _status_table(papers, reports_dir, readme.parent, replications_dir))
        _update_readme(readme, timing_table(reports_dir, sorted(papers)), TIMINGS_START, TIMINGS_END)
        _update_readme(readme, drift_table(reports_dir, sorted(papers)), DRIFT_START, DRIFT_END)
        _update_readme(readme, smoke_table(reports_dir, sorted(papers)), SMOKE_START, SMOKE_END)
        _update_readme(readme, references(replications_dir), REFERENCES_START, REFERENCES_END)
        _update_readme(readme, leaderboard_table(reports_dir, readme.parent), LEADERBOARD_START, LEADERBOARD_END)
    return papers


README_START, README_END = "<!-- claims-table:start -->", "<!-- claims-table:end -->"
TIMINGS_START, TIMINGS_END = "<!-- timings:start -->", "<!-- timings:end -->"
LOADED = 0.5  # mean outside load (cores) above which a paper's timings are marked as taken under load
DRIFT_START, DRIFT_END = "<!-- drift:start -->", "<!-- drift:end -->"
REFERENCES_START, REFERENCES_END = "<!-- references:start -->", "<!-- references:end -->"
SMOKE_START, SMOKE_END = "<!-- smoke:start -->", "<!-- smoke:end -->"
LEADERBOARD_START, LEADERBOARD_END = "<!-- leaderboard:start -->", "<!-- leaderboard:end -->"
LEADERBOARD = ("layer_benchmark", "quick", "benchmark")  # the paper, tier and metrics namespace it is read from


def leaderboard_table(reports_dir, base="."):
    """The README's layer leaderboard, generated: the table layer_benchmark's analysis kept in its rendered metrics
    (info.leaderboard: columns, rows, note) and its leaderboard figure, linked relative to `base`."""
    paper, tier, ns = LEADERBOARD
    folder = Path(reports_dir) / paper / tier
    path = folder / "metrics" / f"{ns}.json"
    if not path.is_file():
        return f"_No leaderboard yet: run `snakemake --cores 2 {paper}`._"
    board = json.loads(path.read_text())["info"]["leaderboard"]
    report, figure = (Path(os.path.relpath(p, base)).as_posix()
                      for p in (folder / "report.md", folder / "figures" / f"leaderboard--{ns}.png"))
    return (f"{board['note']} From [{paper}]({report}) ({tier} tier).\n\n"
            + table(board["columns"], [[cell(v) for v in row] for row in board["rows"]])
            + f"\n\n![Each layer family against dense ReLU at equal parameters]({figure})")


def references(replications_dir="replications"):
    """Every paper's replications/<paper>/references.bib, by folder name, as one BibTeX block for the README."""
    bibs = sorted(Path(replications_dir).glob("*/references.bib"))
    return "```bibtex\n" + "\n".join(f"% {bib.parent.name}\n{bib.read_text().strip()}\n" for bib in bibs) + "```"


def drift_table(reports_dir, papers, tier="quick"):
    """Per paper, how its quick-tier values moved on other float kernels (its drift.json), generated."""
    rows = []
    for paper in papers:
        drift = _read_drift(Path(reports_dir) / paper / tier / "drift.json")
        if not drift:
            rows.append([f"`{paper}`", "not measured", "—", "—", "—"])
            continue
        s = drift["summary"]
        rows.append([f"`{paper}`", f"{s['changed']} of {s['numeric']}",
                     "—" if s["median_rel_change"] is None else f"{s['median_rel_change']:.1e}",
                     "—" if s["max_rel_change"] is None else f"{s['max_rel_change']:.1e}",
                     ", ".join(f"`{c}`" for c in s["flipped"]) or "none"])
    return table(["Paper", "Values changed", "Median relative change", "Largest", "Claims whose status changed"], rows)


def smoke_table(reports_dir, papers):
    """Per paper, its full tier's smoke run (reports/<paper>/full/smoke.json, `replicate smoke`), generated."""
    rows = []
    for paper in papers:
        path = Path(reports_dir) / paper / "full" / "smoke.json"
        if not path.is_file():
            rows.append([f"`{paper}`", "not run", "—", "—", "—", "—"])
            continue
        s = json.loads(path.read_text())
        p = s["projected"]
        bound = "" if p.get("complete") else " (jobs reached)"
        # a loop FlopCounterMode cannot run (count_flops=False in shared.io.smoke) adds no FLOPs: the figure is a floor
        uncounted = " + uncounted loops" if any(j["loops"] and not j["flops_full"] for j in s["jobs"].values()) else ""
        data = ", ".join(f"{name}: {'real' if how == 'real' else 'stand-in'}" for name, how in s["data"].items())
        reduced = f", repetitions reduced (smoke.yaml, x {s['reduced']['scale']:g})" if s.get("reduced") else ""
        rows.append([f"`{paper}`", f"{s['status']}{reduced} ({s['measured_utc'][:10]}, {(s['git_commit'] or '?')[:7]})",
                     f"{p['cpu_hours']:.3g}{bound}", f"{p['gpu_hours']:.2g}{bound}{uncounted}", f"{s['peak_rss_mb'] / 1024:.1f}",
                     data or "generated in its jobs"])
    return table(["Paper", "Full tier, capped (date, commit)", "Projected CPU-h (here)", "Projected GPU-h (H100)",
                  "Peak memory (GiB)", "Data"], rows)


def timing_table(reports_dir, papers, tier="quick"):
    """Per paper, what its last `tier` run cost, read from the job records its report kept; then the sum. Outside
    load discounts every paper's jobs, since the default run runs several papers' jobs at once."""
    costs = {}
    for paper in papers:
        path = Path(reports_dir) / paper / tier / "provenance.json"
        costs[paper] = (json.loads(path.read_text()).get("cost") or {}) if path.is_file() else {}
    jobs = [job for cost in costs.values() for job in cost.get("jobs") or []]
    rows, totals = [], []
    for paper, cost in costs.items():
        if not cost.get("summary"):
            rows.append([f"`{paper}`", "—", "—", "—", "—", "no job records"])
            continue
        # the per-job rows keep no machine: it is the one the report's own summary recorded
        total = {**summarize_costs(cost["jobs"], workflow=jobs), "machine": cost["summary"].get("machine", {})}
        totals.append(total)
        load = total["mean_other_load"]
        rows.append([f"`{paper}`", str(total["jobs"]), f"{total['cpu_s'] / 60:.1f}", f"{total['wall_s'] / 60:.1f}",
                     "—" if load is None else f"{load:.2f} (max {total['max_other_load']:.2f})"
                     + (" (loaded)" if load > LOADED else ""),
                     total["first_started_utc"][:10]])
    if not totals:
        return "_No job records yet: run the pipeline._"
    machines = {machine_text(t["machine"]) for t in totals}
    cpu = sum(t["cpu_s"] for t in totals) / 60
    rows.append(["**all**", str(sum(t["jobs"] for t in totals)), f"**{cpu:.1f}**",
                 f"**{busy_wall_seconds(jobs) / 60:.1f}**", "", ""])
    head = (f"Measured by each job ({tier} tier, generated from the reports' records): on "
            + "; ".join(sorted(machines)) + ". Wall minutes count the time at least one of the paper's jobs ran, "
            "two at once under `--cores 2` (the last row: any job of the suite, as the default run ran them). "
            "Snakemake's own start-up and the data preparation are not included. Outside load: the CPU cores the "
            "rest of the machine used while the paper's jobs ran (mean over their wall time, and the most during one "
            "job), the workflow's own parallel jobs discounted; Snakemake itself and its report jobs count as "
            f"outside. Above {LOADED} cores on average the paper's times read long.")
    return head + "\n\n" + table(["Paper", "Jobs", "CPU min", "Wall min", "Outside load", "Run on"], rows)


def _status_table(papers, reports_dir, base, replications_dir):
    """One row per paper: findings, identities and controls per tier, staleness, with links relative to `base`."""
    rel = lambda path: Path(os.path.relpath(path, base)).as_posix()
    rows = []
    for paper, tiers in sorted(papers.items()):
        cells = [cell(paper), cell(_paper_title(Path(replications_dir), paper))]
        for tier in TIERS:
            if tier not in tiers:
                cells.append("—")
                continue
            report_dir = reports_dir / paper / tier
            text = kind_counts_text(tiers[tier], link=rel(report_dir / "report.md")) + override_mark(report_dir)
            state = staleness.check_report(report_dir, Path(replications_dir) / paper, tier,
                                           root=Path(replications_dir).resolve().parent)
            if state.stale:
                text += f"<br>⚠️ **stale** (rendered {state.rendered or 'at an unknown date'}): " + "; ".join(state.reasons)
            cells.append(cell(text))
        rows.append(cells + [f"[claims.csv]({rel(reports_dir / paper / 'claims.csv')})"])
    return table(["Paper", "Title", *TIERS, "All claims"], rows) if rows else "_No reports yet._"


def _update_readme(readme, body, start=README_START, end=README_END):
    """Keep a generated README section (between its two markers; untouched without them) equal to `body`."""
    text = readme.read_text()
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        write_text(readme, f"{head}{start}\n{body}\n{end}{tail}")


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
    r.add_argument("--costs-dir", help="the folder of the jobs' <log>.cost.json records")
    rr = sub.add_parser("rerender", help="score claims.yaml again from the metrics a rendered report kept")
    rr.add_argument("--paper", required=True)
    rr.add_argument("--tier", required=True, choices=TIERS)
    rr.add_argument("--reports", default="reports")
    rr.add_argument("--replications", default="replications")
    rr.add_argument("--skipped", default="{}", help="JSON {namespace: reason} of analyses that were not run")
    i = sub.add_parser("index", help="merge per-tier claims.csv files and write the index")
    add_index_arguments(i)
    args = parser.parse_args(argv)
    try:
        _run(args)
    except ClaimsError as error:  # a bad claims.yaml or metrics file, or a control that passes its claim's check
        raise SystemExit(f"error: {error}") from None


def _run(args):
    if args.command == "render":
        try:
            render(args.paper, args.tier, args.paper_dir, args.metrics, args.figures, args.out_dir, args.config,
                   json.loads(args.skipped), args.costs_dir)
        except (ClaimsError, ConfigError) as error:  # bad input: one message naming the paper and file, no traceback
            sys.exit(f"Invalid input; the report of {args.paper} ({args.tier}) was not written.\n{error}")
    elif args.command == "rerender":
        rerender(args.paper, args.tier, args.reports, args.replications, json.loads(args.skipped))
    else:
        index(args.reports, args.out, args.replications)


def add_index_arguments(parser):
    parser.add_argument("--reports", default="reports")
    parser.add_argument("--out", default=None, help="default: <reports>/index.md")
    parser.add_argument("--replications", default="replications")


if __name__ == "__main__":
    main()
