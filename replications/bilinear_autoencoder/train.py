"""Train every autoencoder of one dataset: the bilinear autoencoders (each kind x sparsity penalty) with Muon, and
the TopK SAE baseline; one safetensors checkpoint (every run's spec in its metadata) and a JSON history.

A model's init is its run's seed; its batches come from a CPU generator of the run's "batches" stream, so a run's
numbers do not depend on the device or on which runs share the job.
"""
import torch

from shared.data import read_prepared
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.nn.bae import BilinearAutoencoder
from shared.pipeline.run import start_run
from shared.train.loop import fit, with_replacement
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
    steps, history, parts = tcfg["steps"], [], {}
    warmup = max(1, round(tcfg["penalty_warmup"] * steps))
    bar = Progress(steps, label)  # a bar on a terminal, timestamped lines in a log file

    def loss_fn(model, batch):
        step, x = batch
        loss, parts["now"] = model.loss(x, alpha=spec["alpha"], warmup=min(1.0, (step + 1) / warmup))
        return loss

    def log(step, loss):
        if (step + 1) % tcfg["log_every"] == 0 or step + 1 == steps:
            history.append({"step": step + 1, **{k: float(v) for k, v in parts["now"].items()}})
            bar.set_loss(loss.item())

    # rows drawn on the CPU (the same on every device), each step's batch carrying its step for the penalty ramp
    batches = enumerate(acts[i].to(device) for i in with_replacement(len(acts), tcfg["batch_size"], rng))
    fit(model, batches, steps=steps, loss_fn=loss_fn, make_optimizer=lambda m: optimizer(m, tcfg),
        lr_policy=lambda base, step: base * (1 - step / steps), on_step=log, progress=bar)
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
        print(spec["name"], histories[spec["name"]][-1:], flush=True)  # [-1:]: a smoke's capped run may log none
    for k in topk["ks"]:
        spec = topk_spec(k, d, topk["expansion"], topk["seed"])
        sae, info = train_sae(BilinearAutoencoder.normalize(acts), spec["n"], k, topk["steps"], topk["batch_size"],
                              topk["lr"], spec["seed"], run.device, progress=False)
        models[spec["name"]], histories[spec["name"]] = sae.cpu(), info["history"]
        specs.append(spec)
        print(spec["name"], info["history"][-1:], flush=True)
    meta = run.save(run.args.checkpoint, models, specs, experiment=p["dataset"], dataset=p["dataset"], d=d,
                    expansion=p["expansion"], bottleneck=p["bottleneck"], topk_expansion=topk["expansion"])
    write_json(run.args.history, {**meta, "history": histories})
    print(f"{len(specs)} models, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
