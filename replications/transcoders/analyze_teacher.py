"""The planted teacher: feature recovery (max cosine of learned directions to the true ones) and edge recovery
(AUROC of edge scores against the planted G != 0), for the trained transcoders and three controls measured here:
the same transcoders at their random initialisation, SAEs of the MLP outputs read through their weights alone, and
the same SAEs read through the teacher's own MLP2 Jacobian (an input-dependent estimate).

True feature i of MLP1 is matched to the learned feature whose decoder is closest to B_i, true feature j of MLP2 to
the learned feature whose decoder is closest to C_j. Edge scores (K2 x K):
  transcoder  |f_dec,i^(1) . f_enc,j^(2)|                  the input-invariant weight product (section 3)
  SAE weights |d_i^(SAE y1) . e_j^(SAE y2)|                what an SAE's weights alone offer across an MLP
  SAE + J     |mean_n z_i(n) e_j . J_MLP2(x2_n) d_i|        gradient x activation through the MLP (needs the MLP)
"""
import statistics

import numpy as np
import torch

from shared.nn.transcoder import Transcoder, fraction_of_variance_unexplained, sparsity_stats
from shared.pipeline.run import start_run, write_metrics

from .common import auroc, load_checkpoint, match, planted_teacher, teacher_sample


def untrained(spec):
    torch.manual_seed(spec["init_seed"])  # train_transcoder seeds torch, then builds: the same init
    return Transcoder(spec["d_in"], spec["d_out"], spec["n_features"], sae=spec["kind"] == "sae").double().requires_grad_(False)


def edge_scores(dec1, enc2, T):
    """|f_dec . f_enc| between the learned features matched to each true MLP1 / MLP2 feature: (K2, K)."""
    return (dec1 @ enc2.T).abs().T


def sae_jacobian_scores(sae1, sae2, i1, j2, T, data):
    """|mean over samples of z_i (e_j . C diag(1[pre2 > 0]) G B^T d_i)|: (K2, K)."""
    z1 = sae1.encode(data["y1"])[:, i1]                                    # (n, K) matched SAE1 activations
    mask = (data["h2"] > 0).double()                                       # (n, K2 true)
    e2c = sae2.W_enc[j2] @ T["C"]                                          # (K2, K2 true)
    md1 = T["G"] @ (T["B"].T @ sae1.W_dec[i1].T)                           # (K2 true, K)
    carried = mask.T @ z1 / len(z1)                                        # (K2 true, K)
    return (e2c @ (md1 * carried)).abs()


def main():
    run = start_run("checkpoint", "history", "metrics", "arrays")
    t = run.params["teacher"]
    models, specs, meta = load_checkpoint(run.args.checkpoint)
    rows = {}
    for seed in t["seeds"]:
        T = planted_teacher(t, seed)
        data = teacher_sample(T, t, t["eval_samples"], run.generator(seed, "eval"))
        trained = {arm: models[f"{arm}_s{seed}"].double() for arm in ("tc1", "tc2", "sae1", "sae2")}
        fresh = {arm: untrained(specs[f"{arm}_s{seed}"]) for arm in ("tc1", "tc2")}
        labels = T["G"] != 0
        read2 = T["G"] @ T["B"].T                                          # (K2, d): what MLP2's features read
        r = {}
        for tag, tc1, tc2 in (("trained", trained["tc1"], trained["tc2"]), ("untrained", fresh["tc1"], fresh["tc2"])):
            dec1, i1 = match(tc1.W_dec, T["B"])
            dec2, j2 = match(tc2.W_dec, T["C"])
            r[f"{tag}_dec1_maxcos"] = dec1.mean().item()
            r[f"{tag}_enc1_maxcos"] = match(tc1.W_enc, T["A"])[0].mean().item()
            r[f"{tag}_dec2_maxcos"] = dec2.mean().item()
            r[f"{tag}_enc2_maxcos"] = match(tc2.W_enc, read2.T)[0].mean().item()
            r[f"{tag}_edge_auroc"] = auroc(edge_scores(tc1.W_dec[i1], tc2.W_enc[j2], T), labels)
        sae1, sae2 = trained["sae1"], trained["sae2"]
        s_dec1, i1 = match(sae1.W_dec, T["B"])
        s_dec2, j2 = match(sae2.W_dec, T["C"])
        r["sae_dec1_maxcos"], r["sae_dec2_maxcos"] = s_dec1.mean().item(), s_dec2.mean().item()
        r["sae_weight_edge_auroc"] = auroc(edge_scores(sae1.W_dec[i1], sae2.W_enc[j2], T), labels)
        r["sae_jacobian_edge_auroc"] = auroc(sae_jacobian_scores(sae1, sae2, i1, j2, T, data), labels)
        for arm, (src, dst) in {"tc1": ("x1", "y1"), "tc2": ("x2", "y2"), "sae1": ("y1", "y1"),
                                "sae2": ("y2", "y2")}.items():
            m = trained[arm]
            r[f"{arm}_fvu"] = fraction_of_variance_unexplained(m(data[src]), data[dst])
            r[f"{arm}_l0"] = sparsity_stats(m, data[src])["l0"]
        r["oracle_edge_auroc"] = auroc((T["G"] @ (T["B"].T @ T["B"])).abs(), labels)  # the true weights' products
        r["true_l0_mlp1"] = (data["h1"] > 0).double().sum(1).mean().item()
        r["true_l0_mlp2"] = (data["h2"] > 0).double().sum(1).mean().item()
        rows[seed] = r
        print(f"seed {seed}: " + ", ".join(f"{k} {v:.3f}" for k, v in r.items()), flush=True)

    keys = list(rows[t["seeds"][0]])
    metrics = {}
    for k in keys:
        values = [rows[s][k] for s in t["seeds"]]
        metrics[f"{k}_mean"] = statistics.fmean(values)
        metrics[f"{k}_min"], metrics[f"{k}_max"] = min(values), max(values)
    metrics["edge_auroc_gap_to_sae_jacobian_min"] = min(
        rows[s]["trained_edge_auroc"] - rows[s]["sae_jacobian_edge_auroc"] for s in t["seeds"])
    methods = ["trained_edge_auroc", "untrained_edge_auroc", "sae_weight_edge_auroc", "sae_jacobian_edge_auroc"]
    arrays = {"methods": np.array(["transcoder", "untrained", "SAE weights", "SAE + Jacobian"]),
              "auroc": np.array([[rows[s][m] for s in t["seeds"]] for m in methods]),
              "recovery_labels": np.array(["tc dec1", "tc enc1", "tc dec2", "tc enc2", "untrained dec1",
                                           "SAE dec1", "SAE dec2"]),
              "recovery": np.array([[rows[s][k] for s in t["seeds"]] for k in (
                  "trained_dec1_maxcos", "trained_enc1_maxcos", "trained_dec2_maxcos", "trained_enc2_maxcos",
                  "untrained_dec1_maxcos", "sae_dec1_maxcos", "sae_dec2_maxcos")])}
    info = {"per_seed": rows, "edges": int((planted_teacher(t, t["seeds"][0])["G"] != 0).sum()),
            "pairs": t["features"] * t["features_out"]}
    write_metrics(run.args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)


if __name__ == "__main__":
    main()
