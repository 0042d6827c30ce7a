"""The models of minimal_transformer: a ViT-style classifier over image patches whose attention is one of the
paper's reduced forms (shared.nn.minimal_attention.PatchClassifier): query-key separate / collapsed / symmetric /
PSD, value-output separate / collapsed / omitted (identity), with or without the MLP sub-layer; n_layer 0 is the
embedding-only control (patch embedding, positions, LayerNorm, mean over tokens, linear head)."""
from shared.nn.minimal_attention import PatchClassifier

MODEL_KEYS = ("image_size", "channels", "patch", "d", "n_layer", "n_head", "n_classes", "qk", "vo", "mlp_ratio")


def build(spec):
    """A model from a run spec; the caller seeds torch first, so the init depends on the run's seed only."""
    return PatchClassifier(**{k: spec[k] for k in MODEL_KEYS})
