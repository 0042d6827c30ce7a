"""What this paper's scripts share: the image data, the random layers, and the per-layer quantization experiment
(equivalence, bound, orders, RTN) used on random and trained layers alike."""
import itertools

import torch

from shared.data import images
from shared.nn import quantization as Q
from shared.pipeline.run import derive_seed


def load_data(path):
    """Flat images in [0, 1], centred by the training mean."""
    return images.load_images(path, layout="flat", normalise="centre")


def random_layer(r, seed):
    """A random layer: W (rows, n) ~ N(0, 1/n) and inputs X (m, n) = Z C with eigenvalues of the input covariance
    spread log-uniformly over `cond` (so H has condition number about `cond`), in a random basis; float64."""
    gen = torch.Generator().manual_seed(derive_seed(seed, "random-layer"))
    n = r["n"]
    w = torch.randn(r["rows"], n, generator=gen, dtype=torch.float64) / n ** 0.5
    basis, _ = torch.linalg.qr(torch.randn(n, n, generator=gen, dtype=torch.float64))
    spread = torch.logspace(0, -0.5 * torch.log10(torch.tensor(float(r["cond"]))).item(), n, dtype=torch.float64)
    x = torch.randn(r["m"], n, generator=gen, dtype=torch.float64) * spread @ basis.T
    return w, x


def white_layer(r, seed):
    """The control: the same W with white inputs (H close to I: GPTQ's error feedback has little to exploit)."""
    gen = torch.Generator().manual_seed(derive_seed(seed, "white-layer"))
    w, _ = random_layer(r, seed)
    return w, torch.randn(r["m"], r["n"], generator=gen, dtype=torch.float64)


def concordance(bounds, errors):
    """Fraction of pairs of orders whose mean bounds and mean errors are ordered alike."""
    pairs = list(itertools.combinations(range(len(bounds)), 2))
    return sum((bounds[i] - bounds[j]) * (errors[i] - errors[j]) > 0 for i, j in pairs) / len(pairs)


def study_layer(w, x, q, babai_orders=Q.ORDERS):
    """Every per-layer measurement of one layer (w (rows, n), calibration inputs x (m, n), float64) at each bit width
    of q["bits"]. Returns {bits: {...}}: code mismatches GPTQ vs Babai (with and without clipping), lazy vs
    reference GPTQ, the bound's hold rate and error/bound ratio per order, RTN and GPTQ errors, and the clipped control."""
    h = Q.hessian(x, q["damp"])
    orders = {kind: Q.column_order(h, kind) for kind in Q.ORDERS}
    out = {}
    for bits in q["bits"]:
        s, zp, maxq = Q.minmax_grid(w, bits)
        row = {"codes": w.numel(), "orders": {}}
        mism = lazy = 0
        for kind, order in orders.items():
            z_free, q_free = Q.gptq(w, h, s, zp, maxq, order=order, clip=False)
            z_clip, q_clip = Q.gptq(w, h, s, zp, maxq, order=order, clip=True)
            if kind in babai_orders:  # GPTQ in order pi is Babai on the basis in the reverse of pi
                for clip, z in ((False, z_free), (True, z_clip)):
                    zb = Q.babai_layer(w, h, s, zp, maxq, order=order.flip(0), clip=clip)
                    mism += int((zb != z).sum())
            if kind == "natural":
                lazy += int((Q.gptq(w, h, s, zp, maxq, order=order, clip=True, block=q["block"])[0] != z_clip).sum())
            err, bound = Q.layer_error(w, q_free, h), Q.babai_bound(h, s, order)
            row["orders"][kind] = {"err": err, "bound": bound, "err_clip": Q.layer_error(w, q_clip, h),
                                   "hold": float((err <= bound).double().mean()),
                                   "ratio": float((err / bound).mean())}
        row["mismatch"] = mism
        row["babai_orders"] = len(babai_orders)
        row["lazy_mismatch"] = lazy
        z_rtn, q_rtn = Q.rtn(w, s, zp, maxq, clip=True)
        row["idempotent"] = float((Q.rtn(q_rtn, s, zp, maxq, clip=True)[1] - q_rtn).abs().max())
        row["rtn"] = float(Q.layer_error(w, q_rtn, h).mean())
        row["gptq"] = float(row["orders"]["natural"]["err_clip"].mean())
        # control: a narrowed grid with clipping; the bound is computed for the narrowed scale
        s2, zp2, _ = Q.minmax_grid(w, bits, shrink=q["clip_shrink"])
        _, q_narrow = Q.gptq(w, h, s2, zp2, maxq, clip=True)
        row["narrow_violate"] = float((Q.layer_error(w, q_narrow, h) > Q.babai_bound(h, s2)).double().mean())
        means = [(float(o["bound"].mean()), float(o["err"].mean())) for o in row["orders"].values()]
        row["concordance"] = concordance([b for b, _ in means], [e for _, e in means])
        row["argmin_agree"] = min(range(len(means)), key=lambda i: means[i][0]) == \
            min(range(len(means)), key=lambda i: means[i][1])
        row["bound_spread"] = max(b for b, _ in means) / min(b for b, _ in means)
        out[bits] = row
    return out


def summarise(studies):
    """Metrics over a list of study_layer results (layers x bits)."""
    rows = [row for st in studies for row in st.values()]
    orders = [o for row in rows for o in row["orders"].values()]
    return {
        "equiv_mismatch_frac": sum(r["mismatch"] for r in rows) / sum(2 * r["codes"] * r["babai_orders"] for r in rows),
        "lazy_mismatch_frac": sum(r["lazy_mismatch"] for r in rows) / sum(r["codes"] for r in rows),
        "idempotent_max_diff": max(r["idempotent"] for r in rows),
        "bound_hold_frac": min(o["hold"] for o in orders),
        "err_over_bound_mean": sum(o["ratio"] for o in orders) / len(orders),
        "gptq_over_rtn_max": max(r["gptq"] / r["rtn"] for r in rows),
        "gptq_over_rtn_mean": sum(r["gptq"] / r["rtn"] for r in rows) / len(rows),
        "narrow_violate_frac_min": min(r["narrow_violate"] for r in rows),
        "order_concordance": sum(r["concordance"] for r in rows) / len(rows),
        "order_argmin_agree_frac": sum(r["argmin_agree"] for r in rows) / len(rows),
        "bound_spread_max": max(r["bound_spread"] for r in rows),
    }
