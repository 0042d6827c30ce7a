"""Bad input never passes silently: malformed configs, overrides and claims, generated per paper, must each be
refused before any job runs, with a message that names the paper, the file or override, and the key, and without a
Python traceback. Most probes go through the Python entry point Snakemake calls while parsing (`load_papers`);
a few run Snakemake itself. The data probes (corrupt, truncated, missing, oversized downloads) are in
tests/shared/test_data_probes.py.

`python tests/test_bad_input.py` prints how many probes are refused cleanly, refused unclearly (a raw exception,
or a message that does not name the key) and accepted, which is how the counts in the issue's note were taken.
"""
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script, too

from shared.io.files import load_yaml  # noqa: E402
from shared.pipeline.paper import discover_papers, load_papers  # noqa: E402
from shared.pipeline.scratch import IGNORE, load_scaled, needs, snakemake  # noqa: E402

PAPERS = discover_papers(ROOT / "replications")
TIER = "quick"
OTHER_TIER = "full"
LEAVES_PER_PAPER = 8  # numeric config keys probed per paper, spread over its config
CLEAN, UNCLEAR, ACCEPTED = "refused cleanly", "refused unclearly", "accepted"
INPUT_ERRORS = ("ConfigError", "ClaimsError", "YamlError")


@dataclass(frozen=True)
class Probe:
    id: str
    paper: str
    overrides: dict = None  # what `snakemake --config` would pass
    edit: tuple = None  # (file of the paper folder, function old text -> new text), applied to a scratch copy
    names: tuple = ()  # what the refusal must name


# ---------------------------------------------------------------- generating probes from each paper's config
def resolved(paper):
    return load_papers([paper], TIER, {})[paper].cfg


def leaves(cfg, path=()):
    """(path, value) of every scalar of the config outside lists."""
    for key, value in cfg.items():
        if isinstance(value, dict):
            yield from leaves(value, (*path, key))
        elif not isinstance(value, list):
            yield (*path, key), value


def spread(items, n):
    items = sorted(items, key=lambda item: [str(p) for p in item[0]])
    step = max(1, len(items) // n)
    return items[::step][:n]


def nested(path, value):
    for key in reversed(path):
        value = {key: value}
    return value


def override_probes(paper):
    cfg = resolved(paper)
    numbers = [(p, v) for p, v in leaves(cfg) if isinstance(v, (int, float)) and not isinstance(v, bool)]
    mappings = [p for p, _ in _mapping_paths(cfg)]
    probes = []
    for path, value in spread(numbers, LEAVES_PER_PAPER):
        key = ".".join(map(str, path))
        # as `--config` gives them: strings that the config reads as YAML
        for label, bad in (("nan", ".nan"), ("inf", ".inf"), ("-inf", "-.inf"), ("huge", str(10 ** 12)),
                           ("text", "many"), ("mapping", {"value": value})):
            probes.append(Probe(f"{paper}:{key}={label}", paper, {paper: {TIER: nested(path, bad)}}, names=(key,)))
    first_number = ".".join(map(str, numbers[0][0]))
    probes += [
        Probe(f"{paper}:override-is-int", paper, {paper: 5}, names=(f"--config {paper}",)),
        Probe(f"{paper}:override-is-list", paper, {paper: [1, 2]}, names=(f"--config {paper}",)),
        Probe(f"{paper}:override-yaml-syntax", paper, {paper: "{quick: [1, 2"}, names=(f"--config {paper}", ":1:")),
        Probe(f"{paper}:tier-override-is-int", paper, {paper: {TIER: 5}}, names=(f"--config {paper}.{TIER}",)),
        Probe(f"{paper}:unknown-key", paper, {paper: {TIER: {"bogus_key": 1}}}, names=("bogus_key",)),
        Probe(f"{paper}:unknown-nested-key", paper, {paper: {TIER: nested(mappings[0], {"bogus_key": 1})}},
              names=("bogus_key", ".".join(map(str, mappings[0])))),
        Probe(f"{paper}:scalar-for-mapping", paper, {paper: {TIER: nested(mappings[0], 5)}},
              names=(".".join(map(str, mappings[0])),)),
        Probe(f"{paper}:required-key-removed", paper, {paper: {TIER: nested(numbers[0][0], None)}},
              names=(numbers[0][0][-1],)),
        Probe(f"{paper}:bool-for-number", paper, {paper: {TIER: nested(numbers[0][0], True)}}, names=(first_number,)),
        Probe(f"{paper}:device", paper, {paper: {TIER: {"device": "gpu0"}}}, names=("device",)),
        # the tier not run is validated too: a bad full-tier override is refused by a quick run
        Probe(f"{paper}:other-tier-unknown-key", paper, {paper: {OTHER_TIER: {"bogus_key": 1}}},
              names=("bogus_key", f"{OTHER_TIER} tier")),
        Probe(f"{paper}:other-tier-nan", paper, {paper: {OTHER_TIER: nested(numbers[0][0], ".nan")}},
              names=(first_number, f"{OTHER_TIER} tier")),
    ]
    return probes


def _mapping_paths(cfg, path=()):
    for key, value in cfg.items():
        if isinstance(value, dict):
            yield (*path, key), value
            yield from _mapping_paths(value, (*path, key))


def _replace(old, new):
    def edit(text):
        assert old in text, f"probe cannot apply: {old!r} not found"
        return text.replace(old, new, 1)
    return edit


def _claims_edit(change, **top):
    """An edit of claims.yaml as data: `change(claims)` alters the list of claims in place; `top` sets top keys."""
    import yaml

    def edit(text):
        doc = load_yaml(text)
        doc.update(top)
        change(doc["claims"])
        return yaml.safe_dump(doc, sort_keys=False)
    return edit


def _first(claims, kinds=None, checks=(">=", "<=", ">", "<", "within")):
    return next(c for c in claims if c["check"] in checks and TIER in c["tiers"] and (kinds is None or c["kind"] in kinds))


def _passing_counterexample(claims):
    """A finding's counterexample made to pass its own quick-tier check: then the check contradicts nothing."""
    claim = _first(claims, kinds=("finding",))
    spec = claim["tiers"][TIER]
    claim["counterexample"] = {">": spec["expect"] + 1, "<": spec["expect"] - 1}.get(claim["check"], spec["expect"])


def _set(claims, field, value, **where):
    claim = _first(claims, **where)
    if field in ("expect", "tol"):
        claim["check"] = "within" if field == "tol" else claim["check"]
        claim["tiers"][TIER] = {"expect": 1.0, "tol": 0.1} if claim["check"] == "within" else {"expect": 1.0}
        claim["tiers"][TIER][field] = value
    elif field == "between":
        claim["check"], claim["tiers"][TIER] = "between", {"expect": value}
    else:
        claim[field] = value


def file_probes(paper):
    config, schema, claims = "config.yaml", "config.schema.yaml", "claims.yaml"
    cfg_text = (ROOT / "replications" / paper / config).read_text()
    first_line = next(line for line in cfg_text.splitlines() if line and not line.startswith(("#", " ")))
    inf, nan = float("inf"), float("nan")
    claim_changes = {
        "tol-inf": (lambda c: _set(c, "tol", inf), "tol"),
        "tol-nan": (lambda c: _set(c, "tol", nan), "tol"),
        "tol-negative": (lambda c: _set(c, "tol", -1.0), "tol"),
        "expect-inf": (lambda c: _set(c, "expect", -inf), "expect"),
        "expect-nan": (lambda c: _set(c, "expect", nan), "expect"),
        "expect-text": (lambda c: _set(c, "expect", "high"), "expect"),
        "between-inf": (lambda c: _set(c, "between", [0.0, inf]), "expect"),
        "between-reversed": (lambda c: _set(c, "between", [2.0, 1.0]), "expect"),
        "counterexample-nan": (lambda c: _set(c, "counterexample", nan, kinds=("finding",)), "counterexample"),
        "counterexample-missing": (lambda c: _first(c, kinds=("finding",)).pop("counterexample"), "counterexample"),
        "paper-value-inf": (lambda c: _set(c, "paper_value", inf), "paper_value"),
        "kind-unknown": (lambda c: _set(c, "kind", "hunch"), "kind"),
        "check-unknown": (lambda c: _set(c, "check", "~="), "check"),
        "metric-unknown-namespace": (lambda c: _set(c, "metric", "nowhere.value"), "nowhere"),
        "metric-malformed": (lambda c: _set(c, "metric", "no_namespace"), "metric"),
        "statement-missing": (lambda c: _first(c).pop("statement"), "statement"),
        "duplicate-id": (lambda c: c[1].update(id=c[0]["id"]), "duplicate id"),
        "unknown-tier": (lambda c: _first(c)["tiers"].update(quik={"expect": 1.0}), "quik"),
        "unknown-claim-key": (lambda c: _first(c).update(tolerance=0.1), "tolerance"),
        "counterexample-passes": (_passing_counterexample, "counterexample"),
    }
    probes = [
        Probe(f"{paper}:config-missing", paper, edit=(config, None), names=(config, "missing")),
        Probe(f"{paper}:config-empty", paper, edit=(config, lambda t: ""), names=(config, "empty")),
        Probe(f"{paper}:config-list", paper, edit=(config, lambda t: "- 1\n- 2\n"), names=(config, "mapping")),
        Probe(f"{paper}:config-yaml-syntax", paper, edit=(config, lambda t: t + "\nquick: [1, 2\n"),
              names=(config, "YAML error")),
        Probe(f"{paper}:config-duplicate-key", paper, edit=(config, lambda t: t + f"\n{first_line}\n"),
              names=(config, "duplicate key")),
        Probe(f"{paper}:config-unknown-section", paper, edit=(config, lambda t: t + "\nquik: {}\n"),
              names=(config, "quik")),
        Probe(f"{paper}:config-no-tier", paper, edit=(config, _replace("\nquick:", "\nquick_old:")), names=("quick",)),
        Probe(f"{paper}:schema-missing", paper, edit=(schema, None), names=(schema, "missing")),
        Probe(f"{paper}:schema-yaml-syntax", paper, edit=(schema, lambda t: t + "\n  - [\n"), names=(schema, "YAML")),
        Probe(f"{paper}:claims-missing", paper, edit=(claims, None), names=(claims, "missing")),
        Probe(f"{paper}:claims-empty", paper, edit=(claims, lambda t: ""), names=(claims, "mapping")),
        Probe(f"{paper}:claims-yaml-syntax", paper, edit=(claims, lambda t: t + "\n  - {id: [\n"),
              names=(claims, "YAML error")),
        Probe(f"{paper}:claims-duplicate-key", paper, edit=(claims, _replace("\n    kind: ", "\n    kind: finding\n    kind: ")),
              names=(claims, "duplicate key 'kind'")),
    ]
    probes += [Probe(f"{paper}:claims-{label}", paper, edit=(claims, _claims_edit(change)), names=(claims, key))
               for label, (change, key) in claim_changes.items()]
    probes.append(Probe(f"{paper}:claims-foreign-paper", paper, names=(claims, "'paper'", "other_paper"),
                        edit=(claims, _claims_edit(lambda c: None, paper="other_paper"))))
    return probes


ALL_PROBES = [p for paper in PAPERS for p in (*override_probes(paper), *file_probes(paper))]


# ---------------------------------------------------------------- running a probe
def scratch_root(tmp, paper):
    """replications/<paper> (and what it needs) copied under `tmp`, so a probe can break its files."""
    (tmp / "replications").mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / "replications" / "__init__.py", tmp / "replications" / "__init__.py")
    for name in needs(paper, ROOT):
        shutil.copytree(ROOT / "replications" / name, tmp / "replications" / name, ignore=IGNORE, dirs_exist_ok=True)
    return tmp


def attempt(probe, tmp):
    """(outcome, message) of loading the paper with the probe's bad input."""
    root = ROOT
    if probe.edit:
        root = scratch_root(tmp, probe.paper)
        path = root / "replications" / probe.paper / probe.edit[0]
        if probe.edit[1] is None:
            path.unlink()
        else:
            path.write_text(probe.edit[1](path.read_text()))
    try:
        load_papers([probe.paper], TIER, probe.overrides or {}, root=root)
    except Exception as error:  # noqa: BLE001 (the outcome is the point)
        message = str(error)
        clean = type(error).__name__ in INPUT_ERRORS and probe.paper in message and "Traceback" not in message
        named = all(name in message for name in probe.names)
        return (CLEAN if clean and named else UNCLEAR), f"{type(error).__name__}: {message}"
    return ACCEPTED, ""


@pytest.mark.parametrize("probe", ALL_PROBES, ids=lambda p: p.id)
def test_bad_input_is_refused_naming_the_key(probe, tmp_path):
    outcome, message = attempt(probe, tmp_path)
    assert outcome == CLEAN, f"{outcome}: {message or 'no error'} (must name {probe.names})"


def test_there_are_enough_probes_for_every_paper():
    for paper in PAPERS:
        assert sum(p.paper == paper for p in ALL_PROBES) >= 40, paper
    assert len(ALL_PROBES) >= 60


def _numeric_nodes(node, path="#"):
    """(path, schema) of every schema node that admits an integer or a number."""
    if isinstance(node, dict):
        types = node.get("type", [])
        if {"integer", "number"} & set([types] if isinstance(types, str) else types):
            yield path, node
        for key, value in node.items():
            yield from _numeric_nodes(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _numeric_nodes(value, f"{path}/{i}")


@pytest.mark.parametrize("schema", [*(ROOT / "replications" / p / "config.schema.yaml" for p in PAPERS),
                                    ROOT / "shared" / "templates" / "paper" / "config.schema.yaml"],
                         ids=lambda path: path.parent.name)
def test_every_number_in_a_schema_is_bounded_above(schema):
    """Sizes, steps and rates have upper bounds that the full tier fits within: `epochs: 1e12` is a typo."""
    unbounded = [path for path, node in _numeric_nodes(load_yaml(schema.read_text()))
                 if not {"maximum", "exclusiveMaximum", "enum", "const"} & set(node)]
    assert not unbounded, f"{schema}: no maximum at {', '.join(unbounded)}"


# ---------------------------------------------------------------- through Snakemake, end to end
@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory):
    from shared.pipeline.scratch import copy_repo

    return copy_repo(tmp_path_factory.mktemp("bad_input"), ["bilinear_rnn"])


@pytest.mark.parametrize("args, names", [
    (["--config", "bilinear_rnn=5"], ["--config bilinear_rnn", "mapping"]),
    (["--config", "bilinear_rnm={quick: {d_hidden: 4}}"], ["bilinear_rnm", "did you mean 'bilinear_rnn'"]),
    (["--config", "bilinear_rnn={quick: {train: {lr: .nan}}}"], ["bilinear_rnn (quick tier)", "train.lr"]),
    (["--config", "tier=fast"], ["tier", "quick, full"]),
    (["--config", "bilinear_rnn={quick: {d_hidden: [1, 2}}"], ["--config bilinear_rnn", "YAML error"]),
], ids=["scalar", "misspelled-paper", "nan", "tier", "yaml-syntax"])
def test_snakemake_refuses_before_any_job_without_a_traceback(workflow_copy, args, names):
    proc = snakemake(workflow_copy, "--cores", "1", "bilinear_rnn", *args, timeout=load_scaled(300))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "Invalid input; nothing was run." in out and all(name in out for name in names), out
    assert "Traceback" not in out and 'File "' not in out, out
    assert not (workflow_copy / "results").exists()  # no job ran


def test_a_duplicate_key_in_a_config_file_stops_snakemake(workflow_copy):
    config = workflow_copy / "replications" / "bilinear_rnn" / "config.yaml"
    text = config.read_text()
    try:
        config.write_text(text + "\ncommon: {}\n")
        proc = snakemake(workflow_copy, "-n", "--cores", "1", "bilinear_rnn", timeout=load_scaled(300))
    finally:
        config.write_text(text)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "duplicate key 'common'" in out and "config.yaml:" in out, out
    assert "Traceback" not in out, out


@pytest.mark.parametrize("name", ["config.yaml", "claims.yaml", "config.schema.yaml"])
def test_a_missing_paper_file_stops_snakemake_naming_paper_and_file(workflow_copy, name):
    path = workflow_copy / "replications" / "bilinear_rnn" / name
    moved = path.with_name(name + ".away")
    path.rename(moved)
    try:
        proc = snakemake(workflow_copy, "-n", "--cores", "1", "bilinear_rnn", timeout=load_scaled(300))
    finally:
        moved.rename(path)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Invalid input; nothing was run.\nbilinear_rnn: " in out, out
    assert f"replications/bilinear_rnn/{name} is missing" in out and "Traceback" not in out, out


# ---------------------------------------------------------------- counts, for the note
def main():
    import tempfile

    tally = {CLEAN: [], UNCLEAR: [], ACCEPTED: []}
    for probe in ALL_PROBES:
        with tempfile.TemporaryDirectory() as tmp:
            outcome, message = attempt(probe, Path(tmp))
        tally[outcome].append((probe.id, message))
    for outcome, items in tally.items():
        print(f"{outcome}: {len(items)}")
    for outcome in (UNCLEAR, ACCEPTED):
        for probe_id, message in tally[outcome]:
            print(f"  [{outcome}] {probe_id}: {message[:200]}")


if __name__ == "__main__":
    main()
