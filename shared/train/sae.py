"""Training a TopK sparse autoencoder (shared.nn.sae) as Pearce et al. (2025) App G.3 do."""
import time

import torch

from shared.io.runtime import generator
from shared.nn.sae import TopKSAE
from shared.train.loop import fit
from shared.train.progress import Progress
from shared.train.schedules import cosine_lr


def train_sae(acts, n_features, k, steps, batch_size, lr, seed, device, progress=True, label="sae"):
    """Train a TopK SAE on activations (N, d) with Adam and a cosine schedule; batches drawn by a seeded generator.

    b_dec starts at the mean activation. Returns (sae, history of (step, mse) every ~steps/20 steps).
    """
    torch.manual_seed(seed)
    sae = TopKSAE(acts.shape[1], n_features, k).to(device)
    with torch.no_grad():
        sae.b_dec.copy_(acts.mean(0))
    acts = acts.to(device)
    g = generator(seed, device)
    batches = (acts[torch.randint(len(acts), (batch_size,), generator=g, device=device)] for _ in range(steps))
    history, loss_sum, every = [], torch.zeros((), device=device), max(1, steps // 20)

    def make_optimizer(sae):
        opt = torch.optim.Adam(sae.parameters(), lr=lr)  # no weight decay (the code's Adam, not App G's "AdamW")
        opt.register_step_pre_hook(lambda *_: sae.project_decoder_grad())  # each step keeps the columns' norms
        return opt

    def on_step(step, loss):
        sae.normalize_decoder()
        loss_sum.add_(loss.detach())
        if (step + 1) % every == 0:
            history.append({"step": step + 1, "mse": loss_sum.item() / every})
            bar.set_loss(history[-1]["mse"])
            loss_sum.zero_()

    t0 = time.perf_counter()
    bar = Progress(steps, label, enabled=progress)  # shared.train.progress: a bar on a terminal, else plain lines
    fit(sae, batches, steps=steps, loss_fn=lambda sae, x: (sae(x) - x).pow(2).sum(-1).mean(),
        make_optimizer=make_optimizer, lr_policy=lambda base, step: cosine_lr(base, step, steps), on_step=on_step,
        progress=bar)
    return sae.eval().requires_grad_(False), {"history": history, "wall_seconds": time.perf_counter() - t0}
