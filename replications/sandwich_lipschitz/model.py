"""The networks of sandwich_lipschitz: shared.nn.sandwich.LipschitzMLP from a run spec (kind sandwich, orthogonal
or plain; widths; gamma)."""
from shared.nn.sandwich import LipschitzMLP


def build(spec):
    return LipschitzMLP(spec["d_in"], spec["widths"], spec["d_out"], spec["gamma"] or 1.0, spec["kind"])
