"""Training a transcoder (shared.nn.transcoder) on paired activations (MLP input -> MLP output) with
shared.train.loop.fit, as shared.train.sae trains a TopK SAE: Adam, batches drawn with replacement by a seeded
generator, unit-norm decoder rows kept by projecting their gradient before each step and renormalizing after it.

The loss is Transcoder.loss: the official code's normalised squared error plus an L1 penalty for ReLU transcoders
(TopK: reconstruction alone). b_dec_in starts at the mean input and b_dec_out at the mean target (the code's
"mean" initialisation of b_dec). The learning rate warms up linearly, then decays linearly to zero
(shared.train.schedules.linear_lr; the paper's code keeps it constant after warm-up: a short run needs the decay).
An SAE is trained by the same function with the target equal to the input and sae=True.
"""
import time

import torch

from shared.io.runtime import generator
from shared.nn.transcoder import Transcoder
from shared.train.loop import fit
from shared.train.progress import Progress
from shared.train.schedules import linear_lr


def train_transcoder(x, y, n_features, *, steps, batch_size, lr, seed, device, activation="relu", k=None, l1=0.0,
                     warmup=0, sae=False, progress=True, label="transcoder"):
    """Train on rows x (N, d_in) -> y (N, d_out). Returns (transcoder in eval mode, frozen, and
    {'history': [(step, mse, sparsity) every ~steps/20 steps], 'wall_seconds'})."""
    torch.manual_seed(seed)
    tc = Transcoder(x.shape[1], y.shape[1], n_features, activation=activation, k=k, sae=sae).to(device)
    x, y = x.to(device), y.to(device)
    with torch.no_grad():
        tc.b_dec_in.copy_(x.mean(0))
        if not sae:
            tc.b_dec_out.copy_(y.mean(0))
    g = generator(seed, device)
    batches = (torch.randint(len(x), (batch_size,), generator=g, device=device) for _ in range(steps))
    history, sums, every = [], torch.zeros(2, device=device), max(1, steps // 20)

    def loss_fn(tc, idx):
        total, mse, sparsity = tc.loss(x[idx], y[idx], l1)
        sums.add_(torch.stack([mse.detach(), sparsity.detach()]))
        return total

    def make_optimizer(tc):
        opt = torch.optim.Adam(tc.parameters(), lr=lr)
        opt.register_step_pre_hook(lambda *_: tc.project_decoder_grad())
        return opt

    def on_step(step, loss):
        tc.normalize_decoder()
        if (step + 1) % every == 0:
            mse, sparsity = (sums / every).tolist()
            history.append({"step": step + 1, "mse": mse, "sparsity": sparsity})
            bar.set_loss(mse)
            sums.zero_()

    t0 = time.perf_counter()
    bar = Progress(steps, label, enabled=progress)
    fit(tc, batches, steps=steps, loss_fn=loss_fn, make_optimizer=make_optimizer,
        lr_policy=lambda base, step: linear_lr(base, step, steps, warmup), on_step=on_step, progress=bar)
    return tc.eval().requires_grad_(False), {"history": history, "wall_seconds": time.perf_counter() - t0}
