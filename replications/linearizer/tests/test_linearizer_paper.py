"""The linearizer paper's own code (replications/linearizer): the sampler's collapse into one matrix against the
iterative solvers and against the classical RK4 formula, the two models, the checkpoint round trip, data
preparation, the quality measures, and config errors caught before any job. Exactness checks run in float64 on
small random models whose parameters are all pushed off their (near-identity, A_t ~ 0) init."""
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from replications.linearizer import common, pipeline, prepare_data, quality, sampling, train
from replications.linearizer import model as model_mod
from shared.data import read_prepared, write_safetensors
from shared.io.checkpoints import read_meta, save_models
from shared.nn.invertible import ActNorm, perturbed
from shared.nn.linearizer import Linearizer
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Paper

ROOT = Path(__file__).resolve().parents[3]


F64 = torch.float64
EXACT = 1e-12  # float64 identities through g and g^-1, relative
FLOW = {"blocks": 2, "hidden": 16, "cond_dim": 4, "scale_bound": 0.5, "min_std": 0.1, "mixing": "linear"}
ONESTEP_CFG = {"flow": FLOW, "rank": 3, "time_hidden": 16, "time_embed": 8}
SHAPE = (6,)


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _randn(*shape, seed):
    return torch.randn(*shape, generator=_gen(seed), dtype=F64)


def _rel(a, b):
    """Largest relative L2 error over a batch."""
    return float(((a - b).flatten(1).norm(dim=1) / b.flatten(1).norm(dim=1)).max())


def _perturb(module, seed, scale=0.3):
    """Every parameter moved off its init (A_t ~ 0 and identity couplings at init), ActNorm marked fitted, eval,
    float64, frozen."""
    return perturbed(module.to(F64), 1000 + seed, scale).requires_grad_(False)


def _onestep(seed=0, shape=SHAPE, cfg=ONESTEP_CFG):
    torch.manual_seed(seed)
    return _perturb(model_mod.OneStepModel(shape, cfg), seed)


def _projective(seed=0, shape=SHAPE, rank=2):
    torch.manual_seed(seed)
    return _perturb(model_mod.ProjectiveModel(shape, {"flow": FLOW, "rank": rank}), seed)


# ---------------------------------------------------------------- sampling: one matrix vs the iterative solvers
@pytest.fixture(scope="module")
def onestep():
    model = _onestep()
    a_early, a_late = model.time_matrix.matrix(0.1), model.time_matrix.matrix(0.9)
    assert (a_early - a_late).norm() > 0.1 * a_early.norm()  # A_t genuinely varies with t
    return model


@pytest.mark.parametrize("method", ["euler", "rk4"])
@pytest.mark.parametrize("steps", [2, 7, 20])
def test_collapsed_matrix_equals_iterative_solver(onestep, method, steps):
    eps = _randn(16, *SHAPE, seed=steps)
    b = sampling.collapse(onestep, steps, method)
    one = sampling.one_step_generator(onestep, b)(eps)
    many = sampling.many_steps(onestep, eps, steps, method)
    assert _rel(one, many) < EXACT
    assert _rel(one, eps) > 0.1  # the flow and B are far from the identity: the comparison is not vacuous


def test_one_step_generator_is_a_linearizer_noise_to_data(onestep):
    f = sampling.one_step_generator(onestep, sampling.collapse(onestep, 5, "euler"))
    assert isinstance(f, Linearizer)
    assert f.space_in == onestep.noise_space and f.space_out == onestep.data_space
    assert f.space_in != f.space_out  # the two modes of one shared flow are different spaces


def test_released_rk_is_not_the_iterative_rk4(onestep):
    eps = _randn(16, *SHAPE, seed=1)
    released = sampling.one_step_generator(onestep, sampling.collapse(onestep, 20, "released_rk"))(eps)
    rk4 = sampling.many_steps(onestep, eps, 20, "rk4")
    assert _rel(released, rk4) > 1e-6


def test_step_times():
    for steps in (2, 5, 100):
        times, h = sampling.step_times(steps)
        assert len(times) == steps - 1 and h == 1.0 / steps
        assert times[0] == 0.0 and math.isclose(times[-1], (steps - 2) / steps)
        assert np.allclose(np.diff(times), h)
        assert times[-1] + h < 1.0  # 1 / (1 - t) stays finite at every stage (t + h included)


def test_unknown_method_is_rejected(onestep):
    with pytest.raises(ValueError, match="unknown method"):
        sampling.step_matrix(onestep, 0.0, 0.1, "midpoint")
    with pytest.raises(ValueError):
        sampling.collapse(onestep, 5, "rk45")
    with pytest.raises(ValueError):  # the released 'rk' exists only as a matrix
        sampling.integrate(onestep, _randn(2, 6, seed=0), 5, "released_rk")


@pytest.fixture
def constant_velocity(monkeypatch):
    """A one-step model whose ODE dz/dt = (A_t z - z) / (1 - t) has the time-independent velocity L:
    A_t = I + (1 - t) L, i.e. the factors A1(t) = I + (1 - t) L, A2(t) = I, patched where every path (the full
    matrix, the batched product, the stage products) reads A_t from."""
    model = _onestep(seed=3)
    n = model.n
    big_l = _randn(n, n, seed=7) / math.sqrt(n)
    eye = torch.eye(n, dtype=F64)

    def factors(t):
        return eye + (1 - t)[:, None, None] * big_l, eye.expand(len(t), n, n)

    monkeypatch.setattr(model.time_matrix, "factors", factors)
    torch.testing.assert_close(sampling.velocity_matrix(model, 0.7), big_l, rtol=0, atol=1e-14)
    return model, big_l


def test_rk4_step_matrix_is_the_fourth_order_taylor_polynomial(constant_velocity):
    """The classical fact: for dz/dt = L z, one RK4 step is I + hL + (hL)^2/2 + (hL)^3/6 + (hL)^4/24; the released
    'rk' matrix (no stage products) is I + hL, first order; Euler is I + hL too."""
    model, big_l = constant_velocity
    eye = torch.eye(model.n, dtype=F64)
    for t, h in ((0.0, 0.1), (0.3, 0.05), (0.8, 0.1)):
        hl = h * big_l
        taylor = eye + hl + hl @ hl / 2 + hl @ hl @ hl / 6 + hl @ hl @ hl @ hl / 24
        torch.testing.assert_close(sampling.step_matrix(model, t, h, "rk4"), taylor, rtol=0, atol=1e-13)
        torch.testing.assert_close(sampling.step_matrix(model, t, h, "released_rk"), eye + hl, rtol=0, atol=1e-13)
        torch.testing.assert_close(sampling.step_matrix(model, t, h, "euler"), eye + hl, rtol=0, atol=1e-13)
        # so the released matrix misses the second-order term: not a rounding-level difference
        assert (sampling.step_matrix(model, t, h, "rk4") - (eye + hl)).norm() > 0.1 * (hl @ hl).norm() / 2


def test_collapsed_solvers_converge_to_the_matrix_exponential_at_their_order(constant_velocity):
    """B approximates exp((T - 1) h L); halving h cuts the error ~2x for Euler and the released 'rk', ~16x for RK4."""
    from scipy.linalg import expm

    model, big_l = constant_velocity

    def error(steps, method):
        exact = torch.from_numpy(expm(((steps - 1) / steps) * big_l.numpy()))
        return float((sampling.collapse(model, steps, method) - exact).norm() / exact.norm())

    for method, low, high in (("euler", 1.6, 2.5), ("released_rk", 1.6, 2.5), ("rk4", 12.0, 20.0)):
        ratio = error(20, method) / error(40, method)
        assert low < ratio < high, (method, ratio)
    # and the iterative RK4 solves the same ODE (the batched path through the patched `apply`)
    eps = _randn(4, *SHAPE, seed=2)
    one = sampling.one_step_generator(model, sampling.collapse(model, 10, "rk4"))(eps)
    assert _rel(one, sampling.many_steps(model, eps, 10, "rk4")) < EXACT


# ---------------------------------------------------------------- the models
def _loss_inputs(model, batch=8, seed=0):
    g = _gen(seed)
    x1 = torch.randn(batch, *model.shape, generator=g, dtype=F64)
    x0 = torch.randn(batch, *model.shape, generator=g, dtype=F64)
    t = torch.rand(batch, generator=g, dtype=F64)
    noise = (torch.randn(batch, model.n, generator=g, dtype=F64), torch.randn(batch, model.n, generator=g, dtype=F64))
    return x1, x0, t, noise


def test_onestep_loss_has_four_finite_terms_deterministic_and_trains_every_part():
    model = _onestep(seed=1).requires_grad_(True).train()
    inputs = _loss_inputs(model)
    total, terms = model.loss(*inputs, sigma=0.3)
    assert set(terms) == {"flow_matching", "noise_reconstruction", "data_reconstruction", "prediction"}
    assert all(torch.isfinite(v) and v >= 0 for v in terms.values())
    torch.testing.assert_close(total, sum(terms.values()), rtol=0, atol=0)
    again, terms_again = model.loss(*inputs, sigma=0.3)
    assert again.item() == total.item() and {k: v.item() for k, v in terms_again.items()} == \
        {k: v.item() for k, v in terms.items()}
    total.backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
    for name in ("flow.modes.weight", "time_matrix.left.4.weight", "time_matrix.right.4.weight"):
        assert dict(model.named_parameters())[name].grad.abs().sum() > 0, name  # both modes and A_t are trained


def test_time_matrix_apply_is_the_matrix_per_sample_and_low_rank():
    tm = _perturb(model_mod.TimeMatrix(n=7, rank=2, hidden=16, embed_dim=8), seed=4)
    t = torch.tensor([0.0, 0.25, 0.5, 0.99], dtype=F64)
    z = _randn(4, 7, seed=5)
    out = tm.apply(t, z)
    for i in range(len(t)):
        a = tm.matrix(float(t[i]))
        assert a.shape == (7, 7)
        torch.testing.assert_close(out[i], a @ z[i], rtol=1e-12, atol=1e-12)
        assert torch.linalg.matrix_rank(a) <= 2
    assert torch.linalg.matrix_rank(tm.matrix(0.3)) == 2  # exactly the rank asked for, generically


def test_onestep_rank_is_capped_at_the_dimension():
    model = model_mod.OneStepModel((2,), {**ONESTEP_CFG, "rank": 8})
    assert model.time_matrix.rank == 2 and model.time_matrix.matrix(0.5).shape == (2, 2)


def test_model_step_is_a_linearizer_from_noise_to_data():
    model = _onestep(seed=2)
    step = model.step(0.3)
    assert isinstance(step, Linearizer)
    assert step.space_in == model.noise_space and step.space_out == model.data_space
    x = _randn(5, *SHAPE, seed=6)
    z = model.flow(x, model_mod.NOISE)[0]
    expected = model.flow.inverse(z @ model.time_matrix.matrix(0.3).T, model_mod.DATA)
    assert _rel(step(x), expected) < EXACT
    torch.testing.assert_close(step.matrix, model.time_matrix.matrix(0.3), rtol=0, atol=0)


def test_projective_linearizer_is_idempotent_on_any_input():
    model = _projective(seed=5)
    f = model.linearizer()
    assert f.space_in == f.space_out == model.space
    p = f.matrix
    assert torch.linalg.matrix_rank(p) == 2
    torch.testing.assert_close(p @ p, p, rtol=0, atol=1e-13)
    torch.testing.assert_close(p, p.T, rtol=0, atol=1e-14)
    for seed, scale in ((0, 1.0), (1, 10.0)):
        x = scale * _randn(32, *SHAPE, seed=seed)
        once = f(x)
        assert _rel(once, x) > 0.1  # f is far from the identity: idempotency is not trivial here
        assert _rel(f(once), once) < 1e-10
    loss, terms = model.loss(x)
    assert set(terms) == {"fixed_point"} and loss.item() == torch.nn.functional.mse_loss(f(x), x).item()


def test_projective_noise_term_pulls_the_nearest_projected_noise_onto_each_data_point():
    """The off-data term (IMLE): each data point is matched with the nearest f(noise draw); its gradient reaches the
    flow and the projector, which the fixed-point loss alone leaves unconstrained off the data."""
    model = _projective(seed=6).requires_grad_(True)
    x, noise = _randn(5, *SHAPE, seed=7), _randn(40, *SHAPE, seed=8)
    total, terms = model.loss(x, noise, noise_weight=2.0)
    projected = model.linearizer()(noise).detach()
    nearest = projected[torch.cdist(x, projected).argmin(dim=1)]
    torch.testing.assert_close(terms["noise_to_data"], torch.nn.functional.mse_loss(nearest, x), rtol=1e-12, atol=0)
    torch.testing.assert_close(total, terms["fixed_point"] + 2.0 * terms["noise_to_data"], rtol=0, atol=0)
    terms["noise_to_data"].backward()
    assert model.basis.grad.abs().sum() > 0
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.flow.parameters())
    assert model.loss(x, noise, noise_weight=0.0)[1].keys() == {"fixed_point"}  # weight 0: the fixed-point loss alone


def test_onestep_loss_fits_actnorm_on_the_noise_batch_as_released():
    """The first training forward is the noise side (as the released code): ActNorm's scale comes from noise, so
    near-constant data pixels are not blown up by 1 / min_std."""
    torch.manual_seed(0)
    model = model_mod.OneStepModel(SHAPE, ONESTEP_CFG).to(F64).train()
    x1, x0, t, noise = _loss_inputs(model)
    x1 = 5.0 + 0.01 * x1  # data far from the noise and nearly constant
    model.loss(x1, x0, t, noise, sigma=0.3)
    actnorm = next(m for m in model.modules() if isinstance(m, ActNorm))
    torch.testing.assert_close(actnorm.loc.detach(), -x0.mean(0), rtol=0, atol=1e-12)


def test_projective_image_model_is_idempotent():
    """Image shapes get convolutional couplings after a squeeze; the projector still makes f idempotent."""
    torch.manual_seed(0)
    model = _perturb(model_mod.ProjectiveModel((1, 4, 4), {"flow": {**FLOW, "hidden": 4}, "rank": 3}), seed=0, scale=0.1)
    x = _randn(6, 1, 4, 4, seed=1)
    f = model.linearizer()
    assert f(x).shape == x.shape and _rel(f(f(x)), f(x)) < 1e-10


# ---------------------------------------------------------------- checkpoints: train.py's format, load_model
def test_load_model_restores_exact_outputs_actnorm_included(tmp_path):
    torch.manual_seed(0)
    model = model_mod.OneStepModel(SHAPE, ONESTEP_CFG)
    model.train()
    data = 3.0 + 2.0 * torch.randn(64, *SHAPE, generator=_gen(1))
    model.flow(data, model_mod.DATA)  # the first training forward fits ActNorm to this batch
    with torch.no_grad():
        for p in model.time_matrix.parameters():
            p.add_(0.1 * torch.randn(p.shape, generator=_gen(2)))
    actnorm = next(m for m in model.modules() if isinstance(m, ActNorm))
    assert actnorm.initialized and actnorm.loc.abs().max() > 1.0  # fitted, far from its zero init
    spec = {"name": "m", "seed": 0, "kind": "onestep", "dataset": "fake", "shape": list(SHAPE), "model": ONESTEP_CFG,
            "train": {}}
    path = tmp_path / "m.safetensors"
    save_models(path, {"m": model}, {"runs": [spec], "device": "cpu", "wall_seconds": 0.0})  # the run contract's layout

    loaded, loaded_spec, _ = common.load_model(path)
    assert isinstance(loaded, model_mod.OneStepModel) and not loaded.training
    assert loaded_spec == spec
    assert not any(p.requires_grad for p in loaded.parameters())
    model.eval()
    x = torch.randn(10, *SHAPE, generator=_gen(3))
    with torch.no_grad():
        for mode in (model_mod.NOISE, model_mod.DATA):
            assert torch.equal(loaded.flow(x, mode)[0], model.flow(x, mode)[0])
            assert torch.equal(loaded.flow.inverse(x, mode), model.flow.inverse(x, mode))
        for t in (0.0, 0.5):
            assert torch.equal(loaded.time_matrix.matrix(t), model.time_matrix.matrix(t))
    # the fitted ActNorm is never re-fitted from whatever batch a loaded model sees first in training mode
    loaded.train()
    loaded.flow(torch.zeros(8, *SHAPE), model_mod.DATA)
    loaded_actnorm = next(m for m in loaded.modules() if isinstance(m, ActNorm))
    assert torch.equal(loaded_actnorm.loc, actnorm.loc) and torch.equal(loaded_actnorm.log_scale, actnorm.log_scale)


def _run_script(module, monkeypatch, *argv):
    """A paper script's main() in-process, with its command line (what the rule passes)."""
    monkeypatch.setattr(sys, "argv", [module.__file__, *map(str, argv)])
    module.main()


def test_train_script_checkpoint_round_trip_and_determinism(tmp_path, monkeypatch):
    x = np.random.default_rng(0).random((40, 6), dtype=np.float32)
    arrays = {"x_train": x[:32], "x_test": x[32:], "y_train": np.zeros(32, np.int64), "y_test": np.zeros(8, np.int64)}
    data = tmp_path / "data.safetensors"
    write_safetensors(arrays, data, {"dataset": "fake", "shape": "[6]", "scale": "1.0"})
    params = {"name": "fake_model", "kind": "onestep", "dataset": "fake", "seed": 3, "device": "cpu", "model": ONESTEP_CFG,
              "train": {"steps": 4, "batch_size": 8, "lr": 1e-3, "sigma": 0.3, "clip": 1.0, "log_every": 2}}
    outputs = []
    for run in ("a", "b"):
        ckpt, history = tmp_path / f"{run}.safetensors", tmp_path / f"{run}.json"
        _run_script(train, monkeypatch, "--params", json.dumps(params), "--data", data, "--checkpoint", ckpt,
                    "--history", history)
        model, spec, meta = common.load_model(ckpt)
        assert spec == {"name": "fake_model", "seed": 3, "kind": "onestep", "dataset": "fake", "shape": [6],
                        "model": ONESTEP_CFG, "train": params["train"]}
        assert meta == read_meta(ckpt) and meta["runs"] == [spec] and meta["experiment"] == "onestep"
        assert meta["provenance"]["seeds"] == [3]
        assert json.loads(history.read_text())["runs"] == [spec]
        hist = json.loads(history.read_text())["history"]
        assert [h["step"] for h in hist] == [2, 4]
        assert {"train_flow_matching", "test_prediction"} <= set(hist[-1])
        assert all(m.initialized for m in model.modules() if isinstance(m, ActNorm))
        x_test = common.as_float(torch.from_numpy(arrays["x_test"]), 1.0)
        with torch.no_grad():
            outputs.append((model.data_space.encode(x_test), model.time_matrix.matrix(0.4), hist))
    # the same seed and data give the same weights (batches, t and noise come from the run's own generator)
    assert torch.equal(outputs[0][0], outputs[1][0]) and torch.equal(outputs[0][1], outputs[1][1])
    assert outputs[0][2] == outputs[1][2]


# ---------------------------------------------------------------- prepare_data
def test_eight_gaussians_shape_scale_and_seed():
    a = prepare_data.eight_gaussians(4000, seed=0, radius=2.0, std=0.15)
    assert a.shape == (4000, 2) and a.dtype == np.float32
    assert np.array_equal(a, prepare_data.eight_gaussians(4000, seed=0, radius=2.0, std=0.15))
    assert not np.array_equal(a, prepare_data.eight_gaussians(4000, seed=1, radius=2.0, std=0.15))
    radius = np.linalg.norm(a, axis=1)
    assert abs(np.median(radius) - 2.0) < 0.05 and radius.max() < 2.0 + 6 * 0.15
    angles = np.round(np.arctan2(a[:, 1], a[:, 0]) / (2 * np.pi / 8)) % 8  # nearest of the 8 centres
    counts = np.bincount(angles.astype(int), minlength=8)
    assert len(counts) == 8 and counts.min() > 4000 / 8 * 0.8
    centre = 2.0 * np.stack([np.cos(angles * np.pi / 4), np.sin(angles * np.pi / 4)], 1)
    assert abs(np.std(a - centre) - 0.15) < 0.01


@pytest.mark.parametrize("layout, element", [("flat", (64,)), ("image", (1, 8, 8))])
def test_digits_split_sizes_and_range(tmp_path, monkeypatch, layout, element):
    out = tmp_path / "digits.safetensors"
    params = {"dataset": "digits", "spec": {"layout": layout, "quality": "pca"}}
    _run_script(prepare_data, monkeypatch, "--params", json.dumps(params), "--out", out)
    arrays, meta = read_prepared(out)
    assert arrays["x_train"].shape == (1347, *element) and arrays["x_test"].shape == (450, *element)
    assert arrays["y_train"].shape == (1347,) and arrays["y_test"].shape == (450,)
    x = np.concatenate([arrays["x_train"].reshape(1347, -1), arrays["x_test"].reshape(450, -1)])
    assert x.min() == 0.0 and x.max() == 1.0 and len(np.unique(x)) == 17  # 16 grey levels / 16 and 0
    assert set(np.unique(arrays["y_test"])) == set(range(10))
    data, shape, scale = common.load_data(out)
    assert shape == element and scale == 1.0 and data["x_train"].dtype == torch.float32


@pytest.fixture
def fake_registry_file(tmp_path):
    """A prepared registry file as shared.data writes one: uint8 (N, 28, 28) images, int labels."""
    rng = np.random.default_rng(0)
    arrays = {"x_train": rng.integers(0, 256, (5, 28, 28), dtype=np.uint8),
              "x_test": rng.integers(0, 256, (3, 28, 28), dtype=np.uint8),
              "y_train": np.arange(5, dtype=np.int64), "y_test": np.arange(3, dtype=np.int64)}
    arrays["x_train"][0] = 77  # a constant image stays constant through the resize
    path = tmp_path / "mnist.safetensors"
    write_safetensors(arrays, path, {"dataset": "mnist"})
    return path, arrays


def test_registry_images_resized_to_an_image_layout(tmp_path, monkeypatch, fake_registry_file):
    source, raw = fake_registry_file
    out = tmp_path / "out.safetensors"
    params = {"dataset": "mnist", "spec": {"layout": "image", "size": 32, "quality": "pca"}}
    _run_script(prepare_data, monkeypatch, "--params", json.dumps(params), "--source", source, "--out", out)
    arrays, meta = read_prepared(out)
    assert arrays["x_train"].shape == (5, 1, 32, 32) and arrays["x_test"].shape == (3, 1, 32, 32)
    assert arrays["x_train"].dtype == np.uint8
    assert json.loads(meta["shape"]) == [1, 32, 32] and float(meta["scale"]) == 255.0
    assert (arrays["x_train"][0] == 77).all()
    assert np.array_equal(arrays["y_train"], raw["y_train"])
    # bilinear resizing keeps the mean grey level to within rounding and the antialiasing blur
    assert abs(arrays["x_test"].mean() - raw["x_test"].mean()) < 2.0
    data, shape, scale = common.load_data(out)
    assert data["x_train"].dtype == torch.uint8 and shape == (1, 32, 32)
    x = common.as_float(data["x_train"], scale)
    assert x.dtype == torch.float32 and 0.0 <= float(x.min()) and float(x.max()) <= 1.0


def test_registry_images_flat_layout_keeps_the_pixels(fake_registry_file):
    source, raw = fake_registry_file
    arrays, scale = prepare_data.registry_images(source, "flat", None)
    assert scale == 255.0 and arrays["x_train"].shape == (5, 784) and arrays["x_train"].dtype == np.uint8
    assert np.array_equal(arrays["x_test"], raw["x_test"].reshape(3, 784))
    same, _ = prepare_data.registry_images(source, "image", 28)  # already 28: no resize, no rounding
    assert np.array_equal(same["x_train"][:, 0], raw["x_train"])
    colour = {"x_train": np.zeros((2, 4, 4, 3), np.uint8), "x_test": np.zeros((1, 4, 4, 3), np.uint8),
              "y_train": np.zeros(2, np.int64), "y_test": np.zeros(1, np.int64)}
    colour["x_train"][..., 2] = 200  # channels last in the registry, channels first here
    path = source.parent / "celeba.safetensors"
    write_safetensors(colour, path, {"dataset": "celeba_64"})
    image, _ = prepare_data.registry_images(path, "image", None)
    assert image["x_train"].shape == (2, 3, 4, 4) and (image["x_train"][:, 2] == 200).all()
    assert (image["x_train"][:, :2] == 0).all()


# ---------------------------------------------------------------- quality
def _whitened(n, d, seed):
    """n samples whose sample mean is 0 and sample covariance (np.cov, ddof 1) is exactly I."""
    a = np.random.default_rng(seed).standard_normal((n, d))
    a -= a.mean(0)
    return a @ np.linalg.inv(np.linalg.cholesky(np.cov(a, rowvar=False))).T


def test_frechet_matches_the_gaussian_closed_form():
    a = _whitened(500, 4, seed=0)
    assert abs(quality.frechet(a, a)) < 1e-9
    shift = np.array([0.5, -1.0, 0.0, 2.0])
    for c in (1.0, 2.0, 3.0):
        assert quality.frechet(a, a + c * shift) == pytest.approx(c**2 * (shift**2).sum(), rel=1e-9)
    # covariances I and M^2 (M symmetric positive definite): ||mu||^2 + tr(I + M^2 - 2 M) = ||mu||^2 + ||M - I||_F^2
    r = np.random.default_rng(1).standard_normal((4, 4))
    m = r @ r.T / 4 + 0.5 * np.eye(4)
    b = a @ m.T + shift
    expected = (shift**2).sum() + ((m - np.eye(4)) ** 2).sum()
    assert quality.frechet(a, b) == pytest.approx(expected, rel=1e-8)
    assert quality.frechet(b, a) == pytest.approx(expected, rel=1e-8)


def test_energy_distance_zero_for_equal_sets_and_grows_with_a_shift():
    a = np.random.default_rng(0).standard_normal((300, 2))
    b = np.random.default_rng(1).standard_normal((300, 2))
    assert quality.energy_distance(a, a) == 0.0
    distances = [quality.energy_distance(a, b + [s, 0.0]) for s in (0.0, 0.5, 1.0, 2.0)]
    assert all(d > 0 for d in distances[1:]) and distances == sorted(distances)
    assert distances[0] < 0.1 * distances[1]  # two draws of one distribution: close to 0
    assert quality.energy_distance(a, b) == pytest.approx(quality.energy_distance(b, a), rel=1e-12)


def test_pixel_pca_shapes_and_orthonormal_basis():
    x = np.random.default_rng(0).random((50, 1, 8, 8))
    pca = quality.PixelPCA(x, components=10)
    assert pca.mean.shape == (64,) and pca.basis.shape == (64, 10)
    np.testing.assert_allclose(pca.basis.T @ pca.basis, np.eye(10), atol=1e-12)
    features = pca(x[:7])
    assert features.shape == (7, 10)
    np.testing.assert_allclose(pca(x).mean(0), 0.0, atol=1e-12)
    variances = pca(x).var(0)
    assert np.all(np.diff(variances) <= 1e-12)  # components in order of explained variance


# ---------------------------------------------------------------- config: rejected at parse time, key named
TRAIN = {"steps": 5, "batch_size": 8, "lr": 0.001, "clip": 1.0, "log_every": 5}


@pytest.mark.parametrize("tier_cfg, key", [
    pytest.param({"models": {"digits": {"dataset": "nope"}}}, "models.digits.dataset", id="unknown-dataset"),
    pytest.param({"analysis": {"algebra": {"model": "projective"}}}, "analysis.algebra.model",
                 id="algebra-on-projective"),
    pytest.param({"models": {"extra": {  # schema-valid, but a onestep model needs its A_t's MLP sizes
        "kind": "onestep", "dataset": "digits", "seed": 0, "model": {"flow": FLOW, "rank": 2},
        "train": {**TRAIN, "sigma": 0.3}}}}, "models.extra.model.time_hidden", id="onestep-without-time-mlp"),
    pytest.param({"models": {"extra": {
        "kind": "onestep", "dataset": "digits", "seed": 0, "model": ONESTEP_CFG, "train": TRAIN}}},
        "models.extra.train.sigma", id="onestep-without-sigma"),
    pytest.param({"models": {"extra": {
        "kind": "projective", "dataset": "mnist", "seed": 0, "model": {"flow": {**FLOW, "mixing": "permutation"},
                                                                        "rank": 2}, "train": TRAIN}}},
        "models.extra.model.flow.mixing", id="image-flow-with-permutation"),
    pytest.param({"analysis": {"samples": 20}}, "analysis.samples", id="fewer-samples-than-components"),
    pytest.param({"analysis": {"projective": {"inputs": 32}}}, "analysis.projective.inputs",
                 id="fewer-projective-inputs-than-components"),
    pytest.param({"models": {"algebra": {"kind": "projective", "dataset": "digits", "seed": 0,
                                         "model": {"flow": FLOW, "rank": 2}, "train": TRAIN}}},
                 "models.algebra", id="model-named-like-an-analysis"),
])
def test_invalid_config_is_rejected_naming_the_key(tier_cfg, key):
    with pytest.raises(ConfigError) as error:
        Paper("linearizer", "quick", {"quick": tier_cfg}, root=ROOT)
    message = str(error.value)
    assert message.startswith("linearizer (quick tier): ") and f"'{key}'" in message, message


def test_every_tier_passes_the_checks_and_declares_every_model():
    for tier in ("quick", "full"):
        paper = Paper("linearizer", tier, root=ROOT)
        pipeline.check(paper.cfg)
        models = paper.cfg["models"]
        assert set(paper.analyses) == {"algebra", *models}
        for name, spec in models.items():
            analysis = paper.analyses[name]
            assert analysis.script == f"analyze_{spec['kind']}" and analysis.resources == spec["kind"]
            assert analysis.reads == {"checkpoint": f"results/linearizer/{tier}/models/{name}.safetensors",
                                      "data": f"results/linearizer/{tier}/data/{spec['dataset']}.safetensors"}
        assert paper.analyses["algebra"].reads["checkpoint"].endswith(
            f"models/{paper.cfg['analysis']['algebra']['model']}.safetensors")


def test_only_registry_datasets_read_a_prepared_file():
    assert pipeline.registry_source("mnist_5k") == ["data/prepared/mnist_5k.safetensors"]
    assert pipeline.registry_source("celeba_64") == ["data/prepared/celeba_64.safetensors"]
    assert pipeline.registry_source("digits") == [] and pipeline.registry_source("eight_gaussians") == []
