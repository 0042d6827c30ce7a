"""Train every autoencoder of one dataset: the bilinear autoencoders (each kind x sparsity penalty) with Muon, and
the TopK SAE baseline; one safetensors checkpoint (every run's spec in its metadata) and a JSON history.

A model's init is its run's seed; its batches come from a CPU generator of the run's "batches" stream, so a run's
numbers do not depend on the device or on which runs share the job.
Not yet on shared.train.loop.fit, though it would fit (Muon through make_optimizer, the linear decay as lr_policy,
the penalty ramp in loss_fn); left for a change that checks this paper's numbers bit for bit against the old loop.
"""
import torch

from shared.data import read_prepared
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.nn.bae import BilinearAutoencoder
from shared.pipeline.run import start_run
from shared.train.muon import Muon
from shared.train.progress import Progress
from shared.train.sae import train_sae

from .common import bae_spec, build, topk_spec


def optimizer(model, tcfg):
    if tcfg["optimizer"] == "muon":
        return Muon(model.parameters(), lr=tcfg["lr"], momentum=0.95, nesterov=tcfg["nesterov"])
    return torch.optim.Adam(model.parameters(), lr=tcfg["lr"])


def train_bae(acts, spec, tcfg, rng, device, label):
    """One bilinear autoencoder: linear decay of the learning rate to 0, the sparsity penalty ramped in over
    `penalty_warmup` of the steps (the released code: 256 of 1,024 steps). `rng` draws the batches."""
    seed_everything(spec["seed"])  # the init: the run's seed itself
    model = build(spec).to(device)
    opt = optimizer(model, tcfg)
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1 - step / tcfg["steps"])
    warmup, history = max(1, round(tcfg["penalty_warmup"] * tcfg["steps"])), []
    bar = Progress(tcfg["steps"], label)  # a bar on a terminal, timestamped lines in a log file
    for step in bar:
        batch = acts[torch.randint(len(acts), (tcfg["batch_size"],), generator=rng)].to(device)
        loss, parts = model.loss(batch, alpha=spec["alpha"], warmup=min(1.0, (step + 1) / warmup))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        schedule.step()
        if (step + 1) % tcfg["log_every"] == 0 or step + 1 == tcfg["steps"]:
            history.append({"step": step + 1, **{k: float(v) for k, v in parts.items()}})
            bar.set_loss(loss.item())
    return model.cpu().eval().requires_grad_(False), history


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params  # {"dataset", "runs": [{name, kind, alpha, seed}], "expansion", "bottleneck", "train", "topk", "device"}
    arrays, _ = read_prepared(run.args.data)
    acts = torch.from_numpy(arrays["x_train"]).float()
    d, topk = acts.shape[1], p["topk"]
    models, histories, specs = {}, {}, []
    for i, r in enumerate(p["runs"]):
        spec = bae_spec(r, d, p["expansion"], p["bottleneck"])
        rng = run.generator(spec["seed"], "batches")
        label = f"run {i + 1} of {len(p['runs'])} ({spec['name']})"
        models[spec["name"]], histories[spec["name"]] = train_bae(acts, spec, p["train"], rng, run.device, label)
        specs.append(spec)
        print(spec["name"], histories[spec["name"]][-1], flush=True)
    for k in topk["ks"]:
        spec = topk_spec(k, d, topk["expansion"], topk["seed"])
        sae, info = train_sae(BilinearAutoencoder.normalize(acts), spec["n"], k, topk["steps"], topk["batch_size"],
                              topk["lr"], spec["seed"], run.device, progress=False)
        models[spec["name"]], histories[spec["name"]] = sae.cpu(), info["history"]
        specs.append(spec)
        print(spec["name"], info["history"][-1], flush=True)
    meta = run.save(run.args.checkpoint, models, specs, experiment=p["dataset"], dataset=p["dataset"], d=d,
                    expansion=p["expansion"], bottleneck=p["bottleneck"], topk_expansion=topk["expansion"])
    write_json(run.args.history, {**meta, "history": histories})
    print(f"{len(specs)} models, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
