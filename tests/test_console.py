"""The console of a run with the default profile: Snakemake's block for each job (rule, input, output, reason) is
off, so the project's job lines (shared.pipeline.job, tested in tests/shared/test_job.py) and Snakemake's
"i of n steps done" are what a reader sees; `--quiet host`, as the README says, brings the blocks back."""
from shared.pipeline.scratch import copy_repo, planned_rules, snakemake

PAPER = "lsa_one_step_gd"


def test_default_console_has_no_rule_blocks_and_a_flag_shows_them(tmp_path):
    repo = copy_repo(tmp_path / "repo", [PAPER])
    quiet = snakemake(repo, "-n", "--cores", "1", PAPER, rule_blocks=False)
    assert quiet.returncode == 0, quiet.stderr[-3000:]
    out = quiet.stdout + quiet.stderr
    assert not planned_rules(out) and "input:" not in out and "reason:" not in out, out
    assert f"{PAPER}_report" in out  # the job counts stay
    shown = snakemake(repo, "-n", "--cores", "1", PAPER, "--quiet", "host", rule_blocks=False)
    assert f"{PAPER}_report" in planned_rules(shown.stdout + shown.stderr)
