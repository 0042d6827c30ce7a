"""Is a rendered report still what its inputs would give? Compare the hashes it recorded with the files now.

A report records (provenance.json, `inputs`) the hashes of its claims.yaml and deviations.md (what it scored and
quoted), of the resolved config, and of every file of shared/ and replications/ that the training and analysis
processes loaded. A changed claims.yaml or deviations.md needs only a re-render from the recorded metrics
(`python -m shared.pipeline.report rerender`); changed config or code needs the run again.
"""
import json
from dataclasses import dataclass, field
from pathlib import Path

from shared.pipeline.provenance import CODE_ROOT, file_hash
from shared.pipeline.tiers import config_hash

SHOWN = 3  # changed files named in a reason; the rest are counted


@dataclass
class Staleness:
    rendered: str  # date the report was rendered (UTC), or "" when unknown
    reasons: list = field(default_factory=list)  # empty: fresh

    @property
    def stale(self):
        return bool(self.reasons)


def report_inputs(paper_dir, config, infos):
    """The `inputs` record of a report rendered now from metrics files whose info is `infos` ({file: info})."""
    code, mixed = {}, set()
    for info in infos.values():
        for recorded in (info.get("code") or {}, (info.get("trained") or {}).get("code") or {}):
            for path, digest in recorded.items():
                if code.setdefault(path, digest) != digest:
                    mixed.add(path)  # two versions of one file produced these metrics: stale from the start
    for path in mixed:
        code[path] = "mixed"
    paper_dir = Path(paper_dir)
    return {"claims": file_hash(paper_dir / "claims.yaml"), "deviations": file_hash(paper_dir / "deviations.md"),
            "config": config_hash(config) if config is not None else None, "code": dict(sorted(code.items()))}


def check_report(report_dir, paper_dir, tier, root=CODE_ROOT):
    """Staleness of the report in `report_dir` (reports/<paper>/<tier>) against the files under `root` now."""
    path = Path(report_dir) / "provenance.json"
    if not path.is_file():
        return Staleness("", ["no provenance.json"])
    prov = json.loads(path.read_text())
    rendered = (prov.get("timestamp_utc") or "")[:10]
    trained = sorted({(info.get("trained") or {}).get("timestamp_utc", "")[:10]
                      for info in prov.get("extra", {}).get("metrics_info", {}).values()} - {""})
    if trained and trained != [rendered]:
        rendered += f", models trained {' to '.join(dict.fromkeys([trained[0], trained[-1]]))}"
    inputs = prov.get("inputs")
    if not inputs:
        return Staleness(rendered, ["rendered before reports recorded their inputs"])
    paper_dir = Path(paper_dir)
    reasons = [f"{file} changed" for key, file in (("claims", "claims.yaml"), ("deviations", "deviations.md"))
               if file_hash(paper_dir / file) != inputs.get(key)]
    reasons += _config_reason(paper_dir, tier, inputs.get("config"))
    code = inputs.get("code") or {}
    if not code:
        reasons.append("the code that produced its metrics was not recorded")
    return Staleness(rendered, reasons + code_changed(code, root))


def code_changed(code, root=CODE_ROOT):
    """["code changed: <files>"] naming the files of `code` ({path: hash}) whose hash differs now; [] if none does."""
    changed = [p for p, digest in code.items() if file_hash(Path(root) / p) != digest]
    if not changed:
        return []
    more = f" and {len(changed) - SHOWN} more" if len(changed) > SHOWN else ""
    return ["code changed: " + ", ".join(changed[:SHOWN]) + more]


def _config_reason(paper_dir, tier, recorded):
    from shared.pipeline.config import committed_config_hashes  # jsonschema: only when a report is checked

    if recorded is None:
        return ["its config was not recorded"]
    try:
        now = committed_config_hashes(paper_dir, tier)
    except (OSError, ValueError) as err:  # an invalid config or claims.yaml cannot be compared
        return [f"config cannot be resolved now ({err})"]
    return [] if recorded in now else ["config changed"]
