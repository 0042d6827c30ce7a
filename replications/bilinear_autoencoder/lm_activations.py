"""Full tier: a language model's residual stream as the activations to decompose (the paper: Qwen3-0.6B-Base, the
input of decoder layer 18, on FineWeb-Edu sample-10BT). Runs on the user's machine: it downloads the model and the
text through Hugging Face (`pip install -e .[lm]` adds transformers and datasets), keeps the non-padding tokens of
256-token contexts, and writes a training and a held-out split (later documents of the same stream) in float16.
"""
import numpy as np
import torch

from shared.data import write_safetensors
from shared.pipeline.run import start_run


def residual_stream(model_name, layer, tokens, context, skip_docs, device):
    """(tokens, d) float16 activations entering decoder layer `layer`, from the documents after `skip_docs`."""
    try:
        from datasets import load_dataset
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as error:
        raise SystemExit(f"the full tier's language-model activations need `pip install -e .[lm]` ({error})")
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    model = AutoModelForCausalLM.from_pretrained(model_name, torch_dtype=torch.bfloat16).to(device).eval()
    captured = []
    hook = model.model.layers[layer].register_forward_pre_hook(lambda module, args: captured.append(args[0]))
    stream = load_dataset("HuggingFaceFW/fineweb-edu", "sample-10BT", split="train", streaming=True).skip(skip_docs)
    out, kept, batch = [], 0, []
    with torch.no_grad():
        for doc in stream:
            batch.append(doc["text"])
            if len(batch) < 32:
                continue
            enc = tokenizer(batch, truncation=True, max_length=context, padding=True, return_tensors="pt").to(device)
            captured.clear()
            model(**enc)
            acts = captured[0][enc["attention_mask"].bool()].float().cpu()  # drop padding, as the paper's mask
            out.append(acts.half().numpy())
            kept, batch = kept + len(acts), []
            if kept >= tokens:
                break
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
