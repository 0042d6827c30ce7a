"""shared.data.tokens.load_tokens on a real prepared text file (write_safetensors): int64 streams and the tokenizer."""
import numpy as np
import torch

from shared.data import write_safetensors
from shared.data.stories import BOS, EOS, WordTokenizer, encode_stories
from shared.data.tokens import load_tokens


def test_load_tokens_reads_both_streams_and_the_tokenizer(tmp_path):
    tokenizer = WordTokenizer.fit(["tom was happy .", "the cake was not good ."], vocab_size=20)
    train, val = encode_stories(["tom was happy ."], tokenizer), encode_stories(["the cake was good ."], tokenizer)
    path = tmp_path / "stories.safetensors"
    write_safetensors({"train_tokens": train, "val_tokens": val}, path, {"vocab": tokenizer.to_json()})
    train_tokens, val_tokens, loaded = load_tokens(path)
    assert train_tokens.dtype == val_tokens.dtype == torch.int64
    assert torch.equal(train_tokens, torch.from_numpy(train.astype(np.int64)))
    assert val_tokens[0] == BOS and val_tokens[-1] == EOS
    assert loaded.vocab == tokenizer.vocab and loaded.decode(val_tokens.tolist()) == tokenizer.decode(val.tolist())
