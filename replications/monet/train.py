"""Train every model of one group (monet: the MONet and its ablations; flat: the flat classifiers of equal
parameters), all seeds in one run: AdamW, cross-entropy, a per-epoch cosine (shared.train.supervised on
shared.train.loop.fit). Models of the same seed see the same batches. One safetensors checkpoint and its history."""
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.supervised import EpochSchedule, Run, train

from .common import load_data, specs
from .model import build, n_params


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params
    group, opt = p["group"], p["train"]
    data = load_data(run.args.data)
    runs = specs(p, group)
    models = {}
    for spec in runs:
        seed_everything(run.seed(spec["seed"], f"init/{spec['kind']}"))  # init depends only on the seed and kind
        models[spec["name"]] = build(spec)
        spec["params"] = n_params(models[spec["name"]])
    schedule = EpochSchedule(epochs=opt["epochs"], batch_size=opt["batch_size"], lr=opt["lr"])
    history = train(models, [Run(s["name"], s["seed"], 0.0, opt["weight_decay"]) for s in runs], data, schedule,
                    run.device, label=f"train {group}")
    final = {name: h[-1] for name, h in history.items()}
    meta = run.save(run.args.checkpoint, {k: m.cpu() for k, m in models.items()}, runs, experiment=group,
                    final=final)
    write_json(run.args.history, {**meta, "history": history})
    print(f"{group}: {len(runs)} models, {meta['wall_seconds']:.1f} s on {meta['device']}; "
          + ", ".join(f"{n} {f['test_acc']:.4f}" for n, f in final.items()))


if __name__ == "__main__":
    main()
