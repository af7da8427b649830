"""The layering of normcore: every import points down (or stays within its layer).

From the bottom: the small stack, the reference norms, the fast tier, the rest of the
Transformer stack, the teaching and performance tools, the subcommands, the command line.
A module may import its own layer and the layers below it, never one above: the norms never
import a teaching tool, a subcommand never imports the command line. Imports inside
functions count too. ``normcore/__init__.py`` is the public namespace that gathers
everything and is left out; the practice solutions and skeletons import NumPy only.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "normcore"

LAYERS = [  # bottom first: (layer, the top-level modules and packages of normcore in it)
    ("helpers", {"_array", "_install", "progress", "i18n", "bibliography", "notebooks"}),
    ("stack", {"module"}),
    ("reference norms", {"norms"}),
    ("fast tier", {"fast"}),
    ("Transformer stack", {"nn", "optim", "tasks", "train", "distributed"}),
    ("tools", {"gradcheck", "layer_cases", "derivations", "experiments", "practice",
               "torch_bridge", "perf"}),
    ("subcommands and the docs site", {"commands", "docs"}),
    ("command line", {"cli", "__main__"}),
]
RANK = {name: rank for rank, (_, names) in enumerate(LAYERS) for name in names}


def top_name(path):
    """'norms' for normcore/norms/base.py, 'cli' for normcore/cli.py."""
    part = path.relative_to(PACKAGE).parts[0]
    return part[:-3] if part.endswith(".py") else part


def modules():
    return sorted(p for p in PACKAGE.rglob("*.py")
                  if p != PACKAGE / "__init__.py" and "solutions" not in p.parts
                  and "skeletons" not in p.parts)


def imported(path):
    """(line, top-level normcore name) of every import of normcore in the file."""
    here = path.relative_to(PACKAGE).with_suffix("").parts  # ("norms", "base")
    package = here[:-1] if path.name != "__init__.py" else here[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name.split(".") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = (node.module or "").split(".")
            else:
                base = ["normcore", *package[:len(package) - (node.level - 1)]]
                base += node.module.split(".") if node.module else []
            # "from .. import nn": each name may be a module of its own
            targets = [base + [a.name] if len(base) == 1 else base for a in node.names]
        else:
            continue
        for target in targets:
            if target[0] == "normcore" and len(target) > 1:
                found.append((node.lineno, target[1]))
    return found


def test_every_module_of_normcore_has_a_layer():
    names = {top_name(p) for p in modules()}
    assert names <= set(RANK), f"add to LAYERS in {Path(__file__).name}: {names - set(RANK)}"


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path):
    mine = RANK[top_name(path)]
    upward = [f"line {line}: {name} ({LAYERS[RANK[name]][0]})"
              for line, name in imported(path) if name in RANK and RANK[name] > mine]
    assert not upward, (f"{path.relative_to(PACKAGE)} ({LAYERS[mine][0]}) imports from a layer "
                        f"above it: " + "; ".join(upward))


def test_the_check_sees_an_upward_import(tmp_path):
    """The check itself: a norm that imports the command line is caught."""
    global PACKAGE
    fake = tmp_path / "normcore"
    (fake / "norms").mkdir(parents=True)
    (fake / "norms" / "bad.py").write_text("from .. import cli\nfrom ..cli import main\n"
                                           "import normcore.commands.tour\n")
    saved, PACKAGE = PACKAGE, fake
    try:
        assert imported(fake / "norms" / "bad.py") == [(1, "cli"), (2, "cli"), (3, "commands")]
    finally:
        PACKAGE = saved


def private_reaches(source):
    """(line, expression) of every ``obj._name`` where obj is not self or cls and ``_name`` is
    not defined in the same file: a private hook of another module's object."""
    tree = ast.parse(source)
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    defined |= {k.arg for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords
                if k.arg}  # e.g. parser.set_defaults(_module=...) read back as args._module
    defined |= {t.attr for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AugAssign))
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                if isinstance(t, ast.Attribute)}
    return [(n.lineno, ast.unparse(n)) for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and n.attr.startswith("_")
            and not n.attr.startswith("__") and n.attr not in defined
            and not (isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"))
            and ast.unparse(n) not in PUBLIC_UNDERSCORED]


# names the standard library makes public with a leading underscore: a forked child ends with
# os._exit (no atexit handler of the parent's, no buffer of the parent's flushed twice)
PUBLIC_UNDERSCORED = {"os._exit"}


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_private_hook_of_another_module_is_called(path):
    """A module uses other modules' objects through their public names only; a hook that
    another module needs gets a public name (or a public function)."""
    assert not private_reaches(path.read_text()), private_reaches(path.read_text())


def test_the_check_sees_a_private_hook():
    source = "def f(layer, x):\n    return layer._standardize(x) + self._own(x)\n"
    assert private_reaches(source) == [(2, "layer._standardize")]


# --- no import cycles between normcore's modules ----------------------------------------------
def module_name(path, package=None):
    """'normcore.derivations.steps' for normcore/derivations/steps.py, 'normcore.norms' for
    normcore/norms/__init__.py."""
    parts = ("normcore",) + path.relative_to(package or PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_imports(path, known, package=None):
    """The modules of normcore that the file imports, at the top or inside a function: the
    dotted names in ``known`` ("from . import tape" names the module tape; "from .core import
    check" names core; "from .. import norms" names the package norms)."""
    here = module_name(path, package).split(".")
    if path.name != "__init__.py":
        here = here[:-1]  # the package the module is in
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            candidates = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (node.module or "").split(".") if node.level == 0 else (
                here[:len(here) - (node.level - 1)] + (node.module.split(".") if node.module else []))
            base = ".".join(base)
            candidates = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for name in candidates:
            while name and name not in known:  # import normcore.nn.attention.x: the module part
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def import_cycles(package=None):
    """Every cycle of imports among normcore's modules, as the strongly connected groups of the
    import graph (Tarjan's algorithm): lists of module names that import each other round."""
    package = package or PACKAGE
    files = {module_name(p, package): p for p in package.rglob("*.py")
             if "solutions" not in p.parts and "skeletons" not in p.parts}
    graph = {name: module_imports(path, files, package) - {"normcore"} for name, path in files.items()
             if name != "normcore"}  # the root namespace gathers everything and is imported by no module
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1 or v in graph.get(v, ()):
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


KNOWN_CYCLES_IN = ()  # a package whose cycles are known and left to its own restructuring: none


def test_no_import_cycle_in_normcore():
    """No module of normcore imports, at the top or inside a function, a module that imports it
    back (directly or round a longer circle)."""
    cycles = [c for c in import_cycles() if not all(m.startswith(KNOWN_CYCLES_IN) for m in c)]
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_check_sees_a_cycle_through_an_import_inside_a_function(tmp_path):
    """The check itself: steps.py imports a family inside a function, the family imports
    steps at its top, as the step-throughs once did."""
    fake = tmp_path / "normcore"
    (fake / "derivations").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "derivations" / "__init__.py").write_text("from .steps import step_through\n")
    (fake / "derivations" / "steps.py").write_text(
        "def step_through(kind):\n    from .attention import run\n    return run(kind)\n")
    (fake / "derivations" / "attention.py").write_text("from .steps import step_through\n")
    (fake / "derivations" / "tape.py").write_text("import normcore.derivations.steps\n")
    assert import_cycles(fake) == [["normcore.derivations.attention", "normcore.derivations.steps"]]
