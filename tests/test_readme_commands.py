"""Every command the READMEs show works as written: `make` installs with the README's own pip lines, `.ci/run` runs
the README's test command, and every Snakemake command plans its jobs (`-n`) in this repository, with or without `--cores`."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from shared.pipeline.scratch import load_scaled

ROOT = Path(__file__).resolve().parents[1]
READMES = [ROOT / "README.md", *sorted((ROOT / "replications").glob("*/README.md"))]
# placeholders a reader fills in; `my_paper` is the folder "Adding a paper" creates first
PLACEHOLDERS = {"<paper>": "bilinear_rnn", "<other_paper>": "linearizer", "<partition>": "main", "<account>": "none"}
# options that run no job, so Snakemake needs no core count for them
NO_JOBS = {"-n", "--dry-run", "--report", "--lint", "--dag", "--rulegraph", "--summary", "--unlock", "--list-rules"}


def _code(text):
    """Inline code spans and fenced code lines, with backslash continuations joined and comments dropped."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
    inline = re.findall(r"(?<!`)`([^`\n]+)`(?!`)", re.sub(r"```.*?```", "", text, flags=re.S))
    lines = [line.split("  #")[0].strip() for block in blocks for line in block.replace("\\\n", " ").splitlines()]
    return [line for line in lines + inline if line]


def _snakemake_commands():
    """(the first README that shows it, the command with its placeholders filled in), once per command."""
    commands = {}
    for readme in READMES:
        for code in _code(readme.read_text()):
            if re.match(r"snakemake( |$)", code) and "my_paper" not in code:
                for placeholder, value in PLACEHOLDERS.items():
                    code = code.replace(placeholder, value)
                commands.setdefault(code, readme.relative_to(ROOT).as_posix())
    return sorted((readme, code) for code, readme in commands.items())


def _bash_block(readme, containing):
    """The lines of README.md's first bash block that holds `containing`, comments dropped."""
    blocks = [block for block in re.findall(r"```bash\n(.*?)```", readme, flags=re.S) if containing in block]
    assert blocks, f"README.md shows no bash block with `{containing}`"
    return [line.split("#")[0].strip() for line in blocks[0].splitlines() if line.split("#")[0].strip()]


def _make_recipes():
    """{target: its recipe lines} of the Makefile, with `$(ACTIVATE) && ` dropped (the venv each line runs in)."""
    recipes, target = {}, None
    for line in (ROOT / "Makefile").read_text().splitlines():
        if line.startswith("\t") and target:
            recipes[target].append(line.strip().removeprefix("$(ACTIVATE) && "))
        elif re.match(r"^[$().\w-]+:", line) and ":=" not in line:
            target = line.split(":")[0]
            recipes[target] = []
    return recipes


def test_the_readme_two_commands_are_make_targets_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    assert _bash_block(readme, "make test") == ["make run", "make test"], "README.md's first commands changed"
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.strip()]
    assert ci[-1] == "make test", ".ci/run must end with README.md's test command, as the README writes it"


def test_make_installs_and_runs_with_the_readme_explicit_commands():
    """What `make` runs is what the README shows for those who manage their own environment: the same pip lines in
    the same order, then the same job and test commands."""
    explicit = _bash_block((ROOT / "README.md").read_text(), "pip install")
    recipes = _make_recipes()
    install = [line for line in recipes["$(STAMP)"] if line.startswith("pip install")]
    assert install == [line for line in explicit if line.startswith("pip install")], \
        "the Makefile's install recipe and README.md's pip lines differ"
    assert recipes["run"] == ["snakemake --cores 2 $(ARGS)"] and "snakemake --cores 2" in explicit
    assert recipes["test"] == ["python -m pytest $(ARGS)"] and "python -m pytest" in explicit


def test_the_readmes_show_snakemake_commands():
    assert len(_snakemake_commands()) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("readme, command", _snakemake_commands(), ids=lambda value: value[:70])
def test_each_readme_snakemake_command_plans_its_jobs(readme, command):
    args = shlex.split(command)[1:]
    runs_jobs = not NO_JOBS & set(args)
    if runs_jobs:
        # a local run needs a core count, from the command or from a profile that sets one (or an executor)
        assert "--cores" in args or "--profile" in args, f"{readme}: `{command}` runs jobs without --cores"
    if "--report" in args:  # plan the run it reports on
        at = args.index("--report")
        named_file = at + 1 < len(args) and args[at + 1].endswith((".html", ".zip"))
        del args[at : at + 1 + named_file]
    elif "--unlock" in args:
        args.remove("--unlock")
    if "-n" not in args:
        args.append("-n")
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=load_scaled(300),
    )
    assert result.returncode == 0, f"{readme}: `{command}` fails:\n{result.stdout[-2000:]}{result.stderr[-3000:]}"
