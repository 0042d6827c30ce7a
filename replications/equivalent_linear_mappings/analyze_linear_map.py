"""Quick tier: the detached Jacobian of the trained SwiGLU transformer (and of its initial weights, control C2) on
validation prompts of the synthetic stories; writes metrics/linear_map.json and analysis/linear_map.npz."""
import numpy as np
import torch

from shared.data.tokens import load_tokens
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import prompts
from .linear_map import analyse
from .model import Readout, build

NOT_RUN = {
    "steering_success": "not run: the paper's steering protocol (scale, layer, operator, evaluation) could not be read "
                        "(dossier section 7)",
    "families_recon_rel_err_max": "not run: needs the paper's pretrained Qwen 3 / Gemma 3 / Llama 3 models up to 14B "
                                  "(gated, and 14B in float64 is ~112 GB); the full tier runs Qwen3-0.6B only",
}


@torch.no_grad()
def final_norm_output(lm, tokens):
    """The final RMSNorm's output at the last position in the transformer's own forward (from token ids)."""
    seen = []
    handle = lm.norm.register_forward_hook(lambda module, inputs, output: seen.append(output))
    lm(tokens)
    handle.remove()
    return seen[-1][:, -1]


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    p = run.params  # {"prompts", "prompt_len", "prompt_offset"}
    models, _, meta = load_models(run.args.checkpoint, build)
    _, val_tokens, tokenizer = load_tokens(run.args.data)
    tokens = prompts(val_tokens, p["prompts"], p["prompt_len"], p["prompt_offset"])
    metrics, arrays = {}, {}
    for name in ("trained", "init"):
        lm = models[name].double()
        readout = Readout(lm)
        with torch.no_grad():
            emb = lm.embed(tokens)
        out, arr = analyse(readout, emb, final_norm_output(lm, tokens), range(readout.n_layer),
                           with_float32=name == "trained")
        if name == "trained":
            metrics.update(out)
            arrays.update({k: np.asarray(v) for k, v in arr.items()})
        else:
            metrics["init_stable_rank_fraction"] = out["stable_rank_fraction"]
            arrays["init_singular_values"] = np.asarray(arr["singular_values"])
            arrays["init_layer_match"] = np.asarray(arr["layer_match"])
    info = {"prompts": len(tokens), "prompt_len": tokens.shape[1], "d_model": models["trained"].embed.weight.shape[1],
            "vocab": tokenizer.vocab_size, "example_prompt": tokenizer.decode(tokens[0].tolist())}
    write_metrics(run.args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=run.args.arrays, skipped=NOT_RUN)
    print({k: round(v, 6) if isinstance(v, float) else v for k, v in metrics.items()})


if __name__ == "__main__":
    main()
