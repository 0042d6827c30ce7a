"""A pretrained language model and web text from the Hugging Face hub, for the full tiers that read one
(`pip install -e .[lm]` adds transformers and datasets).

A smoke run (shared.io.smoke) never downloads: it takes the model from the local Hugging Face cache where it is
there, and otherwise a stand-in of the same architecture and sizes: the model at random initialisation from the
config recorded here, a byte-level tokenizer over the model's vocabulary, and the generated stories
(shared.data.stories) for the web text. Each stand-in is noted in the smoke log, so smoke.json names it; outside a
smoke run nothing here substitutes anything.
"""
import json
import os

import torch

from shared.io.smoke import LOG_VAR, cap

QWEN3_0_6B = {"vocab_size": 151_936, "hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 28,
              "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 40_960,
              "rms_norm_eps": 1e-6, "rope_theta": 1_000_000.0, "tie_word_embeddings": True, "hidden_act": "silu",
              "attention_bias": False}  # the hub's config.json of Qwen3-0.6B (the Base model's is the same)
STANDIN_CONFIGS = {"Qwen/Qwen3-0.6B": ("Qwen3Config", QWEN3_0_6B), "Qwen/Qwen3-0.6B-Base": ("Qwen3Config", QWEN3_0_6B)}


def transformers():
    try:
        import transformers as lib
    except ImportError as error:
        raise SystemExit(f"the full tier needs `pip install -e .[lm]` ({error})")
    return lib


def _cached(load, name, **kwargs):
    """load(name) from the hub; in a smoke run from the local cache only, None when it is not there."""
    if cap() is None:
        return load(name, **kwargs)
    try:
        return load(name, local_files_only=True, **kwargs)
    except OSError:
        return None


def note_standin(name, what):
    if os.environ.get(LOG_VAR):
        with open(os.environ[LOG_VAR], "a") as f:
            f.write(json.dumps({"stand_in": name, "what": "stand-in: " + what}) + "\n")


def causal_lm(name, dtype, device, random_init=False, seed=0):
    """(model, tokenizer): `name` from the hub (eager attention, eval mode, no gradients); random_init: the same
    architecture with freshly initialised weights, drawn after torch.manual_seed(seed)."""
    lib = transformers()
    config = _cached(lib.AutoConfig.from_pretrained, name)
    tokenizer = _cached(lib.AutoTokenizer.from_pretrained, name)
    if config is None:
        kind, values = STANDIN_CONFIGS[name]
        config = getattr(lib, kind)(**values)
        note_standin(name, f"{name}'s architecture ({kind}, recorded sizes) at random initialisation")
    if tokenizer is None:
        tokenizer = ByteTokenizer(config.vocab_size)
        note_standin(f"{name} tokenizer", f"UTF-8 bytes as token ids (of {config.vocab_size:,})")
    model = None if random_init else _cached(lib.AutoModelForCausalLM.from_pretrained, name,
                                             attn_implementation="eager")
    if model is None:
        if not random_init:
            note_standin(f"{name} weights", "random initialisation in place of the pretrained weights")
        torch.manual_seed(seed)
        model = lib.AutoModelForCausalLM.from_config(config, attn_implementation="eager")
    return model.to(device=device, dtype=dtype).eval().requires_grad_(False), tokenizer


class ByteTokenizer:
    """A smoke run's tokenizer: UTF-8 bytes + 1 as ids (0 pads), called as a transformers tokenizer is."""

    def __init__(self, vocab_size):
        self.vocab_size = vocab_size

    def __call__(self, texts, return_tensors="pt", truncation=False, max_length=None, padding=False):
        single = isinstance(texts, str)
        ids = [[b + 1 for b in text.encode()][:max_length if truncation else None] for text in ([texts] if single else
                                                                                               texts)]
        width = max(map(len, ids))
        mask = [[1] * len(row) + [0] * (width - len(row)) for row in ids]
        ids = [row + [0] * (width - len(row)) for row in ids]
        return Encoding(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask))


class Encoding(dict):
    """What a transformers tokenizer returns, as far as the papers read it: keys as attributes, `.to(device)`."""
    __getattr__ = dict.__getitem__

    def to(self, device):
        return Encoding({key: value.to(device) for key, value in self.items()})


def web_text(dataset, subset, skip_docs):
    """Documents {"text": ...} of a hub dataset, streamed, from the one after `skip_docs`; in a smoke run the
    generated stories, endlessly."""
    if cap() is None:
        try:
            from datasets import load_dataset
        except ImportError as error:
            raise SystemExit(f"the full tier needs `pip install -e .[lm]` ({error})")
        return load_dataset(dataset, subset, split="train", streaming=True).skip(skip_docs)
    from shared.data.stories import generate_stories

    note_standin(dataset, "the generated stories (shared.data.stories) as its documents")
    return ({"text": story} for seed in range(skip_docs, 10 ** 9) for story in generate_stories(64, seed))
