"""Random-direction control (section 5.1, claim F8): for each layer group S of each depth-sweep pair, theta_A with
S moved by r/2, r a Gaussian direction rescaled to |theta_B^S - theta_A^S| (the norm over all of S's entries),
averaged over `random_draws` draws, against the averaging direction (S moved by (theta_B^S - theta_A^S)/2, i.e.
the single-layer midpoint into A). Both as barriers against the full models' mean loss. Several seed pairs: the
fractions and the median pool every layer of every pair (one draw stream, the first pair's layers first); the
figure draws the first pair."""
import numpy as np
import torch

from shared.nn.interpolation import interpolate, layer_groups, random_direction_like
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import Evaluator, barriers_of, load_data, pairs_of, reference, states_at


def random_point(a, b, keys, gen):
    """theta_A with the entries `keys` moved by half a Gaussian direction of norm |theta_B^S - theta_A^S|."""
    diff = torch.cat([(b[k] - a[k]).flatten().double() for k in keys]).norm()
    step = random_direction_like(a, keys, diff, gen)
    return {**a, **{k: (a[k].double() + 0.5 * step[k]).to(a[k].dtype) for k in keys}}


def main():
    run = start_run("data", "metrics", "arrays", many=("checkpoints",))
    p = run.params
    data = load_data(run.args.data, p["dataset"])
    gen = torch.Generator().manual_seed(p["random_seed"])
    loaded = [load_models(path) for path in run.args.checkpoints]
    meta0 = loaded[0][2]
    pairs = pairs_of(loaded[0][1])
    rows, labels = [], []
    for pair in pairs:
        for models, specs, meta in loaded:
            ev = Evaluator(next(iter(models.values())), data, run.device, p["eval_train_max"], p["chunk"])
            a, b = states_at(models, specs, pair=pair)
            ref = reference(ev(a), ev(b))
            for group, keys in layer_groups(a).items():
                avg = barriers_of(ev(interpolate(a, b, 0.5, keys, base="a")), ref)
                rand = [barriers_of(ev(random_point(a, b, keys, gen)), ref) for _ in range(p["random_draws"])]
                rows.append((avg["train_loss"], float(np.mean([r["train_loss"] for r in rand])),
                             avg["test_loss"], float(np.mean([r["test_loss"] for r in rand]))))
                labels.append(f"{meta['experiment']}:{group}" + (f":p{pair}" if pair else ""))
    r = np.array(rows)
    m = {
        "random_below_frac": float(np.mean(r[:, 1] < r[:, 0])),
        "random_below_frac_test": float(np.mean(r[:, 3] < r[:, 2])),
        "layers": len(rows),
        "pairs": len(pairs),
        "avg_over_random_median": float(np.median(r[:, 0] / np.maximum(r[:, 1], 1e-12))),
        "random_barrier_max": float(r[:, 1].max()),
    }
    first = len(rows) // len(pairs)  # the figure draws the first pair's layers
    arrays = {"labels": np.array(labels[:first]), "averaging": r[:first, 0], "random": r[:first, 1],
              "averaging_test": r[:first, 2], "random_test": r[:first, 3]}
    write_metrics(run.args.metrics, m, meta0, info={"draws": p["random_draws"], "direction": "from A"},
                  arrays=arrays, arrays_path=run.args.arrays)
    print(m)
    for lab, row in zip(labels, rows):
        print(f"  {lab}: averaging {row[0]:.3f}, random {row[1]:.3f}")


if __name__ == "__main__":
    main()
