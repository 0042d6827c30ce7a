"""Fit transcoders and SAEs to the planted feature-circuit teacher (common.planted_teacher), per seed: a transcoder
of each MLP (x1 -> y1, x2 -> y2) and an SAE of each MLP's output (y1, y2), same width, loss and L1 coefficient.
One checkpoint; the untrained controls are rebuilt from the recorded init seeds by the analysis."""

from shared.io.files import write_json
from shared.pipeline.run import start_run
from shared.train.transcoder import train_transcoder

from .common import planted_teacher, teacher_sample

ARMS = {"tc1": ("x1", "y1", "transcoder"), "tc2": ("x2", "y2", "transcoder"),
        "sae1": ("y1", "y1", "sae"), "sae2": ("y2", "y2", "sae")}


def main():
    run = start_run("checkpoint", "history")
    t = run.params["teacher"]
    models, specs, history = {}, [], {}
    for seed in t["seeds"]:
        T = planted_teacher(t, seed)
        data = {k: v.float() for k, v in teacher_sample(T, t, t["n_train"], run.generator(seed, "data")).items()}
        for arm, (src, dst, kind) in ARMS.items():
            init = run.seed(seed, f"init_{arm}")
            tc, log = train_transcoder(data[src], data[dst], t["n_features"], steps=t["steps"],
                                       batch_size=t["batch_size"], lr=t["lr"], seed=init, device=run.device,
                                       l1=t["l1"], warmup=t["warmup"], sae=kind == "sae", progress=False,
                                       label=f"{arm} seed {seed}")
            name = f"{arm}_s{seed}"
            models[name] = tc.cpu()
            specs.append({"name": name, "kind": kind, "arm": arm, "seed": seed, "init_seed": init,
                          "d_in": t["d"], "d_out": t["d"], "n_features": t["n_features"]})
            history[name] = log["history"]
            print(f"{name}: final mse {log['history'][-1]['mse']:.4g}, {log['wall_seconds']:.1f} s", flush=True)
    meta = run.save(run.args.checkpoint, models, specs, experiment="teacher")
    write_json(run.args.history, {**meta, "history": history})


if __name__ == "__main__":
    main()
