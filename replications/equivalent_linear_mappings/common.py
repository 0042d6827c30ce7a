"""What this paper's quick-tier scripts share: the token streams of the stories and the prompts cut from them."""
from shared.data.stories import BOS
from shared.data.tokens import load_tokens as load_tokens  # the paper's scripts read the stories through here
from shared.train.language_model import document_starts, windows_at


def prompts(val_tokens, n, length, offset):
    """n validation prompts of `length` tokens, each starting `offset` tokens into a different story (past the
    [BOS] and the intro, so that the prediction depends on the story so far)."""
    starts = document_starts(val_tokens, n, length + offset, BOS) + offset
    return windows_at(val_tokens, starts, length)
