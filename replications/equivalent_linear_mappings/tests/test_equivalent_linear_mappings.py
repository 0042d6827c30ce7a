"""equivalent_linear_mappings: the tiers' model source, the exactness of the detached Jacobian on a tiny transformer, the
decoding rule, and (when transformers is installed) the full tier's Qwen3 readout on a tiny random Qwen3."""
import pytest
import torch

from replications.equivalent_linear_mappings.linear_map import analyse, decode, reconstruct
from replications.equivalent_linear_mappings.model import Readout, build
from shared.nn.dynamic_linear import dynamic_linear_map
from shared.pipeline.paper import load_papers

PAPER = "equivalent_linear_mappings"


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_only_the_full_tier_reads_a_pretrained_model(tier):
    assert ("hf" in load_papers([PAPER], tier, {})[PAPER].cfg) == (tier == "full")


def _tiny():
    torch.manual_seed(0)
    lm = build({"vocab_size": 30, "model": {"d_model": 16, "d_hidden": 32, "n_head": 2, "n_layer": 2, "n_ctx": 8}})
    return lm.double().eval(), torch.randint(0, 30, (3, 6))


def test_detached_jacobian_reconstructs_and_ordinary_does_not():
    lm, tokens = _tiny()
    emb = lm.embed(tokens).detach()
    with torch.no_grad():
        reference = Readout(lm)(emb)
    out, arrays = analyse(Readout(lm), emb, reference, range(2))
    assert out["recon_rel_err_f64"] < 1e-12 and out["bias_rel"] < 1e-12 and out["readout_rel_err"] < 1e-12
    assert out["recon_rel_err_f32"] < 1e-5
    assert out["ordinary_recon_rel_err_min"] > 1e-2
    assert len(arrays["layer_match"]) == 2 and arrays["singular_values"][0] == pytest.approx(1.0)


def test_layer_map_stops_early():
    lm, tokens = _tiny()
    emb = lm.embed(tokens).detach()
    first = dynamic_linear_map(Readout(lm), emb, forward=lambda m, z: m(z, 0))
    with torch.no_grad():
        expected = lm.norm(lm.blocks[0](emb.double()))[:, -1]
    torch.testing.assert_close(first.output, expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(reconstruct(first.weight, emb), expected, rtol=0, atol=1e-12)


def test_decode_aligns_sign_with_output():
    unembed = torch.eye(4, dtype=torch.float64)
    y = torch.tensor([[0.0, 0.0, 2.0, 0.1]], dtype=torch.float64)
    decoded, predicted = decode(unembed, -y / y.norm(), y, k=2)  # an SVD may return the vector negated
    assert decoded[0, 0] == predicted[0, 0] == 2


def test_qwen_readout_on_a_tiny_random_qwen3():
    transformers = pytest.importorskip("transformers")
    from replications.equivalent_linear_mappings.hf_model import QwenReadout
    torch.manual_seed(0)
    cfg = transformers.Qwen3Config(vocab_size=50, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                                   max_position_embeddings=32, attn_implementation="eager")
    model = transformers.AutoModelForCausalLM.from_config(cfg).double().eval()
    ids = torch.randint(0, 50, (1, 7))
    seen = []
    model.model.norm.register_forward_hook(lambda module, inputs, output: seen.append(output))
    with torch.no_grad():
        model(input_ids=ids)
        emb = model.model.embed_tokens(ids)
    readout = QwenReadout(model)
    m = dynamic_linear_map(readout, emb, forward=lambda mod, z: mod(z))
    # transformers rounds its norms and softmax through float32; the readout stays in float64
    torch.testing.assert_close(m.output, seen[-1][:, -1], rtol=0, atol=1e-5)
    torch.testing.assert_close(reconstruct(m.weight, emb), m.output, rtol=0, atol=1e-12)
    assert m.bias.abs().max() < 1e-12
