"""The sample-size sweep at one dimension d: one two-layer ReLU network per (seed, n), all trained at once
(shared.nn.two_layer) by minibatch SGD on the logistic loss, both layers, from a small symmetric init, for a fixed
number of steps on the first n points of the seed's pool; the test error of each on fresh points."""
import torch

from shared.io.files import write_json
from shared.pipeline.run import start_run

from .common import sample_sizes, test_error, test_set, train_fixed_samples
from .model import build


def stacked_init(d, n_per_seed, net_cfg, run, seeds, stream):
    """One block of n_per_seed networks per seed, each block from its seed's own init stream."""
    spec = {"d": d, "width": net_cfg["width"], "init_scale": net_cfg["init_scale"]}
    blocks = [build({**spec, "runs": n_per_seed}, run.generator(seed, stream)) for seed in seeds]
    net = build({**spec, "runs": len(seeds) * n_per_seed})
    with torch.no_grad():
        net.W.copy_(torch.cat([b.W for b in blocks]))
        net.a.copy_(torch.cat([b.a for b in blocks]))
    return net


def main():
    run = start_run("checkpoint", "history")
    p = run.params
    d, seeds, sweep, task, net_cfg = p["d"], p["sweep"]["seeds"], p["sweep"], p["task"], p["network"]
    ns = sample_sizes(d, sweep["grid"])
    pools = [test_set(d, max(ns), task["support"], run.generator(seed, f"pool_d{d}")) for seed in seeds]
    pools = (torch.stack([x for x, _ in pools]), torch.stack([y for _, y in pools]))
    net = stacked_init(d, len(ns), net_cfg, run, seeds, f"init_d{d}")
    net, runs = train_fixed_samples(net, ns, len(seeds), net_cfg, sweep["steps"], pools,
                                    run.generator(seeds[0], f"batches_d{d}"))
    x_test, y_test = test_set(d, task["test_points"], task["support"], run.generator(0, f"test_d{d}"))
    errors = test_error(net, x_test, y_test).view(len(seeds), len(ns))
    spec = {"name": "net", "seed": seeds[0], "runs": len(runs), "d": d, "width": net_cfg["width"],
            "init_scale": net_cfg["init_scale"]}
    meta = run.save(run.args.checkpoint, {"net": net}, [spec], experiment=f"sweep_d{d}")
    write_json(run.args.history, {**meta, "d": d, "ns": ns, "seeds": seeds, "test_error": errors.tolist()})
    print(f"d={d}: {len(runs)} networks, {meta['wall_seconds']:.1f} s")


if __name__ == "__main__":
    main()
