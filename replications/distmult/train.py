"""Train every model of one graph (a run per model and seed) with its recipe: the paper's margin ranking loss
(AdaGrad, unit-norm entities) or the later 1-N recipe; write one checkpoint and the loss histories."""
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.link_prediction import train_1n, train_margin

from .common import load_graph
from .model import build


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params
    graph = load_graph(run.args.data)
    n, r = graph["n_entities"], graph["n_relations"]
    models, specs, history = {}, [], {}
    for seed in p["seeds"]:
        for name in p["models"]:
            spec = {"name": f"{name}_seed{seed}", "model": name, "seed": seed, "n_entities": n, "n_relations": r,
                    **p["model_specs"][name]}
            seed_everything(run.seed(seed, f"init-{name}"))
            model = build(spec).to(run.device)
            losses = []
            log = lambda epoch, loss, losses=losses: losses.append(loss)
            generator = run.generator(seed, f"data-{name}")
            if spec["recipe"] == "margin":
                m = p["margin"]
                train_margin(model, graph["train"], n, m["epochs"], m["batch_size"], m["lr"], m["negatives"], generator,
                             l2=m["l2"], log=log)
            else:
                o = p["one_n"]
                train_1n(model, graph["train"], n, r, o["epochs"], o["batch_size"], o["lr"], generator,
                         label_smoothing=o["label_smoothing"], log=log)
            models[spec["name"]], history[spec["name"]] = model.cpu(), losses
            specs.append(spec)
            print(f"{spec['name']}: loss {losses[0]:.4f} -> {losses[-1]:.4f} ({run.wall():.1f} s)", flush=True)
    meta = run.save(run.args.checkpoint, models, specs, experiment=p["graph"])
    write_json(run.args.history, {**meta, "history": history})


if __name__ == "__main__":
    main()
