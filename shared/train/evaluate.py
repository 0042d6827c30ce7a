"""A classifier's test accuracy, in chunks so that a large test set fits in memory; a smoke run
(shared.io.smoke.capped) evaluates only a few chunks."""
import torch

from shared.io.smoke import capped


@torch.no_grad()
def accuracy(model, x, y, chunk=1024, count_flops=True):
    """Fraction of rows of `x` whose argmax logit is `y`, in eval mode (BatchNorm's running statistics); the model's
    mode is restored after. count_flops: as shared.io.smoke.capped (False where FlopCounterMode is already open)."""
    was_training = model.training
    model.eval()
    starts = range(0, len(x), chunk)
    correct = seen = 0
    for i in capped(starts, len(starts), "evaluate", count_flops=count_flops):
        correct += (model(x[i:i + chunk]).argmax(-1) == y[i:i + chunk]).sum().item()
        seen += len(x[i:i + chunk])
    model.train(was_training)
    return correct / seen
