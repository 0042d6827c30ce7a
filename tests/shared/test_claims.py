"""Scoring and validation of claims.yaml (shared.pipeline.claims), on real files in tmp_path."""
import json
import math

import pytest
import yaml

from shared.pipeline.claims import (
    FAIL,
    NOT_RUN,
    PASS,
    ClaimsError,
    counterexample_outcomes,
    counts,
    format_value,
    load_claims,
    load_metrics,
    score,
)


def claim(**overrides):
    base = {"id": "C1", "kind": "identity", "statement": "s", "source": "Fig 1", "paper_value": 0.9, "metric": "m.x",
            "check": ">=", "tiers": {"quick": {"expect": 0.5}}}
    return {**base, **overrides}


def write_claims(tmp_path, *claims):
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"paper": "p", "title": "T", "claims": list(claims)}))
    return path


def score_one(tmp_path, value, tier="quick", skipped=None, **overrides):
    doc = load_claims(write_claims(tmp_path, claim(**overrides)))
    metrics = {} if value is None else {"m.x": value}
    [result] = score(doc, metrics, skipped or {}, tier)
    return result


@pytest.mark.parametrize("check, value, expect, status", [
    (">=", 0.5, 0.5, PASS), (">=", 0.49, 0.5, FAIL),
    ("<=", 0.5, 0.5, PASS), ("<=", 0.51, 0.5, FAIL),
    (">", 0.51, 0.5, PASS), (">", 0.5, 0.5, FAIL),
    ("<", 0.49, 0.5, PASS), ("<", 0.5, 0.5, FAIL),
    ("between", 0.2, [0.1, 0.3], PASS), ("between", 0.1, [0.1, 0.3], PASS), ("between", 0.31, [0.1, 0.3], FAIL),
])
def test_comparison_checks(tmp_path, check, value, expect, status):
    result = score_one(tmp_path, value, check=check, tiers={"quick": {"expect": expect}})
    assert result.status == status
    assert (result.reason == "") == (status == PASS)


@pytest.mark.parametrize("value, status", [(97.4, PASS), (96.5, PASS), (96.4, FAIL), (98.0, FAIL)])
def test_within(tmp_path, value, status):
    result = score_one(tmp_path, value, check="within", tiers={"quick": {"expect": 97.0, "tol": 0.5}})
    assert result.status == status
    assert result.expected == "within 0.5 of 97"


@pytest.mark.parametrize("check, value, status", [
    ("is_true", True, PASS), ("is_true", False, FAIL), ("is_false", False, PASS), ("is_false", True, FAIL),
    ("is_true", 1, FAIL),  # a number is not a bool
])
def test_bool_checks(tmp_path, check, value, status):
    result = score_one(tmp_path, value, check=check, tiers={"quick": {"note": "n"}})
    assert result.status == status
    assert result.note == "n"


def test_missing_tier_is_not_run(tmp_path):
    result = score_one(tmp_path, 1.0, tier="full")
    assert (result.status, result.reason) == (NOT_RUN, "not checked at this tier")


def test_skipped_metric_is_not_run_with_reason(tmp_path):
    result = score_one(tmp_path, None, skipped={"m.x": "needs a GPU"})
    assert (result.status, result.reason) == (NOT_RUN, "needs a GPU")


def test_missing_metric_fails(tmp_path):
    result = score_one(tmp_path, None)
    assert (result.status, result.reason) == (FAIL, "metric m.x was not produced")


@pytest.mark.parametrize("value, reason", [(math.nan, "value is NaN"), ([1, 2], "list"), (True, "bool"), (None, "NoneType")])
def test_non_numbers_fail_with_reason(tmp_path, value, reason):
    doc = load_claims(write_claims(tmp_path, claim()))
    [result] = score(doc, {"m.x": value}, {}, "quick")
    assert result.status == FAIL and reason in result.reason


def test_result_fields(tmp_path):
    result = score_one(tmp_path, 0.123456, if_fail="why")
    assert (result.expected, result.reproduced, result.if_fail, result.tier) == (">= 0.5", "0.1235", "why", "quick")
    assert result.as_row()["paper_value"] == "0.9"


def test_format_value():
    assert [format_value(v) for v in (True, False, 60000, 97.0, 1 / 3, math.nan)] == \
        ["true", "false", "60000", "97", "0.3333", "NaN"]


@pytest.mark.parametrize("change, words", [
    ({"colour": "red"}, ["C1", "colour"]),
    ({"check": "~="}, ["C1", "check"]),
    ({"tiers": {"quick": {}}}, ["C1", "tiers.quick.expect"]),
    ({"check": "within", "tiers": {"quick": {"expect": 1}}}, ["C1", "tiers.quick.tol"]),
    ({"check": "between", "tiers": {"quick": {"expect": 1}}}, ["C1", "tiers.quick.expect"]),
    ({"tiers": {"medium": {"expect": 1}}}, ["C1", "tiers.medium"]),
    ({"tiers": {"quick": {"expect": 1, "tolerance": 2}}}, ["C1", "tiers.quick.tolerance"]),
    ({"metric": "no_namespace"}, ["C1", "metric"]),
    ({"id": "bad id!"}, ["claim #1", "id"]),
    ({"kind": "result"}, ["C1", "kind", "finding, identity, control"]),
    ({"kind": "finding"}, ["C1", "counterexample"]),
    ({"kind": "finding", "counterexample": True}, ["C1", "counterexample", "finite number"]),
    ({"counterexample": float("nan")}, ["C1", "counterexample"]),
    ({"check": "is_true", "tiers": {"quick": None}, "counterexample": 0}, ["C1", "counterexample", "true or false"]),
    ({"secondary": "yes"}, ["C1", "secondary"]),
])
def test_validation_names_claim_and_key(tmp_path, change, words):
    with pytest.raises(ClaimsError) as err:
        load_claims(write_claims(tmp_path, claim(**change)))
    for word in words:
        assert word in str(err.value)


def test_validation_missing_key_and_duplicate_id(tmp_path):
    for key in ("source", "kind"):
        bare = claim()
        del bare[key]
        with pytest.raises(ClaimsError, match=f"C1.*{key}"):
            load_claims(write_claims(tmp_path, bare))
    with pytest.raises(ClaimsError, match="duplicate id 'C1'"):
        load_claims(write_claims(tmp_path, claim(), claim()))


def test_load_metrics_namespaces_by_file_stem(tmp_path):
    (tmp_path / "spectra.json").write_text(json.dumps(
        {"metrics": {"top40_energy": 0.95}, "skipped": {"big": "no GPU"}, "info": {"wall_s": 1}}))
    (tmp_path / "accuracy.json").write_text(json.dumps({"metrics": {"test": 97.1}}))
    metrics, skipped = load_metrics([tmp_path / "spectra.json", tmp_path / "accuracy.json"])
    assert metrics == {"spectra.top40_energy": 0.95, "accuracy.test": 97.1}
    assert skipped == {"spectra.big": "no GPU"}
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "spectra.json").write_text(json.dumps({"metrics": {}}))
    with pytest.raises(ClaimsError, match="namespace 'spectra'"):
        load_metrics([tmp_path / "spectra.json", tmp_path / "other" / "spectra.json"])


def test_counterexamples_are_scored_at_every_tier(tmp_path):
    doc = load_claims(write_claims(
        tmp_path,
        claim(id="can-fail", kind="finding", counterexample=0.2, tiers={"quick": {"expect": 0.5}, "full": {"expect": 0.8}}),
        claim(id="loose-at-quick", kind="finding", counterexample=0.6, tiers={"quick": {"expect": 0.5}, "full": {"expect": 0.8}}),
        claim(id="bool", kind="finding", check="is_true", counterexample=False, tiers={"quick": None}),
        claim(id="no-counterexample", kind="control"),
    ))
    assert counterexample_outcomes(doc) == [("can-fail", "quick", False), ("can-fail", "full", False),
                                            ("loose-at-quick", "quick", True), ("loose-at-quick", "full", False),
                                            ("bool", "quick", False)]


def test_counts_by_kind(tmp_path):
    doc = load_claims(write_claims(tmp_path, claim(id="f", kind="finding", counterexample=0.1), claim(id="i")))
    results = score(doc, {"m.x": 0.7}, {}, "quick")
    assert counts(results, "finding") == {PASS: 1, FAIL: 0, NOT_RUN: 0}
    assert counts(results) == {PASS: 2, FAIL: 0, NOT_RUN: 0}
    assert [r.kind for r in results] == ["finding", "identity"]


# ---------------------------------------------------------------- non-finite values: strict JSON, explicit failures
def test_a_nan_metric_is_written_as_an_explicit_failed_value_that_fails_its_claim(tmp_path):
    from shared.pipeline.claims import apply_check, is_failed
    from shared.pipeline.run import write_metrics

    path = tmp_path / "acc.json"
    write_metrics(path, {"test_acc": float("nan"), "ratio": float("inf"), "ok": 0.5, "flag": True})
    text = path.read_text()
    assert "NaN" not in text.replace('"value is nan"', "") and "Infinity" not in text  # strict JSON
    metrics, _ = load_metrics([path])
    assert is_failed(metrics["acc.test_acc"]) and is_failed(metrics["acc.ratio"]) and metrics["acc.ok"] == 0.5
    for check, spec in ((">=", {"expect": 0.9}), ("within", {"expect": 1.0, "tol": 0.1}), ("is_true", {})):
        passed, reason = apply_check(check, spec, metrics["acc.test_acc"])
        assert not passed and "value is nan" in reason


def test_a_bare_nan_in_a_metrics_file_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "acc.json"
    path.write_text('{"metrics": {"test_acc": NaN}}')
    with pytest.raises(ClaimsError, match="acc.json.*NaN"):
        load_metrics([path])


def test_write_json_is_strict(tmp_path):
    import numpy as np

    from shared.io.files import read_json, write_json

    write_json(tmp_path / "x.json", {"a": [1.0, float("nan")], "b": np.float32("inf"), "c": np.arange(2)})
    assert read_json(tmp_path / "x.json") == {"a": [1.0, "NaN"], "b": "Infinity", "c": [0, 1]}


@pytest.mark.parametrize("text, problem", [
    ("a: 1\na: 2\n", "x.yaml:2:1: YAML error: duplicate key 'a'"),
    ("a: [1, 2\n", "x.yaml:2:1: YAML error:"),
    ("a: b: c\n", "x.yaml:1:5: YAML error: mapping values are not allowed"),
])
def test_yaml_errors_are_one_line_with_file_line_and_column(tmp_path, text, problem):
    from shared.io.files import YamlError, read_yaml

    (tmp_path / "x.yaml").write_text(text)
    with pytest.raises(YamlError) as info:
        read_yaml(tmp_path / "x.yaml")
    assert str(info.value).startswith(str(tmp_path / problem)) and "\n" not in str(info.value)


# ---------------------------------------------------------------- the JSON schema (shared/schemas/claims.schema.yaml)
def test_claims_schema_is_valid_and_agrees_with_the_module():
    import jsonschema

    from shared.io.files import read_yaml
    from shared.pipeline.claims import CHECKS, KINDS, SCHEMA_PATH, TOP_KEYS
    from shared.pipeline.tiers import TIERS

    schema = read_yaml(SCHEMA_PATH)
    jsonschema.Draft202012Validator.check_schema(schema)
    claim_schema = schema["$defs"]["claim"]["properties"]
    assert set(schema["properties"]) == TOP_KEYS
    assert tuple(claim_schema["kind"]["enum"]) == KINDS and tuple(claim_schema["check"]["enum"]) == CHECKS
    assert tuple(claim_schema["tiers"]["properties"]) == TIERS


@pytest.mark.parametrize("doc, words", [
    ({"paper": "", "title": "T", "claims": []}, ["top-level", "paper", "non-empty string"]),
    ({"paper": "p", "title": "T", "claims": {}}, ["top-level", "claims", "a list"]),
    ({"paper": "p", "title": "T"}, ["top-level", "missing required key 'claims'"]),
    ({"paper": "p", "title": "T", "claims": [], "extra": 1}, ["unknown key 'extra'", "allowed: claims, paper, title"]),
    ({"paper": "p", "title": "T", "claims": [claim(), 3]}, ["claim #2 must be a mapping"]),
    ({"paper": "p", "title": "T", "claims": [claim(), claim(id="C2", tiers=[1])]}, ["claim 'C2'", "'tiers'", "mapping"]),
    ({"paper": "p", "title": "T", "claims": [claim(paper_value=float("inf"))]}, ["C1", "paper_value", "finite"]),
    ({"paper": "p", "title": "T", "claims": [claim(check="between", tiers={"quick": {"expect": [0.0, float("-inf")]}})]},
     ["C1", "tiers.quick.expect.1", "finite"]),
    ({"paper": "p", "title": "T", "claims": [claim(check="between", tiers={"quick": {"expect": [1]}})]},
     ["C1", "tiers.quick.expect", "[lo, hi]"]),
    ({"paper": "p", "title": "T", "claims": [claim(tiers={"quick": {"expect": [1, 2]}})]},
     ["C1", "tiers.quick.expect", "finite number for check '>='"]),
    ({"paper": "p", "title": "T", "claims": [claim(check="within", tiers={"quick": {"expect": 1, "tol": -1}})]},
     ["C1", "tiers.quick.tol", ">= 0"]),
    ({"paper": "p", "title": "T", "claims": [claim(check="is_true", tiers={"quick": {"expect": 1}})]},
     ["C1", "tiers.quick.expect", "not used by check 'is_true'"]),
    ({"paper": "p", "title": "T", "claims": [claim(tiers={"quick": {"expect": 1, "tol": 1}})]},
     ["C1", "tiers.quick.tol", "only used by check 'within'"]),
])
def test_schema_and_shape_errors_name_the_file_claim_and_key(tmp_path, doc, words):
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ClaimsError) as err:
        load_claims(path)
    message = str(err.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    for word in words:
        assert word in message


def test_groups_count_post_hoc_findings_and_extensions_apart(tmp_path):
    from shared.pipeline.claims import counts_by_group, status_text

    doc = load_claims(write_claims(
        tmp_path, claim(id="f", kind="finding", counterexample=0.1),
        claim(id="late", kind="finding", counterexample=0.1, post_hoc="cut chosen after run 1"),
        claim(id="ours", kind="extension"), claim(id="i")))
    results = score(doc, {"m.x": 0.7}, {}, "quick")
    results[0].robustness = "fragile"
    assert counts_by_group(results) == {
        "finding": {"robust PASS": 0, "PASS not rerun": 0, "fragile": 1, FAIL: 0, NOT_RUN: 0},
        "post-hoc finding": {"robust PASS": 0, "PASS not rerun": 1, "fragile": 0, FAIL: 0, NOT_RUN: 0},
        "extension": {PASS: 1, FAIL: 0, NOT_RUN: 0}, "identity": {PASS: 1, FAIL: 0, NOT_RUN: 0}}
    assert [status_text(r) for r in results] == [PASS, "PASS, post hoc", PASS, PASS]
    assert status_text({"status": FAIL, "post_hoc": "x"}) == "FAIL, post hoc" and status_text({"status": PASS}) == PASS


def test_post_hoc_must_say_what_was_chosen(tmp_path):
    with pytest.raises(ClaimsError, match="claim 'C1': key 'post_hoc' must be a non-empty string"):
        load_claims(write_claims(tmp_path, claim(post_hoc=" ")))
