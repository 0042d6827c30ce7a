"""Reference tests of shared.nn.gpt2 and shared.nn.norm_removal against the paper's formulas, in float64:
FakeLN(x) = (x - mean(x)) / sigma_avg * gamma + beta equals LN(x) when sigma_avg is x's own std (per position, BOS
included); a FakeLN model with every site real is the plain LayerNorm GPT-2; the ln_1 paths switch separately; the
folded model's logits equal the unfolded no-LN model's (1e-10); with every LN removed the direct logit attributions sum
to the logits exactly, and with a LayerNorm they do not; the schedule fires from fit's on_step hook in the paper's
order."""
import copy

import torch
import torch.nn.functional as F

from shared.nn import norm_removal as nr
from shared.nn.gpt2 import GPT2, LayerNorm
from shared.train.loop import fit

V, D, H, L, T = 23, 16, 2, 2, 8


def model(seed=0, norm=nr.FakeLayerNorm):
    torch.manual_seed(seed)
    m = GPT2(V, d_model=D, n_head=H, n_layer=L, n_ctx=T, bos=1, norm=norm).double()
    with torch.no_grad():  # non-trivial gamma, beta and sigma so that folding has something to fold
        for ln in nr.norms(m).values() if norm is nr.FakeLayerNorm else ():
            ln.weight.normal_(1.0, 0.3)
            ln.bias.normal_(0.0, 0.3)
            ln.sigma.uniform_(0.5, 2.0)
    return m


def tokens(n=3, seed=1):
    return torch.randint(V, (n, T), generator=torch.Generator().manual_seed(seed))


def test_fake_ln_equals_ln_at_the_inputs_own_std():
    torch.manual_seed(0)
    ln = nr.FakeLayerNorm(D).double()
    with torch.no_grad():
        ln.weight.normal_()
        ln.bias.normal_()
    x = torch.randn(1, 2, D, dtype=torch.float64) * torch.tensor([[[5.0], [0.3]]], dtype=torch.float64)
    std = (x.var(-1, unbiased=False) + ln.eps).sqrt()[0]
    ln.sigma.copy_(std)  # [sigma_bos, sigma_rest]: position 0 and position 1 each at its own std
    real = ln(x)
    ln.fake.fill_(1)
    assert torch.allclose(ln(x), real, atol=1e-12, rtol=0)
    assert torch.allclose(real, F.layer_norm(x, (D,), ln.weight, ln.bias, ln.eps), atol=1e-12, rtol=0)
    ln.bos_special.fill_(0)  # position 0 now uses sigma_rest: no longer LN there
    assert (ln(x)[0, 0] - real[0, 0]).abs().max() > 1e-3
    assert torch.allclose(ln(x)[0, 1], real[0, 1], atol=1e-12, rtol=0)


def test_real_mode_is_the_layernorm_gpt2():
    fake = model()
    plain = GPT2(V, d_model=D, n_head=H, n_layer=L, n_ctx=T, bos=1, norm=LayerNorm).double()
    plain.load_state_dict({k: v for k, v in fake.state_dict().items()
                           if not k.endswith(("sigma", "fake", "bos_special"))})
    x = tokens()
    assert torch.allclose(fake.loss(x), plain.loss(x), atol=1e-12, rtol=0)
    assert torch.allclose(fake(x), plain(x), atol=1e-12, rtol=0)


def test_ln1_paths_switch_separately():
    m = model()
    x = tokens()
    real = m(x)
    nr.remove(m, "blocks.0.ln_1.qk")
    assert m.blocks[0].ln_1.fake.tolist() == [1.0, 0.0]
    qk_only = m(x)
    # by hand: block 0's queries and keys from FakeLN, values from the real LN
    blk, h = m.blocks[0], m.wte(x) + m.wpe(torch.arange(T))
    ln = blk.ln_1
    x_qk = (h - h.mean(-1, keepdim=True)) / ln.sigma_avg(T) * ln.weight + ln.bias
    x_v = F.layer_norm(h, (D,), ln.weight, ln.bias, ln.eps)
    w, c = blk.attn.c_attn.weight, blk.attn.c_attn.bias
    q, k, v = (F.linear(z, w[i * D:(i + 1) * D], c[i * D:(i + 1) * D]) for i, z in enumerate((x_qk, x_qk, x_v)))
    heads = lambda z: z.view(3, T, H, D // H).transpose(1, 2)
    att = (heads(q) @ heads(k).transpose(-1, -2) / (D // H) ** 0.5).masked_fill(
        torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")).softmax(-1)
    a = blk.attn.c_proj((att @ heads(v)).transpose(1, 2).reshape(3, T, D))
    cache = {}
    m(x, cache=cache)
    assert torch.allclose(cache["attn", 0], a, atol=1e-10, rtol=0)
    assert (qk_only - real).abs().max() > 1e-6
    nr.remove(m, "blocks.0.ln_1.v")
    assert (m(x) - qk_only).abs().max() > 1e-6


def test_fold_equals_unfolded_no_ln_model():
    m = model()
    nr.remove_all(m)
    folded = nr.fold(m)
    x = tokens()
    assert all(isinstance(mod, nr.NoNorm) for mod in nr.norms(folded).values())
    assert (folded(x) - m(x)).abs().max() <= 1e-10


def test_fold_refuses_a_model_with_ln_or_bos_sigma():
    m = model()
    for site in nr.sites(L):
        nr.remove(m, site)
    try:
        nr.fold(m)  # every site fake, but position 0 still has its own sigma
    except ValueError:
        return
    raise AssertionError("fold accepted a per-position sigma")


def test_dla_sums_to_logits_without_ln_and_not_with_it():
    m = model()
    x = tokens()
    assert nr.dla_sum_error(m, x) > 1e-2  # LayerNorm: the direct effects do not add up
    nr.remove_all(m)
    logits, dla, base, names = nr.direct_logit_attribution(m, x)
    assert names == ["embed", "attn0", "mlp0", "attn1", "mlp1"]
    assert (dla.sum(0) + base - logits).abs().max() <= 1e-10
    assert nr.dla_sum_error(nr.fold(m), x) <= 1e-10


def test_measure_sigma_is_the_mean_std_per_position_class():
    m = model()
    inputs = m.inputs(tokens(4))
    sig = nr.measure_sigma(m, inputs)
    cache = {}
    m(inputs, cache=cache)
    sd = (cache[0, "resid_mid"].var(-1, unbiased=False) + 1e-5).sqrt()
    assert abs(sig["blocks.0.ln_2"][0] - sd[:, 0].mean().item()) < 1e-12
    assert abs(sig["blocks.0.ln_2"][1] - sd[:, 1:].mean().item()) < 1e-12
    assert set(sig) == set(nr.norms(m))


def test_schedules():
    assert [s for _, s in nr.paper_schedule(2, 50, 20)] == [
        "blocks.0.ln_2", "blocks.1.ln_2", "blocks.0.ln_1.qk", "blocks.1.ln_1.qk", "blocks.0.ln_1.v",
        "blocks.1.ln_1.v", "ln_f", "bos"]
    official = dict((site, step) for step, site in nr.official_schedule(12))
    assert (official["blocks.11.ln_2"], official["blocks.0.ln_1.qk"], official["blocks.11.ln_1.v"],
            official["ln_f"], official["bos"]) == (420, 440, 1010, 1040, 1160)
    assert {s for s, _ in nr.all_at_once(2, 7)} == {7}


def test_removal_fires_from_fits_on_step_hook():
    m = model().float()
    seen = []
    sched = nr.RemovalSchedule(m, [(0, "blocks.0.ln_2"), (2, "ln_f"), (3, "bos")],
                               before=lambda s, site: seen.append(("before", s, float(m.ln_f.fake[0]))))
    sched.start()
    assert m.blocks[0].ln_2.fake.tolist() == [1.0, 1.0] and m.ln_f.fake[0] == 0
    states = []

    def on_step(step, loss):
        sched.on_step(step)
        states.append((float(m.ln_f.fake[0]), float(m.ln_f.bos_special)))

    x = tokens()
    fit(m, iter([x] * 5), steps=5, loss_fn=lambda mod, b: mod.loss(b),
        make_optimizer=lambda mod: torch.optim.SGD(mod.parameters(), lr=0.01), on_step=on_step)
    assert [s for s, _ in sched.fired] == [0, 2, 3]
    assert states == [(0.0, 1.0), (1.0, 1.0), (1.0, 0.0), (1.0, 0.0), (1.0, 0.0)]
    assert ("before", 2, 0.0) in seen


def test_state_dict_restores_the_removal_state():
    m = model()
    nr.remove(m, "blocks.1.ln_1.v")
    nr.remove(m, "bos")
    other = model(seed=5)
    other.load_state_dict(copy.deepcopy(m.state_dict()))
    x = tokens()
    assert torch.equal(other(x), m(x))


def test_finish_fires_what_a_capped_run_skipped():
    m = model()
    sched = nr.RemovalSchedule(m, nr.paper_schedule(L, 5, 2))
    sched.start()
    sched.on_step(4)  # the first event (step 5) only
    assert len(sched.fired) == 1
    sched.finish()
    assert len(sched.fired) == 3 * L + 2  # ln_2, ln_1 qk, ln_1 v per block, ln_f, bos
    nr.fold(m)  # every site fake, no BOS sigma
