"""The bilinear autoencoder paper's own code (replications/bilinear_autoencoder): the planted-manifold generator's
ground truth, the flagship activations read from a bilinear_mlp checkpoint, the explicit references the analyses
check the closed forms against (the B1 claim's reference, the TopK SAE's lifted error, the prefix oracle), the
manifold measures, a planted check of the weights-only manifold read-out, and both tiers as the workflow loads them
(plain Python, no Snakemake run; the config errors are data: tests/bad_config.yaml).
Identities are checked in float64 on small random models pushed off their orthogonal init."""
import json
import math
import sys

import numpy as np
import pytest
import torch
from torch import nn

from replications.bilinear_autoencoder import (
    analyze_manifold,
    analyze_pareto,
    analyze_prefix,
    common,
    pipeline,
    planted,
    prepare_data,
    train,
)
from shared.data import read_prepared, write_safetensors
from shared.io.checkpoints import save_models
from shared.nn.bae import KINDS, BilinearAutoencoder, composite_form, mixing_gram, top_subspace
from shared.nn.sae import TopKSAE
from shared.pipeline.paper import load_papers
from shared.pipeline.run import derive_seed


F64 = torch.float64
EXACT = dict(rtol=1e-10, atol=1e-12)
COUNTS = {"circle": 2, "triangle": 1, "cluster": 1, "direction": 2}  # 3 * 4 + 2 = 14 dimensions
D = 16
NEVER = 1e-12  # p_active: a sample then carries exactly the one component the generator forces on


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _unit(batch, d, seed):
    x = torch.randn(batch, d, generator=_gen(seed), dtype=F64)
    return x / x.norm(dim=1, keepdim=True)


def _model(kind, d=6, n=10, bottleneck=8, seed=0):
    """A float64 autoencoder with every parameter pushed off its orthogonal init."""
    torch.manual_seed(seed)
    model = BilinearAutoencoder(d, n, kind, bottleneck if kind in ("mixed", "combined") else None).double()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return model.eval().requires_grad_(False)


def _lifted(x, terms):
    """||x x^T - sum_j terms_j||_F^2 per sample, from the d x d matrices (terms: (batch, d, d))."""
    return (x[:, :, None] * x[:, None, :] - terms).pow(2).sum((-2, -1))


def _subset_explicit(model, x, idx):
    """Mean over x of the explicit lifted error of the latents in idx (coefficients of the whole dictionary)."""
    c = model.coefficients(model.latents(x))[:, idx]
    return float(_lifted(x, torch.einsum("bj,jd,je->bde", c, model.left[idx], model.right[idx])).mean())


def _run_script(module, monkeypatch, *argv):
    """A paper script's main() in-process, with its command line (what the rule passes)."""
    monkeypatch.setattr(sys, "argv", [module.__file__, *map(str, argv)])
    module.main()


# ---------------------------------------------------------------- planted manifolds
def test_generate_shapes_and_ground_truth():
    parts = planted.layout(COUNTS)
    assert [name for name, _, _ in parts] == ["circle0", "circle1", "triangle0", "cluster0", "direction0", "direction1"]
    x, amplitude, phase, blocks = planted.generate(500, D, COUNTS, 0.15, 0.02, seed=0, basis_seed=100)
    assert x.shape == (500, D) and amplitude.shape == phase.shape == (500, len(parts))
    assert blocks.shape == (len(parts), D, 3)
    assert {a.dtype for a in (x, amplitude, phase, blocks)} == {np.dtype(np.float32)}
    active = amplitude > 0
    assert active.any(1).all()  # at least one component per sample
    assert active.sum(1).max() > 1  # ... and several at p_active = 0.15
    assert ((amplitude[active] >= 0.5) & (amplitude[active] <= 1.5)).all()
    kinds = [kind for _, kind, _ in parts]
    for c, kind in enumerate(kinds):
        present = ~np.isnan(phase[:, c])
        if kind == "direction":
            assert not present.any()
            continue
        assert (present == active[:, c]).all()  # NaN exactly when absent
        value = phase[present, c]
        if kind == "circle":
            assert value.min() >= 0 and value.max() < 2 * np.pi + 1e-6
        elif kind == "triangle":
            assert value.min() >= 0 and value.max() < 3
        else:
            assert set(np.unique(value)) <= set(range(5))


def test_components_are_mutually_orthogonal_blocks():
    _, _, _, blocks = planted.generate(10, D, COUNTS, 0.15, 0.0, seed=0, basis_seed=100)
    blocks = blocks.astype(np.float64)
    dims = [dims for _, _, dims in planted.layout(COUNTS)]
    columns = np.concatenate([b[:, :k] for b, k in zip(blocks, dims)], 1)  # every used basis vector
    assert columns.shape == (D, sum(dims))
    np.testing.assert_allclose(columns.T @ columns, np.eye(sum(dims)), atol=1e-6)
    for b, k in zip(blocks, dims):
        assert (b[:, k:] == 0).all()  # a direction uses column 0 only


def test_noise_free_components_lie_on_their_planted_shapes():
    """noise = 0 and one component per sample: each sample is amplitude x (the component's local point) in its
    block, so the geometry can be read off exactly."""
    x, amplitude, phase, blocks = planted.generate(3000, D, COUNTS, NEVER, 0.0, seed=1, basis_seed=100)
    active = amplitude > 0
    assert (active.sum(1) == 1).all()
    corners = np.array([[np.cos(a), np.sin(a)] for a in np.pi / 2 + 2 * np.pi * np.arange(3) / 3])
    for c, (_, kind, _) in enumerate(planted.layout(COUNTS)):
        on = active[:, c]
        assert on.sum() > 200
        xs, amp, block = x[on].astype(np.float64), amplitude[on, c].astype(np.float64), blocks[c].astype(np.float64)
        coords = xs @ block  # (w, u, v) coordinates in the block
        np.testing.assert_allclose(coords @ block.T, xs, atol=1e-5)  # nothing outside the block
        local = coords / amp[:, None]
        if kind == "circle":  # c w + cos(theta) u + sin(theta) v, c in [0.5, 1]: an off-centre circle
            np.testing.assert_allclose(np.hypot(coords[:, 1], coords[:, 2]), amp, rtol=1e-5)
            assert local[:, 0].min() >= 0.5 - 1e-5 and local[:, 0].max() <= 1 + 1e-5
            angle = np.mod(np.arctan2(coords[:, 2], coords[:, 1]), 2 * np.pi)
            gap = np.angle(np.exp(1j * (angle - phase[on, c])))
            np.testing.assert_allclose(gap, 0, atol=1e-4)
        elif kind == "triangle":  # offset 0.8 w + a point on an edge of the unit-circumradius triangle
            np.testing.assert_allclose(local[:, 0], 0.8, rtol=1e-5)
            edge = np.floor(phase[on, c]).astype(int)
            t = (phase[on, c] - edge)[:, None]
            expected = (1 - t) * corners[edge] + t * corners[(edge + 1) % 3]
            np.testing.assert_allclose(local[:, 1:], expected, atol=1e-5)
        elif kind == "cluster":  # one of 5 unit centres plus 0.05 jitter
            which = phase[on, c].astype(int)
            centres = np.stack([local[which == k].mean(0) for k in range(5)])
            np.testing.assert_allclose(np.linalg.norm(centres, axis=1), 1, atol=0.05)
            assert np.linalg.norm(local - centres[which], axis=1).max() < 0.05 * 6
        else:  # s e, s in [0.5, 1.5]
            assert (local[:, 1:] == 0).all()
            assert local[:, 0].min() >= 0.5 - 1e-5 and local[:, 0].max() <= 1.5 + 1e-5


def test_generate_is_deterministic_by_seed():
    args = (200, D, COUNTS, 0.15, 0.02)
    first, again = planted.generate(*args, seed=3, basis_seed=100), planted.generate(*args, seed=3, basis_seed=100)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    other_seed = planted.generate(*args, seed=4, basis_seed=100)
    assert not np.array_equal(first[0], other_seed[0])
    np.testing.assert_array_equal(first[3], other_seed[3])  # the planted subspaces depend on basis_seed only
    other_basis = planted.generate(*args, seed=3, basis_seed=101)
    assert not np.array_equal(first[3], other_basis[3])
    np.testing.assert_array_equal(first[1], other_basis[1])  # ... and which components are on on seed only


def test_generate_rejects_too_small_d():
    with pytest.raises(ValueError, match="d = 13"):
        planted.generate(10, 13, COUNTS, 0.15, 0.0, seed=0, basis_seed=0)  # needs 14
    planted.generate(10, 14, COUNTS, 0.15, 0.0, seed=0, basis_seed=0)  # exactly enough


def test_prepare_data_script_writes_the_planted_splits(tmp_path, monkeypatch):
    spec = {"source": "planted", "d": D, "train": 64, "test": 32, "seed": 5, "basis_seed": 100, "p_active": 0.2,
            "noise": 0.01, "counts": COUNTS}
    out = tmp_path / "planted.safetensors"
    _run_script(prepare_data, monkeypatch, "--params", json.dumps({"name": "planted", "spec": spec, "device": "cpu"}),
                "--out", out)
    arrays, meta = read_prepared(out)
    for split, n, seed in (("train", 64, 5), ("test", 32, derive_seed(5, "test"))):  # the test split: its own stream
        x, amplitude, phase, blocks = planted.generate(n, D, COUNTS, 0.2, 0.01, seed, 100)
        np.testing.assert_array_equal(arrays[f"x_{split}"], x)
        np.testing.assert_array_equal(arrays[f"amplitude_{split}"], amplitude)
        np.testing.assert_array_equal(arrays[f"phase_{split}"], phase)
    np.testing.assert_array_equal(arrays["blocks"], blocks)
    assert [tuple(p) for p in json.loads(meta["components"])] == planted.layout(COUNTS)


# ---------------------------------------------------------------- the flagship's activations
class _Flagship(nn.Module):
    """Stands in for bilinear_mlp's ImageClassifier: only `embed.weight` is read."""

    def __init__(self, d_hidden, seed):
        super().__init__()
        torch.manual_seed(seed)
        self.embed = nn.Linear(784, d_hidden, bias=False)
        self.head = nn.Linear(d_hidden, 10, bias=False)


def _fake_flagship(tmp_path):
    models = {"d_hidden=5,seed=0": _Flagship(5, 0), "d_hidden=5,seed=1": _Flagship(5, 1)}
    checkpoint = tmp_path / "size.safetensors"
    save_models(checkpoint, models, {"experiment": "size"})
    rng = np.random.default_rng(0)
    images = {"x_train": rng.integers(0, 256, (12, 28, 28), dtype=np.uint8), "y_train": rng.integers(0, 10, 12),
              "x_test": rng.integers(0, 256, (7, 28, 28), dtype=np.uint8), "y_test": rng.integers(0, 10, 7)}
    path = tmp_path / "mnist.safetensors"
    write_safetensors(images, path, {"dataset": "fake"})
    return checkpoint, path, models, images


def test_flagship_activations_are_the_embedding_of_pixels_in_unit_range(tmp_path):
    checkpoint, path, models, images = _fake_flagship(tmp_path)
    out = prepare_data.flagship_activations(checkpoint, path, "d_hidden=5,seed=1")
    weight = models["d_hidden=5,seed=1"].embed.weight.detach().double().numpy()
    for split in ("train", "test"):
        pixels = images[f"x_{split}"].reshape(len(images[f"x_{split}"]), -1).astype(np.float64)
        expected = pixels @ weight.T / 255.0  # W x with x in [0, 1], as the classifier was trained
        assert out[f"x_{split}"].dtype == np.float32 and out[f"x_{split}"].shape == (len(pixels), 5)
        np.testing.assert_allclose(out[f"x_{split}"], expected, rtol=1e-6, atol=1e-7)  # float32 rounding only
        np.testing.assert_array_equal(out[f"y_{split}"], images[f"y_{split}"])
        assert out[f"y_{split}"].dtype == np.int64
    other = prepare_data.flagship_activations(checkpoint, path, "d_hidden=5,seed=0")
    assert not np.allclose(other["x_train"], out["x_train"])  # the run asked for, not any run of the file


def test_flagship_activations_name_the_missing_run(tmp_path):
    checkpoint, path, _, _ = _fake_flagship(tmp_path)
    with pytest.raises(SystemExit, match=r"no run 'd_hidden=50,seed=0' \(runs: d_hidden=5,seed=0, d_hidden=5,seed=1\)"):
        prepare_data.flagship_activations(checkpoint, path, "d_hidden=50,seed=0")


# ---------------------------------------------------------------- training: the checkpoint the analyses read
def test_train_script_checkpoint_round_trip_and_determinism(tmp_path, monkeypatch):
    x, _, _, _ = planted.generate(96, 8, {"circle": 1, "triangle": 0, "cluster": 1, "direction": 2}, 0.3, 0.02, 0, 1)
    data = tmp_path / "data.safetensors"
    write_safetensors({"x_train": x, "x_test": x[:32]}, data, {"name": "tiny"})
    runs = [{"name": "vanilla_a0", "kind": "vanilla", "alpha": 0.0, "seed": 0},
            {"name": "combined_a100", "kind": "combined", "alpha": 1.0, "seed": 1}]
    params = {"dataset": "tiny", "runs": runs, "device": "cpu", "expansion": 2, "bottleneck": 2,
              "train": {"optimizer": "muon", "nesterov": True, "lr": 0.03, "batch_size": 32, "penalty_warmup": 0.5,
                        "log_every": 2, "steps": 4},
              "topk": {"ks": [2], "expansion": 2, "steps": 3, "batch_size": 32, "lr": 0.001, "seed": 0}}
    saved = []
    for name in ("a", "b"):
        ckpt, history = tmp_path / f"{name}.safetensors", tmp_path / f"{name}.json"
        _run_script(train, monkeypatch, "--params", json.dumps(params), "--data", data, "--checkpoint", ckpt,
                    "--history", history)
        saved.append(common.load_autoencoders(ckpt))
        log = json.loads(history.read_text())["history"]
        assert [h["step"] for h in log["vanilla_a0"]] == [2, 4] and set(log) == {"vanilla_a0", "combined_a100", "topk2"}
    (models, specs, meta), (again, _, _) = saved
    assert meta["d"] == 8 and meta["expansion"] == 2 and meta["dataset"] == meta["experiment"] == "tiny"
    assert meta["provenance"]["seeds"] == [0, 1] and meta["device"].startswith("cpu")  # run.save's schema
    # one schema for both model kinds: every run names its kind and carries what build(spec) needs
    assert specs["topk2"] == {"name": "topk2", "kind": "topk", "k": 2, "seed": 0, "d": 8, "n": 16}
    assert specs["combined_a100"] == {**runs[1], "d": 8, "n": 16, "bottleneck": 16}
    assert specs["vanilla_a0"] == {**runs[0], "d": 8, "n": 16, "bottleneck": None}
    vanilla, combined, sae = models["vanilla_a0"], models["combined_a100"], models["topk2"]
    assert vanilla.kind == "vanilla" and vanilla.n == 16 and combined.kind == "combined" and combined.bottleneck == 16
    assert isinstance(sae, TopKSAE) and sae.k == 2 and sae.decoder.shape == (8, 16)
    assert all(p.dtype == F64 and not p.requires_grad for m in models.values() for p in m.parameters())
    for name, model in models.items():  # the same seeds give the same weights, whichever runs share the job
        for (key, p), q in zip(model.state_dict().items(), again[name].state_dict().values()):
            assert torch.equal(p, q), (name, key)
    torch.manual_seed(0)  # the run's seed: its init, which training moved
    init = common.build(common.bae_spec(runs[0], 8, 2, 2))
    assert (vanilla.left - init.left.double()).abs().max() > 1e-3


# ---------------------------------------------------------------- Pareto: the references the claims rely on
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("unit", [True, False])
def test_explicit_training_error_equals_closed_form(kind, unit):
    """B1's reference: the d x d training error (prefix-averaged for the ordered kinds) equals lifted_error."""
    model = _model(kind)
    x = _unit(9, 6, seed=1) * (1 if unit else torch.rand(9, 1, generator=_gen(2), dtype=F64) + 0.5)
    explicit = analyze_pareto.explicit_training_error(model, x)
    assert explicit.shape == (9,)
    torch.testing.assert_close(model.lifted_error(x), explicit, **EXACT)
    if model.ordered:  # the prefix average, spelled out
        slow = torch.stack([model.explicit_error(x, k) for k in range(1, model.n + 1)]).mean(0)
        torch.testing.assert_close(explicit, slow, **EXACT)
    else:
        c = model.coefficients(model.latents(x))
        terms = torch.einsum("bj,jd,je->bde", c, model.left, model.right)
        torch.testing.assert_close(explicit, _lifted(x, terms), **EXACT)


def test_explicit_training_error_is_not_blind_to_the_prefix_weights():
    """The ordered reference differs from the plain full-dictionary error: it cannot pass B1 by accident."""
    model, x = _model("ordered"), _unit(9, 6, seed=1)
    assert (analyze_pareto.explicit_training_error(model, x) - model.explicit_error(x)).abs().min() > 1e-3


def test_matched_interpolates_in_log_density_and_clamps():
    h, e = [0.4, 0.1, 0.2], [0.05, 0.3, 0.2]  # unsorted, as the curve's alphas need not order density
    assert analyze_pareto.matched(h, e, 0.2) == pytest.approx(0.2)
    assert analyze_pareto.matched(h, e, math.sqrt(0.1 * 0.2)) == pytest.approx(0.25)  # halfway in log density
    assert analyze_pareto.matched(h, e, math.sqrt(0.2 * 0.4)) == pytest.approx(0.125)
    assert analyze_pareto.matched(h, e, 0.15) != pytest.approx(0.25)  # not linear in density
    assert analyze_pareto.matched(h, e, 0.01) == pytest.approx(0.3)  # sparser than the sparsest model: clamped
    assert analyze_pareto.matched(h, e, 0.9) == pytest.approx(0.05)


def test_topk_metrics_use_the_exact_lifted_error():
    torch.manual_seed(0)
    sae = TopKSAE(6, 12, 3).double().eval()
    with torch.no_grad():
        sae.b_dec.copy_(0.2 * torch.randn(6, dtype=F64))
        sae.decoder.mul_(1.3)  # reconstructions of any norm: not a projection of x
    x = _unit(40, 6, seed=3)
    error, density = common.topk_metrics(sae, x, 16)
    batches = [x[:16], x[16:32]]  # the last 8 points do not fill a batch and are left out
    with torch.no_grad():
        errors = [float(_lifted(b, sae(b)[:, :, None] * sae(b)[:, None, :]).mean()) for b in batches]
        densities = [float(BilinearAutoencoder.hoyer_density(sae.encode(b)).mean()) for b in batches]
    assert error == pytest.approx(np.mean(errors), rel=1e-12)
    assert density == pytest.approx(np.mean(densities), rel=1e-12)
    assert 0 < density <= 1


def test_bae_metrics_average_the_full_dictionary_error_over_batches():
    model, x = _model("combined"), _unit(40, 6, seed=4)
    error, density = common.bae_metrics(model, x, 16)
    expected = np.mean([float(model.explicit_error(b).mean()) for b in (x[:16], x[16:32])])
    assert error == pytest.approx(expected, rel=1e-10)
    assert 0 < density <= 1


# ---------------------------------------------------------------- prefix ordering
def _greedy_reference(model, x, chunk):
    """The oracle reordering from scratch with explicit d x d errors: each time add the chunk that lowers the
    mean error most."""
    remaining, chosen, curve = list(range(model.n // chunk)), [], []
    while remaining:
        scores = {i: _subset_explicit(model, x, np.concatenate(chosen + [np.arange(i * chunk, (i + 1) * chunk)]))
                  for i in remaining}
        best = min(scores, key=scores.get)
        remaining.remove(best)
        chosen.append(np.arange(best * chunk, (best + 1) * chunk))
        curve.append(scores[best])
    return np.array(curve)


@pytest.mark.parametrize("kind", ["vanilla", "mixed"])
def test_oracle_order_matches_a_greedy_explicit_reordering(kind):
    model, x = _model(kind, d=6, n=12), _unit(20, 6, seed=5)
    curve = analyze_prefix.oracle_order(model, x, 3)
    assert curve.shape == (4,)
    np.testing.assert_allclose(curve, _greedy_reference(model, x, 3), rtol=1e-10)
    # it starts at the best single chunk and ends at the whole dictionary's error
    best_single = min(_subset_explicit(model, x, np.arange(i, i + 3)) for i in range(0, 12, 3))
    assert curve[0] == pytest.approx(best_single, rel=1e-10)
    assert curve[-1] == pytest.approx(float(model.reconstruction_error(x).mean()), rel=1e-10)
    assert curve[-1] == pytest.approx(float(model.explicit_error(x).mean()), rel=1e-10)


def test_oracle_curve_is_non_increasing_and_beats_index_order():
    """With orthonormal rank-1 terms (K = I, as the orthogonal init gives for n <= d) adding a latent changes the
    error by f_j^2 (K_jj - 2) <= 0: the greedy curve cannot rise, and it is never above index order."""
    rng = np.random.default_rng(0)
    model = BilinearAutoencoder(8, 8).double().eval().requires_grad_(False)
    with torch.no_grad():  # orthogonal in float64 (the init is float32's)
        model.left.copy_(torch.from_numpy(np.linalg.qr(rng.normal(size=(8, 8)))[0]))
        model.right.copy_(torch.from_numpy(np.linalg.qr(rng.normal(size=(8, 8)))[0]))
    torch.testing.assert_close(model.kernel(), torch.eye(8, dtype=F64), rtol=0, atol=1e-12)
    x = _unit(50, 8, seed=6)
    curve = analyze_prefix.oracle_order(model, x, 2)
    assert (np.diff(curve) <= 1e-12).all()
    index_order = model.prefix_errors(x, [2, 4, 6, 8]).mean(1).numpy()
    assert (curve <= index_order + 1e-12).all()
    assert curve[-1] == pytest.approx(index_order[-1], rel=1e-10)
    # the chunk subsets' errors, as subset_error computes them, against the explicit lift
    f, kernel = model.latents(x), model.kernel()
    c = model.coefficients(f)
    for idx in ([0, 1], [2, 5, 7], list(range(8))):
        assert analyze_prefix.subset_error(model, f, c, kernel, x, np.array(idx)) == \
            pytest.approx(_subset_explicit(model, x, np.array(idx)), rel=1e-10)


# ---------------------------------------------------------------- manifold measures
def test_circular_correlation():
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 2 * np.pi, 5000)
    cc = analyze_manifold.circular_correlation
    assert cc(a, a) == pytest.approx(1, abs=1e-12)
    assert cc(a, np.mod(a + 1.3, 2 * np.pi)) == pytest.approx(1, abs=1e-12)  # rotation
    assert cc(a, 0.7 - a) == pytest.approx(1, abs=1e-12)  # reflection flips the sign; |.| keeps 1
    assert cc(a, rng.uniform(0, 2 * np.pi, 5000)) < 0.05  # independent angles
    noisy = cc(a, a + rng.normal(0, 0.5, 5000))
    assert 0.5 < noisy < 0.99


def test_angular_agreement_needs_no_mean_direction():
    """Rotations and reflections agree fully, independent angles hardly, and a noisy rotation of evenly spread angles
    (whose mean directions are noise) stays near exp(-sigma^2 / 2) in every draw."""
    rng = np.random.default_rng(0)
    b = rng.uniform(0, 2 * np.pi, 800)
    agree = analyze_manifold.angular_agreement
    assert agree(b, b) == pytest.approx(1, abs=1e-12)
    assert agree(np.mod(b + 1.3, 2 * np.pi), b) == pytest.approx(1, abs=1e-12)
    assert agree(0.7 - b, b) == pytest.approx(1, abs=1e-12)  # reflection
    assert agree(rng.uniform(0, 2 * np.pi, 800), b) < 0.1  # independent: about 1 / sqrt(800)
    noisy = [(b + 1.3 + rng.normal(0, 0.15, 800), b) for _ in range(20)]
    assert min(agree(a, t) for a, t in noisy) > 0.97  # exp(-0.15^2 / 2) = 0.989 in expectation


def test_neighbour_purity_on_block_diagonal_and_shuffled_grams():
    rng = np.random.default_rng(0)
    groups, size = 10, 20
    labels = torch.arange(groups).repeat_interleave(size)
    n = groups * size
    gram = torch.zeros(n, n, dtype=F64)
    for g in range(groups):
        block = torch.from_numpy(rng.uniform(0.2, 0.9, (size, size)) * rng.choice([-1, 1], (size, size)))
        gram[g * size:(g + 1) * size, g * size:(g + 1) * size] = (block + block.T) / 2
    gram.fill_diagonal_(1.0)
    everyone = torch.ones(n, dtype=torch.bool)
    assert analyze_manifold.neighbour_purity(gram, labels, everyone, 5) == 1.0  # signs do not matter: |G|
    perm = torch.from_numpy(rng.permutation(n))
    shuffled = gram[perm][:, perm]  # the same grouping under other latent indices: labels no longer match it
    chance = (size - 1) / (n - 1)
    assert analyze_manifold.neighbour_purity(shuffled, labels, everyone, 5) == pytest.approx(chance, abs=0.04)
    # only assigned latents are averaged
    half = labels < groups // 2
    mixed = gram.clone()
    mixed[~half] = shuffled[~half]
    assert analyze_manifold.neighbour_purity(mixed, labels, half, 5) == 1.0
    # a latent is never its own neighbour, though G_ii = 1 is the largest entry
    assert analyze_manifold.neighbour_purity(gram, torch.arange(n), everyone, 1) == 0.0


def test_correlations_are_absolute_pearson():
    rng = np.random.default_rng(1)
    f, t = rng.normal(size=(300, 4)), rng.normal(size=(300, 3))
    t[:, 0] = -2 * f[:, 1] + 0.1 * t[:, 0]
    corr = analyze_manifold.correlations(torch.from_numpy(f), torch.from_numpy(t)).numpy()
    expected = np.abs(np.corrcoef(f.T, t.T)[:4, 4:])
    np.testing.assert_allclose(corr, expected, atol=0.02)  # population std vs sample std: (n - 1) / n
    assert corr[1, 0] > 0.99


def test_composite_form_recovers_a_planted_block():
    """Latents 0..k-1 are quadratic forms on one planted 3-D block and share a bottleneck column, so they mix;
    the composite form of latent 0 and its top-3 eigenvectors recover the block, as analyze_manifold reads it."""
    d, n, k, b = 12, 24, 4, 8
    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.normal(size=(d, d)))[0]
    block = torch.from_numpy(basis[:, 3:6])
    model = BilinearAutoencoder(d, n, "mixed", b).double().eval().requires_grad_(False)
    with torch.no_grad():
        model.left.copy_(torch.from_numpy(rng.normal(size=(n, d))))
        model.right.copy_(torch.from_numpy(rng.normal(size=(n, d))))
        model.left[:k] = torch.from_numpy(rng.normal(size=(k, 3))) @ block.T
        model.right[:k] = torch.from_numpy(rng.normal(size=(k, 3))) @ block.T
        model.down.copy_(torch.from_numpy(rng.normal(size=(b, n))))
        model.down[:, :k] = torch.from_numpy(rng.normal(size=(b, 1))) * torch.tensor([1.0, 2.0, 0.5, 3.0], dtype=F64)
    gram = mixing_gram(model)
    torch.testing.assert_close(gram[:k, :k], torch.ones(k, k, dtype=F64))
    assert gram[0, k:].abs().max() < 0.999
    q, members = composite_form(model, 0, gram, neighbours=k)
    assert set(members.tolist()) == set(range(k)) and members[0] == 0
    torch.testing.assert_close(q, q.T)
    values, vectors = top_subspace(q, 3)
    cosines = torch.linalg.svdvals(vectors.T @ block)  # cosines of the principal angles, as analyze_manifold
    torch.testing.assert_close(cosines, torch.ones(3, dtype=F64), rtol=0, atol=1e-10)
    assert values.abs().min() > 1e-3  # the block is fully used: Q has rank 3 there
    # a neighbourhood that reaches latents off the block no longer spans it
    q_wide, _ = composite_form(model, 0, gram, neighbours=n)
    assert torch.linalg.svdvals(top_subspace(q_wide, 3)[1].T @ block).mean() < 0.99


def test_composite_form_points_circle_the_planted_plane():
    """Noise-free planted circles, unit-normalised as the pipeline does, projected on the block: the angle in the
    two directions of largest spread goes round in the planted order (B6-circle-order's measure)."""
    x, amplitude, phase, blocks = planted.generate(2000, D, COUNTS, NEVER, 0.0, seed=2, basis_seed=100)
    on = amplitude[:, 0] > 0
    xs = x[on] / np.linalg.norm(x[on], axis=1, keepdims=True)
    centred = xs @ blocks[0] - (xs @ blocks[0]).mean(0)
    plane = np.linalg.svd(centred, full_matrices=False)[2][:2]
    xy = centred @ plane.T
    assert analyze_manifold.circular_correlation(np.arctan2(xy[:, 1], xy[:, 0]), phase[on, 0]) > 0.95


# ---------------------------------------------------------------- both tiers as the workflow loads them
def _load(tier="quick"):
    """This paper (and bilinear_mlp, which it needs) as the workflow loads it."""
    return load_papers(["bilinear_autoencoder"], tier, {})["bilinear_autoencoder"]


def test_check_accepts_both_tiers_and_the_flagship_paths_are_computed():
    for tier in ("quick", "full"):
        paper = _load(tier)
        pipeline.check(paper.cfg)
        assert len(paper.analyses) == 3 * len(paper.cfg["datasets"])
    paper = _load()
    spec = paper.cfg["datasets"]["mnist_bilinear"]
    flagship = paper.needed["bilinear_mlp"]
    assert pipeline.data_inputs(paper, "mnist_bilinear") == {
        "checkpoint": flagship.out(f"models/{spec['experiment']}.safetensors"),
        "images": f"data/prepared/{flagship.cfg['experiments'][spec['experiment']]['dataset']}.safetensors"}
    assert pipeline.data_inputs(paper, "planted") == {}
    assert pipeline.data_script(paper.cfg, "planted") == "prepare_data"
