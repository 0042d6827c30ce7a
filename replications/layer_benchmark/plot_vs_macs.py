"""Test metric against block multiply-adds, per task and family, with Pareto fronts (pareto.py)."""
from .pareto import draw

draw("macs")
