"""The model of Li2 (Tian, 2025): a two-layer network on the one-hots [e_a; e_b] of a pair of group elements,
K hidden units sigma(u_k(a) + v_k(b)) with sigma(x) = x^2 and no biases, and a linear read-out V (K x M); the
members of a sweep are stacked (shared.nn.multiplicative.GroupPairNet)."""
from shared.nn.multiplicative import GroupPairNet


def build(spec):
    """One stacked network from a run spec: order, width, activation and the members' seeds."""
    return GroupPairNet(spec["order"], spec["width"], activation=spec["activation"], seeds=spec["member_seeds"])
