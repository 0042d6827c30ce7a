"""Import a paper folder's scripts in tests without leaving them on sys.path or in sys.modules."""
import importlib.util
import sys
from pathlib import Path


def load_paper_modules(paper_dir, names):
    """{name: module} for the scripts `<paper_dir>/<name>.py`, in the order given (a script that imports a sibling
    by bare name, `from common import ...`, must come after it), each under a name of its own (<paper>_<name>).

    The scripts import each other by bare name, and other tests load other papers' common.py / model.py: the bare
    names are bound to this paper's modules only while they load, then sys.modules is restored."""
    paper_dir = Path(paper_dir).resolve()
    saved = {name: sys.modules.get(name) for name in names}
    before = set(sys.modules)
    sys.path.insert(0, str(paper_dir))  # for any other sibling a script imports by bare name
    modules = {}
    try:
        for name in names:
            spec = importlib.util.spec_from_file_location(f"{paper_dir.name}_{name}", paper_dir / f"{name}.py")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            modules[name] = module
    finally:
        sys.path.remove(str(paper_dir))
        for name in set(sys.modules) - before:  # siblings loaded by bare name: not left for other tests to find
            if Path(getattr(sys.modules[name], "__file__", None) or "/").parent == paper_dir:
                del sys.modules[name]
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    return modules
