"""SGD vs Adam on every setting (claims A1, A3-A6), from the training histories.

- loss ratio: SGD's final test loss over Adam's, per seed (min and geometric mean over seeds);
- R_med ratio: SGD's over Adam's at every recorded step after 0, averaged (geometric mean) over seeds and steps;
- smoothness: Pearson r of log ||grad L(theta_t)|| and log directional smoothness along Adam's updates, per seed
  (points with a non-positive smoothness are dropped and counted), mean over seeds.
"""
import numpy as np

from shared.io.files import read_json
from shared.pipeline.run import start_run, write_metrics


def gmean(values):
    return float(np.exp(np.mean(np.log(values))))


def main():
    run = start_run("metrics", "arrays", many=("histories",))
    args = run.args
    metrics, arrays, info = {}, {}, {"dropped_nonpositive_smoothness": 0}
    meta = None
    for path in args.histories:
        doc = read_json(path)
        meta = meta or doc
        name, hist = doc["experiment"], doc["history"]
        seeds = sorted({r["seed"] for r in doc["runs"]})
        ratios = [hist[f"sgd_seed{s}"]["test_loss"][-1] / hist[f"adam_seed{s}"]["test_loss"][-1] for s in seeds]
        metrics[f"loss_ratio_{name}_min"] = min(ratios)
        metrics[f"loss_ratio_{name}"] = gmean(ratios)
        arrays[f"{name}__step"] = np.array(hist[f"sgd_seed{seeds[0]}"]["step"])
        for opt in ("sgd", "adam"):
            arrays[f"{name}__{opt}_loss"] = np.array([hist[f"{opt}_seed{s}"]["test_loss"] for s in seeds])
        if hist[f"sgd_seed{seeds[0]}"]["rmed"]:
            steps = np.array(hist[f"sgd_seed{seeds[0]}"]["rmed_step"])
            sgd = np.array([hist[f"sgd_seed{s}"]["rmed"] for s in seeds])
            adam = np.array([hist[f"adam_seed{s}"]["rmed"] for s in seeds])
            arrays[f"{name}__rmed_step"], arrays[f"{name}__sgd_rmed"], arrays[f"{name}__adam_rmed"] = steps, sgd, adam
            later = steps > 0
            per_step = np.exp(np.log(sgd[:, later] / adam[:, later]).mean(0))
            metrics[f"rmed_ratio_{name}"] = gmean(per_step)
            metrics[f"rmed_ratio_{name}_steps_above_one"] = int((per_step > 1).sum())
            metrics[f"rmed_ratio_{name}_steps"] = int(later.sum())
            for st, r in zip(steps[later], per_step):
                metrics[f"rmed_ratio_{name}_t{int(st)}"] = float(r)
            rs, gn_all, sm_all = [], [], []
            for s in seeds:
                h = hist[f"adam_seed{s}"]
                g, sm = np.array(h["grad_norm"]), np.array(h["smoothness"])
                keep = sm > 0
                info["dropped_nonpositive_smoothness"] += int((~keep).sum())
                rs.append(float(np.corrcoef(np.log(g[keep]), np.log(sm[keep]))[0, 1]))
                gn_all.append(g[keep]), sm_all.append(sm[keep])
            metrics[f"smooth_corr_{name}"] = float(np.mean(rs))
            metrics[f"smooth_corr_{name}_min"] = float(np.min(rs))
            arrays[f"{name}__grad_norm"], arrays[f"{name}__smoothness"] = np.concatenate(gn_all), np.concatenate(sm_all)
    m = metrics
    m["tail_gamma_over_normal"] = m["loss_ratio_gamma"] / m["loss_ratio_normal"]
    m["tail_normal_over_sphere"] = m["loss_ratio_normal"] / m["loss_ratio_sphere"]
    m["depth_l3_over_l1"] = m["loss_ratio_normal"] / m["loss_ratio_normal_l1"]
    meta_runs = {"runs": meta["runs"], "wall_seconds": meta["wall_seconds"], "experiment": "all settings",
                 "device": meta["device"], "provenance": meta.get("provenance"), "code": meta.get("code", {})}
    write_metrics(args.metrics, metrics, meta_runs, info=info, arrays=arrays, arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
