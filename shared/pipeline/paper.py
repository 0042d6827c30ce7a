"""A paper as the workflow sees it: its validated config, its analyses, its code dependencies and its resources.

`replications/<paper>/pipeline.py` declares the paper's Python side of the workflow as plain data and functions:

    NEEDS = ("other_paper",)          # papers whose outputs this one reads (optional)
    RESOURCES = {"train": Resources(gpu=True, threads=8, mem_mb=16000, runtime=240)}   # per step (optional)
    def check(cfg): ...               # cross-key checks the schema cannot express; raise ConfigError (optional)
    def steps(paper): ...             # [Step(...)]: the script steps that make what analyses read (data, train, ...)
    def analyses(paper): ...          # [Analysis(...)]: what each metrics namespace reads, and its figures
    def skipped(paper): ...           # {namespace: reason} for analyses this tier does not run (optional; an
                                      # Analysis declared with not_run="<reason>" is one too)

Steps and analyses run by the shared rules of shared/pipeline/rules/paper.smk. A `rules.smk` beside pipeline.py is
optional and holds only rules no Step can express; each reaches this object as `P`.
"""
import ast
import importlib
import json
import os
import re
import shlex
import shutil
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from shared.io.files import YamlError
from shared.pipeline.claims import ClaimsError, check_claims_inputs, load_claims
from shared.pipeline.config import ConfigError, load_paper_config, overridden_tiers

FIGURE_NAME = r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*"  # plot_<figure>.py; the figure file is <figure>--<namespace>.png
NAMESPACE = r"[a-z][a-z0-9_]*"


@dataclass(frozen=True)
class Analysis:
    """One metrics namespace: `script` (a module of the paper) reads `reads` ({argument: path or [paths]}) with
    `params` and writes results/<p>/<tier>/metrics/<ns>.json (+ analysis/<ns>.npz, drawn by each of `figures`)."""

    ns: str
    script: str
    reads: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    figures: tuple = ()
    resources: str = "analyze"  # the key of the paper's RESOURCES that sizes this job
    not_run: str = ""  # why this config leaves it out (a part switched off): its claims read NOT RUN, with this reason


@dataclass(frozen=True)
class Step:
    """One script step that is not an analysis (data, train, ...), run as the rule <paper>_<name>: `script` (a module
    of the paper) reads `inputs` ({argument: path pattern, or a function of the wildcards}) with `params` (the
    step's slice of the config, or a function of the wildcards giving it: editing another slice reruns nothing)
    and writes `outputs` ({argument: path pattern}); `{wildcard}`s in the outputs make one job per value."""

    name: str
    script: object  # a module of the paper, or a function of the wildcards naming one
    outputs: dict
    params: object = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)
    wildcards: dict = field(default_factory=dict)  # {wildcard: regex} the values may take
    resources: str = ""  # the key of the paper's RESOURCES that sizes this job; default: the step's name
    priority: int = 0  # train steps say 1: long jobs first, so that the cores stay busy to the end
    log: str = ""  # the log's name under results/<paper>/<tier>/logs/; default: name_{wildcard}_...

    def log_name(self):
        found = dict.fromkeys(w for path in self.outputs.values() for w in re.findall(r"{(\w+)", str(path)))
        return self.log or "_".join([self.name, *(f"{{{w}}}" for w in found)])


@dataclass(frozen=True)
class Resources:
    """What one job needs. `threads` applies at the full tier; quick-tier jobs run single-threaded (small models,
    so `--cores N` runs N of them at once) unless `quick_threads` says otherwise. `gpu` is requested only when the
    paper's device resolves to CUDA."""

    gpu: bool = False
    threads: int = 1
    quick_threads: int = 1
    mem_mb: int = 4000
    runtime: int = 30  # minutes
    quick_mem_mb: int = 2000


DEFAULT_RESOURCES = Resources()
SHARED_RULES = ("config", "analyze", "figure", "report")  # shared/pipeline/rules/paper.smk: no step takes these names


def discover_papers(replications_dir):
    """Every folder of replications/ holding a pipeline.py is a paper."""
    return sorted(p.name for p in Path(replications_dir).iterdir() if (p / "pipeline.py").is_file())


def papers_named_by(argv, papers):
    """The papers a command line names as targets (a paper's name, one of its rules, a path under its results/ or
    reports/), or None when it names none of them or anything that needs them all (then every paper is loaded).

    Only what the targets need is parsed, so one paper's dry run does not pay for forty; cluster jobs name their
    rule (`--target-jobs <paper>_<rule>:...`), so they load one paper too."""
    by_length = sorted(papers, key=len, reverse=True)
    named = set()
    for token in argv[1:]:
        token = token.split(":", 1)[0].strip("'\"")
        if token in ("all", "index", "benchmarks", "reports/index.md", "reports/benchmarks.json"):
            return None
        parts = Path(token).parts
        if len(parts) >= 2 and parts[0] in ("results", "reports") and parts[1] in papers:
            named.add(parts[1])
            continue
        for p in by_length:
            if token == p or token.startswith(p + "_"):
                named.add(p)
                break
    return sorted(named) or None



def load_papers(names, tier, config, accelerator=None, root="."):
    """{name: Paper} for `names`, each loaded after the papers it needs, which it reaches as `paper.needed[name]`."""
    loaded = {}

    def load(name, chain=()):
        if name in chain:
            raise ConfigError(f"{name}: NEEDS forms a cycle: {' -> '.join((*chain, name))}")
        if name not in loaded:
            wanted = getattr(pipeline_module(name), "NEEDS", ())
            for other in wanted:
                load(other, (*chain, name))
            loaded[name] = Paper(name, tier, config.get(name), root=root, accelerator=accelerator,
                                 needed={n: loaded[n] for n in wanted})
        return loaded[name]

    for name in names:
        load(name)
    return dict(sorted(loaded.items()))


def pipeline_module(paper):
    return importlib.import_module(f"replications.{paper}.pipeline")


class Paper:
    """One paper at one tier, loaded and checked while Snakemake parses: any error names the paper and the key."""

    def __init__(self, name, tier, overrides=None, root=".", accelerator=None, needed=None):
        self.name, self.tier = name, tier
        self.needed = dict(needed or {})  # {name: Paper} of the papers this one reads outputs of (NEEDS)
        self.dir = f"replications/{name}"
        self.root = Path(root)
        self.results = f"results/{name}/{tier}"
        self.reports = f"reports/{name}/{tier}"
        try:
            self.module = pipeline_module(name)
        except Exception as error:  # a broken module stops the run with the paper's name, not a bare traceback
            raise ConfigError(f"{name}: replications/{name}/pipeline.py does not import: "
                              f"{type(error).__name__}: {error}") from error
        self.cfg = load_paper_config(self.root / self.dir, tier, overrides)
        self.device = resolve_device(self.cfg.get("device", "auto"), accelerator)
        self.claims = self._load_claims()  # a broken claims.yaml, too, stops the run before any job
        with self._declaring("check(cfg)"):
            getattr(self.module, "check", lambda cfg: None)(self.cfg)
        for other in overridden_tiers(overrides, tier):  # an override of another tier is checked now, not when run
            try:
                getattr(self.module, "check", lambda cfg: None)(load_paper_config(self.root / self.dir, other, overrides))
            except ConfigError as error:
                raise ConfigError(f"{name} ({other} tier, --config override of a tier not run): {error}") from None
        with self._declaring("analyses(paper)"):  # declarations may check what the schema cannot (run names, say)
            declared = self.module.analyses(self)
            self.analyses = {a.ns: a for a in declared if not a.not_run}
            self.skipped = {a.ns: a.not_run for a in declared if a.not_run}
            self.skipped |= getattr(self.module, "skipped", lambda paper: {})(self)
        with self._declaring("steps(paper)"):
            steps = getattr(self.module, "steps", lambda paper: [])(self)
        self.steps = {s.name: s for s in steps}
        if len(self.steps) < len(steps):
            raise ConfigError(f"{self.name}: two steps share a name ({', '.join(s.name for s in steps)})")
        self._check_analyses()
        self._check_steps()
        self._check_claim_metrics()
        self.resources_table = getattr(self.module, "RESOURCES", {})
        rules = self.root / self.dir / "rules.smk"
        self.rules_file = f"{self.dir}/rules.smk" if rules.is_file() else None  # optional: rules no Step expresses

    @contextmanager
    def _declaring(self, what):
        """Errors of the paper's declarations name the paper and tier. A ConfigError is the paper's own message;
        anything else means a value passed the schema and check(cfg) but the declarations could not use it."""
        try:
            yield
        except ConfigError as error:
            raise ConfigError(f"{self.name} ({self.tier} tier): {error}") from None
        except Exception as error:  # noqa: BLE001 (turned into a message that names where it happened)
            raise ConfigError(f"{self.name} ({self.tier} tier): {self.dir}/pipeline.py {what} failed on this config "
                              f"({type(error).__name__}: {error}); a check(cfg) should have refused it") from error

    def _load_claims(self):
        path = self.root / self.dir / "claims.yaml"
        if not path.is_file():
            raise ConfigError(f"{self.name}: {self.dir}/claims.yaml is missing; every paper states its claims")
        try:
            return load_claims(path)
        except (ClaimsError, YamlError) as error:
            raise ConfigError(f"{self.name}: {error}") from None

    def _check_claim_metrics(self):
        """claims.yaml's inputs, checked now rather than found as a FAIL after the run (shared.pipeline.claims
        .check_claims_inputs): its `paper:` field, counterexamples that must fail, the namespaces claims read."""
        try:
            check_claims_inputs(self.claims, self.name, self.tier, set(self.analyses) | set(self.skipped),
                                f"{self.dir}/claims.yaml")
        except ClaimsError as error:
            raise ConfigError(f"{self.name} ({self.tier} tier): {error}") from None

    def _check_analyses(self):
        for a in self.analyses.values():
            if not re.fullmatch(NAMESPACE, a.ns):
                raise ConfigError(f"{self.name}: analysis namespace {a.ns!r} must match {NAMESPACE}")
            for fig in a.figures:
                if not re.fullmatch(FIGURE_NAME, fig):
                    raise ConfigError(f"{self.name}: figure name {fig!r} must match {FIGURE_NAME}")
                if script_module(self.root / self.dir, f"plot_{fig}", self.name) is None:
                    raise ConfigError(f"{self.name}: analysis {a.ns!r} draws figure {fig!r}, but neither "
                                      f"{self.dir} nor a sub-package of it holds plot_{fig}.py")
            if script_module(self.root / self.dir, a.script, self.name) is None:
                raise ConfigError(f"{self.name}: analysis {a.ns!r} runs {self.dir}/{module_file(a.script)}, "
                                  f"which does not exist")

    def _check_steps(self):
        for step in self.steps.values():
            if not re.fullmatch(NAMESPACE, step.name) or step.name in SHARED_RULES:
                raise ConfigError(f"{self.name}: step name {step.name!r} must match {NAMESPACE} and differ from the "
                                  f"shared rules ({', '.join(SHARED_RULES)})")
            if not callable(step.script) and script_module(self.root / self.dir, step.script, self.name) is None:
                raise ConfigError(f"{self.name}: step {step.name!r} runs {self.dir}/{module_file(step.script)}, "
                                  f"which does not exist")

    # ---------------------------------------------------------------- paths
    def out(self, relative):
        """A path under results/<paper>/<tier>/."""
        return f"{self.results}/{relative}"

    def model_files(self, run):
        """What a train step writes per run (`run` may hold wildcards): its weights and its training history."""
        return {"checkpoint": self.out(f"models/{run}.safetensors"), "history": self.out(f"models/{run}.json")}

    def log(self, name):
        return f"{self.results}/logs/{name}.log"

    def metrics(self):
        return [self.out(f"metrics/{ns}.json") for ns in self.analyses]

    def figures(self):
        """Drawn under results/: they reach reports/ with the report that shows them, never before (report.render)."""
        return [self.out(f"figures/{fig}--{ns}.png") for ns, a in self.analyses.items() for fig in a.figures]

    def captions(self):
        return sorted({f"{self.dir}/captions/{fig}.rst" for a in self.analyses.values() for fig in a.figures})

    def params(self, value):
        """A rule's parameters as one JSON string (its slice of the config: editing another slice reruns nothing)."""
        return json.dumps(value, sort_keys=True)

    # ---------------------------------------------------------------- code
    def code(self, script):
        """The script's file and every paper-local module it imports, transitively: editing any reruns the job."""
        return local_imports(self.root / self.dir, script, self.name)

    def module_name(self, script):
        """The module `python -m` runs: `script` under this paper's package, a bare plot_<fig> found in its part."""
        return f"replications.{self.name}.{script_module(self.root / self.dir, script, self.name) or script}"

    def step(self, script):
        """The params every script step shares (`params: **P.step("train"), p=...`): the interpreter Snakemake runs
        under (never `python` from PATH), the script as a module of this paper, and its inputs and outputs as
        `--<name> <path>` arguments (step_shell puts them together). `script` may be a function of the wildcards."""
        module = (lambda w: self.module_name(script(w))) if callable(script) else self.module_name(script)
        return {"python": sys.executable, "module": module,
                "paths": lambda wildcards, input, output: path_args([*input.items(), *output.items()])}

    def step_inputs(self, step):
        """A Step's inputs, its code first (editing the script or a module it imports reruns the step)."""
        code = (lambda w: self.code(step.script(w))) if callable(step.script) else self.code(step.script)
        return {"code": code, **step.inputs}

    def step_params(self, step):
        """A Step's `p` param: its config slice as JSON, computed per job when it depends on the wildcards."""
        if callable(step.params):
            return lambda wildcards: self.params(step.params(wildcards))
        return self.params(step.params)

    # ---------------------------------------------------------------- resources
    def threads(self, kind):
        spec = self.resources_table.get(kind, DEFAULT_RESOURCES)
        return spec.quick_threads if self.tier == "quick" else spec.threads

    def resources(self, kind):
        """Snakemake resources of one job: gpu (only when the device resolves to CUDA), mem_mb, runtime."""
        spec = self.resources_table.get(kind, DEFAULT_RESOURCES)
        quick = self.tier == "quick"
        return {"gpu": int(spec.gpu and self.device.startswith("cuda")),
                "mem_mb": spec.quick_mem_mb if quick else spec.mem_mb,
                "runtime": min(spec.runtime, 30) if quick else spec.runtime}


def resolve_device(requested, accelerator=None):
    """The device a job will use, decided while parsing (without importing torch): an explicit request wins;
    'auto' is CUDA when this machine shows an NVIDIA GPU or the profile says jobs run on one (`accelerator: cuda`,
    as the SLURM profile does), else CPU. REPLICATIONS_DEVICE overrides the config, visibly: the resolved config
    records it."""
    requested = os.environ.get("REPLICATIONS_DEVICE") or requested
    if requested != "auto":
        return requested
    if accelerator:
        return accelerator
    return "cuda" if Path("/dev/nvidia0").exists() or shutil.which("nvidia-smi") else "cpu"


def script_module(paper_dir, script, paper):
    """`script` as a module path under its paper's package, or None when there is no such file. A dotted name is
    taken as it is ("image.train" is image/train.py); a bare name is the one file of that name in the paper's folder
    or its sub-packages (tests/ aside), so that plot_<fig>.py, named by its figure alone, can sit in its part."""
    paper_dir = Path(paper_dir)
    if "." in script:
        return script if (paper_dir / module_file(script)).is_file() else None
    found = sorted(path.relative_to(paper_dir) for path in paper_dir.rglob(f"{script}.py"))
    found = [path for path in found if "tests" not in path.parts]
    if len(found) > 1:
        raise ConfigError(f"{paper}: {script}.py is ambiguous: replications/{paper} holds "
                          f"{', '.join(map(str, found))}; a script named by its file alone must be unique in the paper")
    return ".".join(found[0].with_suffix("").parts) if found else None


def module_file(module):
    """"image.train" -> "image/train.py": a module path under a paper's package, as a file in its folder."""
    return module.replace(".", "/") + ".py"


def local_imports(paper_dir, script, paper):
    """[paper_dir/script.py, paper_dir/<module>.py ...]: the script and its paper-local imports, transitively,
    found by reading the source: relative imports of any level (`from .x`, `from ..common`) and
    `replications.<paper>.` imports, and the paper's model.py where a module calls `load_models(path)` without a
    `build` (shared.pipeline.run builds with that model.py). `script` is found as script_module finds it;
    packages' __init__.py are not followed."""
    paper_dir = Path(paper_dir)
    first = script_module(paper_dir, script, paper)
    seen, todo = [], [first] if first else []
    while todo:
        module = todo.pop()
        path = paper_dir / module_file(module)
        if module in seen or not path.is_file():
            continue
        seen.append(module)
        package = module.split(".")[:-1]  # where the module's relative imports start
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = node.level - 1  # `from .x` stays in the module's package, `from ..x` goes one up
                    if up > len(package):  # above the paper's package: not the paper's code
                        continue
                    target = [*package[:len(package) - up], *filter(None, base.split("."))]
                elif base == f"replications.{paper}" or base.startswith(f"replications.{paper}."):
                    target = base.split(".")[2:]
                else:
                    continue
                # `from .a import b`: module a, or b where b is a module of package a (missing files are skipped)
                todo.extend([".".join(target)] if target else [])
                todo.extend(".".join([*target, a.name]) for a in node.names)
            elif isinstance(node, ast.Import):
                todo.extend(a.name.split(".", 2)[2] for a in node.names if a.name.startswith(f"replications.{paper}."))
            elif isinstance(node, ast.Call) and builds_with_paper_model(node):
                todo.insert(0, "model")  # followed last, so that the other modules keep their order
    return [str(paper_dir / module_file(module)) for module in seen]


def builds_with_paper_model(call):
    """`load_models(path)`: no `build` given, so shared.pipeline.run.load_models builds with the paper's model.py."""
    name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)
    return name == "load_models" and len(call.args) < 2 and all(k.arg != "build" for k in call.keywords)


def step_shell():
    """The one shell command of every script step: the script runs as a module of its paper's package, gets its
    JSON parameters, thread count and one `--<name> <path>` per named input and output. shared.pipeline.job runs
    it: everything it prints goes to the log, a line now and then to the console, and its cost to <log>.cost.json."""
    return ("{params.python:q} -m shared.pipeline.job {log:q} -- "
            "{params.python:q} -m {params.module} --params {params.p:q} --threads {threads} {params.paths}")


def path_args(named, skip=("code",)):
    """Named inputs and outputs as `--name path [path ...]` arguments (the code files and empty inputs excluded)."""
    parts = []
    for name, value in named:
        if name in skip or (isinstance(value, (list, tuple)) and not value):
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        parts.append(f"--{name} " + " ".join(_quote(v) for v in values))
    return " ".join(parts)


def _quote(path):
    return shlex.quote(str(path))


class Caption:
    """A figure's caption file, read only when Snakemake's HTML report shows it. Snakemake does not hash such an
    object as a rule parameter, so editing a caption re-renders the report (its input) and redraws no figure."""

    def __init__(self, path):
        self.path = path

    def __str__(self):
        return Path(self.path).read_text()
