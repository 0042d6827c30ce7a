"""Train every run of one experiment (iso, noniso or relu): a one-layer LSA per run spec, Adam with a cosine
schedule on fresh prompts each step (population loss), float32. One safetensors checkpoint and its history.
The prompts are drawn on the run's device (a CUDA generator on a GPU: sampling 4096 prompts a step on the CPU would
dominate the full tier), so CPU and GPU runs see different prompts; each is deterministic given its seed."""
import math

import torch

from shared.data.icl_regression import embed
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run

from .common import prompts, specs
from .model import build


def train_one(model, spec, p, generator, device):
    o = p["optim"]
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=o["lr"])
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / o["steps"])))
    log = []
    for step in range(o["steps"]):
        batch = prompts(spec, o["batch"], generator)
        z, target = embed(batch).to(device), batch.y[:, -1].to(device)
        loss = ((model(z) - target) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % o["log_every"] == 0 or step == o["steps"] - 1:
            log.append({"step": step, "loss": loss.item()})
    return log


def main():
    run = start_run("checkpoint", "history")
    p = run.params
    runs = specs(p, p["experiment"])
    models, history = {}, {}
    for spec in runs:
        seed_everything(run.seed(spec["seed"], "init"))
        model = build(spec)
        gen = run.generator(spec["seed"], f"prompts/{spec['name']}", run.device)  # prompts drawn where the model is
        history[spec["name"]] = train_one(model, spec, p, gen, run.device)
        models[spec["name"]] = model.cpu()
        print(f"{spec['name']}: final loss {history[spec['name']][-1]['loss']:.4f}", flush=True)
    final = {name: h[-1] for name, h in history.items()}
    meta = run.save(run.args.checkpoint, models, runs, experiment=p["experiment"], final=final)
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(runs)} models, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
