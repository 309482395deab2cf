"""MkDocs hooks of the docs site (mkdocs.yml ``hooks:``): what comes from the code or from files
outside ``docs/`` is written at build time, so no size, table or card in the site can go stale.

Placeholders in a page (HTML comments, so a page read on its own still makes sense):

* ``<!-- spades:actions -->``: the action table, from :mod:`spades_env.core.actions`
  (``NUM_ACTIONS``, the id constants and ``action_to_str``), and the card ids as a grid;
* ``<!-- spades:observation -->``: the observation slices, from
  :mod:`spades_env.core.observation` (``OBS_SLICES``, ``SLICES``; each slice's meaning from the
  table in that module's docstring, checked against the code's sizes);
* ``<!-- spades:rules-slice -->``: the entries of the observation's ``rules`` slice
  (``RULES_FIELDS``);
* ``<!-- spades:state -->``: the layout of the full state vector (``STATE_VEC_SIZE``);
* ``<!-- spades:rules-presets -->``: every ``RulesConfig`` field (its docstring) and its value
  in each preset shipped in ``spades_env/presets``;
* ``<!-- spades:cli -->``: the ``spades`` subcommands and their usage, from the CLI's parser;
* ``<!-- spades:include PATH [shift=N] -->``: a file of the repository (headings moved down N
  levels, relative links rewritten: see ``_rewrite_links``);
* ``<!-- spades:card AGENT_ID -->``: ``checkpoints/AGENT_ID/CARD.md`` included the same way, or
  a "card not found" note when the checkout has no such file;
* ``<!-- spades:usage PATH [python=INTERPRETER] -->``: the ``Run::`` block of a script's module
  docstring, as shell commands run with ``INTERPRETER`` (default ``.venv/bin/python``);
* ``assets/layers.svg``: the picture of the layers, drawn at build time (``_layers_svg``);
* ``@@NAME@@`` inline: a constant (``OBS_SIZE``, ``STATE_VEC_SIZE``, ``NUM_ACTIONS`` ...).

An unknown placeholder, a missing include, or a docstring table that disagrees with the code is
a warning, so ``mkdocs build --strict`` fails on it.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import logging
import os
import posixpath
import re
import sys
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

log = logging.getLogger("mkdocs.hooks.spades")

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the checkout's spades_env, whatever the venv holds
_PLACEHOLDER = re.compile(r"<!--\s*spades:([\w-]+)((?:[ \t]+[^\s>]+)*)\s*-->")
_VALUE = re.compile(r"@@([A-Za-z_][A-Za-z0-9_]*)@@")
_LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)((?:\s+\"[^\"]*\")?)\)")
_IMAGE_EXT = (".png", ".svg", ".jpg", ".jpeg", ".gif", ".webp")
_ASSETS = "assets/repo"  # where images of included files are served, under their repo path


_CODE = re.compile(r"(`[^`]+`)")


def _cell(text: str) -> str:
    """Docstring text for a Markdown table cell: ``code`` as `code`, ``|`` escaped outside code."""
    parts = _CODE.split(re.sub(r"``([^`]+)``", r"`\1`", text))
    return "".join(p if i % 2 else p.replace("|", "\\|") for i, p in enumerate(parts))


def _module(name: str):
    return importlib.import_module(name)


# --------------------------------------------------------------------------- constants


def _values() -> dict[str, str]:
    obs = _module("spades_env.core.observation")
    act = _module("spades_env.core.actions")
    pkg = _module("spades_env")
    return {
        "OBS_SIZE": str(obs.OBS_SIZE),
        "OBS_VERSION": str(obs.OBS_VERSION),
        "STATE_VEC_SIZE": str(obs.STATE_VEC_SIZE),
        "NUM_ACTIONS": str(act.NUM_ACTIONS),
        "LAST_ACTION": str(act.NUM_ACTIONS - 1),
        "VERSION": pkg.__version__,
    }


# --------------------------------------------------------------------------- actions


def _actions_table() -> str:
    act = _module("spades_env.core.actions")
    cards = _module("spades_env.core.cards")
    n_cards = cards.NUM_CARDS
    first_bid, last_bid = act.BID_BASE, act.BID_BASE + act.MAX_BID
    meaning = {
        act.ACTION_BLIND_NIL: "Blind Nil: declared before the seat sees its hand",
        act.ACTION_SEE_CARDS: "See cards: decline Blind Nil and look at the hand",
        act.ACTION_KEEP: "two-player draw: keep the shown card",
        act.ACTION_DISCARD: "two-player draw: discard the shown card (and keep the next one)",
    }
    name = act.action_to_str
    rows = [
        (
            f"{0}-{n_cards - 1}",
            f"`{name(0)}` .. `{name(n_cards - 1)}`",
            "a card, `13 * suit + rank` (suits C, D, H, S = 0..3; ranks 2..A = 0..12): played, "
            "or passed in the Blind Nil exchange",
        ),
        (
            f"{first_bid}-{last_bid}",
            f"`{name(first_bid)}`, `{name(first_bid + 1)}` .. `{name(last_bid)}`",
            f"a bid of 0..{act.MAX_BID} tricks ({first_bid} = Nil)",
        ),
    ]
    for a in range(last_bid + 1, act.NUM_ACTIONS):
        if a not in meaning:
            log.warning("docs hook: action id %d (%s) has no meaning in docs/hooks.py", a, name(a))
        rows.append((str(a), f"`{name(a)}`", meaning.get(a, name(a))))
    covered = n_cards + (last_bid - first_bid + 1) + (act.NUM_ACTIONS - last_bid - 1)
    if first_bid != n_cards or covered != act.NUM_ACTIONS:
        log.warning("docs hook: the action table no longer covers 0..%d in order", act.NUM_ACTIONS - 1)
    out = [
        f"One `Discrete({act.NUM_ACTIONS})` action space for every variant "
        f"(from `spades_env.core.actions`; `action_to_str(id)` gives the names):",
        "",
        "| id | `action_to_str` | meaning |",
        "|---|---|---|",
    ]
    out += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    ranks = [cards.card_to_str(r)[:-1] for r in range(13)]
    out += ["", "The card ids, suit by suit:", "", "| suit | " + " | ".join(ranks) + " |"]
    out.append("|---|" + "---:|" * 13)
    for s, suit in enumerate("CDHS"):
        out.append(f"| {suit} | " + " | ".join(str(13 * s + r) for r in range(13)) + " |")
        for r in range(13):
            if cards.card_to_str(13 * s + r) != ranks[r] + suit:
                log.warning(
                    "docs hook: card %d is %s, not %s",
                    13 * s + r,
                    cards.card_to_str(13 * s + r),
                    ranks[r] + suit,
                )
    return "\n".join(out)


# --------------------------------------------------------------------------- observation


def _rst_table(doc: str) -> dict[str, tuple[str, str]]:
    """``{first cell: (second cell, third cell)}`` of the first simple table in ``doc``."""
    lines = doc.split("\n")
    borders = [i for i, line in enumerate(lines) if re.match(r"^\s*=+( +=+)+\s*$", line)]
    if len(borders) < 3:
        return {}
    starts = [m.start() for m in re.finditer(r"=+", lines[borders[0]])]
    rows: dict[str, tuple[str, str]] = {}
    last = None
    for line in lines[borders[1] + 1 : borders[2]]:
        if not line.strip():
            continue
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=False)]
        if cells[0]:
            last = cells[0]
            rows[last] = (cells[1], " ".join(cells[2:]))
        elif last is not None:
            size, text = rows[last]
            rows[last] = (size, (text + " " + " ".join(cells[2:])).strip())
    return rows


def _observation_table() -> str:
    obs = _module("spades_env.core.observation")
    described = _rst_table(obs.__doc__ or "")
    out = [
        f"`float32[{obs.OBS_SIZE}]`, observation version {obs.OBS_VERSION} "
        "(from `spades_env.core.observation`: `OBS_SLICES`, `SLICES`):",
        "",
        "| slice | entries | size | meaning |",
        "|---|---|---:|---|",
    ]
    for name, size in obs.OBS_SLICES:
        sl = obs.SLICES[name]
        doc_size, text = described.get(name, ("", ""))
        if not text:
            log.warning(
                "docs hook: observation slice %r has no row in the spades_env.core.observation docstring",
                name,
            )
        elif doc_size != str(size):
            log.warning(
                "docs hook: the spades_env.core.observation docstring gives slice %r size %s, the code %d",
                name,
                doc_size,
                size,
            )
        text = _cell(text)
        out.append(f"| `{name}` | {sl.start}-{sl.stop - 1} | {size} | {text} |")
    for name in described:
        if name not in obs.SLICES:
            log.warning(
                "docs hook: the spades_env.core.observation docstring describes %r, not in OBS_SLICES", name
            )
    out.append(f"| | | **{obs.OBS_SIZE}** | |")
    return "\n".join(out)


def _rules_slice_table() -> str:
    obs = _module("spades_env.core.observation")
    start = obs.SLICES["rules"].start
    out = ["| entry | rule | divided by |", "|---:|---|---:|"]
    for i, (name, scale) in enumerate(obs.RULES_FIELDS):
        out.append(f"| {start + i} | `{name}` | {scale:g} |")
    if len(obs.RULES_FIELDS) != obs.SLICES["rules"].stop - start:
        log.warning(
            "docs hook: RULES_FIELDS has %d entries, the rules slice %d",
            len(obs.RULES_FIELDS),
            obs.SLICES["rules"].stop - start,
        )
    return "\n".join(out)


def _state_table() -> str:
    obs = _module("spades_env.core.observation")
    n = obs.OBS_SIZE
    rows = [
        (
            0,
            n,
            "the observation of seat N (relative seat 0), its `hand` slice filled even while N may still choose Blind Nil",
        )
    ]
    for s, seat in enumerate("NESW"):
        rows.append((n + 52 * s, 52, f"seat {seat}'s hand (absolute seat {s})"))
    for s, seat in enumerate("NESW"):
        rows.append(
            (n + 208 + 52 * s, 52, f"seat {seat}'s discards in the two-player draw (absolute seat {s})")
        )
    total = sum(size for _, size, _ in rows)
    if total != obs.STATE_VEC_SIZE:
        log.warning(
            "docs hook: the state layout adds up to %d, STATE_VEC_SIZE is %d", total, obs.STATE_VEC_SIZE
        )
    out = [
        f"`float32[{obs.STATE_VEC_SIZE}]` (`STATE_VEC_SIZE` = `OBS_SIZE` + 2 x 4 x 52; "
        "`spades_env.core.observation.encode_state`):",
        "",
        "| entries | size | what |",
        "|---|---:|---|",
    ]
    out += [f"| {a}-{a + size - 1} | {size} | {what} |" for a, size, what in rows]
    return "\n".join(out)


# --------------------------------------------------------------------------- rules


def _field_docs(cls) -> dict[str, str]:
    """The attribute docstrings of a dataclass, read from its source."""
    path = Path(_module(cls.__module__).__file__)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            body = node.body
            for a, b in zip(body, body[1:], strict=False):
                if (
                    isinstance(a, ast.AnnAssign)
                    and isinstance(a.target, ast.Name)
                    and isinstance(b, ast.Expr)
                    and isinstance(b.value, ast.Constant)
                    and isinstance(b.value.value, str)
                ):
                    docs[a.target.id] = " ".join(b.value.value.split())
    return docs


def _rules_presets_table() -> str:
    rules = _module("spades_env.core.rules")
    names = rules.preset_names()
    order = [n for n in ("tournament", "house", "openspiel", "two_player") if n in names]
    order += [n for n in names if n not in order]
    presets = {n: rules.load_rules(n) for n in order}
    docs = _field_docs(rules.RulesConfig)
    default = rules.RulesConfig()

    def show(v: Any) -> str:
        return "true" if v is True else "false" if v is False else str(v)

    out = [
        "| key | " + " | ".join(f"`{n}`" for n in order) + " | meaning |",
        "|---|" + "---|" * len(order) + "---|",
    ]
    for f in dataclasses.fields(rules.RulesConfig):
        if f.name == "name":
            continue
        cells = []
        for n in order:
            v = getattr(presets[n], f.name)
            text = show(v)
            cells.append(f"**{text}**" if v != getattr(default, f.name) else text)
        meaning = docs.get(f.name, "")
        if not meaning:
            log.warning("docs hook: RulesConfig.%s has no docstring", f.name)
        meaning = _cell(meaning)
        out.append(f"| `{f.name}` | " + " | ".join(cells) + f" | {meaning} |")
    out += [
        "",
        "(From `RulesConfig`'s field docstrings and the presets shipped in `spades_env/presets/`; "
        "a value in bold differs from the `RulesConfig()` default.)",
    ]
    return "\n".join(out)


# --------------------------------------------------------------------------- the spades command


def _cli_table() -> str:
    import argparse

    main = _module("spades_env.cli.main")
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse's width: the same help wherever the site is built
    try:
        parser = main.build_parser()
        helps_text = {}
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        for name, p in sub.choices.items():
            helps_text[name] = p.format_help().rstrip()
    finally:
        if columns is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = columns
    helps = {a.dest: a.help for a in sub._choices_actions}
    out = ["| command | what it does |", "|---|---|"]
    for name in sub.choices:
        out.append(f"| [`spades {name}`](#spades-{name}) | {(helps.get(name) or '').replace('|', '/')} |")
    for name, text in helps_text.items():
        out += ["", f"#### spades {name}", "", "```text", text, "```"]
    return "\n".join(out)


# --------------------------------------------------------------------------- training scripts


def _usage(path: str, python: str, page_uri: str) -> str:
    """The ``Run::`` block of a script's module docstring (read with ``ast``: ``training/``
    imports torch), its ``python`` replaced by the interpreter the command runs with."""
    file = ROOT / path
    if not file.is_file():
        log.warning("docs hook: %s shows the usage of %s, which does not exist", page_uri, path)
        return f"*({path} not found)*"
    doc = ast.get_docstring(ast.parse(file.read_text(encoding="utf-8"))) or ""
    lines = doc.split("\n")
    for i, line in enumerate(lines):
        if line.rstrip().endswith("Run::"):
            block = []
            for rest in lines[i + 1 :]:
                if rest.strip() and not rest.startswith((" ", "\t")):
                    break
                block.append(rest)
            commands = [re.sub(r"^python ", f"{python} ", b.strip()) for b in block if b.strip()]
            if commands:
                return "```bash\n" + "\n".join(commands) + "\n```"
    log.warning("docs hook: %s has no 'Run::' block in its module docstring", path)
    return f"*(see `{path}`)*"


# --------------------------------------------------------------------------- includes


def _shift_headings(text: str, shift: int) -> str:
    if shift <= 0:
        return text
    out, fence = [], None
    for line in text.split("\n"):
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            mark = m.group(1)[0] * 3
            if fence is None:
                fence = mark
            elif mark == fence:
                fence = None
        elif fence is None and re.match(r"^#{1,6} ", line):
            hashes = len(line) - len(line.lstrip("#"))
            line = "#" * min(6, hashes + shift) + line[hashes:]
        out.append(line)
    return "\n".join(out)


def _repo_path(source: str, target: str) -> str:
    return posixpath.normpath(posixpath.join(posixpath.dirname(source), target))


def _rewrite_links(text: str, source: str, page_uri: str, includes: dict[str, str]) -> str:
    """Relative links of ``text`` (the repository file ``source``) made to work in the page
    ``page_uri``: an image is served from ``assets/repo/<its path>`` (see ``on_files``), a file of
    ``docs/`` or a file some page includes becomes a link to that page, and any other file
    becomes its repository path in code."""
    here = posixpath.dirname(page_uri)

    def sub(m: re.Match) -> str:
        bang, label, target, title = m.groups()
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            return m.group(0)
        path, _, anchor = target.partition("#")
        repo = _repo_path(source, path)
        anchor = f"#{anchor}" if anchor else ""
        if bang:
            if repo.lower().endswith(_IMAGE_EXT) and (ROOT / repo).is_file():
                return f"![{label}]({posixpath.relpath(f'{_ASSETS}/{repo}', here)}{title})"
            return f"*(picture: `{repo}`)*"
        if repo.startswith("docs/") and (ROOT / repo).is_file():
            return f"[{label}]({posixpath.relpath(repo[len('docs/') :], here)}{anchor}{title})"
        if repo in includes:
            return f"[{label}]({posixpath.relpath(includes[repo], here)}{anchor}{title})"
        return f"{label} (`{repo}`)"

    return _LINK.sub(sub, text)


def _args(raw: str) -> tuple[list[str], dict[str, str]]:
    pos, kw = [], {}
    for word in raw.split():
        if "=" in word:
            k, v = word.split("=", 1)
            kw[k] = v
        else:
            pos.append(word)
    return pos, kw


def _include_sources(docs_dir: Path) -> dict[str, str]:
    """``{repo path: page uri}`` of every file a page includes (cards included)."""
    found: dict[str, str] = {}
    for md in sorted(docs_dir.rglob("*.md")):
        uri = md.relative_to(docs_dir).as_posix()
        for m in _PLACEHOLDER.finditer(md.read_text(encoding="utf-8")):
            kind, raw = m.group(1), m.group(2)
            pos, _ = _args(raw)
            if kind == "include" and pos:
                found.setdefault(posixpath.normpath(pos[0]), uri)
            elif kind == "card" and pos:
                found.setdefault(f"checkpoints/{pos[0]}/CARD.md", uri)
    return found


def _include(path: str, shift: int, page_uri: str, includes: dict[str, str]) -> str:
    file = ROOT / path
    if not file.is_file():
        log.warning("docs hook: %s includes %s, which does not exist", page_uri, path)
        return f"*({path} not found)*"
    text = file.read_text(encoding="utf-8")
    return _rewrite_links(_shift_headings(text, shift), path, page_uri, includes)


def _card(agent: str, shift: int, page_uri: str, includes: dict[str, str]) -> str:
    path = f"checkpoints/{agent}/CARD.md"
    if not (ROOT / path).is_file():
        return (
            f'!!! note "card not found"\n\n    `{path}` is not in this checkout yet: '
            f"the card of `{agent}` is written with the agent and appears here when the site is built."
        )
    return _include(path, shift, page_uri, includes)


# --------------------------------------------------------------------------- the layers picture


def _layers_svg() -> str:
    """The picture of the package's layers (``assets/layers.svg``), drawn with matplotlib at
    build time: text as SVG text, no date, a fixed hash salt, so the same code draws the same
    file."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    layers = [  # (name, what it holds, x, y, width): bottom to top
        (
            "spades_env.core",
            "THE RULES: cards, actions, rules and presets, state, legal moves,\nscoring, observation encoder and decoder; SpadesGame (observe / step)",
            0.0,
            0.0,
            1.0,
        ),
        (
            "spades_env.io",
            "records (export, load, validate, replay), pictures (ansi, rgb_array),\nvideo, output-path checks",
            0.0,
            1.0,
            1.0,
        ),
        (
            "spades_env.policies",
            "the Policy protocol, the driver, the registry and load, checkpoints\n(NumPy only), scripted bots L0-L4, search, composite agents",
            0.0,
            2.0,
            1.0,
        ),
        (
            "spades_env.envs",
            "PettingZoo AEC and parallel, Gymnasium Spades-v0,\nthe batched engine VectorSpades and its adapters",
            0.0,
            3.0,
            1.0,
        ),
        ("spades_env.eval", "duplicate deals, matches,\ntournaments, gauntlet, matrix", 0.0, 4.0, 0.32),
        ("spades_env.integrations", "RLlib's MultiAgentEnv,\nimported on demand", 0.34, 4.0, 0.32),
        ("spades_env.web", "the local web app\n(when built)", 0.68, 4.0, 0.32),
        (
            "spades_env.cli",
            "the spades command: argument parsing only, one module per command",
            0.0,
            5.0,
            1.0,
        ),
    ]
    h = 0.72  # box height; a layer every 1.0
    fig, ax = plt.subplots(figsize=(8.0, 6.6))
    for name, what, x, y, w in layers:
        ax.add_patch(
            FancyBboxPatch(
                (x, y), w, h, boxstyle="round,pad=0.0,rounding_size=0.04", fc="#e8eaf6", ec="#3f51b5", lw=1.2
            )
        )
        ax.text(
            x + w / 2,
            y + h - 0.2,
            name,
            ha="center",
            va="center",
            fontsize=10 if w > 0.5 else 8.6,
            weight="bold",
            color="#1a237e",
        )
        ax.text(
            x + w / 2, y + 0.27, what, ha="center", va="center", fontsize=7.2 if w < 0.5 else 8, color="#222"
        )
    for y in range(0, 5):
        for xm in [0.5] if y < 3 else [0.16, 0.5, 0.84]:
            ax.add_patch(
                FancyArrowPatch(
                    (xm, y + h), (xm, y + 1.0), arrowstyle="-|>", mutation_scale=10, color="#3f51b5", lw=1
                )
            )
    ax.text(
        0.5,
        6.0,
        "imports point down only: an arrow goes from a layer to one that may import it",
        ha="center",
        fontsize=8.5,
        style="italic",
        color="#444",
    )
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.1, 6.2)
    ax.axis("off")
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "spades_env"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return buf.getvalue()


# --------------------------------------------------------------------------- mkdocs events

_INCLUDES: dict[str, str] = {}


def on_files(files: Files, config: Any, **kwargs: Any) -> Files:
    """Add the layers picture (``assets/layers.svg``) and serve the pictures that included
    files show, under ``assets/repo/<repository path>``."""
    files.append(File.generated(config, "assets/layers.svg", content=_layers_svg()))
    _INCLUDES.clear()
    _INCLUDES.update(_include_sources(Path(config["docs_dir"])))
    for source in _INCLUDES:
        file = ROOT / source
        if not file.is_file():
            continue
        for m in _LINK.finditer(file.read_text(encoding="utf-8")):
            bang, _, target, _ = m.groups()
            if not bang or re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue
            repo = _repo_path(source, target.partition("#")[0])
            uri = f"{_ASSETS}/{repo}"
            if (
                repo.lower().endswith(_IMAGE_EXT)
                and (ROOT / repo).is_file()
                and files.get_file_from_path(uri) is None
            ):
                files.append(File.generated(config, uri, abs_src_path=str(ROOT / repo)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files, **kwargs: Any) -> str:
    uri = page.file.src_uri

    def placeholder(m: re.Match) -> str:
        kind, raw = m.group(1), m.group(2)
        pos, kw = _args(raw)
        shift = int(kw.get("shift", "0"))
        if kind == "actions":
            return _actions_table()
        if kind == "observation":
            return _observation_table()
        if kind == "rules-slice":
            return _rules_slice_table()
        if kind == "state":
            return _state_table()
        if kind == "rules-presets":
            return _rules_presets_table()
        if kind == "cli":
            return _cli_table()
        if kind == "include" and pos:
            return _include(posixpath.normpath(pos[0]), shift, uri, _INCLUDES)
        if kind == "card" and pos:
            return _card(pos[0], shift, uri, _INCLUDES)
        if kind == "usage" and pos:
            return _usage(posixpath.normpath(pos[0]), kw.get("python", ".venv/bin/python"), uri)
        log.warning("docs hook: %s has an unknown placeholder %r", uri, m.group(0))
        return m.group(0)

    markdown = _PLACEHOLDER.sub(placeholder, markdown)
    values = _values()

    def value(m: re.Match) -> str:
        if m.group(1) not in values:
            log.warning("docs hook: %s names an unknown value @@%s@@", uri, m.group(1))
            return m.group(0)
        return values[m.group(1)]

    return _VALUE.sub(value, markdown)
