"""Section 6: the 784-784-10 MLP (BatchNorm) under Layca-SGD at the notebook's four rates 3^-2, 3^-2.5, 3^-3, 3^-4.
Claim R7: a larger final rotation goes with a higher test accuracy (the notebook: 0.9675, 0.9660, 0.9654, 0.9581);
its level against the notebook's best. Values are means over seeds; the figure shows the rotation curves and the
first layer's filters at the largest and the smallest rate.
"""
import statistics
from itertools import pairwise

import numpy as np
from scipy.stats import spearmanr

from shared.io.files import read_json
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import final_state, load_data, tag

FILTERS = 8  # first-layer filters drawn per rate


def main():
    run = start_run("checkpoint", "history", "data", "metrics", "arrays")
    p = run.params
    e = p["mnist"]
    data = load_data(run.args.data, p["per_class"])
    models, specs, meta = load_models(run.args.checkpoint)
    history = read_json(run.args.history)["history"]
    acc, rotation, _ = final_state(models, specs, data)

    ks = sorted(e["exponents"])  # descending rate

    def names(k):
        return [f"layca-lr3^-{k:g}-seed{seed}" for seed in e["seeds"]]
    k_acc = {k: statistics.fmean(acc[n] for n in names(k)) for k in ks}
    k_rot = {k: statistics.fmean(statistics.fmean(rotation[n]) for n in names(k)) for k in ks}
    m = {f"acc_exp{tag(k)}": k_acc[k] for k in ks} | {f"rotation_exp{tag(k)}": k_rot[k] for k in ks}
    # rounded: a rank correlation of 4 items is a multiple of 0.2, which floats miss by 1e-16
    m["spearman_rotation_accuracy"] = round(float(spearmanr([k_rot[k] for k in ks], [k_acc[k] for k in ks])[0]), 12)
    m["acc_largest_rate"] = k_acc[ks[0]]
    m["acc_largest_minus_smallest_rate"] = k_acc[ks[0]] - k_acc[ks[-1]]
    m["rotation_step_min"] = min(k_rot[a] - k_rot[b] for a, b in pairwise(ks))  # larger rate, larger turn

    first = {k: models[names(k)[0]][0].weight[:FILTERS].reshape(FILTERS, 28, 28).numpy() for k in (ks[0], ks[-1])}
    arrays = {"exponents": np.array(ks, float), "acc": np.array([k_acc[k] for k in ks]),
              "rotation": np.array([k_rot[k] for k in ks]),
              "filters_largest": first[ks[0]], "filters_smallest": first[ks[-1]],
              **{f"curve_{i}": np.array(history[names(k)[0]]["rotation"]) for i, k in enumerate(ks)}}
    info = {"test_images": len(data["x_test"]), "train_images": len(data["x_train"])}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
