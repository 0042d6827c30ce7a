"""Does a paper's full tier run end to end, and what would it cost? `replicate smoke [PAPER ...]`.

The full tier (profiles/full) runs in a scratch copy of the repository with every training loop capped to a few
steps ($REPLICATE_SMOKE_STEPS, read by shared.io.smoke.capped): full model sizes, full data shapes. A dataset the
machine cannot fetch offline is replaced, in the scratch copy only, by a generated stand-in of the same shapes,
dtypes and label count, written where the prepare_dataset rule would have put the real one; smoke.json names it.
Nothing the run renders leaves the scratch copy: the only file written here is reports/<paper>/full/smoke.json,
holding per paper and training loop: success, wall and CPU seconds a step, peak memory, and the projected cost of
the uncapped full tier, with the hashes of the config and code it ran (staleness: `check`).

Reduced repetitions. Where even the capped full tier repeats too much for a smoke (a sweep of thousands of grid
points, tens of thousands of generated items, ten seeds of everything), the paper declares
replications/<paper>/smoke.yaml: `<paper>: {full: {...}}` overrides of repetition counts only (seeds, grid points,
numbers of items; never a model's size or a sample's shape, and the largest model of a sweep is kept), and `scale`,
its estimate of the full tier's work over the reduced smoke's, which multiplies the projection. smoke.json records
the overrides and the scale, and the file's hash (editing it makes the record stale).

Projection. CPU hours: the capped run's CPU time plus, for each training loop, its remaining steps times its
measured CPU seconds a step (evaluation inside the loop is counted at the capped run's rate only, so long runs that
evaluate often are underestimated). GPU hours: each loop's FLOPs of one step (torch FlopCounterMode, matmuls and
convolutions) times its steps, at GPU_FLOPS; a lower bound, as small models leave a GPU waiting on launches.

    replicate smoke [PAPER ...] [--cores 2] [--steps 3] [--limit 90] [--dry-run]
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from shared.io.files import read_yaml, write_json
from shared.io.smoke import LOG_VAR, STEPS_VAR
from shared.pipeline.job import machine
from shared.pipeline.paper import discover_papers
from shared.pipeline.provenance import CODE_ROOT, collect, file_hash
from shared.pipeline.scratch import ROOT, copy_repo, snakemake
from shared.pipeline.staleness import code_changed
from shared.pipeline.tiers import config_hash

STEPS = 3  # the first step has its FLOPs counted, the others are timed
GPU_FLOPS = 100e12  # effective bf16 FLOP/s assumed of one H100 (a third of its dense peak)
GPU_ASSUMPTION = "counted FLOPs of one step x steps at 100 TFLOP/s effective (one H100, bf16); a lower bound"
MEMORY_LIMIT_MB = 24 * 1024  # the largest machine the full tier is meant for
PREPARE_TIMEOUT_S = 60
LIMIT_S = 90  # a paper's run stops here: the jobs it reached are measured, the rest is "not reached"
GRACE_S = 10  # then Snakemake has this long to stop its jobs before the whole process group is killed
# Test-split sizes of the image datasets, which the registry does not record (it records n_train)
N_TEST = {"mnist": 10_000, "fashion_mnist": 10_000, "cifar10": 10_000, "celeba_64": 19_962}
# Entities, relations and train / valid / test triples of the knowledge graphs behind a download
GRAPHS = {"fb15k": (14_951, 1_345, 483_142, 50_000, 59_071), "wn18": (40_943, 18, 141_442, 5_000, 5_000)}
TINYSTORIES_TRAIN_TOKENS = 50_000_000  # a window sampler's cost does not depend on the stream's length


SMOKE_OVERLAY = "smoke.yaml"


def overlay(paper, root=ROOT):
    """The paper's smoke-only overlay (see the module's docstring): {"file", "scale", "config"} with `config` the
    `<paper>: {full: ...}` mapping to pass as a config file, or None where the paper declares none. A ConfigError
    names the paper, the file and the key that is wrong: an unknown key, a key of the full tier the overlay does not
    have, a schema violation of the merged config, or a scale below 1."""
    from shared.pipeline.config import ConfigError, load_paper_config

    paper_dir = Path(root) / "replications" / paper
    path = paper_dir / SMOKE_OVERLAY
    if not path.is_file():
        return None
    where = f"{paper}: {path.relative_to(root)}"
    doc = read_yaml(path)
    if not isinstance(doc, dict) or set(doc) != {"scale", paper}:
        raise ConfigError(f"{where}: expected exactly the keys 'scale' and '{paper}', got "
                          f"{sorted(doc) if isinstance(doc, dict) else type(doc).__name__}")
    scale = doc["scale"]
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale < 1:
        raise ConfigError(f"{where}: 'scale' is {scale!r}; expected a number >= 1 (the full tier's work over the "
                          "reduced smoke's)")
    tiers = doc[paper]
    if not isinstance(tiers, dict) or set(tiers) != {"full"} or not isinstance(tiers["full"], dict):
        raise ConfigError(f"{where}: '{paper}' must hold only 'full', a mapping of full-tier keys")
    missing = _new_keys(tiers["full"], load_paper_config(paper_dir, "full"))
    if missing:
        raise ConfigError(f"{where}: '{paper}.full.{missing[0]}' is not a key of the full tier (an overlay only "
                          "reduces counts the full tier has)")
    try:
        load_paper_config(paper_dir, "full", tiers)  # the merged config must pass the paper's schema
    except ConfigError as err:
        raise ConfigError(f"{where}: the full tier with this overlay is invalid: {err}") from None
    return {"file": path.relative_to(root).as_posix(), "scale": scale, "config": {paper: tiers}}


def _new_keys(overrides, config, prefix=""):
    """The dotted keys of `overrides` that `config` lacks (a mapping replaced by a scalar counts as present)."""
    keys = []
    for key, value in overrides.items():
        if not isinstance(config, dict) or key not in config:
            keys.append(prefix + str(key))
        elif isinstance(value, dict):
            keys += _new_keys(value, config[key], f"{prefix}{key}.")
    return keys


def overlay_args(repo, paper, folder):
    """Snakemake's arguments that apply the paper's overlay (written, without `scale`, into `folder`), or []."""
    found = overlay(paper, repo)
    if found is None:
        return []
    path = Path(folder) / f"{paper}.smoke.json"  # JSON is YAML: a config file Snakemake reads
    write_json(path, found["config"])
    return ["--configfile", "profiles/full/tier.yaml", str(path)]


def standin(name, path):
    """Write a generated stand-in for registry dataset `name` to `path`; return what it is, in words."""
    from shared.data.prepare import write_safetensors
    from shared.data.registry import REGISTRY

    dataset, rng = REGISTRY[name], np.random.default_rng(0)
    meta = {"dataset": name, "stand_in": "generated for a smoke run; not data"}
    if dataset.kind == "images":
        n_classes = dataset.n_classes or 1
        arrays = {}
        for split, n in (("train", dataset.n_train), ("test", N_TEST[name])):
            arrays[f"x_{split}"] = rng.integers(0, 256, (n, *dataset.image_shape), dtype=np.uint8)
            arrays[f"y_{split}"] = np.arange(n, dtype=np.int64) % n_classes
        what = f"uniform random uint8 images {dataset.image_shape}, {dataset.n_train:,} + {N_TEST[name]:,}, " \
               f"{n_classes} balanced labels"
    elif dataset.kind == "triples":
        n_ent, n_rel, *sizes = GRAPHS[name]
        arrays = {split: np.stack([rng.integers(0, n_ent, n), rng.integers(0, n_rel, n), rng.integers(0, n_ent, n)],
                                  1).astype(np.int64) for split, n in zip(("train", "valid", "test"), sizes)}
        # every entity heads some training triple, as in the real splits (a loader rejects test-only entities)
        arrays["train"][:, 0] = rng.permutation(np.arange(sizes[0]) % n_ent)
        meta.update(entities=json.dumps([f"e{i}" for i in range(n_ent)]),
                    relations=json.dumps([f"r{i}" for i in range(n_rel)]))
        what = f"uniform random triples over {n_ent:,} entities (each in training) and {n_rel:,} relations, " \
               f"{'/'.join(map(str, sizes))}"
    else:  # text: the generated stories under a vocabulary of the real size
        from shared.data.formats import TINYSTORIES_VOCAB_SIZE, load_stories_synthetic
        from shared.data.stories import WordTokenizer

        stories = load_stories_synthetic({})
        words = WordTokenizer.from_json(stories["vocab"]).vocab[3:]
        vocab = WordTokenizer(words + tuple(f"filler{i}" for i in range(TINYSTORIES_VOCAB_SIZE - 3 - len(words))))
        train = np.resize(stories["train_tokens"], TINYSTORIES_TRAIN_TOKENS).astype(np.int32)
        arrays = {"train_tokens": train, "val_tokens": stories["val_tokens"]}
        meta.update(vocab=vocab.to_json(), n_train_stories=str(stories["n_train_stories"]),
                    n_val_stories=str(stories["n_val_stories"]))
        what = f"the generated stories_synthetic text repeated to {TINYSTORIES_TRAIN_TOKENS:,} tokens, " \
               f"{TINYSTORIES_VOCAB_SIZE:,}-word vocabulary"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_safetensors(arrays, path, meta)
    return "stand-in: " + what


def prepare_data(repo, papers):
    """Prepare every registry dataset the full tier of `papers` reads, in the scratch copy; a stand-in where the
    real one cannot be had. Returns {paper: {dataset: "real" or "stand-in: ..."}}."""
    dry = snakemake(repo, "--profile", "profiles/full", "--cores", "1", "-n", "--forceall", "--", *papers).stdout
    needed = {paper: set() for paper in papers}
    for block in re.split(r"^(?=(?:local)?rule )", dry, flags=re.M):  # one job a block: its rule, then its input
        rule = re.match(r"(?:local)?rule (\w+):", block)
        users = [p for p in papers if rule and rule.group(1).startswith(p + "_")]
        for paper in users[:1]:
            needed[paper].update(re.findall(r"data/prepared/([a-z0-9_]+)\.safetensors", block))
    data = {}
    for name in sorted({name for names in needed.values() for name in names}):
        out = repo / "data" / "prepared" / f"{name}.safetensors"
        try:
            done = subprocess.run([sys.executable, "-m", "shared.data", "prepare", name, str(out),
                                   f"--cache={ROOT / 'data' / 'raw'}"], cwd=repo, capture_output=True, text=True,
                                  timeout=PREPARE_TIMEOUT_S)
            real = done.returncode == 0 and out.is_file()
        except subprocess.TimeoutExpired:
            real = False
        if not real:  # in a child process: a parent holding gigabytes would pass its peak on to every job it forks
            made = subprocess.run([sys.executable, "-c", "import pathlib, sys; from shared.pipeline.smoke import "
                                   "standin; print(standin(sys.argv[1], pathlib.Path(sys.argv[2])))", name, str(out)],
                                  cwd=ROOT, capture_output=True, text=True, check=True)
            data[name] = made.stdout.strip()
        else:
            data[name] = "real"
    return {paper: {name: data[name] for name in sorted(names)} for paper, names in needed.items()}


def run_paper(repo, paper, cores, steps, log, limit_s):
    """The full tier of one paper, capped, stopped after `limit_s` seconds; returns the run's measurements (CPU
    time and peak memory of the whole process tree, from wait4)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", STEPS_VAR: str(steps), LOG_VAR: str(log),
           "REPLICATE_WORKER": "0"}  # jobs as child processes, so that their CPU and memory are counted
    out = log.with_suffix(".out")
    t0 = time.perf_counter()
    with open(out, "w") as f:
        proc = subprocess.Popen([sys.executable, "-m", "snakemake", "--profile", "profiles/full", "--cores", str(cores),
                                 "--keep-going", *overlay_args(repo, paper, log.parent), "--", paper], cwd=repo,
                                stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        deadline, timed_out = time.monotonic() + limit_s, False
        try:
            while True:  # wait4, not Popen.wait: it gives the rusage of the whole reaped tree
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if not timed_out and time.monotonic() > deadline:
                    timed_out, deadline = True, time.monotonic() + GRACE_S
                    proc.send_signal(signal.SIGINT)  # Snakemake may stop its jobs and reap them (their usage counts)
                elif timed_out and time.monotonic() > deadline:
                    os.killpg(proc.pid, signal.SIGKILL)
                time.sleep(0.5)
        except BaseException:  # the smoke itself stopped (Ctrl-C): its run in its own session must stop too
            os.killpg(proc.pid, signal.SIGKILL)
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
    output = out.read_text()
    done = re.findall(r"(\d+) of (\d+) steps", output)
    planned = re.search(r"^total\s+(\d+)", output, re.M)
    # a job killed at the limit is not reaped by Snakemake, so wait4 misses it; each finished job recorded its own
    jobs_cpu = sum(json.loads(f.read_text()).get("cpu_s") or 0.0 for f in (repo / "results" / paper).rglob("*.cost.json"))
    return {"returncode": proc.returncode, "timed_out": timed_out,
            "limit_s": limit_s, "wall_s": time.perf_counter() - t0, "cpu_s": max(usage.ru_utime + usage.ru_stime, jobs_cpu),
            "peak_rss_mb": usage.ru_maxrss / 1024, "jobs_done": int(done[-1][0]) if done else 0,
            "jobs_planned": int(planned.group(1)) if planned else None,
            "failed_rules": sorted(set(re.findall(r"Error in rule (\w+):", output))),
            "tail": output[-3000:] if proc.returncode and not timed_out or "Error in rule" in output else ""}


def read_loops(log):
    """The capped loops' records (shared.io.smoke), one a loop."""
    return [json.loads(line) for line in log.read_text().splitlines()] if log.is_file() else []


def per_job(loops):
    """The loops' records summed per job: steps asked for and run, FLOPs of all the steps asked for, the CPU seconds
    the remaining steps would take (each loop at its own rate), the job's peak memory."""
    jobs = {}
    for r in (r for r in loops if "loop" in r):  # the other lines: stand-ins (see `standins`)
        j = jobs.setdefault(r["job"], {"loops": 0, "steps_full": 0, "steps_run": 0, "flops_full": 0,
                                       "cpu_s_rest": 0.0, "cpu_s_per_step_max": 0.0, "peak_rss_mb": 0.0})
        j["loops"] += 1
        j["steps_full"] += r["steps_full"]
        j["steps_run"] += r["steps_run"]
        j["flops_full"] += r["steps_full"] * (r["flops_per_step"] or 0)
        j["cpu_s_rest"] += (r["steps_full"] - r["steps_run"]) * (r["cpu_s_per_step"] or 0.0)
        j["cpu_s_per_step_max"] = max(j["cpu_s_per_step_max"], r["cpu_s_per_step"] or 0.0)
        j["peak_rss_mb"] = max(j["peak_rss_mb"], r["peak_rss_mb"])
    return jobs


def standins(records):
    """The stand-ins the jobs made themselves ({name: "stand-in: ..."}, e.g. shared.data.hub's model in place of a
    download), logged beside their loops."""
    return {r["stand_in"]: r["what"] for r in records if "stand_in" in r}


def status(run):
    if run["returncode"] == 0 and not run["timed_out"]:
        return "ran"
    if run["failed_rules"]:
        return "failed: " + ", ".join(run["failed_rules"])
    if run["timed_out"]:
        return f"stopped at the {run['limit_s']:.0f} s limit, no failure in {run['jobs_done']} of " \
               f"{run['jobs_planned']} jobs"
    return f"failed (exit {run['returncode']})"


def project(run, jobs, scale=1):
    """Projected cost of the uncapped full tier (see the module's docstring); `scale`: the reduced-repetition
    overlay's factor (1 without one)."""
    flops = sum(j["flops_full"] for j in jobs.values()) * scale
    note = "CPU: the capped run's CPU time plus each loop's remaining steps at its measured CPU s/step"
    if scale != 1:
        note += f"; both x {scale:g}, the overlay's estimate of the full tier's work over the reduced smoke's"
    return {"cpu_hours": (run["cpu_s"] + sum(j["cpu_s_rest"] for j in jobs.values())) * scale / 3600,
            "gpu_hours": flops / GPU_FLOPS / 3600, "flops": flops, "gpu_assumption": GPU_ASSUMPTION,
            "complete": run["returncode"] == 0 and not run["timed_out"],  # False: jobs not reached are missing
            "note": note}


def ran_code(repo, paper, root):
    """{path: hash} of the code the run's jobs recorded loading (every `code` map in its JSON outputs), with every
    file of the paper's folder and the step cap, whether a job reached them or not."""
    code = {}

    def collect_code(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "code" and isinstance(value, dict):
                    code.update({k: v for k, v in value.items() if isinstance(v, str)})
                else:
                    collect_code(value)
        elif isinstance(node, list):
            for value in node:
                collect_code(value)

    for path in (repo / "results" / paper).rglob("*.json"):
        try:
            collect_code(json.loads(path.read_text()))
        except ValueError:
            continue
    own = [*sorted((root / "replications" / paper).rglob("*.py")), *sorted((root / "replications" / paper).rglob(
        "*.smk")), root / "shared" / "io" / "smoke.py"]
    code.update({f.relative_to(root).as_posix(): file_hash(f) for f in own if "__pycache__" not in f.parts})
    return {path: digest for path, digest in sorted(code.items()) if not is_test(path, paper)}


def is_test(path, paper):
    """A file of the paper's tests/: no smoke job runs it, so editing it leaves the smoke as it was."""
    return path.startswith(f"replications/{paper}/tests/")


def inputs(paper, code, root=CODE_ROOT):
    from shared.pipeline.config import load_paper_config

    found = {"config": config_hash(load_paper_config(Path(root) / "replications" / paper, "full")), "code": code}
    path = Path(root) / "replications" / paper / SMOKE_OVERLAY
    return found | ({"overlay": file_hash(path)} if path.is_file() else {})


def check(paper, root=CODE_ROOT):
    """Reasons reports/<paper>/full/smoke.json is stale (empty: fresh), against the files under `root` now."""
    path = Path(root) / "reports" / paper / "full" / "smoke.json"
    if not path.is_file():
        return [f"{path.relative_to(root)} missing"]
    recorded = json.loads(path.read_text()).get("inputs") or {}
    now = inputs(paper, {}, root)
    reasons = [] if now["config"] == recorded.get("config") else ["config changed"]
    if now.get("overlay") != recorded.get("overlay"):
        reasons.append(f"replications/{paper}/{SMOKE_OVERLAY} " + ("changed" if now.get("overlay") else "removed"))
    if not recorded.get("code"):
        reasons.append("the code it ran was not recorded")
    ran = {path: digest for path, digest in (recorded.get("code") or {}).items() if not is_test(path, paper)}
    return reasons + code_changed(ran, root)


def measure_smoke(papers=(), cores=2, steps=STEPS, limit_s=LIMIT_S, root=ROOT):
    """Smoke-run the full tier of each paper (default all); write reports/<paper>/full/smoke.json; return them."""
    root = Path(root)
    papers = sorted(papers) or discover_papers(root / "replications")
    written = {}
    overlays = {paper: overlay(paper, root) for paper in papers}  # a bad smoke.yaml stops here, before any run
    with tempfile.TemporaryDirectory(prefix="smoke-") as tmp:
        repo = copy_repo(Path(tmp) / "repo", papers, root)
        data = prepare_data(repo, papers)
        for paper in papers:
            log = Path(tmp) / f"{paper}.jsonl"
            t0 = time.time()
            run = run_paper(repo, paper, cores, steps, log, limit_s)
            records = read_loops(log)
            jobs, made = per_job(records), standins(records)
            prov, peak_mb = collect(), max([run["peak_rss_mb"], *(j["peak_rss_mb"] for j in jobs.values())])
            doc = {"paper": paper, "tier": "full", "status": status(run),
                   "ran": run["returncode"] == 0 and not run["timed_out"],
                   "measured_utc": datetime.fromtimestamp(t0, UTC).isoformat(timespec="seconds"),
                   "git_commit": prov["git_commit"], "git_dirty": prov["git_dirty"], "machine": machine(),
                   "cap_steps": steps, "cores": cores, **{k: v for k, v in run.items() if k != "returncode"},
                   "peak_rss_mb": peak_mb, "fits_24gib": peak_mb <= MEMORY_LIMIT_MB,
                   "data": {**data[paper], **made},
                   "reduced": overlays[paper] and {k: v for k, v in overlays[paper].items() if k != "config"}
                   | {"overrides": overlays[paper]["config"][paper]["full"]},
                   "projected": project(run, jobs, overlays[paper]["scale"] if overlays[paper] else 1), "jobs": jobs,
                   "inputs": inputs(paper, ran_code(repo, paper, root), root)}
            write_json(root / "reports" / paper / "full" / "smoke.json", doc)
            written[paper] = doc
    return written


def dry_run(papers, root=ROOT):
    """Plan each paper's full tier with its overlay applied (`replicate smoke --dry-run`): the overlay is valid and
    the jobs resolve; nothing runs. Returns the exit status."""
    status = 0
    with tempfile.TemporaryDirectory(prefix="smoke-dry-") as tmp:
        for paper in sorted(papers) or discover_papers(Path(root) / "replications"):
            args = overlay_args(root, paper, tmp)
            done = snakemake(root, "--profile", "profiles/full", "--cores", "1", "-n", *args, "--", paper,
                             rule_blocks=False)
            planned = re.search(r"^total\s+(\d+)", done.stdout, re.M)
            print(f"{paper}: {'overlay ' + paper + '/' + SMOKE_OVERLAY if args else 'no overlay'}, "
                  + (f"{planned.group(1)} jobs planned" if done.returncode == 0 and planned else
                     "nothing to plan" if done.returncode == 0 else f"dry run failed:\n{done.stderr[-2000:]}"))
            status = status or done.returncode
    return status


def main(args):
    from shared.pipeline.config import ConfigError

    try:
        if getattr(args, "dry_run", False):
            return dry_run(args.papers)
        written = measure_smoke(args.papers, args.cores, args.steps, args.limit)
    except ConfigError as err:
        print(f"replicate smoke: {err}", file=sys.stderr)
        return 2
    for paper, doc in written.items():
        p = doc["projected"]
        print(f"{paper}: {doc['status']}, "
              f"{doc['wall_s']:.0f} s, peak {doc['peak_rss_mb']:.0f} MB, projected {p['cpu_hours']:.2f} CPU-h, "
              f"{p['gpu_hours']:.3f} GPU-h")
    return 0
