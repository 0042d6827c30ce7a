"""Test metric against block parameters, per task and family, with Pareto fronts (pareto.py)."""
from .pareto import draw

draw("params")
