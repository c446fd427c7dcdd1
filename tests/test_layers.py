"""The layered house, read from the source: who may import whom, and what each layer needs.

Every ``import`` statement of the package (inside functions and ``TYPE_CHECKING`` blocks
too) is read with `ast`, so the rules hold for the code as written, not only for what a
test happened to import:

- our own modules: a layer imports only the layers below it (`ALLOWED`): the wire
  nothing of ours, the engine only the wire, the client never the service or the
  analysis side, the analysis side never the service; no exception by name;
- no circle: no module imports itself through others (the imports that run, inside
  functions too; a ``TYPE_CHECKING`` block runs only for the type checker);
- other packages: each layer imports only what its extra (or the core) declares in
  pyproject.toml, and `servicetools.extras.EXTRAS` names the right modules.
"""

from __future__ import annotations

import ast
import functools
import sys
import tomllib
from collections.abc import Iterable, Iterator
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from servicetools import extras

from .support.helpers import ROOT

PACKAGE = ROOT / "servicetools"

#: Which layers each layer may import (besides itself). ``base`` is the version and the
#: extras table; ``app`` (the package's front: __init__, the CLI, the demo) composes
#: everything and may import anything.
ALLOWED: dict[str, set[str]] = {
    "base": set(),
    "bundled": set(),
    "wire": set(),
    "client": {"wire", "base"},
    "analysis": {"wire", "client", "base"},
    "engine": {"wire", "base"},
    "service": {"wire", "engine", "base", "bundled"},
    "datagen": {"wire", "base"},
    "app": {"base", "bundled", "wire", "client", "analysis", "service", "engine", "datagen"},
}

#: Third-party packages each layer may import: the core dependencies plus these extras.
LAYER_EXTRAS: dict[str, tuple[str, ...]] = {
    "base": (),
    "bundled": (),
    "client": (),
    "analysis": ("plots", "widgets", "datasets"),
    "engine": ("service",),
    "service": ("service", "scale"),
    "datagen": ("datagen",),
    "app": ("service", "plots"),
}
#: The wire is lighter than the core: the standard library and jsonschema only.
WIRE_PACKAGES = {"jsonschema", "referencing"}


def layer_of(module: str) -> str:
    parts = module.split(".")
    assert parts[0] == "servicetools", module
    if len(parts) == 1 or parts[1] in ("__main__", "cli", "extract_cli", "demo", "report"):
        return "app"
    if parts[1] in ("_version", "extras"):
        return "base"
    if parts[1] == "service" and len(parts) > 2 and parts[2] == "engine":
        return "engine"
    if parts[1] in ("wire", "client", "analysis", "service", "datagen", "bundled"):
        return parts[1]
    raise AssertionError(f"{module} belongs to no layer: add it to layer_of")


def module_name(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    """Whether an ``if`` tests ``TYPE_CHECKING`` (bare, or ``typing.TYPE_CHECKING``)."""
    return ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _run_time_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` but those of ``if TYPE_CHECKING:`` bodies (their ``else``
    runs, so it stays)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(reversed(node.orelse))
        else:
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def imports(module: str, source: str, is_package: bool, known: frozenset[str] = frozenset(),
            *, type_checking: bool = True) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in ``source``; without
    ``type_checking``, not those under ``if TYPE_CHECKING:``.

    ``from package import name`` is the submodule ``package.name`` when ``known`` holds
    it, else ``package`` itself.
    """
    package = module if is_package else module.rpartition(".")[0]
    tree = ast.parse(source)
    for node in ast.walk(tree) if type_checking else _run_time_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            for alias in node.names:
                submodule = f"{origin}.{alias.name}"
                yield node.lineno, submodule if submodule in known else origin


@functools.cache
def our_modules() -> frozenset[str]:
    return frozenset(module_name(p) for p in PACKAGE.rglob("*.py"))


def layer_violations(module: str, source: str, is_package: bool, known: frozenset[str]
                     ) -> list[str]:
    """``"module:line imports target (layer -> layer)"`` for each import across the rules."""
    layer = layer_of(module)
    found: dict[tuple[int, str], str] = {}  # one report per statement and layer
    for line, target in imports(module, source, is_package, known):
        if not target.startswith("servicetools") or target not in known:
            continue
        target_layer = layer_of(target)
        if target_layer != layer and target_layer not in ALLOWED[layer]:
            found.setdefault((line, target_layer),
                             f"{module}:{line} imports {target} ({layer} -> {target_layer})")
    return list(found.values())


def sources() -> Iterator[tuple[str, str, bool]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield module_name(path), path.read_text(encoding="utf-8"), path.name == "__init__.py"


def test_layers_import_only_downwards() -> None:
    known = our_modules()
    found = [v for module, source, is_package in sources()
             for v in layer_violations(module, source, is_package, known)]
    assert found == []


def test_every_import_of_ours_exists() -> None:
    # Late imports run only when their function does: a moved module leaves them broken.
    known = our_modules()
    broken = [f"{module}:{line} imports {target}, which does not exist"
              for module, source, is_package in sources()
              for line, target in imports(module, source, is_package, known)
              if target.split(".")[0] == "servicetools" and target not in known]
    assert broken == []


# -- circles ----------------------------------------------------------------------------
def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` (Tarjan), each sorted: the modules
    of one component all import each other, through the others."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:  # the root of a component: it is on the stack above
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def import_cycles(modules: Iterable[tuple[str, str, bool]], known: frozenset[str]
                  ) -> list[str]:
    """One report per circle among ``modules`` ((name, source, is_package)): its modules,
    then each import that closes it (``module:line imports target``), to break one."""
    edges: dict[str, dict[str, int]] = {}  # module -> module of ours -> first line
    for module, source, is_package in modules:
        targets = edges.setdefault(module, {})
        for line, target in imports(module, source, is_package, known, type_checking=False):
            if target in known and target != module:
                targets.setdefault(target, line)
    reports = []
    for component in strongly_connected({m: set(t) for m, t in edges.items()}):
        if len(component) < 2:
            continue
        inside = set(component)
        steps = [f"  {module}:{line} imports {target}" for module in component
                 for target, line in sorted(edges.get(module, {}).items()) if target in inside]
        reports.append(f"{len(component)} modules import each other in a circle: "
                       + ", ".join(component) + "\n" + "\n".join(steps))
    return reports


def test_no_import_cycles() -> None:
    # A circle works only in the order Python happens to meet its modules, hides which
    # side owns what, and ties the layers' halves together (issue 28).
    cycles = import_cycles(sources(), our_modules())
    if cycles:
        pytest.fail("\n\n".join(cycles), pytrace=False)


def test_a_planted_cycle_is_caught() -> None:
    planted = {
        "servicetools.client.a": "from . import b\n",
        "servicetools.client.b": "def f():\n    from .c import x\n",  # late: counts
        "servicetools.client.c": "import servicetools.client.a\n",
        # For the type checker only: no circle with a.
        "servicetools.client.d": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                  "    from . import a\nelse:\n    from . import e\n"),
        "servicetools.client.e": "from . import a\n",
    }
    cycles = import_cycles([(m, source, False) for m, source in planted.items()],
                           frozenset(planted))
    assert cycles == [
        "3 modules import each other in a circle: servicetools.client.a, "
        "servicetools.client.b, servicetools.client.c\n"
        "  servicetools.client.a:1 imports servicetools.client.b\n"
        "  servicetools.client.b:2 imports servicetools.client.c\n"
        "  servicetools.client.c:1 imports servicetools.client.a"]
    assert strongly_connected({"x": {"y"}, "y": {"x", "z"}, "z": set()}) == [["z"], ["x", "y"]]


def private_reach_ins(module: str, source: str, is_package: bool, known: frozenset[str]
                      ) -> list[str]:
    """Uses of another module's private names: ``from .x import _y`` and ``x._y``.

    A package's own private modules (``widgets/_parts.py``) are its business, so a name
    imported from a module whose own name starts with ``_`` is fine, and so is a private
    module imported by its package's members.
    """
    package = module if is_package else module.rpartition(".")[0]
    found = []
    aliases: dict[str, str] = {}  # local name -> module of ours it stands for
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")
            origin = ".".join(base[: len(base) - node.level + 1]
                              + ([node.module] if node.module else []))
            for alias in node.names:
                submodule = f"{origin}.{alias.name}"
                if submodule in known:
                    aliases[alias.asname or alias.name] = submodule
                elif (alias.name.startswith("_") and not alias.name.startswith("__")
                      and not origin.rpartition(".")[2].startswith("_")):
                    found.append(f"{module}:{node.lineno} imports {alias.name} from {origin}")
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            found.append(f"{module}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}")
    return found


def test_no_module_uses_another_modules_private_names() -> None:
    # A private name is free to change; a module that reaches for one in another module
    # ties the two together behind the reader's back (batch.py once did, with client.py).
    known = our_modules()
    found = [v for module, source, is_package in sources()
             for v in private_reach_ins(module, source, is_package, known)]
    assert found == []


def test_a_private_reach_in_is_caught() -> None:
    known = our_modules()
    source = "from .client import _segment\nfrom . import polling\npolling._hidden()\n"
    found = private_reach_ins("servicetools.client.many", source, False, known)
    assert found == ["servicetools.client.many:1 imports _segment from servicetools.client.client",
                     "servicetools.client.many:3 uses servicetools.client.polling._hidden"]


@pytest.mark.parametrize(("module", "source", "expected"), [
    ("servicetools.service.engine.fields", "from ..core import store",
     "engine -> service"),
    ("servicetools.service.engine.fields", "from ...service import settings",
     "engine -> service"),
    ("servicetools.client.client", "from ..service.core.store import Store",
     "client -> service"),
    ("servicetools.client.batch", "from ..analysis import frames", "client -> analysis"),
    ("servicetools.analysis.frames", "import servicetools.service.app", "analysis -> service"),
    ("servicetools.wire.values", "from ..client import errors", "wire -> client"),
    ("servicetools.wire.values", "from servicetools import _version", "wire -> base"),
])
def test_a_wrong_import_is_caught(module: str, source: str, expected: str) -> None:
    # Inside a function body too: late imports count.
    source = f"def f():\n    {source}\n"
    found = layer_violations(module, source, False, our_modules())
    assert len(found) == 1 and found[0].endswith(f"({expected})"), found


def test_every_module_has_a_layer_and_one_sorted_all() -> None:
    for module, source, _ in sources():
        layer_of(module)
        tree = ast.parse(source)
        alls = [node for node in tree.body if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)]
        assert len(alls) <= 1, module
        if alls:
            names = ast.literal_eval(alls[0].value)
            assert names == sorted(set(names)), f"{module}: __all__ is not sorted and unique"


# -- third-party packages ---------------------------------------------------------------
def _pyproject() -> dict[str, object]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]  # type: ignore[no-any-return]


def _names(requirements: list[str]) -> set[str]:
    out = set()
    for text in requirements:
        name = Requirement(text).name.lower().replace("_", "-")
        if name != "servicetools":
            out.add(name)
    return out


def declared(layer: str) -> set[str]:
    """Distributions a layer may import: the core plus its extras."""
    project = _pyproject()
    optional: dict[str, list[str]] = project["optional-dependencies"]  # type: ignore[assignment]
    names = _names(project["dependencies"])  # type: ignore[arg-type]
    for extra in LAYER_EXTRAS.get(layer, ()):
        names |= _names(optional[extra])
    return names


@functools.cache
def _packages_distributions() -> dict[str, list[str]]:
    return dict(metadata.packages_distributions())


def distributions(module: str) -> set[str]:
    """The installed distributions that provide the top-level ``module``."""
    found = _packages_distributions().get(module, [])
    return {name.lower().replace("_", "-") for name in found}


def third_party(module: str, source: str, is_package: bool) -> Iterator[tuple[int, str]]:
    for line, target in imports(module, source, is_package):
        top = target.split(".")[0]
        if top and top != "servicetools" and top not in sys.stdlib_module_names \
                and top != "__future__":
            yield line, top


def test_every_third_party_import_is_declared_for_its_layer() -> None:
    missing = []
    for module, source, is_package in sources():
        layer = layer_of(module)
        for line, top in sorted(set(third_party(module, source, is_package))):
            provided = distributions(top)
            assert provided, f"{module}:{line} imports {top}, which no distribution provides"
            if layer == "wire":
                if not provided & WIRE_PACKAGES:
                    missing.append(f"{module}:{line} imports {top}: the wire allows only "
                                   "the standard library and jsonschema")
            elif not provided & declared(layer):
                extras_named = ", ".join(LAYER_EXTRAS.get(layer, ())) or "none"
                missing.append(f"{module}:{line} imports {top} ({', '.join(sorted(provided))})"
                               f", declared neither in the core nor in its extras "
                               f"({extras_named})")
    assert missing == []


#: Extras whose packages only these modules of their layer may import: the service runs
#: without the ``scale`` extra unless a PostgreSQL database or an S3 vault is asked for
#: (the job queue's modules are imported only with a database: core/backends.py, cli.py).
ONLY_IN: dict[str, set[str]] = {"scale": {"servicetools.service.core.store_postgres",
                                          "servicetools.service.core.pgqueue",
                                          "servicetools.service.core.pipeline_queued",
                                          "servicetools.service.core.worker",
                                          "servicetools.service.core.vault_s3"}}


def test_narrow_extras_are_imported_only_where_they_belong() -> None:
    found = []
    for module, source, is_package in sources():
        for line, top in sorted(set(third_party(module, source, is_package))):
            for extra, allowed in ONLY_IN.items():
                if top in extras.EXTRAS[extra] and module not in allowed:
                    found.append(f"{module}:{line} imports {top} ([{extra}] belongs only "
                                 f"in {', '.join(sorted(allowed))})")
    assert found == []


def test_the_extras_table_matches_pyproject() -> None:
    optional: dict[str, list[str]] = _pyproject()["optional-dependencies"]  # type: ignore[assignment]
    for extra, modules in extras.EXTRAS.items():
        assert extra in optional, f"extras.EXTRAS names {extra!r}, which pyproject lacks"
        names = _names(optional[extra])
        for module in modules:
            assert distributions(module) & names, f"{module} is not installed by [{extra}]"
    assert {"service", "plots", "widgets", "datagen"} <= set(extras.EXTRAS)
