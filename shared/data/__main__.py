"""python -m shared.data {prepare,info}: fetch, verify and write a dataset; list the registry."""
import argparse
import sys

from shared.data.fetch import DataCorrupted, DatasetUnavailable
from shared.data.prepare import prepare
from shared.data.registry import REGISTRY


def _print_info():
    for dataset in REGISTRY.values():
        print(f"{dataset.name}: {dataset.description}\n  licence:  {dataset.licence}\n  citation: {dataset.citation}")
        for folder in dataset.local_dirs:
            print(f"  local dir: {folder}")
        if not dataset.files:
            print("  files: none (generated)")
        for role, remote in dataset.files.items():
            print(f"  {role}: {remote.filename}\n    sha256: {remote.sha256}")
            if remote.raw_sha256:
                print(f"    raw sha256 (gunzipped): {remote.raw_sha256}")
            for url in remote.urls:
                print(f"    url: {url}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m shared.data", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    prep = commands.add_parser("prepare", help="fetch, verify and write one safetensors file")
    prep.add_argument("name", choices=sorted(REGISTRY))
    prep.add_argument("out")
    prep.add_argument("--cache", default=None, help="download cache (default, or empty: $REPLICATIONS_DATA_DIR, else data/raw)")
    commands.add_parser("info", help="list datasets, licences, files, URLs and checksums")
    args = parser.parse_args(argv)
    if args.command == "info":
        _print_info()
        return 0
    try:
        print(prepare(args.name, args.out, args.cache))
    except (DatasetUnavailable, DataCorrupted) as error:  # bad input: the message says it all, no traceback
        print(error, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

