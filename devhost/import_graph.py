"""`python -m devhost.import_graph`: which subpackage of `shared` imports which, with the package cycles.

Prints Markdown: one line per subpackage with the subpackages it imports (and how many import statements),
then every cycle (a strongly connected group of subpackages) with the imports that close it. The layers
themselves are enforced by import-linter's contracts in pyproject.toml (`make lint`); this is the picture
to compare before and after a refactor.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator

import grimp


def subpackage_of(module: str, package: str) -> str:
    """`shared.memory.store` -> `shared.memory`; a module directly under `package` stands for itself."""
    parts = module.split(".")
    depth = package.count(".") + 2
    return ".".join(parts[:depth])


def subpackage_edges(package: str) -> dict[tuple[str, str], list[str]]:
    """(importer subpackage, imported subpackage) -> the module-level imports behind it, `a -> b (l.N)`."""
    graph = grimp.build_graph(package, cache_dir=None)
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            source, target = subpackage_of(importer, package), subpackage_of(imported, package)
            if source == target:
                continue
            lines = sorted(d["line_number"] for d in graph.get_import_details(importer=importer, imported=imported))
            edges[source, target].append(f"{importer} -> {imported} (l.{', '.join(map(str, lines))})")
    return dict(edges)


def cycles(nodes: Iterable[str], edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected groups of more than one node (Tarjan), each sorted, largest first."""
    successors: dict[str, list[str]] = defaultdict(list)
    for a, b in edges:
        successors[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in successors[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return sorted(groups, key=lambda g: (-len(g), g))


def render(package: str) -> Iterator[str]:
    """The Markdown report for `package`, line by line."""
    edges = subpackage_edges(package)
    nodes = sorted({n for edge in edges for n in edge})
    groups = cycles(nodes, edges)
    in_cycle = {(a, b) for g in groups for a in g for b in g if (a, b) in edges}
    yield f"# Import graph of `{package}` by subpackage"
    yield ""
    yield "`a -> b (n)`: modules of a import modules of b in n places; `<-cycle->` marks an edge inside a cycle."
    yield ""
    for node in nodes:
        targets = sorted(b for a, b in edges if a == node)
        shown = [f"{b} ({len(edges[node, b])}){' <-cycle->' if (node, b) in in_cycle else ''}" for b in targets]
        yield f"- `{node}` -> {', '.join(shown) if shown else '(nothing in the package)'}"
    yield ""
    yield f"## Cycles: {len(groups)}"
    yield ""
    for group in groups:
        yield f"- {' <-> '.join(group)}"
        for a, b in sorted(e for e in in_cycle if e[0] in group):
            for detail in edges[a, b]:
                yield f"  - {detail}"
    if not groups:
        yield "None."


def main(argv: list[str] | None = None) -> int:
    """Print the report for the package named on the command line (default `shared`)."""
    parser = argparse.ArgumentParser(
        prog="devhost.import_graph", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("package", nargs="?", default="shared")
    args = parser.parse_args(argv)
    for line in render(args.package):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
