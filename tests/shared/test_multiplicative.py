"""shared.nn.multiplicative and shared.train.full_batch: the unit formulas, members equal to networks built alone,
and the stacked optimisers equal to torch's Adam / AdamW and to Muon written out by hand."""
import pytest
import torch

from shared.data.groups import all_pairs, by_name, split_pairs
from shared.nn.multiplicative import GroupPairNet, centred_mse, centred_targets, cross_entropy
from shared.train.full_batch import first_step_reaching, train_full_batch
from shared.train.muon import newton_schulz


ACTIVATIONS = ["quadratic", "bilinear", "relu", "relu2", "silu"]


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_unit_formula(activation):
    net = GroupPairNet(5, 7, activation=activation, seeds=(1, 2))
    a, b = all_pairs(5)
    logits = net(a, b)
    u, v, w = net.left[1, a], net.right[1, b], net.out[1]
    x = torch.cat([torch.nn.functional.one_hot(a, 5), torch.nn.functional.one_hot(b, 5)], 1).float()
    pre = x @ torch.cat([net.left[1], net.right[1]])  # Li2's F = sigma(X W) with X = [e_a; e_b]
    h = {"quadratic": pre ** 2, "bilinear": u * v, "relu": pre.relu(), "relu2": pre.relu() ** 2,
         "silu": torch.nn.functional.silu(pre)}[activation]
    torch.testing.assert_close(logits[1], h @ w, rtol=1e-5, atol=1e-6)
    # per-member index tensors take the gather path and agree
    torch.testing.assert_close(net(a.expand(2, -1), b.expand(2, -1)), logits, rtol=1e-5, atol=1e-6)


def test_members_are_the_networks_built_alone():
    both = GroupPairNet(6, 4, n_out=3, seeds=(3, 9))
    alone = GroupPairNet(6, 4, n_out=3, seeds=(9,))
    for name in ("left", "right", "out"):
        assert torch.equal(getattr(both, name)[1], getattr(alone, name)[0])
    assert both.out.shape == (2, 4, 3)
    bound = 1 / (2 * 6) ** 0.5  # nn.Linear's default for fan-in 2 n_in
    assert both.left.abs().max() <= bound and both.left.abs().max() > 0.5 * bound
    with pytest.raises(ValueError, match="activation"):
        GroupPairNet(3, 2, activation="tanh")


def test_losses():
    labels = torch.tensor([0, 2, 1])
    y = centred_targets(labels, 3)
    torch.testing.assert_close(y.sum(-1), torch.zeros(3))
    logits = y + 5.0  # a constant shift over classes is invisible to the centred MSE
    torch.testing.assert_close(centred_mse(logits, labels), torch.zeros(3), rtol=0, atol=1e-6)
    stacked = torch.randn(2, 3, 3)
    torch.testing.assert_close(cross_entropy(stacked, labels)[1], torch.nn.functional.cross_entropy(
        stacked[1], labels, reduction="none"))


def _task(name="Z5", fraction=0.6, seeds=(0, 1)):
    g = by_name(name)
    a, b = all_pairs(g.order)
    labels = torch.as_tensor(g.table).reshape(-1)
    return g, a, b, labels, torch.stack([split_pairs(g.order, fraction, s) for s in seeds])


@pytest.mark.parametrize("decay", ["coupled", "decoupled"])
def test_stacked_adam_matches_torch(decay):
    g, a, b, labels, mask = _task()
    lrs, wds = torch.tensor([1e-2, 3e-3]), torch.tensor([1e-3, 5e-2])
    net = GroupPairNet(g.order, 8, seeds=(0, 1))
    singles = [GroupPairNet(g.order, 8, seeds=(s,)) for s in (0, 1)]
    train_full_batch(net, a, b, labels, mask, steps=5, lr=lrs, weight_decay=wds, decay=decay, progress=False)
    for i, single in enumerate(singles):
        cls = torch.optim.Adam if decay == "coupled" else torch.optim.AdamW
        opt = cls(single.parameters(), lr=lrs[i].item(), weight_decay=wds[i].item())
        for _ in range(5):
            opt.zero_grad()
            per = centred_mse(single(a, b), labels)[0]
            (per[mask[i]].mean()).backward()
            opt.step()
        for name in ("left", "right", "out"):
            torch.testing.assert_close(getattr(net, name)[i], getattr(single, name)[0], rtol=1e-5, atol=1e-6)


def test_stacked_muon_matches_hand_written_step():
    g, a, b, labels, mask = _task(seeds=(0,))
    net = GroupPairNet(g.order, 8, seeds=(0,))
    ref = GroupPairNet(g.order, 8, seeds=(0,))
    train_full_batch(net, a, b, labels, mask, steps=2, lr=0.01, optimizer="muon", progress=False)
    buffer, opt = None, torch.optim.Adam([ref.out], lr=0.01)
    for _ in range(2):
        loss = centred_mse(ref(a, b), labels)[0][mask[0]].mean()
        gl, gr, go = torch.autograd.grad(loss, [ref.left, ref.right, ref.out])
        grad = torch.cat([gl[0], gr[0]], 0)  # W = [left; right]: (2 n_in, width)
        buffer = grad.clone() if buffer is None else 0.9 * buffer + grad
        step = 0.01 * max(1.0, 10 / 8) ** 0.5 * newton_schulz(buffer)
        with torch.no_grad():
            ref.left[0] -= step[:5]
            ref.right[0] -= step[5:]
        ref.out.grad = go
        opt.step()
    for name in ("left", "right", "out"):
        torch.testing.assert_close(getattr(net, name), getattr(ref, name), rtol=1e-5, atol=1e-6)


def test_history_and_grokking_signature():
    g, a, b, labels, mask = _task("Z7", 0.7, seeds=(0, 0))
    net = GroupPairNet(g.order, 64, seeds=(0, 0))
    h = train_full_batch(net, a, b, labels, mask, steps=300, lr=1e-2, weight_decay=torch.tensor([0.0, 1e-2]),
                         eval_every=50, progress=False, on_eval=lambda step, m: {"norm": m.left.norm(dim=(1, 2))})
    assert h["step"].tolist() == [0, 50, 100, 150, 200, 250, 300]
    assert h["train_acc"].shape == (7, 2) and h["norm"].shape == (7, 2)
    assert (h["train_acc"][-1] == 1).all()
    assert h["norm"][-1, 1] < h["norm"][-1, 0]  # weight decay shrinks the weights
    reached = first_step_reaching(h["step"], h["train_acc"], 1.0)
    assert (reached > 0).all() and first_step_reaching(h["step"], h["train_acc"], 2.0).isnan().all()


def test_training_is_deterministic():
    g, a, b, labels, mask = _task()
    runs = []
    for _ in range(2):
        net = GroupPairNet(g.order, 8, seeds=(0, 1))
        runs.append(train_full_batch(net, a, b, labels, mask, steps=20, lr=1e-2, eval_every=10, progress=False))
    assert torch.equal(runs[0]["test_loss"], runs[1]["test_loss"])


def test_bad_arguments_are_rejected():
    g, a, b, labels, mask = _task()
    net = GroupPairNet(g.order, 8, seeds=(0, 1))
    with pytest.raises(ValueError, match="train_mask"):
        train_full_batch(net, a, b, labels, mask[:1], steps=1, lr=1e-3, progress=False)
    with pytest.raises(ValueError, match="decay"):
        train_full_batch(net, a, b, labels, mask, steps=1, lr=1e-3, decay="l1", progress=False)
    with pytest.raises(ValueError, match="optimizer"):
        train_full_batch(net, a, b, labels, mask, steps=1, lr=1e-3, optimizer="sgd", progress=False)
