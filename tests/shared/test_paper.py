"""The workflow's paper machinery (shared/pipeline/paper.py): which papers a command line needs, the code a script
depends on, the device and resources a job asks for, and, with real Snakemake runs in scratch copies, that papers
have namespaces of their own and that a broken paper stops only the runs that include it."""
from pathlib import Path

import pytest

from shared.pipeline.cli import new_paper
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import (
    DEFAULT_RESOURCES,
    Paper,
    Resources,
    Step,
    discover_papers,
    load_papers,
    local_imports,
    papers_named_by,
    path_args,
    resolve_device,
    script_module,
)
from shared.pipeline.scratch import ROOT, copy_repo, planned_rules, snakemake

PAPERS = ["bilinear_mlp", "bilinear_rnn", "linearizer"]


@pytest.mark.parametrize("argv, expected", [
    (["snakemake", "--cores", "2", "bilinear_rnn"], ["bilinear_rnn"]),
    (["snakemake", "-n", "linearizer", "bilinear_mlp"], ["bilinear_mlp", "linearizer"]),
    (["snakemake", "results/bilinear_mlp/quick/models/base.safetensors"], ["bilinear_mlp"]),
    (["snakemake", "reports/linearizer/full/report.md"], ["linearizer"]),
    (["python", "-m", "snakemake", "--target-jobs", "bilinear_rnn_train:experiment=hierarchy"], ["bilinear_rnn"]),
    (["snakemake", "--config", "bilinear_rnn={quick: {d_hidden: 4}}", "--cores", "2"], None),  # no target: all
    (["snakemake", "--cores", "2"], None),
    (["snakemake", "bilinear_rnn", "reports/index.md"], None),  # the index needs every paper
    (["snakemake", "benchmarks"], None),
])
def test_papers_named_by_the_command_line(argv, expected):
    assert papers_named_by(argv, PAPERS) == expected


def test_load_papers_loads_what_a_paper_needs_first(monkeypatch):
    monkeypatch.chdir(ROOT)
    papers = load_papers(["bilinear_autoencoder"], "quick", {})
    assert list(papers) == ["bilinear_autoencoder", "bilinear_mlp"]
    assert papers["bilinear_autoencoder"].needed["bilinear_mlp"] is papers["bilinear_mlp"]


def test_local_imports_follow_relative_and_package_imports(tmp_path):
    (tmp_path / "train.py").write_text("from .common import load\nfrom . import model\nimport numpy\n")
    (tmp_path / "common.py").write_text("from replications.demo.data import x\nfrom shared.io import files\n")
    (tmp_path / "model.py").write_text("import torch\n")
    (tmp_path / "data.py").write_text("import replications.demo.extra\n")
    (tmp_path / "extra.py").write_text("")
    (tmp_path / "unused.py").write_text("")
    found = local_imports(tmp_path, "train", "demo")
    assert found[0] == str(tmp_path / "train.py")
    assert sorted(Path(f).stem for f in found) == ["common", "data", "extra", "model", "train"]


def test_local_imports_add_model_where_load_models_builds_with_it(tmp_path):
    (tmp_path / "model.py").write_text("import torch\n")
    (tmp_path / "image").mkdir()
    (tmp_path / "image" / "analyze.py").write_text("from shared.pipeline.run import load_models\n"
                                                    "models = load_models(path)\n")
    (tmp_path / "image" / "own.py").write_text("from shared.pipeline.run import load_models\n"
                                                "models = load_models(path, build)\n"
                                                "more = load_models(path, build=b)\n")
    assert [Path(f).name for f in local_imports(tmp_path, "image.analyze", "demo")] == ["analyze.py", "model.py"]
    assert [Path(f).name for f in local_imports(tmp_path, "image.own", "demo")] == ["own.py"]


def test_local_imports_of_the_template_cover_model_and_common():
    found = {Path(f).name for f in local_imports(ROOT / "shared" / "templates" / "paper", "train", "__PAPER__")}
    assert found == {"train.py", "common.py", "model.py"}


def test_resolve_device(monkeypatch):
    monkeypatch.delenv("REPLICATIONS_DEVICE", raising=False)
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("cuda:1") == "cuda:1"
    assert resolve_device("auto", accelerator="cuda") == "cuda"
    monkeypatch.setenv("REPLICATIONS_DEVICE", "mps")
    assert resolve_device("auto") == "mps"


def test_path_args_quote_and_skip_code():
    named = [("code", ["a.py"]), ("data", "x y.safetensors"), ("evals", ["e1.json", "e2.json"])]
    assert path_args(named) == "--data 'x y.safetensors' --evals e1.json e2.json"


@pytest.mark.parametrize("tier, device, gpu, threads", [
    ("quick", "cpu", 0, 1), ("full", "cpu", 0, 8), ("full", "cuda", 1, 8), ("quick", "cuda", 1, 1), ("full", "mps", 0, 8),
])
def test_resources_key_the_gpu_on_the_resolved_device(tier, device, gpu, threads):
    paper = Paper.__new__(Paper)  # only the resource table, tier and device matter here
    paper.tier, paper.device = tier, device
    paper.resources_table = {"train": Resources(gpu=True, threads=8, mem_mb=32000, runtime=240)}
    assert paper.resources("train")["gpu"] == gpu
    assert paper.threads("train") == threads
    assert paper.resources("train")["mem_mb"] == (32000 if tier == "full" else DEFAULT_RESOURCES.quick_mem_mb)
    assert paper.resources("analyze") == {"gpu": 0, "mem_mb": DEFAULT_RESOURCES.quick_mem_mb if tier == "quick"
                                          else DEFAULT_RESOURCES.mem_mb, "runtime": DEFAULT_RESOURCES.runtime}


# ---------------------------------------------------------------- real Snakemake runs in scratch copies
def scratch(tmp_path, *names):
    """A repository holding only papers fresh from the template, named `names`."""
    copy_repo(tmp_path, [])
    for name in names:
        new_paper(name, tmp_path)
    return tmp_path


def test_papers_have_namespaces_of_their_own(tmp_path):
    """The same function and rule names in two papers' optional rules.smk: each paper's rule calls its own function."""
    repo = scratch(tmp_path, "alpha", "beta")
    for name in ("alpha", "beta"):
        (repo / "replications" / name / "rules.smk").write_text(f'''P = config["paper"]


def helper():
    return "{name}"


rule stamp:
    output:
        P.out("stamp.txt"),
    params:
        value=lambda w: helper(),
    log:
        P.log("stamp"),
    shell:
        "echo {{params.value}} > {{output}}"
''')
    proc = snakemake(repo, "--cores", "1", "results/alpha/quick/stamp.txt", "results/beta/quick/stamp.txt")
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in ("alpha", "beta"):
        assert (repo / "results" / name / "quick" / "stamp.txt").read_text().strip() == name
    rules = snakemake(repo, "--list-rules").stdout.split()
    assert {"alpha_train", "beta_train", "alpha_stamp", "beta_stamp", "alpha_report", "beta_report"} <= set(rules)


@pytest.mark.parametrize("breakage, words", [
    ("config", ["broken", "quick tier", "'epochs'"]),
    ("claims", ["broken", "claims.yaml"]),
    ("module", ["broken", "pipeline.py", "SyntaxError"]),
])
def test_a_broken_paper_stops_only_runs_that_include_it(tmp_path, breakage, words):
    repo = scratch(tmp_path, "broken", "healthy")
    paper = repo / "replications" / "broken"
    if breakage == "config":
        (paper / "config.yaml").write_text((paper / "config.yaml").read_text().replace("epochs: 30", "epochs: many"))
    elif breakage == "claims":
        (paper / "claims.yaml").write_text((paper / "claims.yaml").read_text().replace("check: \">=\"", "check: \"~\""))
    else:
        (paper / "pipeline.py").write_text((paper / "pipeline.py").read_text() + "\ndef oops(:\n")
    proc = snakemake(repo, "-n", "--cores", "2")
    assert proc.returncode != 0
    for word in words:
        assert word in proc.stdout + proc.stderr, word
    assert "rule " not in proc.stdout  # stopped while parsing: no job was planned
    proc = snakemake(repo, "-n", "--cores", "2", "healthy")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "healthy_train" in planned_rules(proc.stdout)


def test_step_log_names_default_to_the_step_and_its_wildcards():
    outputs = {"checkpoint": "results/p/quick/models/{kind}_h{width}.safetensors", "history": "m/{kind}.json"}
    assert Step("train", script="train", outputs=outputs).log_name() == "train_{kind}_{width}"
    named = Step("train", script="train", outputs=outputs, log="train_{kind}_h{width}")
    assert named.log_name() == "train_{kind}_h{width}"
    assert Step("data", script="prepare_data", outputs={"out": "d.safetensors"}).log_name() == "data"


def test_step_params_are_the_slice_of_one_job(monkeypatch):
    """A step's `p` is its slice of the config as JSON: a function of the wildcards gives each job its own slice."""
    monkeypatch.chdir(ROOT)
    paper = Paper("lsa_one_step_gd", "quick")
    train = paper.steps["train"]
    relu, iso = (paper.step_params(train)(type("W", (), {"experiment": e})) for e in ("relu", "iso"))
    assert '"relu"' in relu and '"iso"' not in relu and '"iso"' in iso
    assert paper.step_inputs(train)["code"][0].endswith("lsa_one_step_gd/train.py")
    assert paper.rules_file is None  # no rules.smk: the shared rules run its steps


@pytest.mark.parametrize("step, words", [
    (Step("report", script="train", outputs={}), ["'report'", "shared rules"]),
    (Step("Train", script="train", outputs={}), ["'Train'", "must match"]),
    (Step("train", script="no_such_script", outputs={}), ["'train'", "no_such_script.py", "does not exist"]),
])
def test_bad_steps_are_refused_naming_the_paper_and_step(monkeypatch, step, words):
    monkeypatch.chdir(ROOT)
    paper = Paper("lsa_one_step_gd", "quick")
    paper.steps = {step.name: step}
    with pytest.raises(ConfigError) as error:
        paper._check_steps()
    for word in ["lsa_one_step_gd", *words]:
        assert word in str(error.value), word


def test_paper_errors_name_the_paper_tier_and_key(monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(ConfigError, match=r"bilinear_rnn \(quick tier\).*'d_hidden'"):
        Paper("bilinear_rnn", "quick", {"d_hidden": 0})
    with pytest.raises(ConfigError, match=r"bilinear_rnn \(full tier\)"):
        Paper("bilinear_rnn", "full", {"hierarchy": ["no_such_experiment", "other"]})


def test_no_shared_file_names_a_paper():
    """Adding a paper needs no edit outside its folder: the Snakefile, the shared rules and the profiles (the SLURM
    one included) name no paper and no paper's rule."""
    files = [ROOT / "Snakefile", *(ROOT / "shared" / "pipeline" / "rules").glob("*.smk"), *(ROOT / "profiles").rglob("*.yaml")]
    code = "\n".join(line for f in files for line in f.read_text().splitlines() if not line.lstrip().startswith("#"))
    for name in discover_papers(ROOT / "replications"):
        assert name not in code, name


# ---------------------------------------------------------------- scripts in a paper's sub-packages
def _write(root, files):
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_local_imports_follow_a_sub_package_and_relative_imports_of_any_level(tmp_path):
    _write(tmp_path, {
        "image/__init__.py": "",
        "image/train.py": "from ..common import load\nfrom .data import x\nfrom . import helpers\n",
        "image/data.py": "from replications.demo.image.extra import y\nfrom ...elsewhere import z\n",
        "image/extra.py": "", "image/helpers.py": "",
        "common.py": "from .model import build\n", "model.py": "",
        "language/__init__.py": "", "language/train.py": "from ..image import data\n",
    })
    found = local_imports(tmp_path, "image.train", "demo")
    assert found[0] == str(tmp_path / "image" / "train.py")
    assert sorted(Path(f).relative_to(tmp_path).as_posix() for f in found) == [
        "common.py", "image/data.py", "image/extra.py", "image/helpers.py", "image/train.py", "model.py"]
    # `from ..image import data`: a module of a sibling package
    assert [Path(f).relative_to(tmp_path).as_posix() for f in local_imports(tmp_path, "language.train", "demo")] == [
        "language/train.py", "image/data.py", "image/extra.py"]


def test_script_module_finds_a_bare_name_in_its_part_and_refuses_two(tmp_path):
    _write(tmp_path, {"train.py": "", "image/__init__.py": "", "image/plot_eigen.py": "", "image/analyze.py": "",
                      "tests/plot_other.py": ""})
    assert script_module(tmp_path, "train", "demo") == "train"
    assert script_module(tmp_path, "plot_eigen", "demo") == "image.plot_eigen"  # a plot is named by its figure
    assert script_module(tmp_path, "image.analyze", "demo") == "image.analyze"
    assert script_module(tmp_path, "analyze", "demo") == "image.analyze"
    assert script_module(tmp_path, "plot_other", "demo") is None  # tests/ holds no scripts
    assert script_module(tmp_path, "language.analyze", "demo") is None
    _write(tmp_path, {"language/__init__.py": "", "language/plot_eigen.py": ""})
    with pytest.raises(ConfigError, match=r"demo: plot_eigen.py is ambiguous.*image/plot_eigen.py, "
                                          r"language/plot_eigen.py"):
        script_module(tmp_path, "plot_eigen", "demo")


def test_a_paper_runs_scripts_from_its_sub_packages(tmp_path):
    """The template's analysis and plot moved into a sub-package: the analyze and figure rules find them (their
    code inputs and `python -m` modules); a figure whose plot script is missing stops the parse, naming it."""
    repo = scratch(tmp_path, "alpha")
    paper = repo / "replications" / "alpha"
    (paper / "part").mkdir()
    (paper / "part" / "__init__.py").write_text("")
    analyze = (paper / "analyze.py").read_text()
    (paper / "part" / "analyze.py").write_text(analyze.replace("from .common", "from ..common"))
    (paper / "analyze.py").unlink()
    (paper / "plot_accuracy.py").rename(paper / "part" / "plot_accuracy.py")
    pipeline = (paper / "pipeline.py").read_text()
    (paper / "pipeline.py").write_text(pipeline.replace('script="analyze"', 'script="part.analyze"'))
    proc = snakemake(repo, "-n", "-p", "--cores", "1", "alpha")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "-m replications.alpha.part.analyze " in proc.stdout
    assert "-m replications.alpha.part.plot_accuracy " in proc.stdout
    assert "replications/alpha/part/analyze.py, replications/alpha/common.py" in proc.stdout  # `from ..common`
    assert "input: replications/alpha/part/plot_accuracy.py" in proc.stdout
    (paper / "part" / "plot_accuracy.py").unlink()
    proc = snakemake(repo, "-n", "--cores", "1", "alpha")
    assert proc.returncode != 0
    assert "alpha: analysis 'classifier' draws figure 'accuracy'" in proc.stdout + proc.stderr
    assert "plot_accuracy.py" in proc.stdout + proc.stderr
