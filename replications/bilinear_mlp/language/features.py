"""Output features of the bilinear MLP read through its weights (section 3.1, 5): one interaction matrix per
output-SAE latent, in the MLP's input space, computed in float64 in chunks so paper-size SAEs fit in memory."""

from shared.nn import bilinear_analysis as analysis


def mlp_weights(lm, layer):
    """(left, right, down) of one layer's bilinear MLP in float64: mlp(x) = down ((left x) * (right x))."""
    mlp = lm.blocks[layer].mlp
    return mlp.bilinear.left.double(), mlp.bilinear.right.double(), mlp.down.weight.double()


def feature_interactions(lm, layer, sae_out, features, chunk=64):
    """Yield (feature index, Q_f (d, d)) for each output latent f: z_f's pre-activation is x^T Q_f x - e_f . b_dec
    on the MLP input x, with e_f the latent's encoder row."""
    left, right, down = mlp_weights(lm, layer)
    directions = sae_out.encoder.double() @ down  # (m, hidden): e_f . down, folded into the hidden units
    features = list(features)
    for i in range(0, len(features), chunk):
        idx = features[i : i + chunk]
        qs = analysis.interaction_matrices(left, right, directions[idx])
        yield from zip(idx, qs)


def active_tokens(sae_out, y_out):
    """Pre-activations (n, m) of the output SAE on MLP outputs, and which latents are active (z > 0) per token."""
    pre = sae_out.double().pre_activations(y_out)
    return pre, sae_out.double().encode(y_out) > 0


def studied_latents(pre, active, min_active):
    """Latents active on more than `min_active` tokens whose activation varies there (a correlation needs it)."""
    keep = []
    for f in range(pre.shape[1]):
        on = active[:, f]
        if on.sum() > min_active and pre[on, f].std() > 0:
            keep.append(f)
    return keep
