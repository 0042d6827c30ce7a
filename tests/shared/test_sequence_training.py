"""shared.train.sequences without a paper's model (the tests that train the bilinear_rnn paper's StateTracker
live in replications/bilinear_rnn/tests/test_sequence_training.py)."""
import pytest

from shared.train.schedules import cosine_lr
from shared.train.sequences import StepSchedule


def test_cosine_lr_schedule():
    s = StepSchedule(steps=100, lr=0.1, min_lr_ratio=0.01)
    assert cosine_lr(s.lr, 0, s.steps, s.min_lr_ratio) == pytest.approx(0.1)
    assert cosine_lr(s.lr, 50, s.steps, s.min_lr_ratio) == pytest.approx(0.001 + 0.099 * 0.5)
    assert cosine_lr(s.lr, 100, s.steps, s.min_lr_ratio) == pytest.approx(0.001)
