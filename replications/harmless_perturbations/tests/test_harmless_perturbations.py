"""harmless_perturbations: exact invariances on small random models, the attacks' constraints."""
import torch

from replications.harmless_perturbations import analyze_mlp, common, model
from shared.nn.adversarial import pgd_linf
from shared.nn.linear_operators import layer_operator, null_space
from shared.stats import rel_err

PAPER = "harmless_perturbations"
SPEC = {"d_input": 64, "n_classes": 10, "image_shape": [1, 8, 8]}


def test_first_layer_null_space_is_harmless_at_any_scale_and_random_is_not():
    torch.manual_seed(0)
    net = model.build({"kind": "mlp", "hidden": [24, 12], **SPEC}).double()
    x = torch.rand(8, 64, dtype=torch.float64)
    basis = null_space(net.layers[0].weight)
    assert basis.shape[1] == 64 - 24
    v = common.unit_directions(basis, 8, torch.Generator().manual_seed(1))
    for alpha in (1.0, 1e3):
        assert rel_err(net(x + alpha * v), net(x), per_sample=True).max() < 1e-9
    noise = torch.randn(8, 64, dtype=torch.float64)
    assert rel_err(net(x + 1e3 * noise), net(x), per_sample=True).min() > 1e-3


def test_relu_local_harmless_span_is_larger_and_exact():
    torch.manual_seed(0)
    net = model.build({"kind": "mlp", "hidden": [24, 12], **SPEC}).double()
    dims, change, steps = analyze_mlp.local_harmless(net, torch.rand(5, 64, dtype=torch.float64),
                                                     torch.Generator().manual_seed(0))
    assert (dims > 64 - 24).all() and change < 1e-9 and (steps > 0).all()


def test_strided_conv_null_space_is_harmless_and_stride1_conv_has_none():
    torch.manual_seed(0)
    net = model.build({"kind": "cnn", "channels": 2, "kernel": 4, "channels2": 4, **SPEC}).double()
    op1 = layer_operator(net.conv1, (1, 8, 8))
    basis = null_space(op1)
    assert op1.shape == (2 * 2 * 2, 64) and basis.shape[1] == 64 - 8
    x = torch.rand(4, 64, dtype=torch.float64)
    v = common.unit_directions(basis, 4, torch.Generator().manual_seed(0))
    assert rel_err(net(x + 1e3 * v), net(x), per_sample=True).max() < 1e-9
    assert null_space(layer_operator(net.conv2, net.conv1_out_shape())).shape[1] == 0


def test_pgd_stays_in_the_ball_and_the_pixel_range():
    torch.manual_seed(0)
    net = model.build({"kind": "mlp", "hidden": [16], **SPEC})
    x, y = torch.rand(6, 64), torch.randint(0, 10, (6,))
    for steps in (1, 5):
        x_adv = pgd_linf(net, x, y, 0.05, steps)
        assert (x_adv - x).abs().max() <= 0.05 + 1e-6 and x_adv.min() >= 0 and x_adv.max() <= 1
