"""The model of Ahn et al. (ICLR 2024): an L-layer linear Transformer on in-context regression prompts, in the
conventions of their code (shared.nn.linear_attention): sparse d x d P and Q blocks (the y -> y value entry fixed
to 1), the query masked out of the keys, 1/N scaling, the prediction read out as -Z_L[N+1, d+1], init std 0.05."""
from shared.nn.linear_attention import LinearTransformer


def build(spec):
    """A model from a run spec; the caller seeds torch first, so the init depends only on the seed."""
    return LinearTransformer(d=spec["d"], layers=spec["layers"], heads=spec.get("heads", 1), param="sparse",
                             mask_query_key=True, readout_sign=-1.0, init_std=spec["init_std"])
