"""Reference tests of shared.nn.transcoder, shared.nn.circuits and shared.train.transcoder (float64, tight
tolerances): the loss against its formula, TopK's k, the exact decomposition of a feature's pre-activation into
attributions plus bias terms, the OV attribution against the attention module's own computation (through hooks),
and the registry counts."""
import math

import pytest
import torch

from shared.nn import circuits
from shared.nn import layer_registry as registry
from shared.nn.transcoder import Transcoder, sparsity_stats, transcoder_mse
from shared.nn.transformer import Transformer
from shared.train.transcoder import train_transcoder


def _transcoder(d_in, d_out, m, seed, **kw):
    torch.manual_seed(seed)
    tc = Transcoder(d_in, d_out, m, **kw).double()
    with torch.no_grad():
        for p in tc.parameters():
            p.add_(0.1 * torch.randn_like(p))  # nonzero biases, so every bias term is exercised
    return tc


def test_loss_matches_its_formula():
    tc = _transcoder(5, 3, 7, 0)
    x, y = torch.randn(4, 5, dtype=torch.float64), torch.randn(4, 3, dtype=torch.float64)
    tc.requires_grad_(False)
    total, mse, sparsity = tc.loss(x, y, l1=0.3)
    ybar = [sum(y[b][k] for b in range(4)) / 4 for k in range(3)]
    y_hat = tc(x)
    expect = 0.0
    for b in range(4):
        norm = math.sqrt(sum((y[b][k] - ybar[k]) ** 2 for k in range(3)))
        expect += sum((y_hat[b][k] - y[b][k]) ** 2 for k in range(3)) / norm
    expect /= 4 * 3
    z = tc.encode(x)
    l1 = 0.3 * sum(abs(z[b][i]) for b in range(4) for i in range(7)) / 4
    assert abs(mse.item() - float(expect)) < 1e-12
    assert abs(sparsity.item() - float(l1)) < 1e-12 and abs(total.item() - float(expect + l1)) < 1e-12
    assert abs(transcoder_mse(y_hat, y).item() - float(expect)) < 1e-12
    # by hand: z = relu(W_enc (x - b_dec_in) + b_enc), y_hat = W_dec^T z + b_dec_out
    z_hand = ((x - tc.b_dec_in) @ tc.W_enc.T + tc.b_enc).clamp_min(0)
    assert torch.allclose(z, z_hand, atol=1e-14, rtol=0)
    assert torch.allclose(y_hat, z_hand @ tc.W_dec + tc.b_dec_out, atol=1e-14, rtol=0)
    topk = _transcoder(5, 3, 7, 0, activation="topk", k=2)
    assert topk.loss(x, y, l1=0.3)[2].item() == 0.0  # TopK: no sparsity penalty


def test_topk_keeps_exactly_k():
    tc = _transcoder(6, 6, 32, 1, activation="topk", k=5)
    with torch.no_grad():
        tc.b_enc.fill_(10.0)  # every pre-activation positive: exactly k survive
    x = torch.randn(50, 6, dtype=torch.float64)
    z = tc.encode(x)
    assert ((z > 0).sum(-1) == 5).all()
    pre = tc.pre_activations(x)
    kept = z > 0
    assert (pre[kept].view(50, 5).min(-1).values >= pre.masked_fill(kept, -1e9).max(-1).values).all()
    assert torch.equal(z[kept], pre[kept])
    assert sparsity_stats(tc, x)["l0"] == 5.0
    with pytest.raises(ValueError, match="k in 1..32"):
        Transcoder(6, 6, 32, activation="topk", k=0)


def test_sae_ties_the_output_bias():
    sae = Transcoder(4, 4, 8, sae=True)
    assert sae.output_bias is sae.b_dec_in and sae.b_dec_out is None
    with pytest.raises(ValueError, match="maps a space to itself"):
        Transcoder(4, 5, 8, sae=True)


def test_decoder_projection_keeps_row_norms_to_first_order():
    tc = _transcoder(4, 6, 5, 2)
    tc.normalize_decoder()
    tc.W_dec.grad = torch.randn_like(tc.W_dec)
    tc.project_decoder_grad()
    assert (tc.W_dec * tc.W_dec.grad).sum(1).abs().max() < 1e-14


def _two_layer(seed=0, d=16, vocab=11):
    torch.manual_seed(seed)
    model = Transformer(vocab, d_model=d, d_hidden=32, n_head=4, n_layer=2, n_ctx=8, mlp="reglu").double()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(10.0)  # away from the near-uniform patterns of a 0.02 init
    tc0, tc1 = _transcoder(d, d, 24, seed + 1), _transcoder(d, d, 20, seed + 2)
    tokens = torch.randint(vocab, (3, 7), generator=torch.Generator().manual_seed(seed))
    return model.eval(), tc0, tc1, tokens


def test_attributions_plus_biases_equal_the_pre_activation_exactly():
    model, tc0, tc1, tokens = _two_layer()
    with torch.no_grad(), circuits.splice(model, {0: tc0}) as spliced, circuits.norm_inputs(model) as streams:
        model(tokens)
    z0 = spliced[0].z                                              # (B, T, m0) of the transcoder at layer 0
    h_attn1, h_mlp1 = streams[(1, "attn")], streams[(1, "mlp")]
    s_dst, s_src = circuits.norm_scale(h_mlp1), circuits.norm_scale(h_attn1)
    pre = tc1.pre_activations(h_mlp1 * s_dst[..., None])           # the target: (B, T, m1)
    block0, block1 = model.blocks
    attn1 = block1.attn
    probs = circuits.attention_probs(attn1, h_attn1 * s_src[..., None])
    ov = circuits.ov_matrices(attn1)
    enc = tc1.W_enc
    # the components of h before layer 1's attention: embedding, layer 0's attention, features, b_dec_out
    e = model.embed(tokens)
    a0 = block0.attn_scale * block0.attn(block0.norm(e))
    parts = {"embed": e, "attn0": a0, "bias0": tc0.b_dec_out.expand_as(e)}
    assert torch.allclose(h_attn1, e + a0 + z0 @ tc0.W_dec + tc0.b_dec_out, atol=1e-12, rtol=0)

    total = circuits.residual_attribution(z0, tc0.W_dec, enc, s_dst).sum(-2)           # residual path
    total = total + circuits.ov_attribution(probs, z0, tc0.W_dec, ov, enc, s_src, s_dst,
                                            block1.attn_scale).sum((1, 3, 4))         # OV path
    total = total + s_dst[..., None] * circuits.deembedding(model.embed.weight, enc)[tokens]  # de-embedding
    for name, v in parts.items():
        if name != "embed":
            total = total + s_dst[..., None] * (v @ enc.T)
        # each component's OV term: a vector per source token, carried by every head
        contrib = torch.einsum("bhts,bs,hde,bse,jd->btj", probs, s_src, ov, v, enc)
        total = total + block1.attn_scale * s_dst[..., None] * contrib
    total = total - enc @ tc1.b_dec_in + tc1.b_enc                                   # target biases
    assert (total - pre).abs().max() < 1e-10


def test_ov_attribution_matches_the_attention_module_through_hooks():
    model, tc0, tc1, tokens = _two_layer(seed=3)
    with torch.no_grad(), circuits.splice(model, {0: tc0}) as spliced, circuits.norm_inputs(model) as streams:
        model(tokens)
    z0, h_attn1 = spliced[0].z, streams[(1, "attn")]
    s_src, s_dst = circuits.norm_scale(h_attn1), circuits.norm_scale(streams[(1, "mlp")])
    attn, scale = model.blocks[1].attn, model.blocks[1].attn_scale
    probs = circuits.attention_probs(attn, h_attn1 * s_src[..., None])
    attr = circuits.ov_attribution(probs, z0, tc0.W_dec, circuits.ov_matrices(attn), tc1.W_enc, s_src, s_dst,
                                   scale)                                               # (B, H, T, T, m0, m1)
    d = h_attn1.shape[-1]
    b, src, i = 1, 2, int(z0[1, 2].argmax())
    assert z0[b, src, i] > 0
    only = torch.zeros_like(h_attn1)
    only[b, src] = s_src[b, src] * z0[b, src, i] * tc0.W_dec[i]                     # feature i's share of v_in

    def replace_values(module, args, output):  # keep q, k (the pattern) of the real input; values from `only`
        out = output.clone()
        out[..., 2 * d:] = only @ module.weight[2 * d:].T
        return out
    handle = attn.qkv.register_forward_hook(replace_values)
    try:
        with torch.no_grad():
            carried = attn(h_attn1 * s_src[..., None])                                 # SDPA, the module's own
    finally:
        handle.remove()
    direct = scale * s_dst[..., None] * (carried @ tc1.W_enc.T)                       # (B, T, m1)
    assert (attr[b, :, :, src, i].sum(0) - direct[b]).abs().max() < 1e-10
    assert direct[b, :src].abs().max() < 1e-12                                        # causal: nothing flows back
    # the pattern recomputed by circuits.attention_probs is the module's (its output from the real values)
    x = h_attn1 * s_src[..., None]
    v = (x @ attn.qkv.weight[2 * d:].T).view(*x.shape[:2], attn.n_head, attn.d_head).transpose(1, 2)
    y = (probs @ v).transpose(1, 2).reshape(x.shape)
    assert (attn.out(y) - attn(x)).abs().max() < 1e-12


def test_total_attribution_sums_the_per_token_terms():
    model, tc0, tc1, tokens = _two_layer(seed=5)
    with torch.no_grad(), circuits.splice(model, {0: tc0}) as spliced, circuits.norm_inputs(model) as streams:
        model(tokens)
    z0 = spliced[0].z
    src, tgt = torch.tensor([0, 3, 5]), torch.tensor([1, 2])
    total = circuits.feature_attribution_total(model, streams, z0, tc0, 0, tc1, 1, src, tgt)
    h_attn1 = streams[(1, "attn")]
    s_src, s_dst = circuits.norm_scale(h_attn1), circuits.norm_scale(streams[(1, "mlp")])
    attn = model.blocks[1].attn
    probs = circuits.attention_probs(attn, h_attn1 * s_src[..., None])
    per_token = circuits.residual_attribution(z0[..., src], tc0.W_dec[src], tc1.W_enc[tgt], s_dst).sum((0, 1))
    per_token += circuits.ov_attribution(probs, z0[..., src], tc0.W_dec[src], circuits.ov_matrices(attn),
                                         tc1.W_enc[tgt], s_src, s_dst, model.blocks[1].attn_scale).sum((0, 1, 2, 3))
    assert (total - per_token).abs().max() < 1e-10
    per_target = circuits.ov_attribution_per_target(probs, z0, tc0.W_dec, circuits.ov_matrices(attn), tc1.W_enc,
                                                    s_src, s_dst, model.blocks[1].attn_scale)
    full = circuits.ov_attribution(probs, z0, tc0.W_dec, circuits.ov_matrices(attn), tc1.W_enc, s_src, s_dst,
                                   model.blocks[1].attn_scale)
    assert (per_target - full.sum((1, 3, 4))).abs().max() < 1e-10
    residual = circuits.residual_attribution(z0, tc0.W_dec, tc1.W_enc, s_dst).sum(-2)
    assert (circuits.residual_attribution_per_target(z0, tc0.W_dec, tc1.W_enc, s_dst) - residual).abs().max() < 1e-10
    # splice restores the MLP
    assert not isinstance(model.blocks[0].mlp, circuits.SplicedMLP)


def test_registry_counts_are_the_built_module():
    family = registry.family("transcoder_topk")  # registered at import, as the layer benchmark finds it
    for d_in, d_out in ((8, 12), (16, 16)):
        layer = registry.make("transcoder_topk", d_in, d_out, features=32, k=4)
        counts = registry.count("transcoder_topk", d_in, d_out, features=32, k=4)
        assert counts["params"] == sum(p.numel() for p in layer.parameters())
        assert counts["macs"] == 32 * (d_in + d_out)
        assert layer(torch.randn(2, 3, d_in)).shape == (2, 3, d_out)
    block = registry.make("transcoder_topk", 8, 40, "block", k=4)
    assert registry.count("transcoder_topk", 8, 40, "block", k=4)["params"] == sum(
        p.numel() for p in block.parameters())
    assert family.nonlinear


def test_training_fits_a_sparse_relu_teacher():
    gen = torch.Generator().manual_seed(0)
    enc = torch.randn(12, 8, generator=gen)
    dec = torch.randn(12, 6, generator=gen)
    x = torch.randn(2048, 8, generator=gen)
    y = (x @ enc.T - 1.5).relu() @ dec
    tc, log = train_transcoder(x, y, 24, steps=300, batch_size=128, lr=0.01, seed=0, device=torch.device("cpu"),
                               l1=1e-4, warmup=10, progress=False)
    fvu = ((tc(x) - y).pow(2).sum() / (y - y.mean(0)).pow(2).sum()).item()
    assert fvu < 0.2 and log["history"][-1]["mse"] < log["history"][0]["mse"]
    assert torch.allclose(tc.W_dec.norm(dim=1), torch.ones(24), atol=1e-5)
