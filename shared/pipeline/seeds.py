"""Does a claim's status hold at other seeds? `replicate seeds [PAPER ...] [--seeds 1 2]`.

Most quick-tier findings rest on one seed. This runs the quick tier again in a scratch copy of the repository once per
extra seed, with every seed the paper's quick config sets (keys `seed`, `seeds` and `*_seed`, ints or lists or
mappings of ints) raised by 1000 x that seed, and records every metric of every run in
reports/<paper>/quick/seeds.json, with the config hash and the hashes of the code the runs loaded. The report
re-scores those metrics with the claims.yaml it renders, so a changed threshold needs no rerun; a changed config or
code makes seeds.json stale, and a stale one is shown but not used. A later call adds its seeds to those of an
earlier one that ran the same config and code (`--seeds 2` after `--seeds 1` records both).

A claim whose status differs between this run and another seed, or the drift run on other float kernels
(reports/<paper>/quick/drift.json, shared.pipeline.drift), is fragile; one that every other run scores the same is
robust.

    replicate seeds [PAPER ...] [--seeds 1 2] [--cores 2]
"""
import csv
import json
import math
import re
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import yaml

from shared.io.files import write_json, write_text
from shared.pipeline.claims import (
    FAIL,
    FRAGILE,
    NOT_RUN,
    PASS,
    ROBUST,
    apply_check,
    format_value,
    load_metrics,
    read_metrics_file,
    score,
)
from shared.pipeline.job import machine, read_costs, summarize_costs
from shared.pipeline.scratch import ROOT, copy_repo, needs, snakemake
from shared.pipeline.staleness import report_inputs
from shared.pipeline.tiers import config_hash

SHIFT = 1000  # seed k adds k * SHIFT to every seed: far from the configs' own seed lists, so no model is shared
SEED_KEY = re.compile(r"^seeds?$|_seed$")  # `frozen_seeds: 20` (bilinear_rnn) is a count, and is not matched
DEFAULT_SEEDS = (1, 2)
TIER = "quick"


# ---------------------------------------------------------------- the configs of the other seeds

def reseeded(cfg, by):
    """A copy of the resolved config with every seed raised by `by`."""
    if isinstance(cfg, dict):
        return {k: _raised(v, by) if SEED_KEY.search(str(k)) else reseeded(v, by) for k, v in cfg.items()}
    if isinstance(cfg, list):
        return [reseeded(v, by) for v in cfg]
    return cfg


def _raised(value, by):
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value + by
    if isinstance(value, list):
        return [_raised(v, by) for v in value]
    if isinstance(value, dict):
        return {k: _raised(v, by) for k, v in value.items()}
    return value


def changes(old, new):
    """The smallest override that turns `old` into `new` under the config's deep merge (mappings merge, the rest
    replaces): only the keys whose values differ, a list whole."""
    return {k: changes(old[k], v) if isinstance(v, dict) and isinstance(old.get(k), dict) else v
            for k, v in new.items() if old.get(k) != v}


def seed_overrides(papers, by, root=ROOT, base=None):
    """{paper: {quick: override}} raising every seed of the papers named by `by` (not of the papers they read: those
    keep the seeds, and so the run names, that a reader's config refers to); `base` is the config the run is given
    otherwise ({paper: overrides}, a tiny config in the tests)."""
    from shared.pipeline.config import load_paper_config

    out = {}
    for name in papers:
        cfg = load_paper_config(Path(root) / "replications" / name, TIER, (base or {}).get(name))
        out[name] = {TIER: changes(cfg, reseeded(cfg, by))}
    return out


def invocations(papers, root=ROOT):
    """The papers in groups, one Snakemake run each: a paper that reads another's outputs runs alone, so that the
    paper it reads keeps its seeds there (bilinear_autoencoder names a bilinear_mlp run by its seed)."""
    alone = [p for p in papers if len(needs(p, root)) > 1]
    return [group for group in ([p for p in papers if p not in alone], *([p] for p in alone)) if group]


# ---------------------------------------------------------------- the reruns

def measure_seeds(papers=(), seeds=DEFAULT_SEEDS, cores=2, root=ROOT, configfiles=()):
    """Rerun the papers' quick tier once per seed in a scratch copy; write reports/<paper>/quick/seeds.json.
    `configfiles` (paths relative to `root`) are passed on, as a paper's tiny config in the tests. Returns
    {paper: seeds.json document}; a paper one of whose runs wrote no metrics gets none (SystemExit after the others).
    """
    from shared.pipeline.config import load_paper_config
    from shared.pipeline.paper import discover_papers

    root = Path(root)
    if not seeds or min(seeds) < 1 or len(set(seeds)) != len(seeds):
        raise SystemExit(f"replicate seeds: --seeds must be distinct integers >= 1 (0 is the committed run), got {seeds}")
    known = discover_papers(root / "replications")
    unknown = sorted(set(papers) - set(known))
    if unknown:
        raise SystemExit(f"replicate seeds: no paper named {', '.join(unknown)} (papers: {', '.join(known)})")
    papers = sorted(papers) or known
    base = {}
    for f in configfiles:
        base.update(yaml.safe_load((root / f).read_text()) or {})
    runs, code, failed, t0 = {p: {} for p in papers}, {p: {} for p in papers}, {}, time.time()
    for seed in seeds:
        by = seed * SHIFT
        for group in invocations(papers, root):
            overrides = seed_overrides(group, by, root, base)
            with tempfile.TemporaryDirectory(prefix=f"seeds-{seed}-") as tmp:
                repo = copy_repo(Path(tmp) / "repo", group, root)
                write_text(repo / "seeds.yaml", yaml.safe_dump(overrides, sort_keys=True))
                started = time.time()
                proc = snakemake(repo, "--cores", str(cores), "--keep-going", "--configfile",
                                 *(str(repo / f) for f in configfiles), str(repo / "seeds.yaml"), "--", *group)
                print(f"seed {seed} (seeds + {by}): {', '.join(group)}, {(time.time() - started) / 60:.1f} minutes, "
                      f"exit {proc.returncode}", flush=True)
                for paper in group:
                    results = repo / "results" / paper / TIER
                    if not any((results / "metrics").glob("*.json")):
                        failed[paper] = f"seed {seed}: no metrics\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
                        continue
                    runs[paper][str(seed)], recorded = _run_record(repo, paper, by, overrides[paper][TIER])
                    for path, digest in recorded.items():
                        if code[paper].setdefault(path, digest) != digest:
                            code[paper][path] = "mixed"
    written = {}
    for paper in papers:
        if paper in failed:
            continue
        cfg = load_paper_config(root / "replications" / paper, TIER, base.get(paper))
        inputs = {"config": config_hash(cfg), "code": dict(sorted(code[paper].items()))}
        path = root / "reports" / paper / TIER / "seeds.json"
        kept = _still_valid_runs(read(path), inputs, seeds)
        doc = {"measured_utc": datetime.fromtimestamp(t0, UTC).isoformat(timespec="seconds"), "tier": TIER,
               "seed_shift": SHIFT, "seeds": sorted({*map(int, kept), *seeds}), "machine": machine(),
               "inputs": inputs, "against": _committed(root / "reports" / paper / TIER),
               "runs": dict(sorted((kept | runs[paper]).items(), key=lambda item: int(item[0])))}
        doc["claims"] = _claims_summary(root / "replications" / paper, root / "reports" / paper / TIER, doc)
        write_json(path, doc)
        written[paper] = doc
    if failed:
        raise SystemExit("replicate seeds: no seeds.json for " + "; ".join(f"{p} ({r})" for p, r in failed.items()))
    return written


def _still_valid_runs(old, inputs, seeds):
    """The runs of an earlier seeds.json at seeds not measured now, kept where they came from the same config and
    code as this run (seeds.json then accumulates seeds: `--seeds 2` adds to an earlier `--seeds 1`); {} otherwise."""
    if not old or old.get("seed_shift") != SHIFT or old.get("inputs") != inputs:
        return {}
    return {seed: run for seed, run in old.get("runs", {}).items() if int(seed) not in seeds}


def _run_record(repo, paper, by, override):
    """One paper's run at one seed: every metric (for re-scoring) and what its jobs cost, from the run's results/
    (its report may be missing: a control that passes its check at this seed stops the render, not the record);
    and the hashes of the code its metrics came from."""
    results = repo / "results" / paper / TIER
    paths = sorted((results / "metrics").glob("*.json"))
    metrics, skipped = load_metrics(paths)
    infos = {p.name: read_metrics_file(p)["info"] for p in paths}
    costs = summarize_costs([r for r in read_costs(results / "logs") if not r["job"].endswith(" report")]) or {}
    prov = read(repo / "reports" / paper / TIER / "provenance.json") or {}
    record = {"seed_shift": by, "config_override": override, "cpu_s": costs.get("cpu_s"), "wall_s": costs.get("wall_s"),
              "metrics": metrics, "skipped": skipped,
              "skipped_namespaces": prov.get("extra", {}).get("skipped_namespaces", {}),
              "report": "rendered" if prov else "not rendered (see the run's log)"}
    return record, report_inputs(repo / "replications" / paper, None, infos)["code"]


def _committed(report_dir):
    """The report the seeds are compared with, as it was when they ran."""
    path = report_dir / "provenance.json"
    if not path.is_file():
        return {}
    prov = json.loads(path.read_text())
    return {"git_commit": prov.get("git_commit"), "rendered": prov.get("timestamp_utc"),
            "config_hash": prov.get("config_hash")}


def _claims_summary(paper_dir, report_dir, doc):
    """{claim: {"metric", "values": {seed: text}, "statuses": {seed: status}}} as scored now (seed 0: the committed
    report's claims.csv), for a reader of seeds.json; the report re-scores from the metrics when it renders."""
    from shared.pipeline.claims import load_claims

    claims_doc = load_claims(paper_dir / "claims.yaml")
    committed = {}
    if (report_dir / "claims.csv").is_file():
        with open(report_dir / "claims.csv", newline="") as f:
            committed = {row["id"]: row for row in csv.DictReader(f)}
    summary = {c["id"]: {"metric": c["metric"], "values": {}, "statuses": {}} for c in claims_doc["claims"]}
    for cid, row in committed.items():
        if cid in summary:
            summary[cid]["values"]["0"], summary[cid]["statuses"]["0"] = row["reproduced"], row["status"]
    for seed, results in rescored(claims_doc, doc).items():
        for r in results:
            summary[r.id]["values"][seed], summary[r.id]["statuses"][seed] = r.reproduced, r.status
    return summary


# ---------------------------------------------------------------- reading seeds.json back (the report)

def read(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def stale_reasons(doc, inputs):
    """Why seeds.json no longer describes the run a report renders (`inputs`: the report's provenance inputs):
    another config, or code whose hash differs from the code its metrics came from. [] when it still does."""
    reasons = []
    if doc.get("inputs", {}).get("config") != inputs.get("config"):
        reasons.append("config changed")
    now = inputs.get("code") or {}
    changed = sorted(p for p, digest in doc.get("inputs", {}).get("code", {}).items()
                     if p in now and (now[p] != digest or digest == "mixed"))
    if changed:
        reasons.append("code changed: " + ", ".join(changed[:3]) + (f" and {len(changed) - 3} more"
                                                                    if len(changed) > 3 else ""))
    return reasons


def rescored(claims_doc, doc):
    """{seed: [ClaimResult]} of every run in seeds.json, scored with `claims_doc` now."""
    out = {}
    for seed, run in doc.get("runs", {}).items():
        skipped = dict(run.get("skipped", {}))
        for claim in claims_doc["claims"]:
            namespace = claim["metric"].split(".", 1)[0]
            if namespace in run.get("skipped_namespaces", {}):
                skipped[claim["metric"]] = run["skipped_namespaces"][namespace]
        out[seed] = score(claims_doc, run.get("metrics", {}), skipped, doc.get("tier", TIER),
                          refuse_passing_controls=False)
    return out


def _drift_value(text):
    """A drift.json value (claims.csv text) back to a number or a bool, or None."""
    if text in ("true", "false"):
        return text == "true"
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def other_runs(claims_doc, tier, seeds_doc=None, drift_doc=None):
    """[(label, {claim id: (value text, status)})] of the other runs that scored these claims: each seed of seeds.json
    (re-scored with `claims_doc`), then drift.json's run on other kernels (its value re-scored where it reads as a
    number or a bool; its recorded status otherwise)."""
    runs = []
    if seeds_doc:
        shift = seeds_doc.get("seed_shift", SHIFT)
        for seed, results in rescored(claims_doc, seeds_doc).items():
            runs.append((f"seeds +{int(seed) * shift}", {r.id: (r.reproduced, r.status) for r in results
                                                        if r.status != NOT_RUN}))
    if drift_doc:
        by_id, there = {c["id"]: c for c in claims_doc["claims"]}, {}
        for cid, entry in drift_doc.get("claims", {}).items():
            claim = by_id.get(cid)
            if claim is None or tier not in claim["tiers"]:
                continue
            value = _drift_value(entry.get("there"))
            status = entry.get("status_there")
            if value is not None:
                status = PASS if apply_check(claim["check"], claim["tiers"][tier] or {}, value)[0] else FAIL
            if status in (PASS, FAIL):
                there[cid] = (entry.get("there", ""), status)
        runs.append(("other kernels", there))
    return runs


def mark_robustness(results, runs):
    """Set each scored result's robustness (robust / fragile) and spread from the other runs; a claim no other run
    scored keeps robustness ''."""
    for r in results:
        if r.status not in (PASS, FAIL):
            continue
        seen = [(label, scored[r.id]) for label, scored in runs if r.id in scored]
        if not seen:
            continue
        r.robustness = FRAGILE if any(status != r.status for _, (_, status) in seen) else ROBUST
        numbers = [v for v in [_drift_value(r.reproduced), *(_drift_value(t) for _, (t, _) in seen)]
                   if isinstance(v, float)]
        r.spread = f"{format_value(min(numbers))} to {format_value(max(numbers))}" if len(numbers) > 1 else ""
    return results


def differing(result, runs):
    """The other runs whose status for `result` differs from this run's: [(label, value text, status)]."""
    return [(label, *scored[result.id]) for label, scored in runs
            if result.id in scored and scored[result.id][1] != result.status]
