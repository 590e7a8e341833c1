"""The package's import rules, read from the source with ``ast`` (nothing is imported).

- No import cycle between modules. An import inside a function counts (it is the same
  dependency, only later); one under ``if TYPE_CHECKING:`` does not (it never runs).
- Layers: a module may import its own layer and those below, never one above.
- No private name (``_x``, not ``__x__``) is imported from another module.

Importing ``a.b.c`` also runs ``a/b/__init__.py``; parent packages are not counted as
dependencies here (their ``__init__`` only re-exports their own modules).
"""

from __future__ import annotations

import ast
import fnmatch
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ImportGraph:
    """Modules of one package and the package modules each imports."""

    modules: dict = field(default_factory=dict)  # dotted name -> path
    edges: dict = field(default_factory=dict)  # dotted name -> {dotted name: line}
    private: list = field(default_factory=list)  # (importer, module, name, line)


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list:
    """Import nodes, skipping the bodies of ``if TYPE_CHECKING:``."""
    found: list = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def read_graph(root: Path) -> ImportGraph:
    """The import graph of the package in directory ``root``."""
    graph = ImportGraph()
    for path in sorted(root.rglob("*.py")):
        graph.modules[_module_name(root, path)] = path
    for name, path in graph.modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: dict = {}
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in graph.modules:
                        targets.setdefault(alias.name, node.lineno)
                continue
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in graph.modules:
                    targets.setdefault(submodule, node.lineno)
                elif source in graph.modules:
                    targets.setdefault(source, node.lineno)
                    private = alias.name.startswith("_") and not alias.name.endswith("__")
                    if private and source != name:
                        graph.private.append((name, source, alias.name, node.lineno))
        targets.pop(name, None)
        graph.edges[name] = targets
    return graph


def cycles(graph: ImportGraph) -> list:
    """Each import cycle as a sorted list of modules (strongly connected components)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    found: list = []
    counter = 0

    def visit(start: str) -> None:  # iterative Tarjan: no recursion limit to meet
        nonlocal counter
        work = [(start, iter(graph.edges[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.edges[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for module in graph.edges:
        if module not in index:
            visit(module)
    return found


def layer_of(module: str, layers: list) -> int:
    """The index of the first layer with a pattern matching ``module`` (fnmatch)."""
    for number, patterns in enumerate(layers):
        if any(fnmatch.fnmatchcase(module, pattern) for pattern in patterns):
            return number
    raise LookupError(f"module {module} is in no layer: add it to the layer table")


def layer_violations(graph: ImportGraph, layers: list) -> list:
    """(importer, its layer, imported, its layer, line) where a module imports upwards."""
    found = []
    for module, targets in graph.edges.items():
        own = layer_of(module, layers)
        for target, line in targets.items():
            theirs = layer_of(target, layers)
            if theirs > own:
                found.append((module, own, target, theirs, line))
    return found
