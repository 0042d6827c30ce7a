"""Full tier: a language model's residual stream as the activations to decompose (the paper: Qwen3-0.6B-Base, the
input of decoder layer 18, on FineWeb-Edu sample-10BT). Runs on the user's machine: it downloads the model and the
text through Hugging Face (`pip install -e .[lm]` adds transformers and datasets), keeps the non-padding tokens of
256-token contexts, and writes a training and a held-out split (later documents of the same stream) in float16.
"""
import numpy as np
import torch

from shared.data import write_safetensors
from shared.data.hub import causal_lm, web_text
from shared.io.smoke import cap, capped
from shared.pipeline.run import start_run

BATCH = 32  # documents a forward pass


def residual_stream(model_name, layer, tokens, context, skip_docs, device):
    """(tokens, d) float16 activations entering decoder layer `layer`, from the documents after `skip_docs`."""
    model, tokenizer = causal_lm(model_name, torch.bfloat16, device)
    captured = []
    hook = model.model.layers[layer].register_forward_pre_hook(lambda module, args: captured.append(args[0]))
    docs = iter(web_text("HuggingFaceFW/fineweb-edu", "sample-10BT", skip_docs))

    def batch():
        enc = tokenizer([next(docs)["text"] for _ in range(BATCH)], truncation=True, max_length=context,
                        padding=True, return_tensors="pt").to(device)
        captured.clear()
        model(**enc)
        return captured[0][enc["attention_mask"].bool()].float().cpu().half().numpy()  # drop padding, as the paper

    least = -(-tokens // (BATCH * context))  # batches at least: one keeps at most BATCH * context tokens
    with torch.no_grad():
        out = [batch() for _ in capped(range(least), least, "lm_activations")]
        while cap() is None and sum(map(len, out)) < tokens:  # short documents keep fewer tokens: more batches
            out.append(batch())
    hook.remove()
    return np.concatenate(out)[:tokens]


def main():
    run = start_run("out")
    p = run.params  # {"name", "spec", "device"}
    spec, device = p["spec"], run.device
    train = residual_stream(spec["model"], spec["layer"], spec["tokens"], spec["context"], 0, device)
    test = residual_stream(spec["model"], spec["layer"], spec["test_tokens"], spec["context"], 100_000, device)
    write_safetensors({"x_train": train, "x_test": test}, run.args.out,
                      {"name": p["name"], "model": spec["model"], "layer": str(spec["layer"])})


if __name__ == "__main__":
    main()
