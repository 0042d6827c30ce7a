"""What this paper's quick-tier scripts share: the prompts cut from the stories' token streams (read by shared.data.tokens.load_tokens)."""
from shared.data.stories import BOS
from shared.train.language_model import document_starts, windows_at


def prompts(val_tokens, n, length, offset):
    """n validation prompts of `length` tokens, each starting `offset` tokens into a different story (past the
    [BOS] and the intro, so that the prediction depends on the story so far)."""
    starts = document_starts(val_tokens, n, length + offset, BOS) + offset
    return windows_at(val_tokens, starts, length)
