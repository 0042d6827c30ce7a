"""Removing LayerNorm from a GPT-2-style model by fine-tuning (Heimersheim 2024, arXiv 2409.13710; the official code
ApolloResearch/gpt2_noLN), for shared.nn.gpt2.GPT2.

    LN(x)     = (x - mean(x)) / sigma(x)   * gamma + beta       sigma(x) = sqrt(var(x) + eps), per token
    FakeLN(x) = (x - mean(x)) / sigma_avg  * gamma + beta       sigma_avg fixed, measured on the model and frozen

sigma_avg is a per-position vector [sigma_bos, sigma_rest, sigma_rest, ...]: position 0 (the BOS token) has its
own value until the "bos" event, after which every position uses sigma_rest (a scalar per site). ln_1 has two paths
with separate switches, the input of queries and keys ("qk") and the input of values ("v"), as in the official code.

Sites: "blocks.<l>.ln_2", "blocks.<l>.ln_1.qk", "blocks.<l>.ln_1.v", "ln_f", and "bos" (all sites drop the BOS
sigma). `paper_schedule` orders them as the official train.py does (ln_2 per block, ln_1 Q/K, ln_1 V, ln_f, then
BOS); `RemovalSchedule.on_step` fires the events from shared.train.loop.fit's on_step hook. Once every site is fake
and the BOS sigma is gone, the model is affine in the residual stream before each attention softmax, GELU and the
readout: `fold` puts gamma, beta, the centring and 1 / sigma_avg into the neighbouring weights (c_attn, c_fc, and an
untied unembedding with a bias), giving a model with no norm at all; `direct_logit_attribution` then sums exactly.
"""
import copy

import torch
import torch.nn.functional as F
from torch import nn

from shared.nn.gpt2 import GPT2

PATHS = {None: 0, "qk": 0, "v": 1}


class FakeLayerNorm(nn.Module):
    """A LayerNorm whose map is switchable per path between real (per-token sigma) and fake (frozen sigma_avg).

    Buffers (saved in the state dict): sigma = [sigma_bos, sigma_rest]; fake = [path qk (or the only path), path v]
    as 0/1; bos_special = 1 while position 0 uses sigma_bos."""

    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.register_buffer("sigma", torch.ones(2))
        self.register_buffer("fake", torch.zeros(2))
        self.register_buffer("bos_special", torch.ones(()))

    def sigma_avg(self, t):
        """The frozen sigma at each of t positions: (t, 1)."""
        s = self.sigma[1].expand(t).clone()
        if self.bos_special.item() and t:
            s[0] = self.sigma[0]
        return s[:, None]

    def forward(self, x, path=None):
        if not self.fake[PATHS[path]].item():
            return F.layer_norm(x, x.shape[-1:], self.weight, self.bias, self.eps)
        centred = x - x.mean(-1, keepdim=True)
        return centred / self.sigma_avg(x.shape[-2]).to(x.dtype) * self.weight + self.bias


class NoNorm(nn.Module):
    """The identity where a folded model's norms were."""

    def __init__(self, d_model=None):
        super().__init__()

    def forward(self, x, path=None):
        return x


def sites(n_layer):
    """Every removable site, in the paper's order, without the final "bos"."""
    return ([f"blocks.{l}.ln_2" for l in range(n_layer)] + [f"blocks.{l}.ln_1.qk" for l in range(n_layer)]
            + [f"blocks.{l}.ln_1.v" for l in range(n_layer)] + ["ln_f"])


def norms(model):
    """{name: FakeLayerNorm} of a GPT2: blocks.<l>.ln_1, blocks.<l>.ln_2, ln_f."""
    out = {f"blocks.{l}.{n}": getattr(b, n) for l, b in enumerate(model.blocks) for n in ("ln_1", "ln_2")}
    out["ln_f"] = model.ln_f
    return out


def remove(model, site):
    """Switch one site to its fake map ("bos": every norm drops the BOS sigma)."""
    mods = norms(model)
    if site == "bos":
        for m in mods.values():
            m.bos_special.fill_(0)
        return
    for suffix, path in ((".qk", 0), (".v", 1)):
        if site.endswith(suffix):
            mods[site[: -len(suffix)]].fake[path] = 1
            return
    mods[site].fake.fill_(1)


def remove_all(model):
    for site in [*sites(len(model.blocks)), "bos"]:
        remove(model, site)


def paper_schedule(n_layer, start, gap):
    """[(step, site)]: the official order (ln_2 of each block, ln_1 Q/K of each, ln_1 V of each, ln_f, then the
    BOS sigma), one event every `gap` steps from `start` (the official code: gaps of 20-30 iterations from 200)."""
    order = [*sites(n_layer), "bos"]
    return [(start + gap * i, site) for i, site in enumerate(order)]


def official_schedule(n_layer):
    """[(step, site)] of the official train.py for GPT-2 small: ln_2 of block k at 200 + 20k, ln_1 Q/K at 440 + 20k,
    ln_1 V at 680 + 30k, ln_f at 1,040, the BOS sigma at 1,160 (the EOT sigma at 1,060 has no analogue here)."""
    return ([(200 + 20 * k, f"blocks.{k}.ln_2") for k in range(n_layer)]
            + [(440 + 20 * k, f"blocks.{k}.ln_1.qk") for k in range(n_layer)]
            + [(680 + 30 * k, f"blocks.{k}.ln_1.v") for k in range(n_layer)] + [(1040, "ln_f"), (1160, "bos")])


def all_at_once(n_layer, step):
    """Every site, and the BOS sigma, removed at one step."""
    return [(step, site) for site in [*sites(n_layer), "bos"]]


class RemovalSchedule:
    """Fires (step, site) events: an event at step s removes its site before optimizer step s. `on_step(step)` (from
    fit's on_step hook, called after step `step`) fires the events of step + 1; `start()` those of step 0.
    `callback(step, site)` runs after each removal (e.g. to evaluate the loss right after it)."""

    def __init__(self, model, events, callback=None, before=None):
        self.model, self.events, self.callback = model, sorted(events, key=lambda e: e[0]), callback
        self.before = before  # before(step, site): runs before each removal
        self.fired = []

    def _fire(self, step):
        for s, site in self.events:
            if s == step:
                if self.before is not None:
                    self.before(s, site)
                remove(self.model, site)
                self.fired.append((s, site))
                if self.callback is not None:
                    self.callback(s, site)

    def start(self):
        self._fire(0)

    def finish(self):
        """Remove every site whose event has not fired, without callbacks: a no-op when every event fell inside
        the steps that ran; in a capped (smoke) run, whose skipped steps fire nothing, it leaves the final state."""
        done = set(self.fired)
        for s, site in self.events:
            if (s, site) not in done:
                remove(self.model, site)
                self.fired.append((s, site))

    def on_step(self, step, loss=None):
        self._fire(step + 1)


@torch.no_grad()
def measure_sigma(model, inputs, batch_size=64):
    """{norm name: [sigma_bos, sigma_rest]}: the mean over tokens of sqrt(var(x) + eps) of each norm's input, at
    position 0 and at the other positions, on `inputs` (model inputs, BOS at position 0)."""
    was = model.training
    model.eval()
    sums = {}
    for i in range(0, len(inputs), batch_size):
        cache = {}
        model(inputs[i : i + batch_size], cache=cache)
        ins = {f"blocks.{l}.ln_1": cache["embed"] if l == 0 else cache[l - 1, "resid_post"]
               for l in range(len(model.blocks))}
        ins |= {f"blocks.{l}.ln_2": cache[l, "resid_mid"] for l in range(len(model.blocks))}
        ins["ln_f"] = cache["resid_final"]
        for name, x in ins.items():
            sd = (x.var(-1, unbiased=False) + norms(model)[name].eps).sqrt()
            add = torch.stack([sd[:, 0].sum(), sd[:, 1:].sum()])
            sums[name] = sums.get(name, 0) + add
    model.train(was)
    n, t = len(inputs), inputs.shape[1]
    return {name: (s / torch.tensor([n, n * (t - 1)], dtype=s.dtype, device=s.device)).tolist()
            for name, s in sums.items()}


def set_sigma(model, sigmas):
    for name, m in norms(model).items():
        m.sigma.copy_(torch.tensor(sigmas[name], dtype=m.sigma.dtype))


def _fold_into(linear, norm, rows=slice(None)):
    """linear(FakeLN(x)) for the rows `rows` of `linear` -> W' x + c' with W' = W diag(gamma) C / sigma (C the
    centring matrix, symmetric) and c' = c + W beta, written into `linear` in place."""
    w = linear.weight.data[rows]
    d = w.shape[1]
    centre = torch.eye(d, dtype=w.dtype) - torch.full((d, d), 1.0 / d, dtype=w.dtype)
    if linear.bias is not None:
        linear.bias.data[rows] = linear.bias.data[rows] + w @ norm.bias.data
    linear.weight.data[rows] = (w * norm.weight.data) @ centre / norm.sigma[1]


@torch.no_grad()
def fold(model):
    """A copy of a GPT2 whose norms are all fake with no BOS sigma, with the norms folded into c_attn (Q/K rows from
    ln_1's qk path, V rows from its v path: the same affine map once both are fake), c_fc and an untied unembedding
    with a bias: no norm left, the same logits."""
    for name, m in norms(model).items():
        if not (m.fake.all().item() and not m.bos_special.item()):
            raise ValueError(f"{name} is not fully fake with a scalar sigma: nothing to fold yet")
    d, vocab = model.wte.weight.shape[1], model.wte.weight.shape[0]
    folded = GPT2(vocab, d_model=d, n_head=model.blocks[0].attn.n_head, n_layer=len(model.blocks),
                  n_ctx=model.n_ctx, bos=model.bos, norm=NoNorm, tie_embeddings=False)
    folded = folded.to(model.wte.weight.dtype)
    state = {k: v for k, v in copy.deepcopy(model.state_dict()).items() if "ln_" not in k}
    folded.load_state_dict(state, strict=False)
    for src, dst in zip(model.blocks, folded.blocks):
        _fold_into(dst.attn.c_attn, src.ln_1)
        _fold_into(dst.mlp.c_fc, src.ln_2)
    src_unembed = model.wte.weight.data if model.unembed is None else model.unembed.weight.data
    folded.unembed.weight.data.copy_(src_unembed)
    folded.unembed.bias.data.zero_()
    if model.unembed is not None:
        folded.unembed.bias.data.copy_(model.unembed.bias.data)
    _fold_into(folded.unembed, model.ln_f)
    return folded


def components(cache, n_layer):
    """[(name, tensor)] of everything written into the final residual stream: embeddings, each attention, each MLP."""
    out = [("embed", cache["embed"])]
    for l in range(n_layer):
        out += [(f"attn{l}", cache["attn", l]), (f"mlp{l}", cache["mlp", l])]
    return out


@torch.no_grad()
def direct_logit_attribution(model, tokens):
    """Direct effects on the logits, read at the final readout f = unembed o ln_f: DLA_c = f(h) - f(h - c) for each
    component c of the final residual h (embeddings, each attention and MLP output). Returns (logits, dla (C, ...),
    f(0), names). If f is affine (no LN, or all-fake ln_f), sum_c DLA_c + f(0) = logits exactly; with a real ln_f it
    is not."""
    cache = {}
    logits = model(tokens, cache=cache)
    h = cache["resid_final"]
    parts = components(cache, len(model.blocks))
    dla = torch.stack([logits - model.readout(h - c) for _, c in parts])
    return logits, dla, model.readout(torch.zeros_like(h)), [n for n, _ in parts]


def dla_sum_error(model, tokens):
    """max |sum_c DLA_c + f(0) - logits| / max |logits|: 0 (to rounding) iff the readout is affine."""
    logits, dla, base, _ = direct_logit_attribution(model, tokens)
    return ((dla.sum(0) + base - logits).abs().max() / logits.abs().max()).item()
