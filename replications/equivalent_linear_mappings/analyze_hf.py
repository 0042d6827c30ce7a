"""Full tier: the detached Jacobian of Qwen3-0.6B (float64) on the configured prompts, one prompt at a time (they
differ in length), and of the same architecture at random initialisation (control C2); writes the same metrics
as the quick tier's analyze_linear_map."""
import statistics

import numpy as np
import torch

from shared.data.hub import causal_lm
from shared.io.smoke import capped
from shared.pipeline.run import start_run, write_metrics

from .hf_model import QwenReadout
from .linear_map import analyse

NOT_RUN = {
    "steering_success": "not run: the paper's steering protocol (scale, layer, operator, evaluation) could not be read "
                        "(dossier section 7)",
    "families_recon_rel_err_max": "not run: Llama 3 and Gemma 3 are gated and Qwen 3 14B in float64 needs ~112 GB; "
                                  "this tier runs Qwen3-0.6B only (claim I1)",
}
INIT_PROMPTS = 4  # the random-init control needs only the spectrum of a few prompts


@torch.no_grad()
def embed_and_reference(model, tokenizer, text, device):
    """Input embeddings (1, T, d) of a prompt and the final norm's output at its last position in transformers'
    own forward (read by a hook on model.model.norm: the LM head's input)."""
    ids = tokenizer(text, return_tensors="pt").input_ids.to(device)
    seen = []
    handle = model.model.norm.register_forward_hook(lambda module, inputs, output: seen.append(output))
    model(input_ids=ids)
    handle.remove()
    return model.model.embed_tokens(ids), seen[-1][:, -1]


def run_prompts(model, tokenizer, prompts, layers, device, with_float32=True):
    readout = QwenReadout(model)
    rows = []
    for text in capped(prompts, len(prompts), "prompts", count_flops=False):  # smoke: first prompts and the last
        emb, reference = embed_and_reference(model, tokenizer, text, device)
        rows.append(analyse(readout, emb, reference, layers, with_float32=with_float32))
        print(f"{text!r}: {rows[-1][0]}", flush=True)
    return rows


def combine(rows):
    """Per-prompt results -> the tier's metrics: worst error, median rank fractions, mean decode rates."""
    metrics = {key: max(r[0][key] for r in rows) for key in ("recon_rel_err_f64", "recon_rel_err_f32", "bias_rel",
                                                              "readout_rel_err")}
    metrics["ordinary_recon_rel_err_min"] = min(r[0]["ordinary_recon_rel_err_min"] for r in rows)
    for key in ("stable_rank_fraction", "rank90_fraction"):
        metrics[key] = statistics.median(r[0][key] for r in rows)
    for key in ("decode_top1_match", "decode_top5_overlap"):
        metrics[key] = statistics.fmean(r[0][key] for r in rows)
    layer_match = np.mean([r[1]["layer_match"] for r in rows], axis=0)
    layer_rank = np.median([r[1]["layer_stable_rank"] for r in rows], axis=0)
    metrics["layer_match_gain"] = float(layer_match[-1] - layer_match[0])
    metrics["layer_stable_rank_fraction_max"] = float(layer_rank.max())
    arrays = {"singular_values": np.median([r[1]["singular_values"] for r in rows], axis=0),
              "layer_match": layer_match, "layer_stable_rank": layer_rank, "layers": np.asarray(rows[0][1]["layers"]),
              **{k: np.concatenate([r[1][k] for r in rows]) for k in ("y", "detached", "ordinary")}}
    return metrics, arrays


def main():
    run = start_run("metrics", "arrays")
    p = run.params  # {"model", "dtype", "layers", "prompts", "device"}
    dtype, device = getattr(torch, p["dtype"]), run.device
    model, tokenizer = causal_lm(p["model"], dtype, device)
    metrics, arrays = combine(run_prompts(model, tokenizer, p["prompts"], p["layers"], device))
    del model
    init, _ = causal_lm(p["model"], dtype, device, random_init=True, seed=run.seed(0, "init"))
    init_rows = run_prompts(init, tokenizer, p["prompts"][:INIT_PROMPTS], p["layers"][-1:], device, with_float32=False)
    metrics["init_stable_rank_fraction"] = statistics.median(r[0]["stable_rank_fraction"] for r in init_rows)
    arrays["init_singular_values"] = np.median([r[1]["singular_values"] for r in init_rows], axis=0)
    info = {"model": p["model"], "dtype": p["dtype"], "prompts": len(p["prompts"]), "layers": p["layers"],
            "d_model": init.config.hidden_size}
    write_metrics(run.args.metrics, metrics, info=info, arrays=arrays, arrays_path=run.args.arrays, skipped=NOT_RUN)
    print(metrics)


if __name__ == "__main__":
    main()
