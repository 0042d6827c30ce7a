"""Train one experiment (grok, width or scaling<M>): every member of a width in one stacked full-batch call
(shared.train.full_batch.train_full_batch: Adam, coupled L2 weight decay eta per member, Li2's centred MSE).
Writes one safetensors checkpoint (a stacked network per width) and the history (accuracies, losses and the stage
statistics per evaluation step, per member)."""
import torch

from shared.io.files import write_json
from shared.pipeline.run import start_run
from shared.train.full_batch import train_full_batch

from .common import components_of, members, split, stage_recorder, table, widths
from .model import build


def train_stack(run, p, order, width, group_members, label, record):
    section = p["section"]
    _, a, b, labels = table(order)
    masks = torch.stack([split(order, m["fraction"], m["seed"], f"split/{order}/{m['fraction']:.6f}")
                         for m in group_members])
    spec = {"name": label, "order": order, "width": width, "activation": p["activation"],
            "member_seeds": [m["seed"] for m in group_members], "members": group_members,
            "seed": min(m["seed"] for m in group_members)}
    model = build(spec).to(run.device)
    dev = run.device
    a, b, labels, masks = a.to(dev), b.to(dev), labels.to(dev), masks.to(dev)
    etas = [m["eta"] for m in group_members]
    on_eval = None
    if record:
        on_eval = stage_recorder(a, b, labels, masks, etas, components_of(order), p["analysis"],
                                 section.get("stage_every", 0), section.get("top_pairs", 100))
    history = train_full_batch(model, a, b, labels, masks, steps=section["steps"], lr=p["lr"],
                               weight_decay=torch.tensor(etas), decay="coupled", optimizer="adam", loss="mse",
                               eval_every=section["eval_every"], on_eval=on_eval, label=label, progress=False)
    spec["n_train"] = masks.sum(1).tolist()
    final = history["test_acc"][-1].tolist()
    print(f"{label}: order {order}, width {width}, {len(group_members)} members, final test acc "
          f"{[round(x, 3) for x in final]}", flush=True)
    return model.cpu(), spec, {k: v.tolist() for k, v in history.items()}


def main():
    run = start_run("checkpoint", "history")
    p = run.params
    experiment, section = p["experiment"], p["section"]
    torch.manual_seed(0)
    models, runs, histories = {}, [], {}
    if experiment == "grok":
        jobs = [(section["order"], section["width"], "grok", True)]
    elif experiment == "width":
        _, ks = widths(section)
        jobs = [(section["order"], k, f"K{k}", True) for k in ks]
    else:
        order = int(experiment.removeprefix("scaling"))
        jobs = [(order, section["width"], f"M{order}", False)]
    group = members(section, experiment, p["critical_c"])
    for order, width, label, record in jobs:
        if experiment == "width":  # Stage I only: G_F, no unit statistics
            section_w = {**section, "stage_every": 0}
            model, spec, hist = train_stack(run, {**p, "section": section_w}, order, width, group, label, record)
        else:
            model, spec, hist = train_stack(run, p, order, width, group, label, record)
        models[label], histories[label] = model, hist
        runs.append(spec)
    meta = run.save(run.args.checkpoint, models, runs, experiment=experiment)
    write_json(run.args.history, {**meta, "history": histories})
    print(f"{experiment}: {len(runs)} stacks, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
