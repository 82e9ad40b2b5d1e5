"""Building the wheel prints no setuptools warning (SPDX license, every data folder listed) and the wheel carries
the package data the code reads at run time (card templates, recipes, accelerate configs) and the license; installed
from the wheel into a fresh environment, outside the repository, every command omniaudit prints runs where it is
printed (an empty folder: no clone there)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import site
import socket
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
TREE = ["pyproject.toml", "README.md", "LICENSE", "omniaudit", "data_builders", "evaluation", "training", "hub_cards",
        "accelerate_configs"]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> SimpleNamespace:
    """The wheel, built by pip from a copy of the tree (the build writes build/ and *.egg-info beside
    pyproject.toml), and pip's verbose log."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in TREE:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, src / name)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # its 'byte-compiling disabled'
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(tmp / "dist"),
                             str(src)], capture_output=True, text=True, env=env, timeout=600)
    log = result.stdout + result.stderr
    if result.returncode != 0 and "satisfies the requirement setuptools" in log:
        pytest.skip("no package index to install the build requirements (setuptools>=77) from")
    assert result.returncode == 0, log[-4000:]
    (wheel,) = (tmp / "dist").glob("omniaudit-*.whl")
    return SimpleNamespace(wheel=wheel, log=log)


@pytest.mark.slow  # pip sets up an isolated build environment (setuptools >= 77 from the package index): ~10 s
def test_the_wheel_builds_without_warnings_and_carries_its_data(built):
    backend = [line for line in built.log.splitlines() if "pypi" not in line]  # pip's notes on this machine's index
    warnings = [line for line in backend if "Warning" in line or "warning:" in line.lower() or "!!" in line]
    assert not warnings, "\n".join(warnings[:20])

    with zipfile.ZipFile(built.wheel) as zf:
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


@pytest.mark.slow  # the wheel of the fixture above
def test_the_wheel_metadata_has_classifiers_and_the_readme(built):
    """What a package index shows: the project's classifiers and the README as its description (no project URL:
    the repository records no public address, and an invented one would send users to someone else's page)."""
    import email

    with zipfile.ZipFile(built.wheel) as zf:
        metadata = zf.read(next(f for f in zf.namelist() if f.endswith(".dist-info/METADATA"))).decode()
    message = email.message_from_string(metadata)
    assert not message.get_all("Project-URL")
    classifiers = message.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3.11" in classifiers and any(c.startswith("Topic :: ") for c in
                                                                          classifiers)
    assert not [c for c in classifiers if c.startswith("License ::")]  # the SPDX expression says it (PEP 639)
    assert message["Description-Content-Type"] == "text/markdown"
    assert "# omniaudit" in message.get_payload()


# --- installed from the wheel, outside the repository ----------------------------------------------------------------
def installed_environment(wheel: Path, where: Path) -> dict[str, str]:
    """A fresh environment with the wheel installed (no dependencies fetched: it sees this environment's packages,
    torch and the training stack among them, through a .pth file, which does not run this environment's editable
    install of omniaudit), ``accelerate`` on its PATH; returns the environment variables to run it with."""
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                           "--no-compile", str(wheel)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    inner = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"], check=True,
                           capture_output=True, text=True).stdout.strip()
    Path(inner, "outer_environment.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    shim = venv / "bin" / "accelerate"  # the console script of the accelerate this environment shares
    shim.write_text(f"#!{python}\nimport sys\nfrom accelerate.commands.accelerate_cli import main\n"
                    "sys.exit(main())\n")
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", "HF_HUB_OFFLINE": "1",
            "WANDB_MODE": "offline", "TOKENIZERS_PARALLELISM": "false", "MPLBACKEND": "Agg"}


def free_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def printed_commands(lines: list[str]) -> list[str]:
    """The commands `omniaudit remedy SHORTCUT` prints (the lines after its "commands" line)."""
    heads = [i for i, line in enumerate(lines) if line.startswith("commands (")]
    return lines[heads[0] + 1:] if heads else []


def with_help(command: str) -> list[str]:
    """The command with --help; an accelerate launch on one process and a free port (the GPU configs start 8)."""
    argv = shlex.split(command, comments=True)
    if argv[:2] == ["accelerate", "launch"]:
        at = argv.index("--config_file") + 2
        argv[at:at] = ["--num_processes", "1", "--main_process_port", free_port()]
    return [*argv, "--help"]


# Every printed command with --help, run by the installed environment's python in one process (a process per
# command cost ~12 s of imports each, torch and trl twice per launch): `omniaudit ARGS` through the console script's
# main; `accelerate launch ... -m MODULE ARGS` as the launch reads it (its parser, and the packaged config file read
# and checked by the launch's own validation), then MODULE run as __main__ with ARGS, as the launched process runs it.
# The one real launch, console script and `accelerate launch -m` both, is the training step that follows.
HELP_DRIVER = """
import contextlib, io, json, runpy, sys, traceback


def run(argv):
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            if argv[:2] == ["accelerate", "launch"]:
                from accelerate.commands.launch import _validate_launch_command, launch_command_parser

                args = launch_command_parser().parse_args(argv[2:])
                _validate_launch_command(args)
                assert args.module, argv
                sys.argv = [args.training_script, *args.training_script_args]
                runpy.run_module(args.training_script, run_name="__main__", alter_sys=True)
            else:
                assert argv[0] == "omniaudit", argv
                from omniaudit.cli import main

                code = main(argv[1:])
        except SystemExit as exc:  # as the process would exit: a message is printed and exits 1
            if isinstance(exc.code, str):
                print(exc.code, file=sys.stderr)
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        except Exception:
            traceback.print_exc()
            code = 1
    return {"argv": argv, "returncode": code or 0, "stdout": out.getvalue(), "stderr": err.getvalue()}


with open(sys.argv[2], "w") as fh:  # a file, not stdout: no library's stray print can garble it
    json.dump([run(argv) for argv in json.loads(sys.argv[1])], fh)
"""


@pytest.mark.slow  # the wheel, a fresh environment, every printed command with --help, one training step: ~1 minute
def test_every_printed_command_runs_from_a_pip_install_outside_a_clone(built, tmp_path):
    from omniaudit.shortcuts import SHORTCUTS

    env = installed_environment(built.wheel, tmp_path)
    here = tmp_path / "work"  # an empty folder: no clone's paths
    here.mkdir()
    run = lambda argv, timeout=600: subprocess.run(argv, cwd=here, env=env, capture_output=True,  # noqa: E731
                                                   text=True, timeout=timeout)
    where = run(["python", "-c", "import omniaudit; print(omniaudit.__file__)"])
    assert Path(where.stdout.strip()).is_relative_to(tmp_path / "venv"), where.stdout + where.stderr
    config = run(["omniaudit", "recipes", "path", "accelerate:cpu"])
    assert Path(config.stdout.strip()).is_relative_to(tmp_path / "venv"), config.stdout + config.stderr
    api = run(["python", "-c", "import omniaudit; print(omniaudit.scorecard.__module__)"])
    assert api.stdout.strip() == "omniaudit.api", api.stderr

    commands = []
    for shortcut in SHORTCUTS:
        done = run(["omniaudit", "remedy", shortcut])
        assert done.returncode == 0, done.stderr
        commands += printed_commands(done.stdout.splitlines())
    launches = [c for c in commands if c.startswith("accelerate launch ")]
    assert launches and not [c for c in launches if "training/" in c or " -m omniaudit.training." not in c]
    assert all(Path(shlex.split(c)[3]).is_relative_to(tmp_path / "venv") for c in launches)  # the packaged config
    (tmp_path / "help_driver.py").write_text(HELP_DRIVER)
    driven = run(["python", str(tmp_path / "help_driver.py"), json.dumps([with_help(c) for c in commands]),
                  str(tmp_path / "helped.json")])
    assert driven.returncode == 0, driven.stderr[-3000:]
    results = json.loads((tmp_path / "helped.json").read_text())
    assert len(results) == len(commands)
    failed = [f"{shlex.join(r['argv'])}\n{r['stderr'][-1500:]}" for r in results if r["returncode"] != 0]
    assert not failed, "\n\n".join(failed)
    assert all("usage:" in r["stdout"] for r in results), [r["argv"] for r in results if "usage:" not in r["stdout"]]

    done = run(["omniaudit", "tiny-models"])
    assert done.returncode == 0, done.stderr[-3000:]
    line = done.stdout.splitlines()[-1]
    assert line.startswith("train with: accelerate launch ") and " -m omniaudit.training.dpo " in line, line
    trained = run([*shlex.split(line.removeprefix("train with: ")), "--max_steps", "1"], timeout=900)
    assert trained.returncode == 0, trained.stderr[-4000:]
    assert (here / "runs" / "tiny" / "dpo" / "adapter_model.safetensors").is_file()
