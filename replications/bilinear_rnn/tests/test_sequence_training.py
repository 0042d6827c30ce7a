"""shared.train.sequences and shared.train.stacked with this paper's StateTracker (CPU, tiny runs): stacked
training equals training each run alone, runs do not depend on their neighbours, Stack's forward / gradient
clipping / unstacking, and accuracy_by_position."""
import copy

import pytest
import torch
import torch.nn.functional as F

from shared.data.sequence_tasks import parse_task, sample
from shared.io.runtime import generator, seed_everything
from shared.train.sequences import SeqRun, StepSchedule, accuracy_by_position, train_runs
from shared.train.stacked import Stack

from replications.bilinear_rnn.model import StateTracker, build

CPU = torch.device("cpu")
H, STEPS, TASK = 8, 30, "modadd3"
CLOSE = dict(rtol=1e-5, atol=1e-5)




def _spec(variant, seed, task=TASK):
    t = parse_task(task)
    return {"model": variant, "seed": seed, "vocab": t.vocab, "n_states": t.n_states, "d_hidden": H}


def _models(variant, seeds):
    models = {}
    for seed in seeds:
        seed_everything(seed)  # the init depends only on the run's seed, as in train.py
        models[f"s{seed}"] = build(_spec(variant, seed))
    return models


def _runs(seeds, task=TASK):
    return [SeqRun(f"s{seed}", seed, parse_task(task)) for seed in seeds]


def _train(variant, seeds, stacked=True, steps=STEPS):
    models = _models(variant, seeds)
    schedule = StepSchedule(steps=steps, log_every=10, progress=False)
    history = train_runs(models, _runs(seeds), schedule, CPU, stacked=stacked)
    return models, history


def _assert_same_weights(a, b, **tol):
    assert set(a) == set(b)
    for name in a:
        sa, sb = a[name].state_dict(), b[name].state_dict()
        assert set(sa) == set(sb)
        for k in sa:
            if tol:
                torch.testing.assert_close(sa[k], sb[k], **tol, msg=lambda m: f"{name}.{k}: {m}")
            else:
                assert torch.equal(sa[k], sb[k]), f"{name}.{k} differs"


# ---------------------------------------------------------------- stacked training = separate training
@pytest.mark.parametrize("variant", ["full", "diagonal"])
def test_stacked_equals_one_after_another(variant):
    seeds = [0, 1, 2]
    before = _models(variant, seeds)
    stacked, hist_stacked = _train(variant, seeds, stacked=True)
    alone, hist_alone = _train(variant, seeds, stacked=False)
    _assert_same_weights(stacked, alone, **CLOSE)
    # the weights moved: the comparison is not between two untouched inits
    for name in before:
        assert not torch.allclose(stacked[name].rnn.weight, before[name].rnn.weight, atol=1e-3)
    for name in hist_stacked:
        assert [r["step"] for r in hist_stacked[name]] == [r["step"] for r in hist_alone[name]] == [1, 11, 21, 30]
        for r, q in zip(hist_stacked[name], hist_alone[name]):
            assert r["length"] == q["length"]
            assert r["loss"] == pytest.approx(q["loss"], rel=1e-4, abs=1e-5)


@pytest.mark.parametrize("stacked", [True, False])
def test_same_seed_twice_is_bit_identical(stacked):
    first, hist_first = _train("full", [0, 1], stacked=stacked)
    second, hist_second = _train("full", [0, 1], stacked=stacked)
    _assert_same_weights(first, second)
    assert hist_first == hist_second


def test_run_does_not_depend_on_its_neighbours():
    alone, _ = _train("full", [0])
    together, _ = _train("full", [0, 1, 2])
    _assert_same_weights(alone, {"s0": together["s0"]}, **CLOSE)
    # and the neighbours really are different runs
    assert not torch.allclose(together["s0"].rnn.weight, together["s1"].rnn.weight, atol=1e-3)


def test_learning_rates_of_a_sweep_stack_as_if_alone():
    # one stack, three rates (the block2 sweep): each run ends where it would training alone at its own rate
    lrs = {"s0": 1e-2, "s1": 1e-3, "s2": 1e-4}
    schedule = StepSchedule(steps=STEPS, log_every=10, progress=False)
    runs = [SeqRun(r.name, r.seed, r.task, lr=lrs[r.name]) for r in _runs([0, 1, 2])]
    together = _models("full", [0, 1, 2])
    train_runs(together, runs, schedule, CPU)
    for run in runs:
        alone = _models("full", [run.seed])
        train_runs(alone, [run], schedule, CPU)
        _assert_same_weights(alone, {run.name: together[run.name]}, **CLOSE)
    assert not torch.allclose(together["s0"].rnn.weight, _models("full", [0])["s0"].rnn.weight, atol=1e-3)


def test_runs_must_match_models():
    with pytest.raises(ValueError, match="same runs"):
        train_runs(_models("full", [0, 1]), _runs([0, 2]), StepSchedule(steps=1, progress=False), CPU)


# ---------------------------------------------------------------- Stack
def _loss(model, tokens, states):
    logits = model(tokens)
    return F.cross_entropy(logits.flatten(0, 1), states.flatten())


def test_stack_forward_equals_each_model():
    models = list(_models("full", [0, 1, 2]).values())
    task = parse_task(TASK)
    batches = [sample(task, 4, 9, generator(s)) for s in range(3)]
    tokens = torch.stack([b[0] for b in batches])
    out = Stack(models)(tokens)
    for i, model in enumerate(models):
        torch.testing.assert_close(out[i], model(tokens[i]), rtol=1e-5, atol=1e-6)


def test_stack_clip_grad_norm_matches_torch_per_model():
    seeds = [0, 1, 2]
    models = list(_models("full", seeds).values())
    separate = copy.deepcopy(models)
    task = parse_task(TASK)
    batches = [sample(task, 16, 9, generator(s)) for s in seeds]
    tokens, states = torch.stack([b[0] for b in batches]), torch.stack([b[1] for b in batches])

    net = Stack(models)
    logits = net(tokens)
    losses = torch.stack([F.cross_entropy(logits[i].flatten(0, 1), states[i].flatten()) for i in range(3)])
    losses.sum().backward()
    norms_before = net.model_grad_norms().clone()
    max_norm = float(norms_before.median())  # one model above, one at, one below: clipped and untouched alike
    norms = net.clip_grad_norm_(max_norm)

    for i, model in enumerate(separate):
        _loss(model, tokens[i], states[i]).backward()
        total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        torch.testing.assert_close(norms[i], total, rtol=1e-5, atol=1e-7)
        grads = dict(model.named_parameters())
        for name, p in zip(net.names, net.stacked):
            torch.testing.assert_close(p.grad[i], grads[name].grad, rtol=1e-5, atol=1e-7,
                                       msg=lambda m: f"{i} {name}: {m}")
    after = net.model_grad_norms()
    assert (after <= max_norm * (1 + 1e-5)).all()
    assert (norms_before > max_norm).any() and (norms_before < max_norm).any()


def test_stack_unstack_round_trip():
    models = list(_models("diagonal", [0, 1]).values())
    net = Stack(models)
    with torch.no_grad():
        for p in net.stacked:
            p.add_(1.0)
    fresh = list(_models("diagonal", [0, 1]).values())
    net.unstack_into(fresh)
    for i in range(2):
        for k, v in fresh[i].state_dict().items():
            torch.testing.assert_close(v, models[i].state_dict()[k] + 1.0)


def test_stack_rejects_models_of_different_shapes():
    seed_everything(0)
    with pytest.raises(ValueError, match="identical parameter names and shapes"):
        Stack([build(_spec("full", 0)), build({**_spec("full", 0), "d_hidden": H + 2})])
    with pytest.raises(ValueError, match="identical parameter names and shapes"):
        Stack([build(_spec("full", 0)), build(_spec("diagonal", 0))])


# ---------------------------------------------------------------- accuracy_by_position
def _perfect_parity_tracker(dtype):
    """A_0 = I, A_1 = swap, h_0 = e_0: the state is e_{parity}; the readout maps u = e_s to logits favouring s."""
    model = StateTracker(vocab=2, n_states=2, d_hidden=2, variant="full").to(dtype)
    with torch.no_grad():
        model.rnn.weight.copy_(torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]]))
        model.rnn.h0.copy_(torch.tensor([1.0, 0.0]))
        model.readout.weight.copy_(torch.eye(2))
        model.readout.bias.zero_()
    return model


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_perfect_parity_model_scores_one_everywhere(dtype):
    task = parse_task("parity")
    tokens, states = sample(task, 64, 500, generator(0))
    model = _perfect_parity_tracker(dtype)
    acc = accuracy_by_position(model, tokens, states, chunk=24)  # chunks that do not divide the batch
    assert acc.shape == (500,)
    assert torch.equal(acc, torch.ones(500))
    # and the per-position accuracy is really per position: the constant guess "0" is right about half the time
    flipped = _perfect_parity_tracker(dtype)
    with torch.no_grad():
        flipped.readout.weight.copy_(torch.tensor([[1.0, 1.0], [0.0, 0.0]]))
    wrong = accuracy_by_position(flipped, tokens, states)
    torch.testing.assert_close(wrong, (states == 0).float().mean(0))


def test_accuracy_by_position_passes_the_mode():
    """forward_kw reaches the model: an additive model's renormalized evaluation differs from its exact one."""
    task = parse_task("modadd5")
    seed_everything(0)
    model = build({**_spec("full", 0, "modadd5"), "additive": True})
    with torch.no_grad():
        model.rnn.input.weight.mul_(20.0)
        model.rnn.input.bias.mul_(20.0)
    tokens, states = sample(task, 64, 40, generator(1))
    exact = accuracy_by_position(model, tokens, states, mode="exact")
    assert torch.equal(exact, accuracy_by_position(model, tokens, states))
    logits = {m: model(tokens, mode=m).argmax(-1) for m in ("exact", "renormalize")}
    assert not torch.equal(logits["exact"], logits["renormalize"])
    torch.testing.assert_close(accuracy_by_position(model, tokens, states, mode="renormalize"),
                               (logits["renormalize"] == states).float().mean(0))
