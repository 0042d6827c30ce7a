"""The two phases, seen in the neurons: at one d, one-pass minibatch SGD (fresh samples every step, as in the
theorem) on XOR labels and, from the same initialisation, on labels drawn at random (the control); every
`log_every` steps each neuron's signal and orthogonal norms, its cosine to the nearest feature direction, |a_k|,
and each run's test error. Runs: per seed, [xor, shuffled]."""
import numpy as np
import torch

from shared.data.hypercube import hypercube_parity
from shared.io.files import atomic_path, write_json
from shared.nn.feature_learning import feature_projection, xor_features
from shared.pipeline.run import start_run
from shared.train.loop import fit

from .common import logistic, test_error, test_set
from .train_sweep import stacked_init

LABELS = ("xor", "shuffled")


def main():
    run = start_run("checkpoint", "history", "trajectory")
    p = run.params
    ph, task, net_cfg = p["phases"], p["task"], p["network"]
    d, seeds, batch = ph["d"], ph["seeds"], net_cfg["batch_size"]
    net = stacked_init(d, len(LABELS), net_cfg, run, seeds, f"init_phases_d{d}")  # xor and shuffled share an init
    shuffled = torch.tensor([label == "shuffled" for _ in seeds for label in LABELS])
    data_gen, label_gen = run.generator(seeds[0], "phase_data"), run.generator(seeds[0], "phase_random_labels")
    x_test, y_test = test_set(d, ph["test_points"], task["support"], run.generator(0, f"test_d{d}"))
    basis, features = xor_features(d, task["support"])
    logged = {k: [] for k in ("step", "signal", "orthogonal", "cos", "nearest", "abs_a", "test_error")}

    def log(step):
        with torch.no_grad():
            stats = feature_projection(net.W, basis, features)
            for key in ("signal", "orthogonal", "cos", "nearest"):
                logged[key].append(stats[key].numpy().copy())
            logged["abs_a"].append(net.a.abs().numpy().copy())
            logged["test_error"].append(test_error(net, x_test, y_test).numpy())
            logged["step"].append(step)

    def batches():
        while True:
            x, y = hypercube_parity(d, net.a.shape[0] * batch, task["support"], data_gen)
            noise = torch.randint(0, 2, y.shape, generator=label_gen).float() * 2 - 1
            x, y, noise = x.view(-1, batch, d), y.view(-1, batch), noise.view(-1, batch)
            yield x, torch.where(shuffled[:, None], noise, y)

    log(0)
    fit(net, batches(), steps=ph["steps"], loss_fn=lambda m, b: logistic(m, *b),
        make_optimizer=lambda m: torch.optim.SGD(m.parameters(), lr=net_cfg["lr"]),
        on_step=lambda step, loss: log(step + 1) if (step + 1) % ph["log_every"] == 0 else None)
    spec = {"name": "net", "seed": seeds[0], "runs": net.a.shape[0], "d": d, "width": net_cfg["width"],
            "init_scale": net_cfg["init_scale"]}
    meta = run.save(run.args.checkpoint, {"net": net}, [spec], experiment="phases")
    with atomic_path(run.args.trajectory) as tmp, open(tmp, "wb") as f:
        np.savez(f, **{k: np.stack(v) if k != "step" else np.array(v) for k, v in logged.items()})
    write_json(run.args.history, {**meta, "d": d, "seeds": seeds, "labels": list(LABELS),
                                  "samples_per_run": ph["steps"] * batch})
    print(f"phases d={d}: {net.a.shape[0]} runs, {len(logged['step'])} logs, {meta['wall_seconds']:.1f} s")


if __name__ == "__main__":
    main()
