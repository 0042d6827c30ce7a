"""Train every autoencoder of one dataset: the bilinear autoencoders (each kind x sparsity penalty) with Muon, and
the TopK SAE baseline; one safetensors checkpoint (config in its metadata) and a JSON history.

Batches come from one CPU generator per run seeded by the run's seed, so a run's numbers do not depend on the
device or on which runs share the job.
"""
import time

import torch
from common import build_bae

from shared.data import read_prepared
from shared.io.checkpoints import save_models
from shared.io.files import write_json
from shared.io.runtime import describe, generator, pick_device, seed_everything
from shared.nn.bae import BilinearAutoencoder
from shared.pipeline.scripts import parse_args
from shared.train.muon import Muon
from shared.train.sae import train_sae


def optimizer(model, tcfg):
    if tcfg["optimizer"] == "muon":
        return Muon(model.parameters(), lr=tcfg["lr"], momentum=0.95, nesterov=tcfg["nesterov"])
    return torch.optim.Adam(model.parameters(), lr=tcfg["lr"])


def train_bae(acts, run, cfg, device):
    """One bilinear autoencoder: linear decay of the learning rate to 0, the sparsity penalty ramped in over
    `penalty_warmup` of the steps (the released code: 256 of 1,024 steps)."""
    tcfg = cfg["train"]
    seed_everything(run["seed"])
    d = acts.shape[1]
    model = build_bae(d, run["kind"], cfg["expansion"], cfg["bottleneck"]).to(device)
    opt = optimizer(model, tcfg)
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1 - step / tcfg["steps"])
    rng, warmup, history = generator(run["seed"]), max(1, round(tcfg["penalty_warmup"] * tcfg["steps"])), []
    for step in range(tcfg["steps"]):
        batch = acts[torch.randint(len(acts), (tcfg["batch_size"],), generator=rng)].to(device)
        loss, parts = model.loss(batch, alpha=run["alpha"], warmup=min(1.0, (step + 1) / warmup))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        schedule.step()
        if (step + 1) % tcfg["log_every"] == 0 or step + 1 == tcfg["steps"]:
            history.append({"step": step + 1, **{k: float(v) for k, v in parts.items()}})
    return model.cpu().eval().requires_grad_(False), history


def main():
    args = parse_args("data", "checkpoint", "history")
    p = args.params  # {"dataset", "runs": [{name, kind, alpha, seed}], "model": {...}, "train": {...}, "topk": {...}, "device"}
    arrays, _ = read_prepared(args.data)
    acts = torch.from_numpy(arrays["x_train"]).float()
    device = pick_device(p["device"])
    models, histories, t0 = {}, {}, time.perf_counter()
    for run in p["runs"]:
        models[run["name"]], histories[run["name"]] = train_bae(acts, run, p, device)
        print(run["name"], histories[run["name"]][-1], flush=True)
    topk = p["topk"]
    for k in topk["ks"]:
        sae, info = train_sae(BilinearAutoencoder.normalize(acts), topk["expansion"] * acts.shape[1], k, topk["steps"], topk["batch_size"],
                              topk["lr"], topk["seed"], device, progress=False)
        models[f"topk{k}"], histories[f"topk{k}"] = sae.cpu(), info["history"]
        print(f"topk{k}", info["history"][-1], flush=True)
    wall = time.perf_counter() - t0
    runs = [{**r, "model": "bae"} for r in p["runs"]] + [{"name": f"topk{k}", "model": "topk", "k": k, "seed": topk["seed"]}
                                                          for k in topk["ks"]]
    meta = {"dataset": p["dataset"], "runs": runs, "d": acts.shape[1], "expansion": p["expansion"],
            "bottleneck": p["bottleneck"], "topk_expansion": topk["expansion"], "device": describe(device),
            "wall_seconds": wall}
    save_models(args.checkpoint, models, meta)
    write_json(args.history, {"history": histories, "wall_seconds": wall})


if __name__ == "__main__":
    main()
