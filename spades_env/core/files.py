"""Bounded, safe reading of the files the package takes from users: the one reader of YAML and
JSON (rules files, records, checkpoint metadata, agent specs, safetensors headers).

Every file is read the same way, so a hostile or broken file is refused the same way
everywhere, with a :class:`~spades_env.core.validate.SpadesError` of the caller's type that
names the file:

* only a regular file is read (a FIFO, a device such as ``/dev/zero``, a socket or a directory
  is refused before a byte is read), and at most ``limit`` bytes (``MAX_FILE_BYTES`` unless the
  caller says otherwise): a longer file is refused;
* the text is UTF-8;
* YAML is parsed with PyYAML's safe loader, a key given twice in one mapping is refused, and
  aliases (``*name``) are refused past ``MAX_YAML_ALIASES`` (a "billion laughs" file of a few
  hundred bytes otherwise expands to gigabytes);
* JSON is strict: ``NaN`` and ``Infinity`` are refused, a key given twice in one object is refused,
  a float that overflows to infinity is refused;
* in both, an integer of more than ``MAX_INT_DIGITS`` digits is refused with a clear message
  (Python refuses to convert those past 4300 digits with a bare ``ValueError``), and nesting
  deeper than ``MAX_DEPTH`` is refused;
* an error message never formats an unbounded value: values are shown through :func:`brief`.
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path
from typing import Any

from spades_env.core.validate import InputError, SpadesError, brief

MAX_FILE_BYTES = 16 * 1024 * 1024
"""Largest text file read (rules files, records, metadata): 16 MiB."""
MAX_YAML_ALIASES = 64
"""Most YAML aliases (``*name``) one file may use."""
MAX_YAML_NODES = 100_000
"""Most values a YAML file may hold once its aliases are written out."""
MAX_INT_DIGITS = 40
"""Most digits of an integer in a YAML or JSON file (any real value has far fewer)."""
MAX_DEPTH = 64
"""Deepest nesting of lists and mappings in a YAML or JSON file."""

def clip(text: str, width: int = 200) -> str:
    """``text`` cut to about ``width`` characters (for messages that quote other text)."""
    return text if len(text) <= width else text[: width - 3] + "..."


def read_bytes_bounded(
    path: Any, what: str, error: type[SpadesError] = InputError, limit: int = MAX_FILE_BYTES
) -> bytes:
    """The bytes of the regular file ``path`` (a ``what``, e.g. "rules file"), at most
    ``limit`` of them. A missing file, a directory, a FIFO or device, an unreadable file or a
    file longer than ``limit`` raises ``error`` naming the file."""
    if not isinstance(path, (str, os.PathLike)):
        raise error(f"{what} must be a path (a string or a Path), got {brief(path)} ({type(path).__name__})")
    p = Path(path)
    name = repr(clip(str(p), 1000))
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise error(f"cannot read {what} {name}: it does not exist") from None
    except (OSError, ValueError) as exc:
        raise error(f"cannot read {what} {name}: {getattr(exc, 'strerror', None) or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise error(f"{what} {name} is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{what} {name} is not a regular file (a FIFO, device or socket is not read)")
    if st.st_size > limit:
        raise error(f"{what} {name} is {st.st_size} bytes, more than the limit of {limit} bytes")
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise error(f"cannot read {what} {name}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced between the checks
            raise error(f"{what} {name} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise error(f"cannot read {what} {name}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise error(f"{what} {name} is longer than the limit of {limit} bytes")
    return data


def decode_utf8(data: bytes, where: str, error: type[SpadesError] = InputError) -> str:
    """``data`` as UTF-8 text; other bytes raise ``error`` naming ``where`` and the offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(
            f"{where} is not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} (line {line})"
        ) from None


def read_text_bounded(
    path: Any, what: str, error: type[SpadesError] = InputError, limit: int = MAX_FILE_BYTES
) -> str:
    """The UTF-8 text of the regular file ``path`` (see :func:`read_bytes_bounded`)."""
    data = read_bytes_bounded(path, what, error, limit)
    return decode_utf8(data, f"{what} {clip(str(path), 1000)!r}", error)


# ---- JSON ----------------------------------------------------------------------------------
class _Refused(Exception):
    """Raised inside the parsers' hooks; turned into the caller's error with the place."""


def _json_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Refused(f"an integer of {digits} digits (at most {MAX_INT_DIGITS} are read)")
    return int(text)


def _json_float(text: str) -> float:
    if len(text) > 400:
        raise _Refused(f"a number of {len(text)} characters")
    v = float(text)
    if not math.isfinite(v):
        raise _Refused(f"the number {brief(text, 40)} is too large (it overflows to infinity)")
    return v


def _json_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number (only finite numbers are read)")


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _Refused(f"key {brief(k)} appears twice in one JSON object")
        out[k] = v
    return out


def _depth_ok(value: Any, limit: int = MAX_DEPTH) -> bool:
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            if d > limit:
                return False
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return True


def parse_json(text: str | bytes, where: str, error: type[SpadesError] = InputError) -> Any:
    """The JSON value of ``text`` (from ``where``, for messages), strictly and boundedly
    parsed (see the module docstring); a bad one raises ``error``."""
    if isinstance(text, (bytes, bytearray)):
        text = decode_utf8(bytes(text), where, error)
    try:
        value = json.loads(
            text,
            object_pairs_hook=_json_pairs,
            parse_int=_json_int,
            parse_float=_json_float,
            parse_constant=_json_constant,
        )
    except json.JSONDecodeError as exc:
        raise error(f"{where}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except _Refused as exc:
        raise error(f"{where}: refused: {exc}") from None
    except RecursionError:
        raise error(f"{where}: JSON nested too deeply (at most {MAX_DEPTH} levels)") from None
    except ValueError as exc:  # any other refusal of the parser
        raise error(f"{where}: not valid JSON ({clip(str(exc))})") from None
    if not _depth_ok(value):
        raise error(f"{where}: JSON nested too deeply (at most {MAX_DEPTH} levels)")
    return value


def read_json_file(
    path: Any, what: str, error: type[SpadesError] = InputError, limit: int = MAX_FILE_BYTES
) -> Any:
    """The JSON value of the regular file ``path``, read boundedly and parsed strictly."""
    data = read_bytes_bounded(path, what, error, limit)
    where = clip(str(path), 1000)
    text = decode_utf8(data, f"{what} {where!r}", error)
    return parse_json(text, where, error)


# ---- YAML ----------------------------------------------------------------------------------
def _yaml_loader(max_aliases: int) -> type:
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        """PyYAML's safe loader with a budget of aliases, a depth limit, bounded integers and
        no key given twice."""

        def __init__(self, stream: Any) -> None:
            super().__init__(stream)
            self._aliases = 0
            self._depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                self._aliases += 1
                if self._aliases > max_aliases:
                    raise _Refused(f"more than {max_aliases} YAML aliases (*name); write the values out")
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    raise _Refused(f"nested more than {MAX_DEPTH} levels deep")
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def get_single_node(self) -> Any:
            node = super().get_single_node()
            if node is not None and self._aliases:
                sizes: dict[int, int] = {}

                def size(n: Any) -> int:  # nodes of the value with every alias written out
                    if id(n) in sizes:
                        return sizes[id(n)]
                    sizes[id(n)] = 1  # a cycle counts once
                    kids = n.value if isinstance(n.value, list) else []
                    total = 1
                    for k in kids:
                        for c in k if isinstance(k, tuple) else (k,):
                            total += size(c)
                            if total > MAX_YAML_NODES:
                                break
                    sizes[id(n)] = total
                    return total

                if size(node) > MAX_YAML_NODES:
                    raise _Refused(f"its aliases expand to more than {MAX_YAML_NODES} values")
            return node

        def construct_yaml_int(self, node: Any) -> int:
            text = str(node.value).replace("_", "").lstrip("+-")
            if len(text) > MAX_INT_DIGITS:
                raise _Refused(
                    f"line {node.start_mark.line + 1}: an integer of {len(text)} digits "
                    f"(at most {MAX_INT_DIGITS} are read)"
                )
            return super().construct_yaml_int(node)

        def construct_yaml_float(self, node: Any) -> float:
            if len(str(node.value)) > 400:
                raise _Refused(f"line {node.start_mark.line + 1}: a number of {len(str(node.value))} characters")
            return super().construct_yaml_float(node)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.MappingNode):
                seen: set[Any] = set()
                for key_node, _ in node.value:
                    key = self.construct_object(key_node, deep=deep)
                    try:
                        dup = key in seen
                        seen.add(key)
                    except TypeError:  # an unhashable key: the base class says so
                        break
                    if dup:
                        raise _Refused(f"line {key_node.start_mark.line + 1}: duplicate key {brief(key)} (a key given twice)")
            return super().construct_mapping(node, deep=deep)

    BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)
    BoundedLoader.add_constructor("tag:yaml.org,2002:float", BoundedLoader.construct_yaml_float)
    return BoundedLoader


def parse_yaml(
    text: str, where: str, error: type[SpadesError] = InputError, max_aliases: int = MAX_YAML_ALIASES
) -> Any:
    """The value of the YAML document ``text`` (from ``where``), parsed safely and boundedly
    (see the module docstring); a bad one raises ``error`` with a bounded message."""
    import yaml

    try:
        return yaml.load(text, Loader=_yaml_loader(max_aliases))  # noqa: S506 (a SafeLoader subclass)
    except _Refused as exc:
        raise error(f"{where}: refused: {exc}") from None
    except yaml.YAMLError as exc:
        raise error(f"{where}: not valid YAML: {clip(' '.join(str(exc).split()), 300)}") from None
    except RecursionError:
        raise error(f"{where}: YAML nested too deeply (at most {MAX_DEPTH} levels)") from None
    except ValueError as exc:  # e.g. a number PyYAML cannot convert
        raise error(f"{where}: not valid YAML ({clip(str(exc))})") from None


def read_yaml_file(
    path: Any, what: str, error: type[SpadesError] = InputError, limit: int = 1024 * 1024
) -> Any:
    """The YAML value of the regular file ``path`` (a ``what``), read boundedly (1 MiB by
    default) and parsed safely."""
    text = read_text_bounded(path, what, error, limit)
    return parse_yaml(text, clip(str(path), 1000), error)


__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_INT_DIGITS",
    "MAX_YAML_ALIASES",
    "MAX_YAML_NODES",
    "brief",
    "clip",
    "decode_utf8",
    "parse_json",
    "parse_yaml",
    "read_bytes_bounded",
    "read_json_file",
    "read_text_bounded",
    "read_yaml_file",
]
