"""The model of gptq_babai: a ReLU MLP whose nn.Linear layers are quantized after training (the paper quantizes the
linear layers of LLMs; this replication uses the layers of a small MNIST MLP and random layers).

shared.nn.mlp.ReluMLP's `layer_inputs` returns, for each linear layer, the inputs it sees (its calibration data X)
in the float model."""
from shared.nn.mlp import ReluMLP


def build(spec):
    """A model from a run spec; the caller seeds torch first so init is fixed by the seed."""
    return ReluMLP(spec["d_input"], spec["hidden"], spec["n_classes"])
