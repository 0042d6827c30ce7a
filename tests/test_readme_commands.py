"""Every command the READMEs show works as written: `.ci/run` installs with the README's own commands and runs its
test command, and every Snakemake command plans its jobs (`-n`) in this repository, with or without `--cores`."""

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


def test_ci_installs_with_the_readme_commands_and_runs_its_test_command():
    readme = (ROOT / "README.md").read_text()
    install, run = re.findall(r"```bash\n(.*?)```", readme, flags=re.S)[:2]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    commands = [line.split("  #")[0].strip() for line in install.splitlines() if line.startswith("pip install")]
    assert commands, "README.md's first code block installs nothing"
    positions = [ci.index(command) if command in ci else -1 for command in commands]
    assert -1 not in positions, f".ci/run lacks README.md's install commands {[c for c, p in zip(commands, positions) if p < 0]}"
    assert positions == sorted(positions), ".ci/run runs README.md's install commands in another order"
    test_command = [line.split("#")[0].strip() for line in run.splitlines() if line.startswith("python -m pytest")]
    assert test_command and ci[-1] == test_command[0], ".ci/run must end with README.md's test command"


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
