"""shared.train.evaluate.accuracy: the fraction of argmax hits, whatever the chunk, with the model's mode kept."""
import pytest
import torch

from shared.train.evaluate import accuracy


@pytest.mark.parametrize("chunk", [1, 7, 100, 1000])
def test_accuracy_is_the_fraction_of_argmax_hits(chunk):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 3))
    model(torch.randn(64, 5))  # BatchNorm's running statistics move off their initial values
    x, y = torch.randn(100, 5), torch.randint(0, 3, (100,))
    model.eval()
    wanted = (model(x).argmax(-1) == y).double().mean().item()
    model.train()
    assert accuracy(model, x, y, chunk=chunk) == pytest.approx(wanted, abs=1e-12)
    assert model.training  # the mode it had
