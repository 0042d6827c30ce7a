"""Test metric against measured forward+backward time per example, per task and family, with Pareto fronts
(pareto.py)."""
from .pareto import draw

draw("fwdbwd_us")
