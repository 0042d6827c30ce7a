"""What this paper's scripts share: the Z_M table, the members of each experiment, the Li2 statistics of a stack
of networks, and the trained checkpoints."""
import math

import numpy as np
import torch

from shared.data.groups import all_pairs, cyclic, real_components, split_pairs
from shared.nn import feature_stages as fs
from shared.nn.group_analysis import unit_alignment
from shared.nn.multiplicative import centred_targets
from shared.pipeline.run import derive_seed


def critical_fraction(order, c):
    """The official code's critical training fraction p* = c ln M / M (use_critical_ratio)."""
    return c * math.log(order) / order


def table(order):
    """Every pair (a, b) of Z_M (row-major) and its label a + b mod M."""
    group = cyclic(order)
    a, b = all_pairs(order)
    return group, a, b, torch.as_tensor(group.table[a.numpy(), b.numpy()], dtype=torch.long)


def split(order, fraction, seed, stream):
    """The training mask of one member: its own named seed stream, so that the split is independent of the init."""
    return split_pairs(order, min(1.0, fraction), derive_seed(seed, stream) % 2**62)


def members(section, experiment, c):
    """The members of one experiment, each {eta, seed, fraction, ...}; width: one list per width."""
    if experiment == "grok":
        return [{"eta": float(e), "seed": s, "fraction": section["fraction"]}
                for e in section["etas"] for s in section["seeds"]]
    if experiment == "width":
        return [{"eta": float(section["eta"]), "seed": s, "fraction": section["fraction"]} for s in section["seeds"]]
    order = int(experiment.removeprefix("scaling"))
    p_star = critical_fraction(order, c)
    return [{"eta": float(section["eta"]), "seed": s, "multiplier": float(mult), "fraction": min(1.0, mult * p_star),
             "p_star": p_star} for mult in section["multipliers"] for s in section["seeds"]]


def widths(section):
    """The widths of the width experiment: round(ratio * n) for n the number of training pairs."""
    n = round(section["fraction"] * section["order"] ** 2)
    return n, [max(1, round(r * n)) for r in section["width_over_n"]]


def feature_stats(state, components, purity, norm_share):
    """Fourier features of one member (Q2): among the fewest units holding `norm_share` of sum_k norm_k^2
    (norm_k = ||u_k|| ||v_k|| ||out_k||), the fraction with purity >= `purity` on one non-trivial frequency pair
    whose u, v and out all peak on that pair; also how many distinct frequencies those pure units cover."""
    al = unit_alignment({k: v.cpu() for k, v in state.items()}, components)
    order = np.argsort(-al["norm"], kind="stable")
    energy = al["norm"][order] ** 2
    cumulative = np.cumsum(energy) / max(energy.sum(), 1e-300)
    top = order[: int(np.searchsorted(cumulative, norm_share) + 1)]
    pure = (al["purity"][top] >= purity) & al["same_component"][top]
    return {"pure_frac": float(pure.mean()), "top_units": len(top),
            "frequencies": len(set(al["component"][top][pure].tolist())),
            "purity_mean": float(al["purity"][top].mean())}


def stage_recorder(a, b, labels, masks, etas, components, p, stage_every, top_pairs):
    """on_eval for train_full_batch: per member, Stage I's ||G_F|| / ||Y|| at the ridge-optimal top layer
    (feature_stages.backprop_signal) and at the network's own V, on the training pairs; every `stage_every` steps
    also Stage II (feature_stats) and Stage III (repulsion_agreement, gram_distance)."""
    n_out = int(labels.max()) + 1

    def on_eval(step, model):
        rows = {k: [] for k in ("gf_ridge", "gf_actual", "pure_frac", "frequencies", "purity_mean", "repulsion",
                                "gram_distance")}
        with torch.no_grad():
            hidden = model.hidden(a, b)
            for i, eta in enumerate(etas):
                f = hidden[i][masks[i]]
                y = centred_targets(labels[masks[i].cpu()], n_out).to(f.dtype).to(f.device)
                rows["gf_ridge"].append(fs.backprop_signal(f.cpu(), y.cpu(), eta)[1])
                logits = f @ model.out[i]
                residual = y - (logits - logits.mean(-1, keepdim=True))
                rows["gf_actual"].append(((residual @ model.out[i].T).norm() / y.norm()).item())
                if stage_every and step % stage_every == 0:
                    s = feature_stats(model.member_state(i), components, p["purity"], p["norm_share"])
                    for k in ("pure_frac", "frequencies", "purity_mean"):
                        rows[k].append(float(s[k]))
                    rows["repulsion"].append(fs.repulsion_agreement(f.cpu(), eta, top_pairs))
                    rows["gram_distance"].append(fs.gram_distance(f.cpu()))
                else:
                    for k in ("pure_frac", "frequencies", "purity_mean", "repulsion", "gram_distance"):
                        rows[k].append(float("nan"))
        return {k: torch.tensor(v, dtype=torch.float64) for k, v in rows.items()}

    return on_eval


def components_of(order):
    return real_components(cyclic(order))

