"""Train one experiment as stacked members in one full-batch run; write one safetensors checkpoint and its history.

grok:        quadratic (or other) net on one group, members = training fractions x seeds, AdamW (decoupled), test
             accuracy against step on the held-out pairs.
width_<G>:   the bilinear surrogate on 100% of the table of G, one stacked model per width K, members = seeds; the
             centred MSE decides whether width K fits the word tensor exactly.
"""
import torch

from shared.io.files import write_json
from shared.data.groups import split_pairs
from shared.pipeline.run import start_run
from shared.train.full_batch import train_full_batch

from .common import centred_error, task
from .model import build


def _history(h):
    return {k: v.tolist() for k, v in h.items()}


def train_grok(run, p):
    g = p["grok"]
    group, a, b, labels = task(g["group"], p["word"])
    members = [(f, s) for f in g["fractions"] for s in g["seeds"]]
    spec = {"name": "grok", "seed": g["seeds"][0], "n": group.order, "width": g["width"],
            "activation": g["activation"], "seeds": [s for _, s in members], "init_scale": g["init_scale"],
            "fractions": [f for f, _ in members], "group": g["group"], "word": p["word"]}
    model = build(spec).to(run.device)
    mask = torch.stack([split_pairs(group.order, f, run.seed(s, "split")) for f, s in members])
    h = train_full_batch(model, a.to(run.device), b.to(run.device), labels.to(run.device), mask, steps=g["steps"],
                         lr=g["lr"], weight_decay=g["weight_decay"], decay="decoupled", loss=g["loss"],
                         eval_every=g["eval_every"], label="grok", progress=False)
    model = model.cpu()
    final = {"test_acc": h["test_acc"][-1].tolist(), "train_acc": h["train_acc"][-1].tolist()}
    return {"grok": model}, [spec], {"grok": _history(h)}, final, {"masks": mask.tolist()}


def train_width(run, p, group_name):
    w = p["width"]
    group, a, b, labels = task(group_name, p["word"])
    models, specs, histories, final = {}, [], {}, {}
    mask = torch.ones(len(w["seeds"]), len(labels), dtype=torch.bool)
    for K in w["widths"][group_name]:
        name = f"K{K}"
        spec = {"name": name, "seed": w["seeds"][0], "n": group.order, "width": K, "activation": "bilinear",
                "seeds": list(w["seeds"]), "init_scale": w["init_scale"], "group": group_name, "word": p["word"]}
        model = build(spec).to(run.device)
        h = train_full_batch(model, a.to(run.device), b.to(run.device), labels.to(run.device), mask, steps=w["steps"],
                             lr=w["lr"], weight_decay=w["weight_decay"], decay="decoupled", loss="mse",
                             eval_every=w["eval_every"], label=name, progress=False)
        models[name], histories[name] = model.cpu(), _history(h)
        specs.append(spec)
        final[name] = centred_error(models[name], a, b, labels).tolist()
    return models, specs, histories, final, {}


def main():
    run = start_run("checkpoint", "history")
    p = run.params
    torch.set_default_dtype(torch.float32)
    experiment = p["experiment"]
    if experiment == "grok":
        models, specs, histories, final, extra = train_grok(run, p)
    else:
        models, specs, histories, final, extra = train_width(run, p, experiment.removeprefix("width_"))
    meta = run.save(run.args.checkpoint, models, specs, experiment=experiment, final=final)
    write_json(run.args.history, {**meta, "history": histories, **extra})
    print(f"{experiment}: {len(specs)} models, {meta['wall_seconds']:.1f} s on {meta['device']}; final {final}")


if __name__ == "__main__":
    main()
