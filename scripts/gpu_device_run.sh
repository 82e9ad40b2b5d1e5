#!/usr/bin/env bash
# scripts/gpu_check.sh on this workplace's lent GPU machine (nvidia-h200: Python 3.12 with torch 2.11, transformers,
# accelerate; no network, no package index). It installs what that image lacks from the carried, git-ignored .whl/
# into /tmp/site, installs omniaudit there too, prints the versions, then runs the check. With $OUT set (the device
# tool sets it) the whole log goes to $OUT/gpu_check.log and the steps' logs and answers to $OUT/gpu_check_steps.tgz.
#
#   here, once (needs PyPI; writes .whl/wheels.tar.xz, about 35 MB): bash scripts/gpu_device_run.sh --make-wheels
#   device run: command "bash scripts/gpu_device_run.sh", carry [".whl"]
#
# The wheels: datasets, evaluate, httpx2, TRL, PEFT, DeepSpeed (built here, DS_BUILD_OPS=0: ops JIT-built there),
# PyAV and soundfile (media), transformers 5.24 (the image's 5.17 fails the tiny omni judge), their missing needs,
# and setuptools (builds omniaudit only). Not bitsandbytes (size; the check skips 4-bit), nor espeak-ng (the check
# skips the scorecard). They are rewritten uncompressed and xz'd together: under half the size of the plain wheels.
# Environment: GPU_CHECK_* as scripts/gpu_check.sh reads them (GPU_CHECK_ITEMS defaults to 400);
# GPU_RUN_DEADLINE_S (default 360): the check is stopped after that many seconds, so the logs still come back.
set -uo pipefail
cd "$(dirname "$0")/.."

make_wheels() {  # here, with PyPI: .whl/wheels.tar.xz and .whl/MANIFEST
  set -e
  local tmp; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' RETURN
  local exclude; exclude=$(git rev-parse --git-path info/exclude)  # .whl/ stays out of git
  grep -qx '/.whl/' "$exclude" 2>/dev/null || echo /.whl/ >> "$exclude"
  local plat=() n
  for n in 2_28 2_27 2_17; do plat+=(--platform "manylinux_${n}_x86_64"); done
  local get=(python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp
             "${plat[@]}" --platform manylinux2014_x86_64)
  "${get[@]}" -d "$tmp/w" datasets==5.2.0 evaluate==0.4.6 dill==0.4.1 multiprocess==0.70.19 fsspec==2026.9.0 \
    httpx2==2.16.2 httpcore2==2.16.2 truststore==0.10.5 trl==1.16.0 peft==0.21.2 transformers==5.24.0 \
    hjson==3.1.0 pydantic==2.14.4 pydantic_core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 \
    typing_extensions==4.16.0 av==18.1.0 soundfile==0.14.0 cffi==2.1.1 pycparser==3.12
  "${get[@]}" -d "$tmp/w/build" setuptools==80.10.2
  DS_BUILD_OPS=0 python3 -m pip wheel -q --no-cache-dir --no-deps deepspeed==0.19.8 -w "$tmp/w"
  python3 - "$tmp/w" "$tmp/stored" <<'EOF'
import sys, zipfile
from pathlib import Path
src, dst = Path(sys.argv[1]), Path(sys.argv[2])
for whl in sorted(src.rglob("*.whl")):  # same entries and bytes (RECORD hashes hold), stored instead of deflated
    out = dst / whl.relative_to(src)
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(whl) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            new = zipfile.ZipInfo(info.filename, info.date_time)
            new.external_attr = info.external_attr
            zout.writestr(new, zin.read(info.filename))
EOF
  mkdir -p .whl && rm -f .whl/*.whl .whl/wheels.tar.xz
  (cd "$tmp/stored" && find . -name '*.whl' | sed 's|^\./||' | sort) > .whl/MANIFEST
  tar -C "$tmp/stored" -cf - --sort=name . | xz -T0 -9 > .whl/wheels.tar.xz
  ls -l .whl
}

fail() { echo "gpu_device_run: FAILED: $*" >&2; exit 2; }

main() {
  local site=/tmp/site build_env=/tmp/site-build wheels=.whl py
  py=$(command -v "${PYTHON:-python3}") || fail "no ${PYTHON:-python3}"
  if [ ! -x "$(dirname "$py")/accelerate" ]; then  # a python3 linked from elsewhere: its environment's own bin/
    local prefix; prefix=$("$py" -c 'import sys; print(sys.prefix)')
    [ -x "$prefix/bin/accelerate" ] && py="$prefix/bin/python3"
  fi
  echo "== installing the carried wheels into $site"
  if [ -f .whl/wheels.tar.xz ]; then
    wheels=/tmp/wheels; rm -rf "$wheels"; mkdir -p "$wheels"
    "$py" -c 'import sys, tarfile; tarfile.open(sys.argv[1], "r:xz").extractall(sys.argv[2], filter="data")' \
      .whl/wheels.tar.xz "$wheels" || fail "unpacking .whl/wheels.tar.xz"  # Python's lzma: no xz binary needed
  fi
  ls "$wheels"/*.whl > /dev/null 2>&1 || fail "no wheels in .whl/: carry [\".whl\"], made by --make-wheels"
  local pip=("$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade)
  "${pip[@]}" --target "$site" "$wheels"/*.whl || fail "pip install of the carried wheels into $site"
  echo "== installing omniaudit into $site"
  # setuptools>=77 (pyproject's SPDX license) builds it and stays off the check's path
  "${pip[@]}" --target "$build_env" "$wheels"/build/*.whl || fail "pip install of setuptools into $build_env"
  local src=/tmp/omniaudit-src  # built from a copy: the build writes build/ and *.egg-info beside the sources
  rm -rf "$src" && mkdir -p "$src" && tar --exclude=./.whl --exclude=./.venv --exclude=./build --exclude=./.git \
    -cf - . | tar -x -C "$src" || fail "copying the sources to $src"
  PYTHONPATH="$build_env:$site" "${pip[@]}" --no-build-isolation --target "$site" "$src" \
    || fail "pip install of omniaudit"

  export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" PYTHON="$py" PYTHONUNBUFFERED=1
  # The check runs `python -m omniaudit` in the repository root, where the source folder ./omniaudit would shadow the
  # installed package (whose omniaudit.evaluation etc. map to the root folders): keep the working folder off sys.path
  export PYTHONSAFEPATH=1
  [ -x "$(dirname "$py")/accelerate" ] || fail "no accelerate beside $py (scripts/gpu_check.sh runs that one)"

  echo "== versions"
  SITE="$site" "$py" - <<'EOF' || fail "the imports above (the check needs each of them)"
import importlib.metadata as md, os, platform, sys
from packaging.requirements import Requirement

print("python", platform.python_version(), sys.executable)
import torch
cuda = torch.cuda.is_available()
print("torch", torch.__version__, "CUDA", torch.version.cuda, "|", torch.cuda.get_device_name(0) if cuda else "NO GPU")
names = ["transformers", "trl", "deepspeed", "datasets", "accelerate", "peft", "huggingface_hub", "tokenizers",
         "evaluate", "numpy", "pyarrow", "pandas", "fsspec", "av", "soundfile", "torchvision", "pydantic", "pip"]
vers = {}
for n in names:
    try:
        vers[n] = md.version(n)
    except md.PackageNotFoundError:
        vers[n] = "MISSING"
print(" ".join(f"{n}={v}" for n, v in vers.items()))
# each carried distribution's needs against what this Python sees: a warning, not a stop (pins can be too strict)
site, env, unmet = os.environ["SITE"], {"extra": ""}, []
for d in md.distributions(path=[site]):
    for r in map(Requirement, d.requires or []):
        if r.marker is not None and not r.marker.evaluate(env):
            continue
        try:
            have = md.version(r.name)
        except md.PackageNotFoundError:
            have = None
        if have is None or not r.specifier.contains(have, prereleases=True):
            unmet.append(f"{d.metadata['Name']} needs {r}, found {have or 'none'}")
print("requirements of the carried packages: " + ("all met" if not unmet else "NOT MET (warning):"))
for line in sorted(set(unmet)):
    print("   ", line)
import omniaudit.evaluation, omniaudit.training
import accelerate, datasets, deepspeed, evaluate, peft, soundfile, transformers, trl, av  # noqa: F401
assert omniaudit.evaluation.__file__.startswith(site), f"omniaudit imported from {omniaudit.evaluation.__file__}"
print("omniaudit from", os.path.dirname(omniaudit.__file__))
EOF

  echo "== scripts/gpu_check.sh"
  TMPDIR=$(mktemp -d /tmp/gpu-check.XXXXXX)  # the check's work folder goes in here, kept for the logs
  export GPU_CHECK_ITEMS="${GPU_CHECK_ITEMS:-400}" GPU_CHECK_KEEP=1 TMPDIR
  local rc=0
  local deadline="${GPU_RUN_DEADLINE_S:-360}"
  timeout --kill-after=10 "$deadline" bash scripts/gpu_check.sh || rc=$?
  [ "$rc" -eq 124 ] && echo "gpu_device_run: the check was stopped after $deadline s (GPU_RUN_DEADLINE_S)"
  if [ -n "${OUT:-}" ]; then
    (cd "$TMPDIR" && find . -maxdepth 2 \( -name '*.log' -o -name '*.jsonl' \) -print0 \
      | tar -czf "$OUT/gpu_check_steps.tgz" --null -T -) && echo "steps' logs: \$OUT/gpu_check_steps.tgz"
  fi
  return "$rc"
}

if [ "${1:-}" = "--make-wheels" ]; then make_wheels; exit; fi
if [ -n "${OUT:-}" ]; then
  main 2>&1 | tee "$OUT/gpu_check.log"
  exit "${PIPESTATUS[0]}"
fi
main
