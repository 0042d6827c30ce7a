"""shared.nn.transformer against its formulas: the paper's block written out by hand (float64), rotary embeddings,
causality, the MLP hooks and the paper model's size."""
import math

import pytest
import torch

from shared.nn.transformer import MLP_GATES, Transformer, apply_rotary, rotary_tables

TOL = dict(rtol=1e-10, atol=1e-10)
SMALL = dict(d_model=16, d_hidden=24, n_head=2, n_layer=3, n_ctx=12)


def _model(mlp="bilinear", seed=0, **kw):
    torch.manual_seed(seed)
    return Transformer(vocab_size=11, mlp=mlp, **{**SMALL, **kw}).double()


def _rms(x):
    return x / x.pow(2).mean(-1, keepdim=True).add(1e-8).sqrt()


def _rotate(x, pos, base=10000.0):
    """Rotate each channel pair (2i, 2i+1) of x (d,) by pos * base^(-2i/d), written out pair by pair."""
    out = x.clone()
    for i in range(0, len(x), 2):
        angle = pos * base ** (-i / len(x))
        c, s = math.cos(angle), math.sin(angle)
        out[i], out[i + 1] = c * x[i] - s * x[i + 1], s * x[i] + c * x[i + 1]
    return out


def _reference_logits(model, tokens):
    """The block of App G.2 by hand: naive causal softmax attention, rotary q/k, attention scaled by 1/sqrt(2L)."""
    gate = {None: lambda a: a, "relu": torch.relu, "silu": lambda a: a * torch.sigmoid(a)}
    h = model.embed.weight[tokens]  # (T, d)
    T, d = h.shape
    for block in model.blocks:
        att = block.attn
        x = _rms(h)
        q, k, v = (x @ att.qkv.weight.T).split(d, -1)
        heads = []
        for n in range(att.n_head):
            sl = slice(n * att.d_head, (n + 1) * att.d_head)
            qn = torch.stack([_rotate(q[t, sl], t) for t in range(T)])
            kn = torch.stack([_rotate(k[t, sl], t) for t in range(T)])
            scores = qn @ kn.T / math.sqrt(att.d_head)
            scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
            heads.append(scores.softmax(-1) @ v[:, sl])
        h = h + (torch.cat(heads, -1) @ att.out.weight.T) / math.sqrt(2 * len(model.blocks))
        x = _rms(h)
        bil = block.mlp.bilinear
        y = (gate[bil.gate](x @ bil.left.T) * (x @ bil.right.T)) @ block.mlp.down.weight.T
        h = h + y
    return _rms(h) @ model.unembed.weight.T


@pytest.mark.parametrize("mlp", sorted(MLP_GATES))
def test_model_matches_the_block_written_out_by_hand(mlp):
    model = _model(mlp)
    tokens = torch.randint(0, 11, (9,), generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(model(tokens[None])[0], _reference_logits(model, tokens), **TOL)


def test_mlp_variants_use_the_named_gates():
    assert {m: _model(m).blocks[0].mlp.bilinear.gate for m in MLP_GATES} == {"bilinear": None, "reglu": "relu", "swiglu": "silu"}
    with pytest.raises(ValueError, match="mlp must be one of"):
        _model("gelu")


def test_rotary_scores_depend_only_on_relative_position():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 8, dtype=torch.float64, generator=g), torch.randn(1, 8, dtype=torch.float64, generator=g)
    cos, sin = rotary_tables(40, 8)
    rotated = lambda x, pos: apply_rotary(x.expand(40, 8), cos, sin)[pos]
    for shift in (1, 7, 20):
        torch.testing.assert_close(rotated(q, 5) @ rotated(k, 2), rotated(q, 5 + shift) @ rotated(k, 2 + shift), **TOL)
    torch.testing.assert_close(rotated(q, 13).norm(), q.norm(), **TOL)  # a rotation keeps the norm


def test_causal_future_tokens_do_not_change_earlier_logits():
    model = _model()
    a = torch.tensor([[1, 2, 3, 4, 5, 6]])
    b = a.clone()
    b[0, 4:] = torch.tensor([9, 10])
    la, lb = model(a), model(b)
    torch.testing.assert_close(la[0, :4], lb[0, :4], **TOL)
    assert not torch.allclose(la[0, 4:], lb[0, 4:])


def test_cache_records_normalized_mlp_inputs_and_their_outputs():
    model = _model()
    cache = {}
    model(torch.randint(0, 11, (2, 7)), cache=cache, layers={1})
    assert set(cache) == {(1, "mlp_in"), (1, "mlp_out")}
    x, y = cache[1, "mlp_in"], cache[1, "mlp_out"]
    torch.testing.assert_close(x.pow(2).mean(-1), torch.ones(2, 7, dtype=torch.float64), rtol=1e-3, atol=0)  # weightless RMSNorm (eps 1e-8)
    torch.testing.assert_close(model.blocks[1].mlp(x), y, **TOL)


def test_unembedding_is_untied_and_norms_have_no_weight():
    model = _model()
    assert model.unembed.weight.data_ptr() != model.embed.weight.data_ptr()
    assert model.norm.weight is None and all(b.norm.weight is None for b in model.blocks)
    assert all(b.mlp.bilinear.proj.bias is None and b.mlp.down.bias is None for b in model.blocks)


def test_paper_model_has_29_4_million_parameters():
    """ts-tiny: 6 layers, d_model 512, d_hidden 2048, vocab 4096 (dossier: ~29.4 M; the paper says 'about 33 M')."""
    with torch.device("meta"):
        model = Transformer(4096, d_model=512, d_hidden=2048, n_head=8, n_layer=6, n_ctx=256)
    assert sum(p.numel() for p in model.parameters()) == 2 * 4096 * 512 + 6 * (4 * 512**2 + 3 * 512 * 2048)


def test_rejects_bad_shapes_and_long_inputs():
    with pytest.raises(ValueError, match="heads of even size"):
        Transformer(11, d_model=12, d_hidden=8, n_head=4, n_layer=1, n_ctx=8)
    with pytest.raises(ValueError, match="exceeds n_ctx"):
        _model()(torch.zeros(1, 13, dtype=torch.long))
