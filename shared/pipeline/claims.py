"""Claims: load a paper's claims.yaml, load this run's metrics, and score every claim.

A claim's status is computed from metrics only (PASS, FAIL or NOT RUN); nobody edits it by hand.
"""
import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path


from shared.io.files import YamlError, read_json, read_yaml
from shared.pipeline.tiers import TIERS

PASS, FAIL, NOT_RUN = "PASS", "FAIL", "NOT RUN"
FAILED = "failed"  # a metric {"failed": reason}: no value could be computed
COMPARISONS = {">=": lambda v, e: v >= e, "<=": lambda v, e: v <= e, ">": lambda v, e: v > e, "<": lambda v, e: v < e}
CHECKS = (*COMPARISONS, "within", "between", "is_true", "is_false")
TOP_KEYS = {"paper", "title", "claims"}
CLAIM_KEYS = {"id", "kind", "statement", "source", "paper_value", "secondary", "metric", "check", "counterexample",
              "tiers", "if_fail"}
REQUIRED_CLAIM_KEYS = ("id", "kind", "statement", "source", "metric", "check", "tiers")
# finding: an empirical result the paper reports (a reproduction when it PASSes); identity: an exact property the
# implementation must satisfy (a FAIL is a bug, a PASS is a test, not a reproduction); control: a sanity or negative
# control that shows a check can tell the difference.
FINDING, IDENTITY, CONTROL = KINDS = ("finding", "identity", "control")
TIER_KEYS = {"expect", "tol", "note"}
ID_PATTERN = re.compile(r"[A-Za-z0-9_.-]+")
METRIC_PATTERN = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+")  # namespace (file stem) . key


class ClaimsError(ValueError):
    """claims.yaml or a metrics file is malformed; the message names the file, claim id and key."""


@dataclass
class ClaimResult:
    id: str
    kind: str
    tier: str
    statement: str
    source: str
    paper_value: object
    check: str
    expected: str
    reproduced: str
    status: str
    reason: str
    note: str
    if_fail: str
    metric: str = ""
    secondary: bool = False

    def as_row(self):
        row = asdict(self)
        row["paper_value"] = format_value(self.paper_value) if self.paper_value is not None else ""
        row["secondary"] = "yes" if self.secondary else ""
        return row


# ---------------------------------------------------------------- loading and validation

def load_claims(path):
    """Read and strictly validate claims.yaml; raise ClaimsError naming the claim id and key."""
    path = Path(path)
    try:
        doc = read_yaml(path)
    except YamlError as error:
        raise ClaimsError(str(error)) from None
    where = str(path)
    if not isinstance(doc, dict):
        raise ClaimsError(f"{where}: expected a mapping with keys {sorted(TOP_KEYS)}")
    _no_unknown_keys(doc, TOP_KEYS, f"{where}: top level")
    for key in ("paper", "title"):
        if not isinstance(doc.get(key), str) or not doc[key].strip():
            raise ClaimsError(f"{where}: top-level key '{key}' must be a non-empty string")
    if not isinstance(doc.get("claims"), list):
        raise ClaimsError(f"{where}: top-level key 'claims' must be a list")
    seen = set()
    for index, claim in enumerate(doc["claims"]):
        _validate_claim(claim, where, index, seen)
    return doc


def _validate_claim(claim, path, index, seen):
    if not isinstance(claim, dict):
        raise ClaimsError(f"{path}: claim #{index + 1} must be a mapping")
    cid = claim.get("id")
    if not isinstance(cid, str) or not ID_PATTERN.fullmatch(cid):
        raise ClaimsError(f"{path}: claim #{index + 1}: key 'id' must match [A-Za-z0-9_.-]+, got {cid!r}")
    where = f"{path}: claim '{cid}'"
    if cid in seen:
        raise ClaimsError(f"{where}: duplicate id '{cid}'")
    seen.add(cid)
    _no_unknown_keys(claim, CLAIM_KEYS, where)
    for key in REQUIRED_CLAIM_KEYS:
        if key not in claim:
            raise ClaimsError(f"{where}: missing required key '{key}'")
    if claim["kind"] not in KINDS:
        raise ClaimsError(f"{where}: key 'kind' is {claim['kind']!r}; allowed: {', '.join(KINDS)}")
    for key in ("statement", "source"):
        if not isinstance(claim[key], str):
            raise ClaimsError(f"{where}: key '{key}' must be a string")
    if "secondary" in claim and not isinstance(claim["secondary"], bool):
        raise ClaimsError(f"{where}: key 'secondary' must be true or false")
    if "if_fail" in claim and not isinstance(claim["if_fail"], str):
        raise ClaimsError(f"{where}: key 'if_fail' must be a string")
    value = claim.get("paper_value")
    if value is not None and not (isinstance(value, str) or _is_number(value)):
        raise ClaimsError(f"{where}: key 'paper_value' must be a string, a finite number or null, got {value!r}")
    if not isinstance(claim["metric"], str) or not METRIC_PATTERN.fullmatch(claim["metric"]):
        raise ClaimsError(f"{where}: key 'metric' must look like namespace.key, got {claim['metric']!r}")
    if claim["check"] not in CHECKS:
        raise ClaimsError(f"{where}: key 'check' is {claim['check']!r}; allowed: {', '.join(CHECKS)}")
    if not isinstance(claim["tiers"], dict):
        raise ClaimsError(f"{where}: key 'tiers' must be a mapping of tier -> {{expect: ...}}")
    for tier, spec in claim["tiers"].items():
        if tier not in TIERS:
            raise ClaimsError(f"{where}: key 'tiers.{tier}' is not a tier; allowed: {', '.join(TIERS)}")
        _validate_tier_spec(claim["check"], spec, f"{where}: key 'tiers.{tier}")
    _validate_counterexample(claim, where)


def _validate_counterexample(claim, where):
    """A finding names a reproduced value that would contradict the paper; tests score it and require FAIL."""
    if "counterexample" not in claim:
        if claim["kind"] == FINDING:
            raise ClaimsError(f"{where}: missing required key 'counterexample' (every finding names a reproduced "
                              "value that would contradict the paper)")
        return
    value = claim["counterexample"]
    if claim["check"] in ("is_true", "is_false"):
        if not isinstance(value, bool):
            raise ClaimsError(f"{where}: key 'counterexample' must be true or false for check '{claim['check']}'")
    elif not _is_number(value):
        raise ClaimsError(f"{where}: key 'counterexample' must be a finite number, got {value!r}")

def _validate_tier_spec(check, spec, where):
    if spec is None:  # `quick:` with nothing after it, fine for is_true / is_false
        spec = {}
    if not isinstance(spec, dict):
        raise ClaimsError(f"{where}' must be a mapping")
    unknown = set(spec) - TIER_KEYS
    if unknown:
        raise ClaimsError(f"{where}.{sorted(unknown)[0]}' is not allowed; allowed: {', '.join(sorted(TIER_KEYS))}")
    if "note" in spec and not isinstance(spec["note"], str):
        raise ClaimsError(f"{where}.note' must be a string")
    if check in ("is_true", "is_false"):
        for key in ("expect", "tol"):
            if key in spec:
                raise ClaimsError(f"{where}.{key}' is not used by check '{check}'")
        return
    if "expect" not in spec:
        raise ClaimsError(f"{where}.expect' is missing (required by check '{check}')")
    expect = spec["expect"]
    if check == "between":
        if not (isinstance(expect, list) and len(expect) == 2 and all(map(_is_number, expect))):
            raise ClaimsError(f"{where}.expect' must be [lo, hi] of finite numbers for check 'between', got {expect!r}")
        if expect[0] > expect[1]:
            raise ClaimsError(f"{where}.expect' has lo > hi: {expect!r}")
    elif not _is_number(expect):
        raise ClaimsError(f"{where}.expect' must be a finite number for check '{check}', got {expect!r}")
    if check == "within":
        if "tol" not in spec:
            raise ClaimsError(f"{where}.tol' is missing (required by check 'within')")
        if not _is_number(spec["tol"]) or spec["tol"] < 0:
            raise ClaimsError(f"{where}.tol' must be a finite number >= 0, got {spec['tol']!r}")
    elif "tol" in spec:
        raise ClaimsError(f"{where}.tol' is only used by check 'within'")


def _no_unknown_keys(mapping, allowed, where):
    unknown = sorted(set(mapping) - allowed, key=str)
    if unknown:
        raise ClaimsError(f"{where}: unknown key '{unknown[0]}'; allowed: {', '.join(sorted(allowed))}")


def _is_number(value):
    """A finite int or float: a NaN expectation or tolerance could never PASS, an infinite one never FAIL."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def read_metrics_file(path):
    """One analysis' metrics file: {"metrics": {...}, "skipped": {...}, "info": {...}}."""
    path = Path(path)
    try:
        doc = read_json(path)
    except ValueError as error:  # a bare NaN, or not JSON at all
        raise ClaimsError(f"{path}: {error}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("metrics"), dict):
        raise ClaimsError(f"{path}: a metrics file needs a 'metrics' mapping")
    for key in ("skipped", "info"):
        if not isinstance(doc.setdefault(key, {}), dict):
            raise ClaimsError(f"{path}: '{key}' must be a mapping")
    return doc


def load_metrics(paths):
    """Merge metrics files into {namespace.key: value} and {namespace.key: skip reason}."""
    metrics, skipped, namespaces = {}, {}, set()
    for path in map(Path, paths):
        if path.stem in namespaces:
            raise ClaimsError(f"{path}: namespace '{path.stem}' comes from two metrics files")
        namespaces.add(path.stem)
        doc = read_metrics_file(path)
        both = set(doc["metrics"]) & set(doc["skipped"])
        if both:
            raise ClaimsError(f"{path}: key '{sorted(both)[0]}' is both measured and skipped")
        metrics.update({f"{path.stem}.{k}": v for k, v in doc["metrics"].items()})
        skipped.update({f"{path.stem}.{k}": str(v) for k, v in doc["skipped"].items()})
    return metrics, skipped


# ---------------------------------------------------------------- scoring

def score(claims_doc, metrics, skipped, tier):
    """Score every claim of `claims_doc` at `tier` from this run's metrics, in claims.yaml order."""
    if tier not in TIERS:
        raise ClaimsError(f"tier {tier!r} is not one of {', '.join(TIERS)}")
    return [_score_claim(claim, metrics, skipped, tier) for claim in claims_doc["claims"]]


def _score_claim(claim, metrics, skipped, tier):
    result = ClaimResult(
        id=claim["id"], kind=claim["kind"], tier=tier, statement=claim["statement"], source=claim["source"],
        paper_value=claim.get("paper_value"), check=claim["check"], expected="", reproduced="",
        status=NOT_RUN, reason="", note="", if_fail=claim.get("if_fail", ""), metric=claim["metric"],
        secondary=claim.get("secondary", False),
    )
    if tier not in claim["tiers"]:
        result.reason = "not checked at this tier"
        return result
    spec = claim["tiers"][tier] or {}
    result.note = spec.get("note", "")
    result.expected = expected_text(claim["check"], spec)
    name = claim["metric"]
    if name in metrics:
        value = metrics[name]
        result.reproduced = format_value(value)
        passed, result.reason = apply_check(claim["check"], spec, value)
        result.status = PASS if passed else FAIL
    elif name in skipped:
        result.reason = skipped[name]
    else:
        result.status, result.reason = FAIL, f"metric {name} was not produced"
    return result


def counterexample_outcomes(claims_doc):
    """[(claim id, tier, passed)] for every claim's counterexample at every tier it is checked; each must fail."""
    return [(c["id"], tier, apply_check(c["check"], c["tiers"][tier] or {}, c["counterexample"])[0])
            for c in claims_doc["claims"] if "counterexample" in c for tier in TIERS if tier in c["tiers"]]


def apply_check(check, spec, value):
    """Return (passed, reason); the reason says why a value fails (empty on PASS)."""
    if check in ("is_true", "is_false") and not is_failed(value):
        if not isinstance(value, bool):
            return False, f"expected a bool, got {type(value).__name__}"
        passed = value == (check == "is_true")
        return passed, "" if passed else f"value is {format_value(value)}"
    if is_failed(value):
        return False, f"the analysis produced no value: {value[FAILED]}"
    if not _is_number(value):
        if isinstance(value, float):
            return False, f"value is {format_value(value)}"
        return False, f"expected a number, got {'bool' if isinstance(value, bool) else type(value).__name__}"
    expect = spec["expect"]
    if check in COMPARISONS:
        passed = COMPARISONS[check](value, expect)
    elif check == "within":
        passed = abs(value - expect) <= spec["tol"]
    else:  # between
        passed = expect[0] <= value <= expect[1]
    return passed, "" if passed else f"{format_value(value)} is not {expected_text(check, spec)}"


def failed_value(reason):
    """The explicit value a metric takes when its analysis could not compute a number (NaN, say): strict JSON, and
    any claim that reads it FAILs with `reason`."""
    return {FAILED: reason}


def is_failed(value):
    return isinstance(value, dict) and set(value) == {FAILED}


def expected_text(check, spec):
    if check in COMPARISONS:
        return f"{check} {format_value(spec['expect'])}"
    if check == "within":
        return f"within {format_value(spec['tol'])} of {format_value(spec['expect'])}"
    if check == "between":
        lo, hi = spec["expect"]
        return f"between {format_value(lo)} and {format_value(hi)}"
    return "true" if check == "is_true" else "false"


def format_value(value):
    """Compact text for a measured value: 4 significant digits, bools as true/false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else f"{value:.4g}"
    if isinstance(value, str):
        return value
    if is_failed(value):
        return f"failed ({value[FAILED]})"
    text = json.dumps(value, default=str)  # lists and the like: shown, but they never PASS
    return text if len(text) <= 40 else text[:37] + "..."


def counts(results, kind=None):
    """{"PASS": n, "FAIL": n, "NOT RUN": n} for a list of results or CSV rows (of one kind when given)."""
    pairs = [_kind_status(r) for r in results]
    statuses = [status for k, status in pairs if kind is None or k == kind]
    return {status: statuses.count(status) for status in (PASS, FAIL, NOT_RUN)}


def counts_by_kind(results):
    """{kind: counts} for the kinds present, findings first."""
    present = {_kind_status(r)[0] for r in results}
    return {kind: counts(results, kind) for kind in KINDS if kind in present}


def _kind_status(result):
    """(kind, status) of a ClaimResult or a CSV row (a row written before claims had kinds has none)."""
    if isinstance(result, ClaimResult):
        return result.kind, result.status
    return result.get("kind"), result["status"]

