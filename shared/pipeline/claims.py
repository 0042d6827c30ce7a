"""Claims: load a paper's claims.yaml, load this run's metrics, and score every claim.

A claim's status is computed from metrics only (PASS, FAIL or NOT RUN); nobody edits it by hand.
"""
import functools
import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import jsonschema

from shared.io.files import YamlError, read_json, read_yaml
from shared.pipeline.tiers import TIERS

PASS, FAIL, NOT_RUN = "PASS", "FAIL", "NOT RUN"
FAILED = "failed"  # a metric {"failed": reason}: no value could be computed
COMPARISONS = {">=": lambda v, e: v >= e, "<=": lambda v, e: v <= e, ">": lambda v, e: v > e, "<": lambda v, e: v < e}
CHECKS = (*COMPARISONS, "within", "between", "is_true", "is_false")
TOP_KEYS = {"paper", "title", "claims"}  # the keys, types and enums of claims.yaml: shared/schemas/claims.schema.yaml
# finding: an empirical result the paper reports (a reproduction when it PASSes); identity: an exact property the
# implementation must satisfy (a FAIL is a bug, a PASS is a test, not a reproduction); control: a sanity or negative
# control that shows a check can tell the difference; extension: this suite's own addition, not the paper's.
FINDING, IDENTITY, CONTROL, EXTENSION = KINDS = ("finding", "identity", "control", "extension")
# A finding whose threshold, metric or analysis was chosen after seeing results (`post_hoc:`) is counted apart.
POST_HOC_FINDING = "post-hoc finding"
GROUPS = (FINDING, POST_HOC_FINDING, EXTENSION, IDENTITY, CONTROL)
# Robustness of a claim's status against other runs (other seeds: seeds.json; other kernels: drift.json): robust when
# every other run that scored it gives the same status, fragile when one differs, "" when no other run scored it.
ROBUST, FRAGILE = "robust", "fragile"
ROBUST_PASS, PASS_NOT_RERUN = "robust PASS", "PASS not rerun"
FINDING_BUCKETS = (ROBUST_PASS, PASS_NOT_RERUN, FRAGILE, FAIL, NOT_RUN)
ID_PATTERN = re.compile(r"[A-Za-z0-9_.-]+")  # as the schema's; names a claim in a message only when it matches


class ClaimsError(ValueError):
    """claims.yaml or a metrics file is malformed; the message names the file, claim id and key."""


class ControlPassesError(ClaimsError):
    """A finding's control (the same metric on an untrained or shuffled baseline) passes the finding's own check: the
    check cannot tell the result from its control, so the claim or its analysis is wrong; nothing may be scored."""


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
    post_hoc: str = ""  # what was chosen after seeing results: the status reads "PASS, post hoc"
    control: str = ""  # the control's metric key, and its value as measured in this run
    control_value: str = ""
    robustness: str = ""  # ROBUST, FRAGILE or "" (set by the report from seeds.json and drift.json)
    spread: str = ""  # the claim's values over this run and the other runs, when robustness was measured

    def as_row(self):
        row = asdict(self)
        row["paper_value"] = format_value(self.paper_value) if self.paper_value is not None else ""
        row["secondary"] = "yes" if self.secondary else ""
        return row


# ---------------------------------------------------------------- loading and validation

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schemas" / "claims.schema.yaml"
TYPE_WORDS = {"string": "a string", "number": "a number", "integer": "an integer", "boolean": "true or false",
              "object": "a mapping", "array": "a list", "null": "null"}
HINTS = {"counterexample": " (every finding names a reproduced value that would contradict the paper)"}


def load_claims(path):
    """Read and strictly validate claims.yaml; raise ClaimsError naming the file, the claim id and the key.

    First no NaN or infinity anywhere, then the JSON schema (shared/schemas/claims.schema.yaml: keys, types, enums,
    patterns), then what a schema cannot say: unique ids and the shape of expect / tol / counterexample for each
    claim's check."""
    path = Path(path)
    try:
        doc = read_yaml(path)
    except YamlError as error:
        raise ClaimsError(str(error)) from None
    where = str(path)
    if not isinstance(doc, dict):
        raise ClaimsError(f"{where}: expected a mapping with keys {sorted(TOP_KEYS)}")
    _refuse_non_finite(doc, doc, where, ())
    errors = sorted(_validator().iter_errors(doc), key=lambda e: [_sortable(p) for p in e.absolute_path])
    if errors:
        raise ClaimsError(_schema_message(errors[0], doc, where))
    seen = set()
    for claim in doc["claims"]:
        claim_where = f"{where}: claim '{claim['id']}'"
        if claim["id"] in seen:
            raise ClaimsError(f"{claim_where}: duplicate id '{claim['id']}'")
        seen.add(claim["id"])
        for tier, spec in claim["tiers"].items():
            _validate_tier_spec(claim["check"], spec, f"{claim_where}: key 'tiers.{tier}")
        _validate_counterexample(claim, claim_where)
    return doc


@functools.cache
def _validator():
    return jsonschema.Draft202012Validator(read_yaml(SCHEMA_PATH))


def _sortable(part):
    return (0, part, "") if isinstance(part, int) else (1, 0, str(part))


def _located(doc, path, where):
    """(prefix naming the file and the claim, dotted key under it) of a path into the document."""
    path = list(path)
    if len(path) >= 2 and path[0] == "claims" and isinstance(path[1], int):
        claim = doc["claims"][path[1]]
        cid = claim.get("id") if isinstance(claim, dict) else None
        named = isinstance(cid, str) and ID_PATTERN.fullmatch(cid)
        return (f"{where}: claim '{cid}'" if named else f"{where}: claim #{path[1] + 1}"), path[2:]
    return f"{where}: top-level", path


def _refuse_non_finite(value, doc, where, path):
    """NaN compares false with every bound, so a NaN expect or tol could never PASS and an infinite one never FAIL;
    the schema's `number` admits both, so they are refused here, first (as the config's validation does)."""
    if isinstance(value, float) and not math.isfinite(value):
        prefix, key = _located(doc, path, where)
        raise ClaimsError(f"{prefix}: key '{'.'.join(map(str, key))}' is {value!r}; it must be a finite number")
    if isinstance(value, dict):
        for k, v in value.items():
            _refuse_non_finite(v, doc, where, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _refuse_non_finite(v, doc, where, (*path, i))


def _schema_message(err, doc, where):
    """One line: the file, the claim (its id, or its position when the id itself is wrong), the key and what is
    allowed, in the words of the old hand-written checks."""
    prefix, path = _located(doc, err.absolute_path, where)
    key = ".".join(map(str, path))
    schema = err.schema if isinstance(err.schema, dict) else {}
    value = err.instance
    if err.validator == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        unknown = min(set(value) - set(allowed), key=str)
        return f"{prefix}: unknown key '{'.'.join(map(str, [*path, unknown]))}'; allowed: {', '.join(allowed)}"
    if err.validator == "not":  # the schema's one `not`: a control on an identity or a control
        return f"{prefix}: key 'control' is only for a finding or an extension, not kind {value.get('kind')!r}"
    if err.validator == "required":
        missing = next(k for k in err.validator_value if k not in value)
        return f"{prefix}: missing required key '{'.'.join(map(str, [*path, missing]))}'{HINTS.get(missing, '')}"
    if not key:  # the claim itself, or the whole file
        return f"{prefix}: {err.message}" if prefix.endswith("top-level") else f"{prefix} must be a mapping"
    if err.validator == "enum":
        return f"{prefix}: key '{key}' is {value!r}; allowed: {', '.join(map(str, err.validator_value))}"
    if err.validator == "type":
        types = [err.validator_value] if isinstance(err.validator_value, str) else err.validator_value
        words = [TYPE_WORDS.get(t, t) for t in types]
        text = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
        return f"{prefix}: key '{key}' must be {text}, got {value!r}"
    if err.validator == "pattern":
        return f"{prefix}: key '{key}' must be {schema.get('description') or 'like ' + err.validator_value}, " \
               f"got {value!r}"
    if err.validator in ("minItems", "maxItems"):
        return f"{prefix}: key '{key}' must be [lo, hi] (two finite numbers), got {value!r}"
    if err.validator == "minimum":
        return f"{prefix}: key '{key}' must be a finite number >= {err.validator_value}, got {value!r}"
    return f"{prefix}: key '{key}': {err.message}"


def _validate_counterexample(claim, where):
    """A counterexample (required of findings by the schema) is a bool for is_true / is_false, else a number."""
    if "counterexample" not in claim:
        return
    value = claim["counterexample"]
    if claim["check"] in ("is_true", "is_false"):
        if not isinstance(value, bool):
            raise ClaimsError(f"{where}: key 'counterexample' must be true or false for check '{claim['check']}'")
    elif not _is_number(value):
        raise ClaimsError(f"{where}: key 'counterexample' must be a finite number for check '{claim['check']}', "
                          f"got {value!r}")


def _validate_tier_spec(check, spec, where):
    """Which of expect and tol the check uses, and their shape for it (the schema checked keys and types)."""
    spec = spec or {}  # `quick:` with nothing after it, fine for is_true / is_false
    if check in ("is_true", "is_false"):
        for key in ("expect", "tol"):
            if key in spec:
                raise ClaimsError(f"{where}.{key}' is not used by check '{check}'")
        return
    if "expect" not in spec:
        raise ClaimsError(f"{where}.expect' is missing (required by check '{check}')")
    expect = spec["expect"]
    if check == "between":
        if not isinstance(expect, list):
            raise ClaimsError(f"{where}.expect' must be [lo, hi] of finite numbers for check 'between', got {expect!r}")
        if expect[0] > expect[1]:
            raise ClaimsError(f"{where}.expect' has lo > hi: {expect!r}")
    elif not _is_number(expect):
        raise ClaimsError(f"{where}.expect' must be a finite number for check '{check}', got {expect!r}")
    if check == "within":
        if "tol" not in spec:
            raise ClaimsError(f"{where}.tol' is missing (required by check 'within')")
    elif "tol" in spec:
        raise ClaimsError(f"{where}.tol' is only used by check 'within'")


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
            raise ClaimsError(f"{path}: key '{min(both)}' is both measured and skipped")
        metrics.update({f"{path.stem}.{k}": v for k, v in doc["metrics"].items()})
        skipped.update({f"{path.stem}.{k}": str(v) for k, v in doc["skipped"].items()})
    return metrics, skipped


# ---------------------------------------------------------------- scoring

def score(claims_doc, metrics, skipped, tier, refuse_passing_controls=True):
    """Score every claim of `claims_doc` at `tier` from this run's metrics, in claims.yaml order. A finding whose
    control value passes the finding's own check raises ControlPassesError (unless told not to: in another seed's
    run such a claim FAILs there, so its status here is fragile)."""
    if tier not in TIERS:
        raise ClaimsError(f"tier {tier!r} is not one of {', '.join(TIERS)}")
    results = [_score_claim(claim, metrics, skipped, tier) for claim in claims_doc["claims"]]
    for claim, result in zip(claims_doc["claims"], results):
        _score_control(claims_doc["paper"], claim, result, metrics, skipped, refuse_passing_controls)
    return results


def _score_control(paper, claim, result, metrics, skipped, refuse):
    """Show the control's value beside the reproduced one; refuse a control that passes the claim's own check."""
    name = claim.get("control")
    if not name or result.reason == "not checked at this tier":
        return
    spec = claim["tiers"][result.tier] or {}
    if name in skipped:
        result.control_value = f"not run ({skipped[name]})"
        return
    if name not in metrics:
        result.control_value = "not produced"
        if result.status == PASS:
            result.status, result.reason = FAIL, f"control metric {name} was not produced"
        return
    result.control_value = format_value(metrics[name])
    if not apply_check(claim["check"], spec, metrics[name])[0]:
        return
    if not refuse:
        result.status, result.reason = FAIL, f"its control {name} = {result.control_value} passes the check too"
        return
    raise ControlPassesError(
        f"{paper}: claim '{claim['id']}': its control {name} = {result.control_value} passes the claim's own "
        f"check ({result.expected}), as {claim['metric']} = {result.reproduced or 'not measured'} does, so the "
        "check cannot tell the result from its control: recast the claim in claims.yaml or fix the analysis "
        "that measures the control")


def _score_claim(claim, metrics, skipped, tier):
    result = ClaimResult(
        id=claim["id"], kind=claim["kind"], tier=tier, statement=claim["statement"], source=claim["source"],
        paper_value=claim.get("paper_value"), check=claim["check"], expected="", reproduced="",
        status=NOT_RUN, reason="", note="", if_fail=claim.get("if_fail", ""), metric=claim["metric"],
        secondary=claim.get("secondary", False), post_hoc=claim.get("post_hoc", ""), control=claim.get("control", ""),
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


def status_text(result):
    """The status as shown: "PASS", or "PASS, post hoc" for a claim whose check was chosen after seeing results."""
    status, post_hoc = _field(result, "status"), _field(result, "post_hoc")
    return f"{status}, post hoc" if post_hoc else status


def counts(results, kind=None):
    """{"PASS": n, "FAIL": n, "NOT RUN": n} for a list of results or CSV rows (of one kind when given)."""
    statuses = [_field(r, "status") for r in results if kind is None or _field(r, "kind") == kind]
    return {status: statuses.count(status) for status in (PASS, FAIL, NOT_RUN)}


def group(result):
    """The group a claim is counted in: its kind, or POST_HOC_FINDING for a finding chosen after seeing results."""
    kind = _field(result, "kind")
    return POST_HOC_FINDING if kind == FINDING and _field(result, "post_hoc") else kind


def bucket(result):
    """A finding's count: robust PASS, PASS not rerun (no other run scored it), fragile, FAIL or NOT RUN."""
    status, robustness = _field(result, "status"), _field(result, "robustness")
    if status == NOT_RUN:
        return NOT_RUN
    if robustness == FRAGILE:
        return FRAGILE
    if status == FAIL:
        return FAIL
    return ROBUST_PASS if robustness == ROBUST else PASS_NOT_RERUN


def counts_by_group(results):
    """{group: {bucket: n}} for the groups present, in GROUPS order: findings (and post-hoc findings) by
    FINDING_BUCKETS, the other kinds by PASS / FAIL / NOT RUN."""
    out = {}
    for name in GROUPS:
        members = [r for r in results if group(r) == name]
        if not members:
            continue
        if name in (FINDING, POST_HOC_FINDING):
            found = [bucket(r) for r in members]
            out[name] = {b: found.count(b) for b in FINDING_BUCKETS}
        else:
            out[name] = counts(members)
    return out


def _field(result, name):
    """A field of a ClaimResult or of a claims.csv row (a row written before the field existed has none: '')."""
    if isinstance(result, ClaimResult):
        return getattr(result, name)
    return result.get(name) or ""



# ---------------------------------------------------------------- inputs, checked before any job and at render

def check_claims_inputs(doc, paper, tier, namespaces, where):
    """Raise ClaimsError for what claims.yaml gets wrong that a schema cannot see: a `paper:` field other than the
    paper's folder name; a counterexample that passes its own check at a tier (it would contradict nothing); a claim
    checked at `tier` that reads a namespace outside `namespaces` (those this tier's analyses write or skip)."""
    if doc["paper"] != paper:
        raise ClaimsError(f"{where}: key 'paper' is {doc['paper']!r}, but the file is in the folder of {paper!r} "
                          f"(allowed: {paper!r})")
    for cid, claim_tier, passed in counterexample_outcomes(doc):
        if passed:
            claim = next(c for c in doc["claims"] if c["id"] == cid)
            raise ClaimsError(f"{where}: claim '{cid}': key 'counterexample' {format_value(claim['counterexample'])} "
                              f"passes its own {claim_tier}-tier check ({expected_text(claim['check'], claim['tiers'][claim_tier] or {})}), "
                              f"so the check cannot tell the paper's result from its contradiction")
    for claim in doc["claims"]:
        ns = claim["metric"].split(".", 1)[0]
        if tier in claim["tiers"] and ns not in namespaces:
            raise ClaimsError(f"{where}: claim '{claim['id']}': key 'metric' reads namespace '{ns}', which no "
                              f"analysis of the {tier} tier writes (namespaces: {', '.join(sorted(namespaces))})")


def check_metrics_written(doc, tier, metrics, skipped, metrics_paths, where, overridden=False):
    """At render (analyses do not declare their keys in advance): a claim checked at `tier` whose metric its
    namespace's metrics file neither measured nor skipped names a key no analysis writes. Under the committed config
    that is an input error, raised as ClaimsError naming the claim and the file, not a FAIL. A run `overridden` off
    the committed config may leave out what the analyses would measure (a tiny config drops a dataset): there such
    claims are returned as {metric: reason} to read NOT RUN, the report naming the overrides at its top."""
    import difflib

    files = {Path(p).stem: Path(p) for p in metrics_paths}
    not_written = {}
    for claim in doc["claims"]:
        name = claim["metric"]
        ns, _, key = name.partition(".")
        if tier not in claim["tiers"] or name in metrics or name in skipped or ns not in files:
            continue
        if overridden:
            not_written[name] = (f"{files[ns]} holds no key '{key}': this run's config differs from the committed "
                                 "one (listed at the top), which may leave it out")
            continue
        written = sorted(k.partition(".")[2] for k in (*metrics, *skipped) if k.partition(".")[0] == ns)
        close = difflib.get_close_matches(key, written, n=1)
        hint = f"; did you mean '{ns}.{close[0]}'?" if close else ""
        raise ClaimsError(f"{where}: claim '{claim['id']}': key 'metric' is '{name}', which {files[ns]} does not "
                          f"hold: its analysis writes no key '{key}'{hint} (keys: {', '.join(written)})")
    return not_written
