"""The model of layernorm_removal: a GPT-2-style decoder (shared.nn.gpt2.GPT2) whose LayerNorms are
shared.nn.norm_removal.FakeLayerNorm modules. Until a site is switched to fake, each is an exact LayerNorm (gamma,
beta, per-token sigma), so the pretrained stand-in is an ordinary pre-LN GPT-2; the removal state (which paths are
fake, the frozen sigma_avg = [sigma_bos, sigma_rest], whether position 0 keeps its own sigma) lives in buffers, so a
checkpoint restores it.
"""
from shared.nn.gpt2 import GPT2
from shared.nn.norm_removal import FakeLayerNorm


def build(spec):
    """A model from a run spec (the config's `model` keys plus vocab_size, bos and seed); the caller seeds torch."""
    return GPT2(spec["vocab_size"], d_model=spec["d_model"], n_head=spec["n_head"], n_layer=spec["n_layer"],
                n_ctx=spec["n_ctx"], bos=spec["bos"], norm=FakeLayerNorm)
