"""Random layers (float64): GPTQ vs Babai codes, Babai's bound without clipping, the clipped control, the column
orders, GPTQ vs RTN; and the white-input control (GPTQ's gain over RTN comes from correlated inputs)."""
import numpy as np
import torch

from shared.nn import quantization as Q
from shared.pipeline.run import start_run, write_metrics

from .common import random_layer, study_layer, summarise, white_layer


def main():
    run = start_run("metrics", "arrays")
    p = run.params
    r, q = p["random"], p["quant"]
    studies, arrays = [], {}
    for k in range(r["layers"]):
        w, x = random_layer(r, k)
        st = study_layer(w, x, q)
        studies.append(st)
        mid = st[q["bits"][len(q["bits"]) // 2]]["orders"]
        arrays[f"err_layer{k}"] = mid["natural"]["err"].numpy()
        arrays[f"bound_layer{k}"] = mid["natural"]["bound"].numpy()
        for kind in Q.ORDERS:
            arrays[f"order_{kind}_layer{k}"] = np.array([float(mid[kind]["bound"].mean()),
                                                         float(mid[kind]["err"].mean())])
    metrics = summarise(studies)
    ratios = []
    for k in range(r["layers"]):
        w, x = white_layer(r, k)
        h = Q.hessian(x, q["damp"])
        for bits in q["bits"]:
            s, zp, maxq = Q.minmax_grid(w, bits)
            ratios.append(float(Q.layer_error(w, Q.gptq(w, h, s, zp, maxq)[1], h).mean()
                                / Q.layer_error(w, Q.rtn(w, s, zp, maxq)[1], h).mean()))
    metrics["white_gptq_over_rtn_min"] = min(ratios)
    info = {"layers": r["layers"], "shape": [r["rows"], r["n"]], "calibration_samples": r["m"], "cond": r["cond"],
            "bits": q["bits"], "dtype": "float64", "orders": list(Q.ORDERS), "figure_bits": q["bits"][len(q["bits"]) // 2]}
    write_metrics(run.args.metrics, metrics, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    main()
