"""shared.pipeline.config (tiers, overrides, schema validation, hashing), shared.pipeline.grid and shared.io.runtime.pick_device,
against the real replications/bilinear_mlp config and schema."""
import copy
from pathlib import Path

import pytest
import torch
import yaml

from shared.io.runtime import pick_device
from shared.pipeline.config import TIERS, ConfigError, config_hash, deep_merge, load_paper_config, validate_tier
from shared.pipeline.grid import expand_runs

PAPER_DIR = Path(__file__).resolve().parents[2] / "replications" / "bilinear_mlp"
RAW = yaml.safe_load((PAPER_DIR / "config.yaml").read_text())


def load(tier="quick", **overrides):
    return load_paper_config(PAPER_DIR, tier, overrides or None)


# ---------------------------------------------------------------- loading and merging
@pytest.mark.parametrize("tier", TIERS)
def test_tiers_load_and_validate(tier):
    cfg = load(tier)
    assert cfg["tier"] == tier
    assert cfg["lr"] == RAW["common"]["lr"] and cfg["defaults"] == RAW["common"]["defaults"]
    assert cfg["experiments"] == RAW[tier]["experiments"] and cfg["datasets"] == RAW[tier]["datasets"]
    assert set(cfg) == {"tier"} | set(RAW["common"]) | set(RAW[tier])
    for name, experiment in cfg["experiments"].items():  # every experiment expands to uniquely named runs
        runs = expand_runs(experiment, cfg["defaults"])
        assert len({r["name"] for r in runs}) == len(runs) >= 1, name


def test_overrides_deep_merge():
    cfg = load(lr=0.01, quick={"experiments": {"base": {"epochs": 5}}, "defaults": {"seed": 7}})
    assert cfg["lr"] == 0.01  # a plain key
    base = cfg["experiments"]["base"]
    assert base["epochs"] == 5  # a tier key, merged into the nested mapping ...
    assert base["batch_size"] == 250 and base["vary"] == RAW["quick"]["experiments"]["base"]["vary"]  # ... not replacing it
    assert cfg["defaults"]["seed"] == 7 and cfg["defaults"]["d_hidden"] == 512
    assert cfg["experiments"]["noise"] == RAW["quick"]["experiments"]["noise"]
    assert load()["experiments"]["base"]["epochs"] == 50  # the file (and any cache of it) is untouched


def test_tier_override_beats_plain_override_and_other_tiers_are_ignored():
    assert load(lr=0.01, quick={"lr": 0.02})["lr"] == 0.02
    assert load(full={"lr": 0.5})["lr"] == RAW["common"]["lr"]
    assert load("full", full={"lr": 0.5})["lr"] == 0.5
    # a plain key may also name a tier-level section
    assert load(experiments={"noise": {"epochs": 3}})["experiments"]["noise"]["epochs"] == 3


def test_overrides_replace_lists():
    cfg = load(quick={"experiments": {"noise": {"grid": {"noise_std": [0.0, 2.0]}}}})
    assert cfg["experiments"]["noise"]["grid"] == {"noise_std": [0.0, 2.0]}


def test_overrides_are_not_mutated():
    overrides = {"lr": 0.01, "quick": {"lr": 0.02}, "full": {"lr": 0.3}}
    snapshot = copy.deepcopy(overrides)
    load_paper_config(PAPER_DIR, "quick", overrides)
    assert overrides == snapshot


def test_deep_merge():
    base = {"a": {"b": 1, "c": [1, 2]}, "d": 1}
    merged = deep_merge(base, {"a": {"c": [3], "e": {"f": 1}}, "d": {"x": 1}})
    assert merged == {"a": {"b": 1, "c": [3], "e": {"f": 1}}, "d": {"x": 1}}
    assert base == {"a": {"b": 1, "c": [1, 2]}, "d": 1}
    assert deep_merge(base, None) == base and deep_merge(base, None) is not base


# ---------------------------------------------------------------- rejections
@pytest.mark.parametrize("overrides, key, allowed", [
    ({"lr": -0.1}, "'lr'", "> 0"),
    ({"lr": 0}, "'lr'", "> 0"),
    ({"quick": {"experiments": {"base": {"dataset": "cifar10"}}}}, "'experiments.base.dataset'",
     "one of 'mnist', 'fashion_mnist', 'mnist_5k'"),
    ({"quick": {"experiments": {"noise": {"grid": {"noise_std": [0.0, -0.5]}}}}},
     "'experiments.noise.grid.noise_std.1'", ">= 0"),
    ({"defaults": {"d_hidden": 0}}, "'defaults.d_hidden'", ">= 1"),
    ({"quick": {"experiments": {"size": {"grid": {"d_hidden": [30, 0]}}}}}, "'experiments.size.grid.d_hidden.1'",
     ">= 1"),
    ({"quick": {"experiments": {"base": {"vary": [{"name": "x", "d_hidden": 0}]}}}},
     "'experiments.base.vary.0.d_hidden'", ">= 1"),
    ({"device": "gpu"}, "'device'", None),
    ({"quick": {"experiments": {"grid": {"weight_decay": -1}}}}, "'experiments.grid.weight_decay'", ">= 0"),
])
def test_invalid_values_name_key_and_allowed(overrides, key, allowed):
    with pytest.raises(ConfigError) as info:
        load(**overrides)
    message = str(info.value)
    assert f"invalid config key {key}" in message
    assert "bilinear_mlp (quick tier)" in message
    if allowed:
        assert f"(allowed: {allowed}" in message  # the lower bound first, then the upper one


def test_unknown_key_names_the_allowed_keys():
    with pytest.raises(ConfigError) as info:
        load(quick={"experiments": {"base": {"epoch": 5}}})  # typo for 'epochs'
    message = str(info.value)
    assert "'experiments.base'" in message and "'epoch'" in message
    assert "allowed keys: batch_size, bias, d_hidden, dataset, epochs, grid, layer, noise_relative, noise_std, " \
           "residual, seed, task, vary, weight_decay" in message


@pytest.mark.parametrize("overrides, where, extra", [
    ({"lrr": 1}, "(top level)", "lrr"),
    ({"quick": {"experiments": {"grid": {"grid": {"layer": ["relu"]}}}}}, "experiments.grid.grid", "layer"),
    ({"analysis": {"adversarial": {"strength": [0.1]}}}, "analysis.adversarial", "strength"),
])
def test_unknown_keys_elsewhere(overrides, where, extra):
    with pytest.raises(ConfigError, match="allowed keys:") as info:
        load(**overrides)
    assert f"'{where}'" in str(info.value) and f"'{extra}'" in str(info.value)


def test_config_error_is_a_value_error():
    assert issubclass(ConfigError, ValueError)


@pytest.mark.parametrize("tier", ["medium", "Quick", "", None])
def test_unknown_tier(tier):
    with pytest.raises(ConfigError, match="allowed: quick, full") as info:
        validate_tier(tier)
    assert repr(tier) in str(info.value)
    with pytest.raises(ConfigError, match="'tier'"):
        load_paper_config(PAPER_DIR, tier)


@pytest.mark.parametrize("tier", TIERS)
def test_validate_tier_accepts(tier):
    assert validate_tier(tier) == tier


# ---------------------------------------------------------------- expand_runs
DEFAULTS = {"layer": "bilinear", "d_hidden": 512, "seed": 420, "noise_std": 0.5}


def test_expand_runs_plain_experiment():
    [run] = expand_runs({"dataset": "mnist", "epochs": 3, "d_hidden": 8}, DEFAULTS)
    assert run == {**DEFAULTS, "dataset": "mnist", "epochs": 3, "d_hidden": 8, "name": "model"}


def test_expand_runs_vary_crossed_with_grid():
    experiment = {"epochs": 2, "seed": 1, "name": "ignored",
                  "vary": [{"name": "bl", "layer": "bilinear"}, {"name": "relu", "layer": "relu", "d_hidden": 64}],
                  "grid": {"seed": [0, 1], "noise_std": [0.0, 0.25]}}
    runs = expand_runs(experiment, DEFAULTS)
    assert [r["name"] for r in runs] == [
        "bl,seed=0,noise_std=0.0", "bl,seed=0,noise_std=0.25", "bl,seed=1,noise_std=0.0", "bl,seed=1,noise_std=0.25",
        "relu,seed=0,noise_std=0.0", "relu,seed=0,noise_std=0.25", "relu,seed=1,noise_std=0.0",
        "relu,seed=1,noise_std=0.25",
    ]
    by_name = {r["name"]: r for r in runs}
    r = by_name["relu,seed=1,noise_std=0.25"]
    assert (r["layer"], r["d_hidden"], r["seed"], r["noise_std"], r["epochs"]) == ("relu", 64, 1, 0.25, 2)
    assert by_name["bl,seed=0,noise_std=0.0"]["d_hidden"] == 512  # defaults fill what nothing overrides
    assert not any("vary" in r or "grid" in r for r in runs)


def test_expand_runs_precedence():
    """defaults <- experiment keys <- vary entry <- grid cell."""
    experiment = {"d_hidden": 1, "noise_std": 1.0, "seed": 1,
                  "vary": [{"name": "v", "d_hidden": 2, "noise_std": 2.0}], "grid": {"noise_std": [3.0]}}
    [run] = expand_runs(experiment, DEFAULTS)
    assert (run["layer"], run["seed"], run["d_hidden"], run["noise_std"]) == ("bilinear", 1, 2, 3.0)


def test_expand_runs_grid_only_and_real_config():
    cfg = load()
    grid = expand_runs(cfg["experiments"]["grid"], cfg["defaults"])
    assert len(grid) == 9 and grid[0]["name"] == "weight_decay=0.0,noise_std=0.0"
    assert {(r["weight_decay"], r["noise_std"]) for r in grid} == {
        (w, n) for w in (0.0, 0.5, 1.0) for n in (0.0, 0.5, 1.0)}
    assert all(r["d_hidden"] == 256 and r["seed"] == 0 for r in grid)
    base = expand_runs(cfg["experiments"]["base"], cfg["defaults"])
    assert [r["name"] for r in base] == ["bilinear", "reglu", "relu", "bilinear_bias"]
    assert [r["bias"] for r in base] == [False, False, False, True]


@pytest.mark.parametrize("experiment", [
    {"vary": [{"name": "a"}, {"name": "a", "layer": "relu"}]},
    {"vary": [{"layer": "relu"}, {"layer": "bilinear"}]},  # both unnamed: 'model' twice
    {"grid": {"seed": [0, 1, 0]}},
    {"vary": [{"name": "a"}, {"name": "a"}], "grid": {"seed": [0, 1]}},
])
def test_expand_runs_duplicate_names_raise(experiment):
    with pytest.raises(ValueError, match="not unique"):
        expand_runs(experiment, DEFAULTS)


# ---------------------------------------------------------------- config_hash
def test_config_hash_is_stable_under_key_order():
    cfg = load()
    reordered = yaml.safe_load(yaml.safe_dump(cfg, sort_keys=True))
    shuffled = {k: cfg[k] for k in reversed(list(cfg))}
    shuffled["experiments"] = {k: dict(reversed(list(v.items()))) for k, v in reversed(list(cfg["experiments"].items()))}
    assert list(shuffled) != list(cfg)
    h = config_hash(cfg)
    assert len(h) == 16 and all(c in "0123456789abcdef" for c in h)
    assert config_hash(reordered) == h == config_hash(shuffled) == config_hash(load())


@pytest.mark.parametrize("path, value", [
    (("lr",), 0.0011),
    (("experiments", "base", "epochs"), 51),
    (("defaults", "bias"), True),
    (("experiments", "noise", "grid", "noise_std"), [0.0, 0.25, 0.5]),
    (("tier",), "full"),
])
def test_config_hash_changes_with_a_value(path, value):
    cfg = load()
    changed = copy.deepcopy(cfg)
    node = changed
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    assert config_hash(changed) != config_hash(cfg)


def test_config_hash_differs_between_tiers():
    assert config_hash(load("quick")) != config_hash(load("full"))


# ---------------------------------------------------------------- pick_device
@pytest.fixture
def no_device_env(monkeypatch):
    monkeypatch.delenv("REPLICATIONS_DEVICE", raising=False)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA present: 'auto' picks it")
def test_pick_device_auto_is_cpu_without_cuda(no_device_env):
    assert pick_device("auto") == torch.device("cpu")
    assert pick_device() == torch.device("cpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_pick_device_auto_is_cuda_with_cuda(no_device_env):
    assert pick_device("auto").type == "cuda"


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA present")
@pytest.mark.parametrize("requested", ["cuda", "cuda:1"])
def test_pick_device_cuda_without_cuda_raises(no_device_env, requested):
    with pytest.raises(RuntimeError, match="CUDA is not available") as info:
        pick_device(requested)
    assert repr(requested) in str(info.value)


def test_pick_device_explicit_cpu(no_device_env):
    assert pick_device("cpu") == torch.device("cpu")


def test_device_env_override_is_recorded_in_the_resolved_config(monkeypatch):
    """REPLICATIONS_DEVICE overrides config.yaml where the config is resolved, so config.json and the config hash
    show it; the scripts' pick_device no longer reads the environment behind the config's back."""
    monkeypatch.setenv("REPLICATIONS_DEVICE", "cpu")
    assert load_paper_config(PAPER_DIR, "quick")["device"] == "cpu"
    monkeypatch.setenv("REPLICATIONS_DEVICE", "cuda")
    assert pick_device("cpu") == torch.device("cpu")
    monkeypatch.setenv("REPLICATIONS_DEVICE", "gpu")
    with pytest.raises(ConfigError, match="device"):
        load_paper_config(PAPER_DIR, "quick")

def test_null_override_removes_a_key():
    assert deep_merge({"experiments": {"a": {"x": 1}, "b": {"x": 2}}}, {"experiments": {"b": None}}) == \
        {"experiments": {"a": {"x": 1}}}
    assert deep_merge({"a": 1}, {"missing": None}) == {"a": 1}
