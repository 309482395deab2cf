"""The layers of the package (DESIGN.md): every import, inside functions too, points down the
order core < io < policies < envs < eval, integrations < cli, and no modules import each other
in a cycle."""

from __future__ import annotations

import ast
import collections
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "spades_env"
ORDER = {"core": 0, "io": 1, "policies": 2, "envs": 3, "eval": 4, "integrations": 4, "web": 4, "cli": 5}
"""Layer of each subpackage; the package's top (``import spades_env``: the env front-ends and
``Policy``) sits with the envs."""

def _modules() -> dict[str, Path]:
    out = {}
    for path in PKG.rglob("*.py"):
        parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = collections.defaultdict(set)
    for name, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text())):  # every import, in functions too
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("spades_env"):
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    graph[name].add(sub if sub in mods else node.module)
            elif isinstance(node, ast.Import):
                graph[name].update(a.name for a in node.names if a.name.startswith("spades_env"))
            elif isinstance(node, ast.ImportFrom) and node.level:
                raise AssertionError(f"{path}: relative import (use the absolute spades_env.* path)")
    return graph


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return ORDER["envs"]
    assert parts[1] in ORDER or parts[1] == "agents", f"{module}: not in a layer folder"
    return ORDER.get(parts[1], ORDER["policies"])


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w == v:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(comp)

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def test_every_import_points_down_the_layers():
    up = [
        f"{m} -> {t}" for m, targets in sorted(_graph().items()) for t in sorted(targets) if _layer(t) > _layer(m)
    ]
    assert not up, "imports pointing up the layers:\n" + "\n".join(up)


def test_no_import_cycles():
    assert [sorted(comp) for comp in _cycles(_graph())] == []


def test_the_layer_test_sees_an_upward_import_and_a_cycle():
    graph = {"spades_env.core.a": {"spades_env.eval.b"}, "spades_env.eval.b": {"spades_env.core.a"}}
    assert _layer("spades_env.eval.b") > _layer("spades_env.core.a")
    assert _cycles(graph) == [{"spades_env.core.a", "spades_env.eval.b"}]


def test_the_core_imports_nothing_above_it():
    for module, targets in _graph().items():
        if module.startswith("spades_env.core"):
            assert all(t.startswith("spades_env.core") for t in targets), (module, targets)
