"""The trained MLP's linear layers, each with the inputs it sees in the float model as calibration data X (float64):
the same per-layer study as the random layers, and the test accuracy with every layer quantized by RTN, GPTQ
(natural order, the original) and Babai (nearest plane on the Hessian lattice, clipped codes)."""
import numpy as np
import torch

from shared.nn import quantization as Q
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import load_data, study_layer, summarise


@torch.no_grad()
def accuracy(model, data):
    x, y = data["x_test"].double(), data["y_test"]
    return float((model(x).argmax(1) == y).double().mean())


@torch.no_grad()
def quantized_copy(model, xs, bits, method, damp):
    """The model with every Linear weight replaced by its quantization (biases kept in float)."""
    out = type(model)(model.layers[0].in_features, [m.out_features for m in model.layers[:-1]],
                      model.layers[-1].out_features).double()
    out.load_state_dict(model.state_dict())
    for layer, x in zip(out.layers, xs):
        w = layer.weight.double()
        s, zp, maxq = Q.minmax_grid(w, bits)
        h = Q.hessian(x, damp)
        if method == "rtn":
            q = Q.rtn(w, s, zp, maxq)[1]
        elif method == "gptq":
            q = Q.gptq(w, h, s, zp, maxq)[1]
        else:  # babai on the natural basis: GPTQ's reverse order
            q = Q.from_codes(Q.babai_layer(w, h, s, zp, maxq, clip=True), s, zp)
        layer.weight.copy_(q)
    return out


def main():
    run = start_run("checkpoint", "history", "data", "metrics", "arrays")
    p = run.params
    q = p["quant"]
    models, _, meta = load_models(run.args.checkpoint)
    data = load_data(run.args.data)
    studies, arrays, metrics, info = [], {}, {}, {"layers": {}}
    accs = {}
    for name, model in models.items():
        model = model.double().eval()
        xs = model.layer_inputs(data["x_train"][: q["calibration"]].double())
        for k, (layer, x) in enumerate(zip(model.layers, xs)):
            st = study_layer(layer.weight.detach().double(), x, q, babai_orders=("reverse",))
            studies.append(st)
            info["layers"][f"{name}/fc{k + 1}"] = list(layer.weight.shape)
            mid = st[q["bits"][len(q["bits"]) // 2]]["orders"]
            arrays[f"err_{name}_fc{k + 1}"] = mid["natural"]["err"].numpy()
            arrays[f"bound_{name}_fc{k + 1}"] = mid["natural"]["bound"].numpy()
            for kind in Q.ORDERS:
                arrays[f"order_{kind}_{name}_fc{k + 1}"] = np.array([float(mid[kind]["bound"].mean()),
                                                                     float(mid[kind]["err"].mean())])
        accs.setdefault("float", []).append(accuracy(model, data))
        for bits in q["bits"]:
            for method in ("rtn", "gptq", "babai"):
                accs.setdefault(f"{method}_{bits}", []).append(accuracy(
                    quantized_copy(model, xs, bits, method, q["damp"]), data))
    metrics.update(summarise(studies))
    for key, values in accs.items():
        metrics[f"acc_{key}"] = sum(values) / len(values)
    for bits in q["bits"]:
        metrics[f"acc_gain_gptq_over_rtn_{bits}"] = min(g - r for g, r in zip(accs[f"gptq_{bits}"],
                                                                               accs[f"rtn_{bits}"]))
    info.update(bits=q["bits"], calibration_samples=q["calibration"], dtype="float64", orders=list(Q.ORDERS),
                figure_bits=q["bits"][len(q["bits"]) // 2])
    write_metrics(run.args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    main()
