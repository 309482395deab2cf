"""Packaging: everything the package needs at run time ships inside it.

The rules presets are package data equal to configs/rules, file by file; one version source;
no spades_env module imports torch or SB3 at import time, or touches sys.path; the built wheel
holds the presets (the full install-and-run check is .ci/wheel_smoke.sh).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import spades_env
from spades_env.core.rules import load_rules, preset_names, presets_dir

ROOT = Path(__file__).resolve().parents[1]


def test_packaged_presets_equal_configs_rules():
    src = {p.name: p.read_bytes() for p in sorted((ROOT / "configs" / "rules").glob("*.yaml"))}
    pkg = {p.name: p.read_bytes() for p in sorted((ROOT / "spades_env" / "presets").glob("*.yaml"))}
    assert sorted(pkg) == sorted(src), "run `make presets` (copies configs/rules into spades_env/presets)"
    for name in src:
        assert pkg[name] == src[name], f"spades_env/presets/{name} differs from configs/rules/{name}: make presets"


def test_presets_are_read_through_importlib_resources():
    assert Path(str(presets_dir())) == ROOT / "spades_env" / "presets"
    assert preset_names() == sorted(p.stem for p in (ROOT / "configs" / "rules").glob("*.yaml"))
    for name in preset_names():
        assert load_rules(name).name == name


def test_one_version_source():
    from importlib.metadata import version

    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", spades_env.__version__)
    assert version("spades_env") == spades_env.__version__


def test_gymnasium_entry_point_declared():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["gymnasium.envs"]["spades_env"] == "spades_env.envs.gym_env:register_env"


def _all_modules() -> list[str]:
    return sorted(
        m.name for m in pkgutil.walk_packages(spades_env.__path__, "spades_env.") if "__main__" not in m.name
    )


def test_no_module_imports_torch_or_sb3():
    # every module but the integrations (spades_env.integrations.*: adapters to RLlib and the like,
    # imported only on demand, see DESIGN.md), each of which may need its optional peer
    mods = [m for m in _all_modules() if not m.startswith("spades_env.integrations")]
    assert "spades_env.policies.checkpoint" in mods and "spades_env.envs.vector_adapters" in mods
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}: importlib.import_module(m)\n"
        "print(sorted(m for m in ('torch', 'stable_baselines3', 'sb3_contrib') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_no_sys_path_manipulation_or_upward_imports():
    for path in (ROOT / "spades_env").rglob("*.py"):
        text = path.read_text()
        assert "sys.path" not in text, path
        if path.name != "exploit.py":  # trains with the checkout's training/, imported on use with a clear error
            assert not re.search(r"^\s*(from|import) training\b", text, re.M), path
        if path.name != "shipped.py":  # the agents' folder in a source checkout (checkpoints/)
            assert "parents[" not in text, path  # no paths out of the package (benchmarks/ are scripts)


def test_sb3_adapter_is_built_on_first_use():
    pytest.importorskip("stable_baselines3")
    import pickle

    va = importlib.import_module("spades_env.envs.vector_adapters")
    cls = va.SpadesSB3VecEnv
    from stable_baselines3.common.vec_env import VecEnv

    assert issubclass(cls, VecEnv) and pickle.loads(pickle.dumps(cls)) is cls


@pytest.mark.slow
def test_wheel_holds_the_presets(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    (wheel,) = tmp_path.glob("spades_env-*.whl")
    assert wheel.name.startswith(f"spades_env-{spades_env.__version__}-")
    names = set(zipfile.ZipFile(wheel).namelist())
    for p in (ROOT / "configs" / "rules").glob("*.yaml"):
        assert f"spades_env/presets/{p.name}" in names
    assert not any(n.startswith(("training/", "tests/")) for n in names)
    ep = next(n for n in names if n.endswith("entry_points.txt"))
    assert "gymnasium.envs" in zipfile.ZipFile(wheel).read(ep).decode()
