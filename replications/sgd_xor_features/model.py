"""The network of sgd_xor_features: runs independent two-layer ReLU networks stacked in one module
(shared.nn.two_layer), f_r(x) = sum_k a_rk relu(w_rk . x), no biases."""
from shared.nn.two_layer import StackedTwoLayerReLU


def build(spec, generator=None):
    return StackedTwoLayerReLU(spec["runs"], spec["d"], spec["width"], spec["init_scale"], generator)
