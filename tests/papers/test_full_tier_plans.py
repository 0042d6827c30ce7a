"""The full tier plans with each profile (default, full, slurm) for every paper and one fresh from the template,
nothing run: one dry run per profile for all papers together. conftest.py keeps this file's tests on one xdist
worker, so that those dry runs are made once.
"""
import re

import pytest

from shared.pipeline.cli import new_paper
from shared.pipeline.paper import discover_papers
from shared.pipeline.scratch import ROOT, copy_repo, planned_rules, snakemake

PAPERS = discover_papers(ROOT / "replications")


PROFILES = {"default": ["--cores", "2", "--config", "tier=full"], "full": ["--profile", "profiles/full"],
            # as README.md writes it, without --cores (Snakemake would cap every job's threads at it); on CPU nodes
            # (accelerator=cpu) no job asks for a GPU
            "slurm": ["--profile", "profiles/slurm"],
            "slurm_cpu": ["--profile", "profiles/slurm", "--config", "accelerator=cpu"]}


@pytest.fixture(scope="module")
def full_tier_plans(tmp_path_factory):
    """{profile: dry-run output} of the full tier of every paper and of one fresh from the template, planned together
    in one copy: one parse per profile, not one per paper."""
    root = copy_repo(tmp_path_factory.mktemp("full_tier"), PAPERS)
    new_paper("from_template", root)
    plans = {}
    for profile, args in PROFILES.items():
        proc = snakemake(root, "-n", *PAPERS, "from_template", *args)
        plans[profile] = proc.stdout + proc.stderr
        assert proc.returncode == 0, f"{profile}: {plans[profile][-3000:]}"
    return plans


@pytest.mark.parametrize("profile", ["default", "full", "slurm"])
@pytest.mark.parametrize("name", [*PAPERS, "from_template"])
def test_full_tier_plans_with_each_profile(full_tier_plans, name, profile):
    outs = [full_tier_plans[profile]]
    if profile == "slurm":
        # no job gets a partition, CPUs or GRES from the profile; on CPU nodes none asks for a GPU
        outs.append(full_tier_plans["slurm_cpu"])
        for out in outs:
            assert not re.search(r"\b(slurm_partition|cpus_per_task|gres)\b", out), out[-3000:]  # not "progress"
        assert "gpu=1" not in outs[-1]
    for out in outs:
        assert f"reports/{name}/full/report.md" in out
        assert f"{name}_report" in planned_rules(out)


SCALED = [p for p in PAPERS if (ROOT / "replications" / p / "paper_scale.yaml").is_file()]


@pytest.mark.parametrize("name", SCALED)
def test_the_paper_scale_part_names_what_it_leaves_out(name):
    """A declared paper-scale part may switch parts of the full tier off, never lose them: every metrics namespace
    of the full tier is either run or skipped with its reason (its claims then read NOT RUN, saying why)."""
    from shared.pipeline.config import paper_scale_config
    from shared.pipeline.paper import Paper

    full = Paper(name, "full", root=ROOT)
    scale = Paper(name, "full", {"full": paper_scale_config(ROOT / "replications" / name)}, root=ROOT)
    assert not set(scale.analyses) & set(scale.skipped)
    assert set(full.analyses) | set(full.skipped) == set(scale.analyses) | set(scale.skipped)
    assert all(scale.skipped.values())
