"""Barrier over training (Fig. 3, G5): at each snapshot epoch (0 = init) and the final epoch of one width, the
train/test loss barrier of naive interpolation and after weight matching, between the two seeds' models at that
epoch. The claim reads the final WM train barrier minus the largest WM train barrier at an earlier snapshot."""
import numpy as np

from shared.nn.interpolation import copy_state
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import SPLITS, curves, lambdas, load_data, match, summarise


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    p = run.params
    data = load_data(run.args.data)
    lams = lambdas(p["lambdas"])
    models, specs, meta = load_models(run.args.checkpoint)
    final_epoch = meta["final"][next(iter(meta["final"]))]["epoch"]
    by_epoch = {}
    for name, s in specs.items():
        by_epoch.setdefault(final_epoch if s.get("epoch") is None else s["epoch"], []).append((s["seed"], name))
    m, rows = {}, []
    for epoch in sorted(by_epoch):
        (_, name_a), (_, name_b) = sorted(by_epoch[epoch])[:2]
        a, b = models[name_a], models[name_b]
        spec, state_a, state_b = a.spec(), copy_state(a), copy_state(b)
        row = [epoch]
        for method in ("naive", "wm"):
            matched, _ = match(method, a, spec, state_a, state_b, data, p)
            s = summarise(curves(a, state_a, matched, lams, data), lams, f"{method}_epoch{epoch}")
            m.update(s)
            row += [s[f"{method}_epoch{epoch}_{split}_barrier"] for split in SPLITS]
        rows.append(row)
    epochs = sorted(by_epoch)
    earlier = [m[f"wm_epoch{e}_train_barrier"] for e in epochs[:-1]]
    m["wm_final_train_barrier"] = m[f"wm_epoch{final_epoch}_train_barrier"]
    m["wm_earlier_max_train_barrier"] = max(earlier)
    m["wm_final_minus_earlier_max"] = m["wm_final_train_barrier"] - max(earlier)
    m["wm_final_minus_epoch1"] = (m["wm_final_train_barrier"] - m["wm_epoch1_train_barrier"]
                                  if 1 in by_epoch and final_epoch != 1 else float("nan"))
    arrays = {"rows": np.array(rows, dtype=float)}  # epoch, naive train, naive test, wm train, wm test
    info = {"width": p["width"], "epochs": epochs, "final_epoch": final_epoch}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
