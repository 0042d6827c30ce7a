"""Train every run of one experiment (iso, noniso or relu): a one-layer LSA per run spec, Adam with a cosine
schedule on fresh prompts each step (population loss; shared.train.loop.fit with a stream of batches), float32.
One safetensors checkpoint and its history.
The prompts are drawn on the run's device (a CUDA generator on a GPU: sampling 4096 prompts a step on the CPU would
dominate the full tier), so CPU and GPU runs see different prompts; each is deterministic given its seed."""
import torch

from shared.data.icl_regression import embed
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.loop import fit
from shared.train.schedules import cosine_lr

from .common import prompts, specs
from .model import build


def train_one(model, spec, p, generator, device):
    o = p["optim"]
    model.to(device)
    log = []

    def stream():  # a fresh batch of prompts every step
        while True:
            batch = prompts(spec, o["batch"], generator)
            yield embed(batch).to(device), batch.y[:, -1].to(device)

    def record(step, loss):
        if step % o["log_every"] == 0 or step == o["steps"] - 1:
            log.append({"step": step, "loss": loss.item()})

    fit(model, stream(), steps=o["steps"], loss_fn=lambda m, b: ((m(b[0]) - b[1]) ** 2).mean(),
        make_optimizer=lambda m: torch.optim.Adam(m.parameters(), lr=o["lr"]),
        lr_policy=lambda lr, step: cosine_lr(lr, step, o["steps"]), on_step=record)
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
