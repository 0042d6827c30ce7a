"""The model: a two-layer network on one-hot pairs (a, b) of group elements (shared.nn.multiplicative.GroupPairNet).

    quadratic:  logits_c = sum_k out[k, c] (u_k(a) + v_k(b))^2    (the "standard activation" network, x^2)
    bilinear:   logits_c = sum_k out[k, c] u_k(a) v_k(b)          (the surrogate: width K = at most CP rank K)

One module holds a whole sweep: member i is the network built alone with seeds[i] (training fraction, seed).
"""
from shared.nn.multiplicative import GroupPairNet


def build(spec):
    """A stacked GroupPairNet from a run spec: n (group order), width, activation, seeds, init_scale."""
    return GroupPairNet(spec["n"], spec["width"], activation=spec["activation"], seeds=spec["seeds"],
                        init_scale=spec["init_scale"])
