"""Train one model of this paper (the one-step flow-matching Linearizer or the projective one) on one dataset.

Writes a safetensors checkpoint (config and provenance in its metadata) and a JSON loss history. Batches, times and
noise come from one CPU generator seeded by the run's seed, so a run's numbers do not depend on the device's RNG.
"""
import time

import torch
from common import as_float, build, load_data

from shared.io.checkpoints import save_models
from shared.io.files import write_json
from shared.io.runtime import describe, generator, pick_device, seed_everything
from shared.pipeline.provenance import collect
from shared.pipeline.scripts import parse_args


def batch_losses(model, kind, x1, rng, sigma, device):
    if kind == "projective":
        loss = model.loss(x1)
        return loss, {"fixed_point": loss}
    b, n = x1.shape[0], model.n
    x0 = torch.randn(x1.shape, generator=rng).to(device)
    t = torch.rand(b, generator=rng).to(device)
    latent_noise = (torch.randn(b, n, generator=rng).to(device), torch.randn(b, n, generator=rng).to(device))
    return model.loss(x1, x0, t, latent_noise, sigma)


def main():
    args = parse_args("data", "checkpoint", "history")
    p = args.params  # {"kind", "dataset", "model": {...}, "train": {...}, "seed", "device"}
    kind, tcfg = p["kind"], p["train"]
    data, shape, scale = load_data(args.data)
    device = pick_device(p["device"])
    seed_everything(p["seed"])
    model = build(kind, shape, p["model"]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=tcfg["lr"])
    rng = generator(p["seed"])
    x_train = data["x_train"]
    held_out = as_float(data["x_test"][: tcfg["batch_size"]], scale).to(device)

    history, t0 = [], time.perf_counter()
    for step in range(1, tcfg["steps"] + 1):
        model.train()
        x1 = as_float(x_train[torch.randint(len(x_train), (tcfg["batch_size"],), generator=rng)], scale).to(device)
        loss, terms = batch_losses(model, kind, x1, rng, tcfg.get("sigma", 0.0), device)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), tcfg["clip"])
        optimizer.step()
        if step % tcfg["log_every"] == 0 or step == tcfg["steps"]:
            model.eval()
            with torch.no_grad():  # the same objective on a fixed held-out batch, fixed noise (seeded per log)
                _, test_terms = batch_losses(model, kind, held_out, generator(p["seed"] + 1), tcfg.get("sigma", 0.0), device)
            history.append({"step": step, **{f"train_{k}": v.item() for k, v in terms.items()},
                            **{f"test_{k}": v.item() for k, v in test_terms.items()}})
            print(history[-1], flush=True)
    wall = time.perf_counter() - t0
    meta = {"kind": kind, "dataset": p["dataset"], "shape": list(shape), "model": p["model"], "train": tcfg,
            "seed": p["seed"], "device": describe(device), "wall_seconds": wall, "provenance": collect()}
    save_models(args.checkpoint, {"model": model.cpu()}, meta)
    write_json(args.history, {"history": history, "wall_seconds": wall, "device": describe(device)})


if __name__ == "__main__":
    main()
