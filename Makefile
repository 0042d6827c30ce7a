# The two commands of the README:
#   make run    set up .venv from envs/requirements.lock if needed, then render every paper's quick tier
#   make test   set it up if needed, then run the tests
# ARGS passes more to snakemake or pytest: `make run ARGS=lsa_one_step_gd`, `make test ARGS=tests/shared`.
# The install runs once per lock: its stamp file in .venv is named by the hash of the lock and pyproject.toml, so an
# edited lock installs again and an unchanged one does not.

PYTHON ?= python3.11
VENV := .venv
HASH := $(shell cat envs/requirements.lock pyproject.toml | (sha256sum 2>/dev/null || shasum -a 256) | cut -c1-16)
STAMP := $(VENV)/.installed-$(HASH)
ACTIVATE := . $(VENV)/bin/activate

.PHONY: run test install
run: $(STAMP)
	$(ACTIVATE) && snakemake --cores 2 $(ARGS)

test: $(STAMP)
	$(ACTIVATE) && python -m pytest $(ARGS)

install: $(STAMP)

# The README's install commands, verbatim (tests/test_readme_commands.py checks that they match).
$(STAMP):
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	rm -f $(VENV)/.installed-*
	$(ACTIVATE) && pip install --no-deps torch==2.13.0+cpu --extra-index-url https://download.pytorch.org/whl/cpu
	$(ACTIVATE) && pip install -r envs/requirements.lock
	$(ACTIVATE) && pip install --no-deps -e .
	touch $@
