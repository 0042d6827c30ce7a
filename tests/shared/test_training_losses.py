"""shared.nn.multiplicative.plain_mse, the uncentred loss option of shared.train.full_batch (loss="plain_mse")."""
import torch

from shared.data.groups import all_pairs, by_name, split_pairs
from shared.nn.multiplicative import GroupPairNet, centred_mse, plain_mse
from shared.train.full_batch import train_full_batch


def test_plain_mse_is_the_squared_distance_to_the_one_hot():
    labels = torch.tensor([0, 2])
    logits = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]])
    assert plain_mse(logits, labels).tolist() == [[0.0, 0.0], [1.0, 2.0]]
    # centred_mse ignores a shift of every logit, the uncentred loss does not
    assert centred_mse(logits + 1, labels).allclose(centred_mse(logits, labels))
    assert not plain_mse(logits + 1, labels).allclose(plain_mse(logits, labels))


def test_full_batch_trains_with_the_plain_mse():
    g = by_name("Z5")
    a, b = all_pairs(g.order)
    labels = torch.as_tensor(g.table).reshape(-1)
    mask = torch.stack([split_pairs(g.order, 0.8, seed) for seed in (0, 1)])
    net = GroupPairNet(g.order, 16, seeds=(0, 1))
    h = train_full_batch(net, a, b, labels, mask, steps=200, lr=1e-2, loss="plain_mse", eval_every=100,
                         progress=False)
    assert (h["train_loss"][-1] < 0.2 * h["train_loss"][0]).all()
