"""shared.pipeline.run.load_models: without `build` it uses the model.build of the calling script's paper (its
package, or the paper above a sub-package such as bilinear_mlp/image/)."""
import pytest
import torch

from shared.io.checkpoints import save_models
from shared.pipeline.run import load_models, paper_build

from replications.bilinear_mlp import model as bilinear_mlp_model
from replications.git_re_basin.model import build

SPEC = {"name": "m", "seed": 0, "d_input": 4, "d_hidden": 3, "n_hidden": 1, "n_classes": 2}


@pytest.fixture
def checkpoint(tmp_path):
    torch.manual_seed(0)
    model = build(SPEC)
    save_models(tmp_path / "m.safetensors", {"m": model}, {"runs": [SPEC]})
    return tmp_path / "m.safetensors", model


def test_a_script_of_a_paper_gets_its_build(checkpoint):
    path, model = checkpoint
    script = {"__package__": "replications.git_re_basin", "load_models": load_models, "path": path}
    exec("models, specs, meta = load_models(path)", script)  # as `python -m replications.git_re_basin.<script>` runs
    loaded = script["models"]["m"]
    assert type(loaded) is type(model) and not loaded.training
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), model.state_dict().values()))
    assert script["specs"] == {"m": SPEC}


def test_a_script_in_a_part_of_a_paper_gets_the_papers_build(tmp_path):
    spec = {"name": "m", "seed": 0, "d_input": 4, "d_hidden": 3, "n_classes": 2, "layer": "bilinear", "bias": False,
            "residual": False}
    torch.manual_seed(0)
    model = bilinear_mlp_model.build(spec)
    path = tmp_path / "m.safetensors"
    save_models(path, {"m": model}, {"runs": [spec]})
    script = {"__package__": "replications.bilinear_mlp.image", "load_models": load_models, "path": path}
    exec("models, _, _ = load_models(path)", script)  # as `python -m replications.bilinear_mlp.image.<script>` runs
    loaded = script["models"]["m"]
    assert type(loaded) is type(model)
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), model.state_dict().values()))
    assert paper_build("replications.bilinear_mlp.theory") is bilinear_mlp_model.build


def test_outside_a_paper_build_must_be_given(checkpoint):
    path, _ = checkpoint
    for package in ("", "replications", "tests.shared"):  # no paper: neither a script's nor a part's package
        with pytest.raises(ValueError, match="pass build="):
            exec("load_models(path)", {"__package__": package, "load_models": load_models, "path": path})
    assert paper_build("replications.git_re_basin") is build
    assert load_models(path, build)[1] == {"m": SPEC}
