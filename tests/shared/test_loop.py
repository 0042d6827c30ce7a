"""shared.train.loop (fit, its batch helpers), shared.data.augment.crop_flip and the schedules, on tiny CPU data."""
import itertools
import math

import pytest
import torch
import torch.nn.functional as F

from shared.data.augment import crop_flip
from shared.train.loop import epoch_batches, epochwise, fit, with_replacement
from shared.train.schedules import cosine_lr, quarter_cosine_lr

X = torch.randn(96, 5, generator=torch.Generator().manual_seed(0))
Y = (X[:, 0] > 0).long()


def model(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Linear(5, 2)


def ce(m, batch):
    return F.cross_entropy(m(batch[0]), batch[1])


def adam(m):
    return torch.optim.Adam(m.parameters(), lr=0.05)


def train(seed=0, steps=30, **hooks):
    m = model()
    order = epoch_batches(len(X), 16, torch.Generator().manual_seed(seed))
    fit(m, ((X[i], Y[i]) for i in order), steps=steps, loss_fn=ce, make_optimizer=adam, **hooks)
    return m


def test_a_tiny_model_learns():
    before = ce(model(), (X, Y)).item()
    m = train(steps=60)
    assert ce(m, (X, Y)).item() < 0.5 * before
    assert (m(X).argmax(-1) == Y).float().mean() > 0.9


def test_same_seed_same_weights_other_seed_other_weights():
    a, b, c = train(0), train(0), train(1)
    assert torch.equal(a.weight, b.weight) and torch.equal(a.bias, b.bias)
    assert not torch.equal(a.weight, c.weight)


def test_fit_equals_the_hand_written_loop():
    """The loop's step is the plain one: same batches, same order of operations, bit-identical weights."""
    m, gen = model(), torch.Generator().manual_seed(3)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    for step in range(12):
        if step % 6 == 0:
            perm = torch.randperm(len(X), generator=gen)
        idx = perm[(step % 6) * 16:(step % 6 + 1) * 16]
        for group in opt.param_groups:
            group["lr"] = cosine_lr(0.1, step, 12)
        loss = ce(m, (X[idx], Y[idx]))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    looped = model()
    fit(looped, ((X[i], Y[i]) for i in epoch_batches(len(X), 16, torch.Generator().manual_seed(3))), steps=12,
        loss_fn=ce, make_optimizer=lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9),
        lr_policy=lambda lr, step: cosine_lr(lr, step, 12))
    assert torch.equal(m.weight, looped.weight) and torch.equal(m.bias, looped.bias)


def test_lr_policy_scales_each_group_base_rate():
    seen, made = [], []

    def two_groups(m):  # per-parameter-group rates: the groups' lr are the base rates
        made.append(torch.optim.SGD([{"params": [m.weight], "lr": 0.2}, {"params": [m.bias], "lr": 0.02}]))
        return made[0]

    fit(model(), itertools.repeat((X, Y)), steps=4, loss_fn=ce, make_optimizer=two_groups,
        lr_policy=epochwise(cosine_lr, 2, 2),
        on_step=lambda step, loss: seen.append([g["lr"] for g in made[0].param_groups]))
    assert seen == [[cosine_lr(base, step // 2, 2) for base in (0.2, 0.02)] for step in range(4)]
    assert seen[0] == [0.2, 0.02] and seen[2][0] == pytest.approx(0.1)


def test_constant_rate_without_policy_and_clipping():
    m = model()
    opt = fit(m, itertools.repeat((X * 100, Y)), steps=3, loss_fn=ce,
              make_optimizer=lambda m: torch.optim.SGD(m.parameters(), lr=0.5), clip=1e-3)
    assert opt.param_groups[0]["lr"] == 0.5
    start = model()
    moved = torch.cat([(m.weight - start.weight).flatten(), m.bias - start.bias]).norm()
    assert moved <= 3 * 0.5 * 1e-3 + 1e-7  # each clipped step moves at most lr * clip


def test_augment_sees_every_batch_and_on_step_every_step():
    augmented, steps = [], []

    def augment(batch):
        augmented.append(len(batch[1]))
        return batch[0] + 0.0, batch[1]

    train(steps=7, augment=augment, on_step=lambda step, loss: steps.append((step, loss.requires_grad)))
    assert augmented == [16] * 7
    assert steps == [(s, True) for s in range(7)]


def test_a_stream_of_fresh_samples():
    gen = torch.Generator().manual_seed(0)

    def stream():
        while True:
            x = torch.randn(32, 5, generator=gen)
            yield x, (x[:, 0] > 0).long()

    m = model()
    fit(m, stream(), steps=60, loss_fn=ce, make_optimizer=adam)
    assert (m(X).argmax(-1) == Y).float().mean() > 0.9


def test_snapshots_at_chosen_epochs():
    snaps, per_epoch = {}, len(X) // 16
    m = model()

    def snapshot(step, loss):
        if (step + 1) % per_epoch == 0 and (step + 1) // per_epoch in (1, 3):
            snaps[(step + 1) // per_epoch] = m.weight.detach().clone()

    fit(m, ((X[i], Y[i]) for i in epoch_batches(len(X), 16, torch.Generator().manual_seed(0))), steps=3 * per_epoch,
        loss_fn=ce, make_optimizer=adam, on_step=snapshot)
    assert sorted(snaps) == [1, 3] and torch.equal(snaps[3], m.weight)


def test_progress_iterable_sets_the_steps():
    steps = []
    fit(model(), itertools.repeat((X, Y)), steps=3, loss_fn=ce, make_optimizer=adam, progress=iter([0, 1, 2]),
        on_step=lambda step, loss: steps.append(step))
    assert steps == [0, 1, 2]


def test_epoch_batches_cover_each_epoch_once():
    batches = list(itertools.islice(epoch_batches(10, 3, torch.Generator().manual_seed(0)), 6))
    assert [len(b) for b in batches] == [3] * 6  # the remainder is dropped
    assert len(set(torch.cat(batches[:3]).tolist())) == 9
    kept = list(itertools.islice(epoch_batches(10, 3, torch.Generator().manual_seed(0), drop_last=False), 4))
    assert [len(b) for b in kept] == [3, 3, 3, 1] and sorted(torch.cat(kept).tolist()) == list(range(10))


def test_with_replacement_draws_uniform_indices():
    idx = torch.cat(list(itertools.islice(with_replacement(5, 1000, torch.Generator().manual_seed(0)), 2)))
    assert idx.min() == 0 and idx.max() == 4 and len(idx.unique()) == 5
    again = next(with_replacement(5, 1000, torch.Generator().manual_seed(0)))
    assert torch.equal(idx[:1000], again)


def test_crop_flip_keeps_shape_and_content_and_is_seeded():
    x = torch.arange(2 * 3 * 6 * 6, dtype=torch.float32).view(2, 3, 6, 6)
    out = crop_flip(x, torch.Generator().manual_seed(0), pad=2)
    assert out.shape == x.shape
    assert set(out.unique().tolist()) <= set(x.unique().tolist()) | {0.0}
    assert torch.equal(out, crop_flip(x, torch.Generator().manual_seed(0), pad=2))


def test_crop_flip_without_padding_only_flips():
    x = torch.randn(8, 1, 4, 4)
    out = crop_flip(x, torch.Generator().manual_seed(1), pad=0)
    for a, b in zip(x, out):
        assert torch.equal(a, b) or torch.equal(a.flip(-1), b)


@pytest.mark.parametrize("step", [0, 3, 10])
def test_schedules(step):
    assert quarter_cosine_lr(1e-3, step, 10, 1e-5) == 1e-3 * math.cos(math.pi * step / 20) + 1e-5
    assert cosine_lr(2.0, step, 10) == 2.0 * 0.5 * (1 + math.cos(math.pi * step / 10))
    assert epochwise(cosine_lr, 4, 10)(2.0, 4 * step + 3) == cosine_lr(2.0, step, 10)
