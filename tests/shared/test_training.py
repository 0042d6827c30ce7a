"""shared.train.supervised and shared.io.checkpoints on small synthetic data with the paper's ImageClassifier (CPU)."""
import importlib.util
import io
import json
import pickle
import re
import struct
import sys
from pathlib import Path

import pytest
import safetensors.numpy
import safetensors.torch
import torch
import torch.nn.functional as F

import shared.io.checkpoints as checkpoints
import shared.io.files as files
import shared.train.supervised as training
from shared.io.checkpoints import load_state_dicts, read_meta, save_models
from shared.io.runtime import generator, seed_everything
from shared.train.schedules import cosine_lr
from shared.train.supervised import EpochSchedule, Run, evaluate, noise_seed, order_seed, train

PAPER_DIR = Path(__file__).resolve().parents[2] / "replications" / "bilinear_mlp"
CPU = torch.device("cpu")
D_INPUT, N_CLASSES = 64, 10
TIMING_KEYS = {"epoch_seconds"}  # wall-clock: the only history field allowed to differ between identical runs


def _load_model_module():
    sys.path.insert(0, str(PAPER_DIR))
    spec = importlib.util.spec_from_file_location("bilinear_mlp_model", PAPER_DIR / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ImageClassifier = _load_model_module().ImageClassifier




@pytest.fixture(scope="module")
def data():
    g = torch.Generator().manual_seed(1234)
    x = torch.rand(640, D_INPUT, generator=g)
    teacher = torch.randn(D_INPUT, N_CLASSES, generator=g)
    y = ((x - 0.5) @ teacher).argmax(-1)  # learnable labels, so training actually moves
    return {"x_train": x[:512], "y_train": y[:512], "x_test": x[512:], "y_test": y[512:]}


def build(seed, d_hidden=16, layer="bilinear", bias=False):
    seed_everything(seed)
    return ImageClassifier(d_input=D_INPUT, d_hidden=d_hidden, n_classes=N_CLASSES, layer=layer, bias=bias)


def schedule(**kw):
    return EpochSchedule(**{"epochs": 3, "batch_size": 64, "lr": 1e-2, "progress": False, **kw})


def strip_timing(history):
    return {name: [{k: v for k, v in row.items() if k not in TIMING_KEYS} for row in rows]
            for name, rows in history.items()}


def states(models):
    return {name: {k: t.detach().clone() for k, t in m.state_dict().items()} for name, m in models.items()}


def assert_states_equal(a, b):
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].keys() == b[name].keys()
        for key in a[name]:
            assert torch.equal(a[name][key], b[name][key]), f"{name}/{key} differs"


def train_one(data, run, sched=None, **build_kw):
    models = {run.name: build(run.seed, **build_kw)}
    history = train(models, [run], data, sched or schedule(), CPU)
    return models, history


# ---------------------------------------------------------------- (a) determinism
def test_same_seeds_are_bit_identical(data):
    runs = [Run("a", seed=0, noise_std=0.3, weight_decay=0.1), Run("b", seed=1)]
    results = []
    for attempt in range(2):
        torch.manual_seed(1000 + attempt)  # perturb the global RNG: train must not read it
        torch.rand(attempt + 5)
        models = {"a": build(0), "b": build(1)}
        history = train(models, runs, data, schedule(), CPU)
        results.append((strip_timing(history), states(models)))
    assert results[0][0] == results[1][0]
    assert_states_equal(results[0][1], results[1][1])
    rows = results[0][0]["a"]
    assert [r["epoch"] for r in rows] == [1, 2, 3]
    assert rows[-1]["train_loss"] < rows[0]["train_loss"]  # it learns (so 'identical' is not 'nothing moved')


def test_different_seed_gives_different_numbers(data):
    base_models, base_hist = train_one(data, Run("m", seed=0))
    # a different Run seed alone (same init) changes the batch order, hence everything
    models = {"m": build(0)}
    hist = train(models, [Run("m", seed=5)], data, schedule(), CPU)
    assert hist["m"][-1]["train_loss"] != base_hist["m"][-1]["train_loss"]
    assert not torch.equal(models["m"].embed.weight, base_models["m"].embed.weight)
    # a different init seed with the same stream changes the weights too
    models2 = {"m": build(7)}
    hist2 = train(models2, [Run("m", seed=0)], data, schedule(), CPU)
    assert hist2["m"][-1]["train_loss"] != base_hist["m"][-1]["train_loss"]
    assert not torch.equal(models2["m"].head.weight, base_models["m"].head.weight)


# ---------------------------------------------------------------- (b) batched == sequential
SPECS = [  # two seeds x two noise levels, five weight decays, two widths, all three layers
    (Run("s0_noisy_a", seed=0, noise_std=0.5, weight_decay=0.0), dict(d_hidden=16)),
    (Run("s0_noisy_b", seed=0, noise_std=0.5, weight_decay=0.5), dict(d_hidden=24, layer="reglu")),
    (Run("s0_clean", seed=0, noise_std=0.0, weight_decay=0.1), dict(d_hidden=16, layer="relu")),
    (Run("s1_clean_a", seed=1, noise_std=0.0, weight_decay=1.0), dict(d_hidden=24, bias=True)),
    (Run("s1_clean_b", seed=1, noise_std=0.0, weight_decay=0.1), dict(d_hidden=16)),
    (Run("s1_noisy", seed=1, noise_std=0.25, weight_decay=0.2), dict(d_hidden=24)),
]
# models on the same stream with the same noise see the same inputs: train() fuses their first-layer matmul,
# which promises equality to float tolerance only; a model alone in its group runs exactly the ops of training alone
FUSED = {"s0_noisy_a", "s0_noisy_b", "s1_clean_a", "s1_clean_b"}


@pytest.mark.parametrize("eval_every", [1, 2])
def test_batched_training_equals_training_each_alone(data, eval_every, monkeypatch):
    group_sizes = []
    real_forward_group = training._forward_group

    def spy(models, inputs):
        group_sizes.append(len(models))
        return real_forward_group(models, inputs)

    monkeypatch.setattr(training, "_forward_group", spy)
    sched = schedule(eval_every=eval_every)
    models = {run.name: build(run.seed, **kw) for run, kw in SPECS}
    batched_hist = strip_timing(train(models, [run for run, _ in SPECS], data, sched, CPU))
    assert sorted(set(group_sizes)) == [1, 2]  # the fused path and the single-model path both ran
    batched = states(models)
    for run, kw in SPECS:
        alone_models, alone_hist = train_one(data, run, sched, **kw)
        alone, alone_hist = states(alone_models)[run.name], strip_timing(alone_hist)[run.name]
        for key, tensor in alone.items():
            assert torch.allclose(batched[run.name][key], tensor, rtol=0, atol=1e-6), f"{run.name}/{key}"
            if run.name not in FUSED:
                assert torch.equal(batched[run.name][key], tensor), f"{run.name}/{key} not bit-identical"
        if run.name in FUSED:
            for row, ref in zip(batched_hist[run.name], alone_hist, strict=True):
                assert row.keys() == ref.keys()
                assert row == {k: pytest.approx(v, rel=1e-5, abs=1e-6) for k, v in ref.items()}
        else:
            assert batched_hist[run.name] == alone_hist
    evaluated = [r["epoch"] for r in batched_hist["s0_clean"] if "test_acc" in r]
    assert evaluated == ([1, 2, 3] if eval_every == 1 else [2, 3])  # the last epoch is always evaluated


@pytest.mark.parametrize("residual", [False, True])
def test_fused_forward_matches_each_model(residual):
    """The first-layer fusion is the same maths as calling each model (float64, so to 1e-12)."""
    models = [build(s, d_hidden=w, layer=layer, bias=bias).double() for s, w, layer, bias in
              [(0, 16, "bilinear", False), (1, 8, "reglu", True), (2, 24, "relu", True)]]
    for m in models:
        m.residual = residual
    x = torch.rand(32, D_INPUT, dtype=torch.float64)
    with torch.no_grad():
        fused = training._forward_group(models, x)
        for m, logits in zip(models, fused, strict=True):
            torch.testing.assert_close(logits, m(x), rtol=1e-12, atol=1e-12)
    # modules without the hooks are simply called
    plain = [torch.nn.Linear(D_INPUT, N_CLASSES).double() for _ in range(2)]
    with torch.no_grad():
        for m, logits in zip(plain, training._forward_group(plain, x), strict=True):
            assert torch.equal(logits, m(x))


def test_plain_modules_train(data):
    """Any nn.Module works (no fusion hooks), and batching two of them changes nothing."""
    def mlp(seed):
        torch.manual_seed(seed)
        return torch.nn.Sequential(torch.nn.Linear(D_INPUT, 8), torch.nn.Tanh(), torch.nn.Linear(8, N_CLASSES))

    together = {"a": mlp(0), "b": mlp(1)}
    hist = train(together, [Run("a", 0), Run("b", 0, weight_decay=0.3)], data, schedule(), CPU)
    alone = {"b": mlp(1)}
    hist_b = train(alone, [Run("b", 0, weight_decay=0.3)], data, schedule(), CPU)
    assert strip_timing(hist)["b"] == strip_timing(hist_b)["b"]
    assert_states_equal(states({"b": together["b"]}), states(alone))


def test_history_matches_a_hand_written_reference_loop(data):
    """One model against the loop the docstring describes: randperm from generator(2 seed), noise from
    generator(2 seed + 1) scaled by std, drop_last batches, AdamW with CosineAnnealingLR stepped per epoch."""
    run, sched = Run("m", seed=3, noise_std=0.4, weight_decay=0.2), schedule(batch_size=48)
    models, hist = train_one(data, run, sched)
    assert len(data["x_train"]) % sched.batch_size != 0  # so dropping the last partial batch is checked

    ref = build(run.seed)
    opt = torch.optim.AdamW(ref.parameters(), lr=sched.lr, betas=sched.betas, eps=sched.eps,
                            weight_decay=run.weight_decay)
    lr_sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=sched.epochs)
    order_g, noise_g = generator(2 * run.seed), generator(2 * run.seed + 1)
    x, y = data["x_train"], data["y_train"]
    n_steps = len(x) // sched.batch_size
    for epoch in range(sched.epochs):
        perm = torch.randperm(len(x), generator=order_g)
        losses, correct = [], 0
        for step in range(n_steps):
            idx = perm[step * sched.batch_size : (step + 1) * sched.batch_size]
            xb = x[idx] + run.noise_std * torch.randn(x[idx].shape, generator=noise_g)
            logits = ref(xb)
            loss = F.cross_entropy(logits, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            correct += (logits.argmax(-1) == y[idx]).sum().item()
        row = hist["m"][epoch]
        assert row["lr"] == pytest.approx(lr_sched.get_last_lr()[0], rel=1e-12)
        assert row["train_loss"] == pytest.approx(sum(losses) / n_steps, rel=1e-5)
        assert row["train_acc"] == pytest.approx(correct / (n_steps * sched.batch_size), abs=1e-12)
        lr_sched.step()
    for key, tensor in ref.state_dict().items():
        torch.testing.assert_close(models["m"].state_dict()[key], tensor, rtol=1e-5, atol=1e-6)
    # the test metrics are clean (no noise) and computed on the final weights
    assert (hist["m"][-1]["test_loss"], hist["m"][-1]["test_acc"]) == pytest.approx(
        evaluate(models["m"], data["x_test"], data["y_test"]))
    assert order_seed(run.seed) == 2 * run.seed and noise_seed(run.seed) == 2 * run.seed + 1


def test_evaluate_is_clean_and_restores_mode(data):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(D_INPUT, 32), torch.nn.Dropout(0.5), torch.nn.Linear(32, N_CLASSES))
    x, y = data["x_test"], data["y_test"]
    model.train()
    first = evaluate(model, x, y, chunk=50)  # chunks that do not divide the 128 test samples
    assert model.training
    assert evaluate(model, x, y) == pytest.approx(first, rel=1e-6)
    model.eval()
    with torch.no_grad():
        logits = model(x)
    expected = (F.cross_entropy(logits, y).item(), (logits.argmax(-1) == y).float().mean().item())
    assert first == pytest.approx(expected, rel=1e-6)
    assert not model.training


# ---------------------------------------------------------------- (c) noise
def test_zero_noise_never_draws_noise(data, monkeypatch):
    made = []
    real_generator, real_randn = training.generator, torch.randn
    calls = []

    def recording_generator(seed, device="cpu"):
        g = real_generator(seed, device)
        made.append((seed, g))
        return g

    def counting_randn(*args, **kwargs):
        calls.append(kwargs.get("generator"))
        return real_randn(*args, **kwargs)

    monkeypatch.setattr(training, "generator", recording_generator)
    monkeypatch.setattr(torch, "randn", counting_randn)
    models = {"a": build(0), "b": build(0, d_hidden=8)}
    train(models, [Run("a", 0, 0.0, 0.5), Run("b", 0, 0.0, 0.0)], data, schedule(), CPU)
    assert calls == []
    noise_gen = dict(made)[noise_seed(0)]
    assert torch.equal(noise_gen.get_state(), real_generator(noise_seed(0)).get_state()), "noise stream was used"
    order_gen = dict(made)[order_seed(0)]
    assert not torch.equal(order_gen.get_state(), real_generator(order_seed(0)).get_state())

    # with noise: one draw per step for the seed's shared stream, however many members use it
    made.clear()
    models = {"a": build(0), "b": build(0, d_hidden=8)}
    train(models, [Run("a", 0, 0.5, 0.5), Run("b", 0, 1.0, 0.0)], data, schedule(), CPU)
    noise_gen = dict(made)[noise_seed(0)]
    assert len(calls) == 3 * (512 // 64) and all(g is noise_gen for g in calls)


def test_noise_changes_training(data):
    clean_models, clean_hist = train_one(data, Run("m", seed=0, noise_std=0.0))
    noisy_models, noisy_hist = train_one(data, Run("m", seed=0, noise_std=0.5))
    assert clean_hist["m"][0]["train_loss"] != noisy_hist["m"][0]["train_loss"]
    assert not torch.allclose(clean_models["m"].embed.weight, noisy_models["m"].embed.weight, atol=1e-4)
    # a clean model is unaffected by a noisy neighbour on the same stream
    models = {"m": build(0), "n": build(0)}
    hist = train(models, [Run("m", 0, 0.0), Run("n", 0, 0.5)], data, schedule(), CPU)
    assert strip_timing(hist)["m"] == strip_timing(clean_hist)["m"]
    assert strip_timing(hist)["n"] == strip_timing(noisy_hist)["m"]


# ---------------------------------------------------------------- (d) schedule
@pytest.mark.parametrize("base_lr, epochs", [(1e-3, 1), (1e-3, 7), (0.05, 50)])
def test_cosine_lr_matches_torch_scheduler(base_lr, epochs):
    param = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([param], lr=base_lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs, eta_min=0)
    for epoch in range(epochs):
        assert cosine_lr(base_lr, epoch, epochs) == pytest.approx(sched.get_last_lr()[0], rel=1e-12, abs=1e-18)
        opt.step()
        sched.step()
    assert cosine_lr(base_lr, 0, epochs) == base_lr
    assert cosine_lr(base_lr, epochs, epochs) == pytest.approx(0.0, abs=1e-18)


def test_history_lr_follows_cosine(data):
    _, hist = train_one(data, Run("m", 0), schedule(epochs=4))
    assert [r["lr"] for r in hist["m"]] == [cosine_lr(1e-2, e, 4) for e in range(4)]
    assert hist["m"][0]["lr"] == 1e-2 and hist["m"][-1]["lr"] < hist["m"][1]["lr"]


# ---------------------------------------------------------------- (e) errors
@pytest.mark.parametrize("batch_size", [513, 4096])
def test_batch_larger_than_data_raises(data, batch_size):
    with pytest.raises(ValueError, match="batch_size"):
        train({"m": build(0)}, [Run("m", 0)], data, schedule(batch_size=batch_size), CPU)


def test_full_batch_is_allowed(data):
    _, hist = train_one(data, Run("m", 0), schedule(batch_size=512, epochs=1))
    assert len(hist["m"]) == 1


@pytest.mark.parametrize("run_names, model_names", [
    (["a"], ["b"]),
    (["a", "b"], ["a"]),
    (["a"], ["a", "b"]),
    (["a", "a"], ["a"]),
])
def test_mismatched_runs_and_models_raise(data, run_names, model_names):
    models = {name: build(0) for name in model_names}
    runs = [Run(name, 0) for name in run_names]
    with pytest.raises(ValueError, match="do not match"):
        train(models, runs, data, schedule(), CPU)


# ---------------------------------------------------------------- (f) checkpoints
META = {"experiment": "base", "runs": [{"name": "a", "d_hidden": 16}], "wall_seconds": 1.5,
        "path": Path("/tmp/x"), "nested": {"k": [1, 2.5, None, True]}}


def _models():
    return {"a": build(0), "b=1,c": build(1, d_hidden=8, bias=True, layer="reglu")}


def test_checkpoint_round_trip(tmp_path):
    models = _models()
    path = tmp_path / "sub" / "ckpt.safetensors"
    save_models(path, models, META)
    loaded, meta = load_state_dicts(path)
    assert meta == json.loads(json.dumps(META, default=str)) and meta["path"] == "/tmp/x"
    assert read_meta(path) == meta
    assert_states_equal(loaded, states(models))
    for name, state in loaded.items():  # loads into a freshly built model of the same spec
        fresh = build(99, **({"d_hidden": 8, "bias": True, "layer": "reglu"} if name != "a" else {}))
        fresh.load_state_dict(state)
        x = torch.rand(4, D_INPUT)
        assert torch.equal(fresh(x), models[name](x))
    assert sorted(p.name for p in path.parent.iterdir()) == ["ckpt.safetensors"]


def test_checkpoint_is_plain_safetensors(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    models = _models()
    save_models(path, models, META)
    raw = path.read_bytes()
    # the whole file is: 8-byte little-endian header length, JSON header, the tensor bytes; nothing else
    (header_len,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + header_len])
    assert json.loads(header.pop("__metadata__")["meta"])["experiment"] == "base"
    assert set(header) == {f"{n}/{k}" for n, m in models.items() for k in m.state_dict()}
    assert header["a/mixer.proj.weight"]["dtype"] == "F32" and header["a/mixer.proj.weight"]["shape"] == [32, 16]
    assert len(raw) == 8 + header_len + max(h["data_offsets"][1] for h in header.values())
    # the framework-free numpy reader reads every tensor
    arrays = safetensors.numpy.load_file(str(path))
    flat = safetensors.torch.load_file(str(path))
    assert arrays.keys() == flat.keys()
    assert all(torch.equal(torch.from_numpy(arrays[k]), flat[k]) for k in flat)


def test_loading_never_unpickles(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.safetensors"
    models = _models()
    save_models(path, models, META)

    def forbidden(*args, **kwargs):
        raise AssertionError("pickle / torch.load used while loading a checkpoint")

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, forbidden)
    monkeypatch.setattr(torch, "load", forbidden)
    loaded, meta = load_state_dicts(path)
    assert meta["experiment"] == "base"
    assert_states_equal(loaded, states(models))


def test_no_metadata_reads_as_empty(tmp_path):
    path = tmp_path / "bare.safetensors"
    safetensors.torch.save_file({"m/w": torch.zeros(2)}, str(path))
    states_, meta = load_state_dicts(path)
    assert meta == {} and list(states_) == ["m"]


@pytest.mark.parametrize("existing", [False, True])
def test_interrupted_write_leaves_nothing_behind(tmp_path, monkeypatch, existing):
    path = tmp_path / "ckpt.safetensors"
    if existing:
        save_models(path, {"old": build(5)}, {"v": 1})
        before = path.read_bytes()
    real_save = checkpoints.save_file

    def crash_midway(tensors, filename, metadata=None):
        real_save(tensors, filename, metadata=metadata)  # the temp file is fully written ...
        with open(filename, "r+b") as f:  # ... then damaged, then the process 'dies'
            f.truncate(100)
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(checkpoints, "save_file", crash_midway)
    with pytest.raises(KeyboardInterrupt):
        save_models(path, _models(), META)
    if existing:
        assert path.read_bytes() == before  # the old checkpoint survives intact
        assert list(load_state_dicts(path)[0]) == ["old"]
        assert [p.name for p in tmp_path.iterdir()] == [path.name]
    else:
        assert list(tmp_path.iterdir()) == []  # neither the checkpoint nor a temp file


def test_atomic_path_cleans_up_on_error(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with files.atomic_path(target) as tmp:
            assert tmp.parent == tmp_path and tmp != target
            tmp.write_text("partial")
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []
    with files.atomic_path(target) as tmp:
        tmp.write_text("done")
        assert not target.exists()  # only visible once the block finishes
    assert target.read_text() == "done" and list(tmp_path.iterdir()) == [target]


# ---------------------------------------------------------------- progress: a bar on a terminal, plain lines in a log
LINE = r"\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\dZ {label}, {unit} {done} of {total}(, loss \d+\.\d{{4}})?"


class Terminal(io.StringIO):
    def isatty(self):
        return True


def _run(progress, losses=()):
    for i in progress:
        if i < len(losses):
            progress.set_loss(losses[i])


def test_progress_in_a_log_is_plain_timestamped_lines():
    from shared.train.progress import Progress

    log = io.StringIO()  # not a terminal, as a job's log file
    _run(Progress(1000, "run 2 of 8", file=log, interval_s=3600), losses=[0.5] * 1000)
    text = log.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert len(lines) == 2  # after the first step and after the last: the interval keeps the rest out
    for line, done in zip(lines, (1, 1000)):
        assert re.fullmatch(LINE.format(label="run 2 of 8", unit="step", done=done, total=1000), line), line
    assert lines[-1].endswith("run 2 of 8, step 1000 of 1000, loss 0.5000")


def test_progress_lines_follow_the_interval_and_omit_an_unknown_loss():
    from shared.train.progress import Progress

    log = io.StringIO()
    _run(Progress(5, "sae", file=log, interval_s=0))
    lines = log.getvalue().splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == [f"sae, step {i} of 5" for i in range(1, 6)]


def test_progress_on_a_terminal_is_a_tqdm_bar_and_disabled_is_silent():
    from shared.train.progress import Progress

    terminal = Terminal()
    _run(Progress(3, "lm", file=terminal), losses=[1.0, 2.0, 3.0])
    assert "\r" in terminal.getvalue() and "lm" in terminal.getvalue() and "3/3" in terminal.getvalue()
    silent = io.StringIO()
    _run(Progress(3, "lm", file=silent, enabled=False))
    assert silent.getvalue() == ""


def test_trainer_progress_in_a_log(data, capsys):
    """train() with progress on, stderr captured (not a terminal): per-epoch lines, no carriage returns."""
    models = {"a": build(0), "b": build(1)}
    train(models, [Run("a", 0), Run("b", 1)], data, schedule(progress=True), CPU, label="run 1 of 1")
    err = capsys.readouterr().err
    assert "\r" not in err
    assert re.search(LINE.format(label="run 1 of 1", unit="epoch", done=3, total=3), err), err
