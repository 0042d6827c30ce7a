"""A paper's config: tiers merged over `common`, command-line overrides, and a strict schema with clear errors."""
import copy
import functools
import os
from pathlib import Path

import jsonschema

from shared.io.files import load_yaml
from shared.pipeline.tiers import TIERS, config_hash  # noqa: F401 (re-exported for the Snakefiles)


class ConfigError(ValueError):
    """Invalid configuration; raised while Snakemake parses the workflow, before any job runs."""



def validate_tier(tier):
    if tier not in TIERS:
        raise ConfigError(f"config key 'tier' is {tier!r}; allowed: {', '.join(TIERS)}")
    return tier


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
    tier = validate_tier(tier)
    overrides = _yaml_scalars(overrides)
    raw = load_yaml((paper_dir / "config.yaml").read_text())
    if tier not in raw:
        raise ConfigError(f"{paper_dir.name}: config.yaml has no tier {tier!r}")
    overrides = dict(overrides or {})
    tier_overrides = overrides.pop(tier, {})
    for other in TIERS:
        overrides.pop(other, None)
    cfg = deep_merge(deep_merge(deep_merge(raw.get("common", {}), raw[tier]), overrides), tier_overrides)
    cfg["tier"] = tier
    if os.environ.get("REPLICATIONS_DEVICE"):  # an override the resolved config records, not a hidden one
        cfg["device"] = os.environ["REPLICATIONS_DEVICE"]
    if (paper_dir / "claims.yaml").exists():
        from shared.pipeline.claims import load_claims  # a broken claims.yaml, too, stops the run before any job

        load_claims(paper_dir / "claims.yaml")
    schema_path = paper_dir / "config.schema.yaml"
    if schema_path.exists():
        validate(cfg, load_yaml(schema_path.read_text()), where=f"{paper_dir.name} ({tier} tier)")
    return cfg



def _yaml_scalars(value):
    """`snakemake --config k='{a: {b: 5}}'` leaves the nested scalars as strings ('5'); read them as YAML does."""
    if isinstance(value, str):
        parsed = load_yaml(value) if value.strip() else value
        return _yaml_scalars(parsed) if isinstance(parsed, (dict, list)) else parsed
    if isinstance(value, dict):
        return {k: _yaml_scalars(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_yaml_scalars(v) for v in value]
    return value


def validate(cfg, schema, where="config"):
    """Raise ConfigError naming the first offending key and what is allowed."""
    validator = jsonschema.Draft202012Validator(schema, registry=_base_registry())
    errors = sorted(validator.iter_errors(cfg), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        key = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        allowed = _allowed(err)
        raise ConfigError(f"{where}: invalid config key '{key}': {err.message}{allowed}")


@functools.cache
def _base_registry():
    """The shared fragments (shared/schemas/base.schema.yaml) that `$ref: "base#/..."` points to."""
    from referencing import Registry, Resource

    base = load_yaml((Path(__file__).resolve().parents[1] / "schemas" / "base.schema.yaml").read_text())
    return Registry().with_resource("base", Resource.from_contents(base))


def _allowed(err):
    s = err.schema if isinstance(err.schema, dict) else {}
    parts = []
    if "enum" in s:
        parts.append("one of " + ", ".join(map(repr, s["enum"])))
    for bound, text in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")):
        if bound in s:
            parts.append(f"{text} {s[bound]}")
    if err.validator == "additionalProperties":
        parts.append("allowed keys: " + ", ".join(sorted(s.get("properties", {}))))
    return f" (allowed: {'; '.join(parts)})" if parts else ""


