"""What this paper's scripts share: the prompt sampler, the loss, and loading the trained models."""
import torch

from shared.data.icl_regression import embed, sample_prompts

TEST_SEED = 99  # the official code's fixed test batch (seed 99)


def sampler(d, n, covariates, gamma_shape=0.1, dtype=torch.float32):
    """sample(size, generator) -> (Z, y_q): embedded prompts (size, n+1, d+1) and the query targets (size,)."""
    def sample(size, generator):
        prompts = sample_prompts(size, n, d, generator, covariates=covariates, gamma_shape=gamma_shape, dtype=dtype)
        return embed(prompts), prompts.y[:, -1]
    return sample


def loss_fn(model, batch):
    """The code's in-context loss: mean over prompts of (prediction - y_q)^2 (no 1/2)."""
    z, y = batch
    ref = next(model.parameters())
    return ((model(z.to(ref.device, ref.dtype)) - y.to(ref.device, ref.dtype)) ** 2).mean()


def test_batch(setting, cfg, size):
    gen = torch.Generator().manual_seed(TEST_SEED)
    return sampler(cfg["d"], cfg["n"], setting["covariates"], cfg["gamma_shape"])(size, gen)

