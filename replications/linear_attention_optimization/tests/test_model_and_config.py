"""The model's exact one-step-GD identity and a tiny training run (seconds)."""
import json
import subprocess
import sys

import torch


from replications.linear_attention_optimization.common import loss_fn, sampler
from replications.linear_attention_optimization.model import build

PAPER = "linear_attention_optimization"


def test_parameter_count_and_one_step_gd():
    torch.manual_seed(0)
    assert sum(p.numel() for p in build({"d": 5, "layers": 3, "init_std": 0.05}).parameters()) == 150
    model = build({"d": 5, "layers": 1, "init_std": 0.05}).double()
    with torch.no_grad():
        model.layers[0].key_query.copy_(-0.3 * torch.eye(5, dtype=torch.float64))
    z, y = sampler(5, 20, "normal", dtype=torch.float64)(16, torch.Generator().manual_seed(0))
    g = torch.einsum("bn,bnd->bd", z[:, :-1, -1], z[:, :-1, :-1]) / 20
    assert torch.allclose(model(z), 0.3 * torch.einsum("bd,bd->b", z[:, -1, :-1], g), atol=1e-12)
    assert float(loss_fn(model, (z, y)).detach()) > 0


def test_tiny_training_run(tmp_path):
    p = {"name": "normal", "device": "cpu", "d": 5, "n": 20, "gamma_shape": 0.1, "init_std": 0.05, "test_size": 64,
         "diag_size": 16, "log_every": 5, "steps": 10, "batch": 32, "seeds": [0], "rmed_steps": [0, 10],
         "smooth_steps": 6, "smooth_every": 2,
         "setting": {"covariates": "normal", "layers": 2, "lr_sgd": 0.02, "lr_adam": 0.02, "clip": 1.0,
                     "diagnostics": True}}
    out = subprocess.run([sys.executable, "-m", f"replications.{PAPER}.train", "--params", json.dumps(p),
                          "--threads", "1", "--checkpoint", str(tmp_path / "m.safetensors"),
                          "--history", str(tmp_path / "m.json")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    hist = json.loads((tmp_path / "m.json").read_text())["history"]
    assert hist["sgd_seed0"]["test_loss"][0] == hist["adam_seed0"]["test_loss"][0]  # same init
    assert len(hist["adam_seed0"]["rmed"]) == 2 and len(hist["adam_seed0"]["smoothness"]) == 3
    assert not hist["sgd_seed0"]["smoothness"]
