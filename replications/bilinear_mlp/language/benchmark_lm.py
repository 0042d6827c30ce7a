"""Language-model training speed (reports/benchmarks.json; not part of the default run): tokens/s of one training
step (forward, backward, AdamW) of the tier's transformer with each MLP, and the achieved FLOP/s as a fraction of
the fp32 matmul FLOP/s measured here on the step's own shapes and a large square one.

FLOPs per step: 6 per weight and token for the matmuls (the token embedding is a lookup, not counted), plus the
attention scores and their weighted sum, 12 * n_layer * n_ctx * d_model per token (forward + backward).
"""
import json

import torch

from shared.data.tokens import load_tokens
from shared.io.files import write_json
from shared.io.runtime import describe, seed_everything
from shared.pipeline.benchmarking import best_seconds, matmul_peak, synchronizer
from shared.pipeline.run import start_run
from shared.train.language_model import random_windows

from .common import build

REPEATS = 5  # best of this many timed steps


def main():
    run = start_run("data", "out")  # params: the config's language section + device; data: the prepared text
    args, p, device = run.args, run.params, run.device
    sync = synchronizer(device)
    model_cfg, batch = p["model"], p["train"]["batch_size"]
    d, h, t, n_layer = model_cfg["d_model"], model_cfg["d_hidden"], model_cfg["n_ctx"], model_cfg["n_layer"]
    tokens, _, tokenizer = load_tokens(args.data)
    vocab = tokenizer.vocab_size
    peak, rates = matmul_peak(device, sync, [(batch * t, d, 2 * h), (batch * t, h, d), (batch * t, d, vocab),
                                             (2048, 2048, 2048)])
    result = {"device": describe(device), "batch_size": batch, "n_ctx": t, "model": model_cfg, "vocab": vocab,
              "matmul_peak_flops": peak, "matmul_rates": rates}
    for mlp in ("bilinear", "reglu", "swiglu"):
        seed = p["train"]["seed"]
        seed_everything(run.seed(seed, "init"))
        model = build({"kind": "lm", "mlp": mlp, "model": model_cfg, "vocab_size": vocab}).to(device)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        gen = run.generator(seed, "batches")
        batches = [random_windows(tokens, batch, t + 1, gen).to(device) for _ in range(2)]

        def step():
            for b in batches:
                loss = model.loss(b)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()

        seconds = best_seconds(step, REPEATS, sync) / len(batches)
        weights = sum(q.numel() for name, q in model.named_parameters() if not name.startswith("embed"))
        flops = batch * t * (6 * weights + 12 * n_layer * t * d)
        result[mlp] = {"seconds_per_step": seconds, "tokens_per_second": batch * t / seconds,
                       "achieved_flops": flops / seconds, "matmul_fraction": flops / seconds / peak}
    result["swiglu_step_time_over_bilinear"] = result["swiglu"]["seconds_per_step"] / result["bilinear"]["seconds_per_step"]
    write_json(args.out, result)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
