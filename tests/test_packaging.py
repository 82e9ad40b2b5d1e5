"""Building the wheel prints no setuptools warning (SPDX license, every data folder listed) and the wheel carries
the package data the code reads at run time (card templates, recipes, accelerate configs) and the license."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TREE = ["pyproject.toml", "README.md", "LICENSE", "omniaudit", "data_builders", "evaluation", "training", "hub_cards",
        "accelerate_configs"]


@pytest.mark.slow  # pip sets up an isolated build environment (setuptools >= 77 from the package index): ~10 s
def test_the_wheel_builds_without_warnings_and_carries_its_data(tmp_path):
    src = tmp_path / "src"  # a copy: the build writes build/ and *.egg-info beside pyproject.toml
    src.mkdir()
    for name in TREE:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, src / name)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # its 'byte-compiling disabled'
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(tmp_path / "dist"),
                             str(src)], capture_output=True, text=True, env=env, timeout=600)
    log = result.stdout + result.stderr
    if result.returncode != 0 and "satisfies the requirement setuptools" in log:
        pytest.skip("no package index to install the build requirements (setuptools>=77) from")
    assert result.returncode == 0, log[-4000:]
    backend = [line for line in log.splitlines() if "pypi" not in line]  # pip's own notes on this machine's index
    warnings = [line for line in backend if "Warning" in line or "warning:" in line.lower() or "!!" in line]
    assert not warnings, "\n".join(warnings[:20])

    (wheel,) = (tmp_path / "dist").glob("omniaudit-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        files = set(zf.namelist())
        metadata = zf.read(next(f for f in files if f.endswith(".dist-info/METADATA"))).decode()
    assert {"omniaudit/hub_cards/templates/preference.md.j2", "omniaudit/accelerate_configs/zero3.yaml",
            "omniaudit/accelerate_configs/cpu_2proc.yaml", "omniaudit/training/recipes/tiny/dpo.yaml",
            "omniaudit/training/recipes/qwen3-omni-30b-a3b/dpo.yaml", "omniaudit/training/judge_folds.sh",
            "omniaudit/evaluation/metrics/waf/waf.py"} <= files
    shipped = {f"omniaudit/accelerate_configs/{p.name}" for p in (ROOT / "accelerate_configs").glob("*.yaml")}
    shipped |= {f"omniaudit/hub_cards/templates/{p.name}" for p in (ROOT / "hub_cards/templates").iterdir()}
    assert shipped <= files, shipped - files
    assert any(f.endswith(".dist-info/licenses/LICENSE") for f in files)
    assert "License-Expression: Apache-2.0" in metadata and "License-File: LICENSE" in metadata
    assert "Provides-Extra: infer" in metadata
