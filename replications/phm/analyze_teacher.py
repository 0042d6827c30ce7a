"""The planted teachers (claims F1, F2, E1, E2, K2-K5, identities I1-I3): each student's test error relative to the
noise floor, the span of the learned multiplication rules A_i against the Hamilton matrices, and the exact
properties of the layer on the trained weights.

A ratio is test MSE / noise^2 on fresh inputs (1 = the teacher's own error). Students are rebuilt untrained from
their init seeds for the control. Per-student values are the worst seed in the claim's direction (max for "fits",
min for "does not fit").
"""
import statistics

import numpy as np
import torch

from shared.io.files import read_json
from shared.io.runtime import seed_everything
from shared.nn.phm import PHM, hamilton_matrices, phm_params, quaternion_linear
from shared.pipeline.run import derive_seed, load_models, start_run, write_metrics

from .common import STUDENTS, TEACHERS, span_sine, teacher_data
from .model import build


def phm_of(model):
    return model.map if isinstance(model.map, PHM) else None


def main():
    run = start_run("checkpoint", "history", "metrics", "arrays")
    t, a = run.params["teacher"], run.params["analysis"]
    models, specs, meta = load_models(run.args.checkpoint, build=lambda spec: build(spec).double())  # as trained
    floor = t["noise"] ** 2
    ratio, untrained, sine, sine_untrained = {}, {}, {}, {}
    test = {(k, s): teacher_data(k, t, s, "test") for k in TEACHERS for s in t["seeds"]}
    for name, model in models.items():
        spec = specs[name]
        x, y = test[spec["teacher"], spec["seed"]]
        seed_everything(derive_seed(spec["seed"], "init"))
        fresh = build(spec).double()
        with torch.no_grad():
            ratio[name] = float(((model(x) - y) ** 2).mean()) / floor
            untrained[name] = float(((fresh(x) - y) ** 2).mean()) / floor
        if spec["layer"] == "phm" and spec["n"] == 4:
            sine[name] = span_sine(model.map.a, hamilton_matrices())
            sine_untrained[name] = span_sine(fresh.map.a, hamilton_matrices())

    def of(kind, student, values=ratio):
        return [values[f"{kind}-{student}-seed{s}"] for s in t["seeds"]]

    m = {}
    for kind in TEACHERS:
        for student, _, _ in STUDENTS[kind]:
            key = f"{kind}_teacher_{student}"
            m[f"{key}_ratio_max"], m[f"{key}_ratio_min"] = max(of(kind, student)), min(of(kind, student))
            m[f"{key}_ratio_mean"] = statistics.fmean(of(kind, student))
    m["untrained_phm4_ratio_min"] = min(of("quaternion", "phm4", untrained))
    m["quaternion_teacher_phm4_span_sine_max"] = max(of("quaternion", "phm4", sine))
    m["dense_teacher_phm4_span_sine_min"] = min(of("dense", "phm4", sine))
    m["untrained_phm4_span_sine_min"] = min(of("quaternion", "phm4", sine_untrained))

    # identities on the trained weights, float64
    xi = test[TEACHERS[0], t["seeds"][0]][0][:a["identity_inputs"]]
    fwd, quat, count = [], [], []
    with torch.no_grad():
        for name, model in models.items():
            layer = phm_of(model)
            if layer is None:
                continue
            fwd.append(float((layer(xi) - xi @ layer.kron_matrix().T).abs().max()))
            learned = specs[name]["layer"] == "phm"
            want = phm_params(t["d"], t["d"], layer.n) if learned else t["d"] * t["d"] // 4
            count.append(abs(layer.n_params() - want))
            if not learned:
                quat.append(float((layer(xi) - quaternion_linear(xi, layer.s)).abs().max()))
    m["forward_vs_kron_max_abs"] = max(fwd)
    m["quaternion_vs_hamilton_product_max_abs"] = max(quat)
    m["param_count_mismatch"] = max(count)

    students = [f"{k}-{s}" for k in TEACHERS for s, _, _ in STUDENTS[k]]
    history = read_json(run.args.history)["history"]
    arrays = {"students": np.array(students),
              "ratio": np.array([[ratio[f"{st}-seed{s}"] for s in t["seeds"]] for st in students]),
              "curves": np.array([[history[f"{st}-seed{t['seeds'][0]}"]] for st in students])[:, 0] / floor}
    info = {"noise": t["noise"], "d": t["d"], "train": t["n_train"], "test": t["n_test"],
            "span_sine_per_seed": {n: v for n, v in sine.items()}}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
