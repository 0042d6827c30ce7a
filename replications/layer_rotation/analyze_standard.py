"""Section 5 on MNIST-5k, standard training read through layer rotation: plain SGD at three learning rates with and
without weight decay, Adam, and Adam + Layca. Claims R4 (a larger SGD rate turns the layers further and generalises
better; weight decay adds rotation) and R5 (Adam's rotations are smaller and less even across layers; Layca on top
of Adam generalises better). Every value is a mean over seeds of the saved weights' accuracy and rotation.
"""
import statistics
from itertools import pairwise

import numpy as np

from shared.io.files import read_json
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.train.evaluate import accuracy

from .common import final_state, load_data, rate, tag


def cv(values):
    """Coefficient of variation across layers: how unequal the layers' rotations are."""
    return statistics.pstdev(values) / statistics.fmean(values)


def main():
    run = start_run("checkpoint", "history", "data", "metrics", "arrays")
    p = run.params
    s = p["standard"]
    data = load_data(run.args.data, p["per_class"])
    models, specs, meta = load_models(run.args.checkpoint)
    history = read_json(run.args.history)["history"]
    acc, rotation, inits = final_state(models, specs, data)

    def mean(values, run_name):
        return statistics.fmean(values(f"{run_name}-seed{seed}") for seed in s["seeds"])

    def rot(n):
        return statistics.fmean(rotation[n])

    ks = sorted(s["sgd_exponents"], reverse=True)  # ascending learning rate
    wd = s["weight_decay"]
    arm = {(k, w): f"sgd-lr3^-{k:g}-wd{w:g}" for k in ks for w in (0.0, wd)} | {"adam": "adam", "layca": "adam-layca"}
    key = {(k, w): f"sgd_exp{tag(k)}{'_wd' if w else ''}" for k in ks for w in (0.0, wd)} | {"adam": "adam",
                                                                                          "layca": "adam_layca"}
    top, low = (ks[-1], 0.0), (ks[0], 0.0)
    m = {}
    for a in arm:
        m[f"acc_{key[a]}"], m[f"rotation_{key[a]}"] = mean(acc.get, arm[a]), mean(rot, arm[a])
        m[f"cv_{key[a]}"] = mean(lambda n: cv(rotation[n]), arm[a])

    m["sgd_rotation_step_min"] = min(m[f"rotation_{key[(b, 0.0)]}"] - m[f"rotation_{key[(a, 0.0)]}"]
                                     for a, b in pairwise(ks))
    m["sgd_acc_top_minus_low"] = m[f"acc_{key[top]}"] - m[f"acc_{key[low]}"]
    m["wd_rotation_gain_mean"] = statistics.fmean(m[f"rotation_{key[(k, wd)]}"] - m[f"rotation_{key[(k, 0.0)]}"]
                                                  for k in ks)
    m["adam_minus_sgd_cv"] = m["cv_adam"] - m[f"cv_{key[top]}"]
    m["sgd_minus_adam_rotation"] = m[f"rotation_{key[top]}"] - m["rotation_adam"]
    m["acc_sgd_top"] = m[f"acc_{key[top]}"]
    m["adam_layca_minus_adam_acc"] = m["acc_adam_layca"] - m["acc_adam"]
    m["untrained_acc_max"] = max(accuracy(model, data["x_test"], data["y_test"], chunk=1000, count_flops=False)
                                 for model in inits.values())

    seed = s["seeds"][0]
    shown = [top, (ks[-1], wd), "adam", "layca"]
    arrays = {"arms": np.array([arm[a] for a in shown]), "sgd_lrs": np.array([rate(k) for k in ks]),
              **{f"curve_{i}": np.array(history[f"{arm[a]}-seed{seed}"]["rotation"]) for i, a in enumerate(shown)}}
    info = {"test_images": len(data["x_test"]), "train_images": len(data["x_train"]), "curves_seed": seed}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
