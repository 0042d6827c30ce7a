"""Every paper folder carries the BibTeX of its paper, and README.md's references are what the `index` rule generates
from those files."""
import re
from pathlib import Path

import pytest
import yaml

from shared.pipeline.report import REFERENCES_END, REFERENCES_START, references

ROOT = Path(__file__).resolve().parents[1]
PAPERS = sorted(p.parent.name for p in (ROOT / "replications").glob("*/claims.yaml"))
ENTRY = re.compile(r"@(\w+)\{([^,\s]+),(.*?)\n\}", re.S)


def test_readme_references_are_generated_from_the_papers_bibtex():
    readme = (ROOT / "README.md").read_text()
    assert REFERENCES_START in readme and REFERENCES_END in readme, "README.md lacks the references markers"
    section = readme.split(REFERENCES_START, 1)[1].split(REFERENCES_END, 1)[0].strip()
    assert section == references(ROOT / "replications"), \
        "README.md's references are out of date: run `python -m shared.pipeline.report index` (the index rule)"


@pytest.mark.parametrize("paper", PAPERS)
def test_each_paper_folder_cites_its_paper(paper):
    """Its references.bib holds entries with a title, authors and a year, and the arXiv id the claims' title or the
    folder's README gives is the eprint of one of them."""
    path = ROOT / "replications" / paper / "references.bib"
    assert path.is_file(), f"{paper}: replications/{paper}/references.bib is missing; every paper folder cites its paper"
    entries = ENTRY.findall(path.read_text())
    assert entries, f"{paper}: {path.name} holds no BibTeX entry"
    for kind, key, body in entries:
        fields = dict(re.findall(r"^\s*(\w+)\s*=\s*\{(.*)\},?$", body, re.M))
        missing = {"title", "author", "year"} - set(fields)
        assert not missing, f"{paper}: {path.name}: entry {key} lacks {sorted(missing)}"
    readme = ROOT / "replications" / paper / "README.md"
    stated = yaml.safe_load((ROOT / "replications" / paper / "claims.yaml").read_text())["title"]
    stated += readme.read_text()[:1000] if readme.is_file() else ""
    arxiv = re.search(r"arXiv:? ?(\d{4}\.\d{4,5})", stated)
    if arxiv:
        assert re.search(rf"eprint\s*=\s*\{{{re.escape(arxiv.group(1))}\}}", path.read_text()), \
            f"{paper}: {path.name} does not cite arXiv {arxiv.group(1)}, which its claims.yaml or README names"
