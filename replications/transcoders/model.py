"""The models of transcoders (Dunefsky, Chlenski, Nanda 2024): a transcoder or SAE (shared.nn.transcoder), and the
small language model whose MLPs they imitate (shared.nn.transformer.Transformer, ReGLU MLPs, trained on the
registry's synthetic stories as the stand-in for GPT2-small).

    transcoder  z = ReLU(W_enc (x - b_dec_in) + b_enc),  y_hat = W_dec^T z + b_dec_out   (x: MLP input, y: output)
    SAE         the same with the target equal to the input and one decoder bias (sae=True)
"""
from shared.nn.transcoder import Transcoder
from shared.nn.transformer import Transformer


def build(spec):
    """One untrained module from a run spec: kind 'lm' (the transformer), 'transcoder' or 'sae'."""
    if spec["kind"] == "lm":
        return Transformer(spec["vocab_size"], mlp=spec["mlp"], **spec["model"])
    if spec["kind"] in ("transcoder", "sae"):
        return Transcoder(spec["d_in"], spec["d_out"], spec["n_features"], activation=spec.get("activation", "relu"),
                          k=spec.get("k"), sae=spec["kind"] == "sae")
    raise ValueError(f"unknown model kind {spec['kind']!r}")
