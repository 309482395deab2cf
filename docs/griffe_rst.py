"""A griffe extension for the docs site: the package's docstrings are written in a small
reStructuredText dialect (``code``, Sphinx roles such as :func:`name`, simple tables bordered by
``====``, ``Run::`` before a literal block); mkdocstrings renders Markdown. This turns, before the
docstrings are parsed:

* a role ``:func:`~a.b.name``` (or :class:, :mod:, :data:, :meth:, :attr:, :exc:, :obj:) into the
  code span ``name`` (``a.b.name`` without the ``~``);
* a simple table into a Markdown table (a row whose first cell is blank continues the row above);
* a paragraph ending in ``::`` into one ending in ``:`` (the indented block after it is already
  a Markdown code block).

The source files are not changed; the package's help() text keeps its reStructuredText.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|class|mod|data|meth|attr|exc|obj|const|term|ref):`(~?)([^`]+)`")
_BORDER = re.compile(r"^(\s*)=+( +=+)+\s*$")


def _role(match: re.Match) -> str:
    tilde, target = match.group(1), match.group(2).strip()
    if "<" in target and target.endswith(">"):  # :ref:`text <target>`
        target = target[: target.index("<")].strip()
    if tilde:
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


def _columns(border: str) -> list[int]:
    return [m.start() for m in re.finditer(r"=+", border)]


def _cells(line: str, starts: list[int]) -> list[str]:
    out = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else None
        out.append(line[start:end].strip() if end is not None else line[start:].strip())
    return out


_CODE = re.compile(r"(``.+?``|`[^`]+`)")


def _cell(text: str) -> str:
    """A table cell: ``|`` escaped outside code spans (inside one it is plain text)."""
    parts = _CODE.split(text)
    return "".join(p if i % 2 else p.replace("|", "\\|") for i, p in enumerate(parts))


def _segment(lines: list[str], j: int, starts: list[int]) -> tuple[list[list[str]], int]:
    """The rows from ``lines[j]`` up to the next border (its index)."""
    rows: list[list[str]] = []
    while j < len(lines) and not _BORDER.match(lines[j]):
        if lines[j].strip():
            cells = _cells(lines[j], starts)
            if rows and not cells[0]:
                rows[-1] = [(a + " " + b).strip() for a, b in zip(rows[-1], cells, strict=False)]
            else:
                rows.append(cells)
        j += 1
    return rows, j


def _table(lines: list[str], i: int) -> tuple[list[str], int] | None:
    """A simple table starting at the border ``lines[i]``: its Markdown and the index after it
    (a table with a header has three borders, one without has two)."""
    starts = _columns(lines[i])
    first, j = _segment(lines, i + 1, starts)
    if j >= len(lines) or not first:
        return None
    if j + 1 >= len(lines) or not lines[j + 1].strip():
        header, body, end = [""] * len(starts), first, j + 1
    else:
        body, k = _segment(lines, j + 1, starts)
        if k >= len(lines):
            return None
        header, end = [" ".join(c) for c in zip(*first, strict=False)], k + 1
    md = ["", "| " + " | ".join(_cell(c) for c in header) + " |", "|" + "---|" * len(header)]
    md += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in body]
    md.append("")
    return md, end


def rst_to_markdown(text: str) -> str:
    """The docstring ``text`` with its reStructuredText turned into Markdown (see the module)."""
    text = _ROLE.sub(_role, text)
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _BORDER.match(line):
            table = _table(lines, i)
            if table is not None:
                md, i = table
                out.extend(md)
                continue
        if line.rstrip().endswith("::") and not line.strip().startswith(">>>"):
            stripped = line.rstrip()[:-2].rstrip()
            line = stripped + ":" if stripped else ""
        out.append(line)
        i += 1
    return "\n".join(out)


class RstDocstrings(griffe.Extension):
    """Turn each docstring's reStructuredText into Markdown (see the module docstring)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and obj.docstring.value:
            obj.docstring.value = rst_to_markdown(obj.docstring.value)
