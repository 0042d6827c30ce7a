"""A paper's config: tiers merged over `common`, command-line overrides, and a strict schema with clear errors."""
import copy
import difflib
import functools
import math
import os
from pathlib import Path

import jsonschema

from shared.io.files import YamlError, load_yaml, read_yaml
from shared.pipeline.tiers import TIERS, config_hash  # noqa: F401 (re-exported for the Snakefiles)


class ConfigError(ValueError):
    """Invalid configuration; raised while Snakemake parses the workflow, before any job runs."""


# The workflow's own top-level keys of `snakemake --config` (and of the profiles' config files); every other
# top-level key must be a paper's name.
WORKFLOW_KEYS = {
    "tier": "the tier every paper runs at: " + " or ".join(TIERS),
    "accelerator": "the device `device: auto` means on cluster nodes (cpu, cuda, cuda:N, mps)",
    "data_dir": "the download cache of the datasets (default: $REPLICATIONS_DATA_DIR or data/raw)",
    "benchmark_quick_suite": "false skips the two full quick-tier runs of the platform benchmark",
}
DEVICE_PATTERN = r"(auto|cpu|mps|cuda(:[0-9]+)?)"


def validate_tier(tier):
    if tier not in TIERS:
        raise ConfigError(f"config key 'tier' is {tier!r}; allowed: {', '.join(TIERS)}")
    return tier


def check_workflow_config(config, papers):
    """Refuse a top-level config key that is neither a paper nor a workflow key (a misspelled paper would otherwise
    run with its defaults), and a workflow key of the wrong type. Papers' own keys are checked when they load."""
    import re

    for key, value in config.items():
        if key in papers:
            continue
        if key not in WORKFLOW_KEYS:
            close = difflib.get_close_matches(str(key), [*papers, *WORKFLOW_KEYS], n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise ConfigError(f"--config: unknown key '{key}'{hint} (allowed: a paper's name ({', '.join(papers)}) "
                              f"or one of {', '.join(WORKFLOW_KEYS)})")
        if key == "tier":
            validate_tier(value)
        elif key == "accelerator" and not (isinstance(value, str) and re.fullmatch(DEVICE_PATTERN, value)):
            raise ConfigError(f"--config: key 'accelerator' is {value!r} (allowed: {WORKFLOW_KEYS[key]})")
        elif key == "data_dir" and not (isinstance(value, str) and value.strip()):
            raise ConfigError(f"--config: key 'data_dir' is {value!r} (allowed: a folder path)")
        elif key == "benchmark_quick_suite":
            as_flag(key, value)


def as_flag(key, value):
    """A yes/no --config value: a YAML boolean, or the text `true` / `false` that `--config key=false` passes."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ConfigError(f"--config: key '{key}' is {value!r} (allowed: true or false)")


def deep_merge(base, override):
    """Return base updated by override; nested mappings merge, everything else replaces, and a key set to null
    (`~`) is removed, so an override can drop an experiment (a tiny test config does)."""
    merged = copy.deepcopy(base)
    for key, value in (override or {}).items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def load_paper_config(paper_dir, tier, overrides=None):
    """Resolve `config.yaml` of a paper for one tier and validate it against `config.schema.yaml`.

    config.yaml holds `common` (shared by all tiers) and one mapping per tier; `overrides` (from
    `snakemake --config <paper>='{...}'`) may hold tier keys or plain keys and is merged last.
    """
    paper_dir = Path(paper_dir)
    name = paper_dir.name
    tier = validate_tier(tier)
    overrides = _mapping(_yaml_scalars(overrides, name), f"{name}: --config {name}") or {}
    if not (paper_dir / "config.yaml").is_file():
        raise ConfigError(f"{name}: {paper_dir / 'config.yaml'} is missing; every paper states its settings there")
    raw = _mapping(_read(paper_dir / "config.yaml", name), f"{name}: {paper_dir / 'config.yaml'}")
    if raw is None:
        raise ConfigError(f"{name}: {paper_dir / 'config.yaml'} is empty (expected 'common' and one mapping per tier)")
    unknown = sorted(set(raw) - {"common", *TIERS}, key=str)
    if unknown:
        raise ConfigError(f"{name}: {paper_dir / 'config.yaml'}: unknown top-level key '{unknown[0]}' "
                          f"(allowed: common, {', '.join(TIERS)})")
    if tier not in raw:
        raise ConfigError(f"{name}: config.yaml has no tier {tier!r}")
    schema_path = paper_dir / "config.schema.yaml"
    if not schema_path.is_file():  # no schema would mean no validation at all
        raise ConfigError(f"{name}: {schema_path} is missing; every paper validates its config against one")
    schema = _mapping(_read(schema_path, name), f"{name}: {schema_path}") or {}
    for other in TIERS:  # every tier's overrides are checked, not only the tier run, so a typo never waits for a run
        if other != tier and other in raw and overrides.get(other) is not None:
            validate(_resolve(raw, other, overrides, name), schema,
                     where=f"{name} ({other} tier, --config override of a tier not run)")
    cfg = _resolve(raw, tier, overrides, name)
    validate(cfg, schema, where=f"{name} ({tier} tier)")
    return cfg


PAPER_SCALE = "paper_scale.yaml"


def paper_scale_config(paper_dir):
    """The full tier with the paper's declared paper-scale part applied (replications/<paper>/paper_scale.yaml, a
    --configfile: the part of the full tier that runs here, and what it leaves out and why), or None where the paper
    declares none. A full report rendered from exactly this config is that part, not an ad-hoc override."""
    path = Path(paper_dir) / PAPER_SCALE
    if not path.is_file():
        return None
    doc = _mapping(_read(path, Path(paper_dir).name), f"{Path(paper_dir).name}: {path}") or {}
    return load_paper_config(paper_dir, "full", doc.get(Path(paper_dir).name))


def committed_config_hashes(paper_dir, tier):
    """The hashes of the configs committed for `tier`: config.yaml's, and at the full tier its paper-scale part."""
    scale = paper_scale_config(paper_dir) if tier == "full" else None
    return {config_hash(load_paper_config(paper_dir, tier))} | ({config_hash(scale)} if scale is not None else set())


def overridden_tiers(overrides, tier):
    """The tiers other than `tier` that `overrides` (a paper's --config value) changes."""
    overrides = _yaml_scalars(overrides, "--config")
    return [t for t in TIERS if t != tier and isinstance(overrides, dict) and overrides.get(t) is not None]


def _resolve(raw, tier, overrides, name):
    """common, then the tier, then plain overrides, then the tier's own overrides."""
    common = _mapping(raw.get("common"), f"{name}: config.yaml key 'common'") or {}
    tier_cfg = _mapping(raw[tier], f"{name}: config.yaml key '{tier}'") or {}
    plain = {k: v for k, v in overrides.items() if k not in TIERS}
    tier_overrides = _mapping(overrides.get(tier), f"{name}: --config {name}.{tier}") or {}
    cfg = deep_merge(deep_merge(deep_merge(common, tier_cfg), plain), tier_overrides)
    cfg["tier"] = tier
    if os.environ.get("REPLICATIONS_DEVICE"):  # an override the resolved config records, not a hidden one
        cfg["device"] = os.environ["REPLICATIONS_DEVICE"]
    return cfg


def _read(path, name):
    try:
        return read_yaml(path)
    except YamlError as error:
        raise ConfigError(f"{name}: {error}") from None


def _mapping(value, where):
    """`value` if it is a mapping or null, else a ConfigError saying where a mapping was expected."""
    if value is not None and not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a mapping of config keys, got {type(value).__name__} {value!r}")
    return value


def _yaml_scalars(value, name):
    """`snakemake --config k='{a: {b: 5}}'` leaves the nested scalars as strings ('5'); read them as YAML does."""
    if isinstance(value, str):
        try:
            parsed = load_yaml(value, source=f"--config {name}") if value.strip() else value
        except YamlError as error:
            raise ConfigError(f"{name}: {error}") from None
        return _yaml_scalars(parsed, name) if isinstance(parsed, (dict, list)) else parsed
    if isinstance(value, dict):
        return {k: _yaml_scalars(v, name) for k, v in value.items()}
    if isinstance(value, list):
        return [_yaml_scalars(v, name) for v in value]
    return value


def validate(cfg, schema, where="config"):
    """Raise ConfigError naming the first offending key and what is allowed. NaN and +-inf are never a valid
    config value: every bound compares false against NaN, and an infinite size or rate is no setting."""
    _refuse_non_finite(cfg, where, ())
    validator = jsonschema.Draft202012Validator(schema, registry=_base_registry())
    errors = sorted(validator.iter_errors(cfg), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        err = _specific(errors[0])
        key = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        raise ConfigError(f"{where}: invalid config key '{key}': {err.message}{_allowed(err)}")


def _refuse_non_finite(value, where, path):
    if isinstance(value, float) and not math.isfinite(value):
        key = ".".join(map(str, path)) or "(top level)"
        raise ConfigError(f"{where}: invalid config key '{key}': {value!r} is not a finite number")
    if isinstance(value, dict):
        for k, v in value.items():
            _refuse_non_finite(v, where, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _refuse_non_finite(v, where, (*path, i))


def _specific(err):
    """For a oneOf / anyOf error, the error of the branch the value meant: the branch whose discriminating
    `const` (say `source: planted`) or type matched, so the message names the field that is wrong."""
    while err.validator in ("oneOf", "anyOf") and err.context:
        branches = {}
        for sub in err.context:
            branches.setdefault(sub.schema_path[0], []).append(sub)
        meant = [subs for subs in branches.values()
                 if not any((s.validator, len(s.relative_path)) in (("type", 0), ("const", 1)) for s in subs)]
        if len(meant) != 1:
            break
        err = min(meant[0], key=lambda s: [str(p) for p in s.absolute_path])
    return err


@functools.cache
def _base_registry():
    """The shared fragments (shared/schemas/base.schema.yaml) that `$ref: "base#/..."` points to."""
    from referencing import Registry, Resource

    base = read_yaml(Path(__file__).resolve().parents[1] / "schemas" / "base.schema.yaml")
    return Registry().with_resource("base", Resource.from_contents(base))


def _allowed(err):
    s = err.schema if isinstance(err.schema, dict) else {}
    parts = []
    if "enum" in s:
        parts.append("one of " + ", ".join(map(repr, s["enum"])))
    for bound, text in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")):
        if bound in s:
            parts.append(f"{text} {s[bound]}")
    if err.validator in ("minItems", "maxItems"):  # say how many, not only "too short"
        low, high = s.get("minItems"), s.get("maxItems")
        items = lambda n: f"{n} item{'s' * (n != 1)}"
        parts.append(f"exactly {items(low)}" if low == high else
                     " and ".join(t for t in (low is not None and f"at least {items(low)}",
                                               high is not None and f"at most {items(high)}") if t))
    if err.validator == "additionalProperties":
        return " (allowed keys: " + ", ".join(sorted(s.get("properties", {}))) + ")"
    if err.validator in ("oneOf", "anyOf"):  # name the forms by their discriminating constants, or their types
        forms = [", ".join(f"{k}: {v['const']!r}" for k, v in b.get("properties", {}).items() if "const" in v)
                 or str(b.get("type", "a value")) for b in err.validator_value if isinstance(b, dict)]
        parts.append("one of the forms " + " | ".join(forms))
    return f" (allowed: {'; '.join(parts)})" if parts else ""


