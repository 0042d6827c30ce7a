import torch

from shared.nn.mlp import ReluMLP


def test_relu_mlp_is_its_formula_and_reports_each_layers_input():
    torch.manual_seed(0)
    net = ReluMLP(5, [7, 6], 3).double()
    x = torch.randn(4, 5, dtype=torch.float64)
    (a, b, c) = net.layers
    h1 = torch.relu(x @ a.weight.T + a.bias)
    h2 = torch.relu(h1 @ b.weight.T + b.bias)
    assert torch.allclose(net(x), h2 @ c.weight.T + c.bias, atol=1e-14, rtol=0)
    inputs = net.layer_inputs(x)
    assert len(inputs) == 3 and all(torch.allclose(u, v, atol=1e-14, rtol=0) for u, v in zip(inputs, (x, h1, h2)))
