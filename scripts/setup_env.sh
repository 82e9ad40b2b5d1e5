#!/usr/bin/env bash
# Create or update .venv with omniaudit and the given extras, installed against requirements/constraints.txt.
# Usage: scripts/setup_env.sh [EXTRAS]   e.g. scripts/setup_env.sh dev   (safe to re-run: skips when up to date)
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
py="${PYTHON:-}"
if [ -z "$py" ]; then
  for c in python3.11 python3; do command -v "$c" >/dev/null && { py="$c"; break; }; done
fi
"$py" -c 'import sys; assert sys.version_info >= (3, 11), f"omniaudit needs Python >= 3.11, found {sys.version}"'
if [ ! -x .venv/bin/python ]; then
  echo ">> creating virtual environment .venv ($("$py" --version))" >&2
  "$py" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
spec="."; [ -n "$extras" ] && spec=".[$extras]"
stamp=".venv/.omniaudit-install-${extras:-core}"
want=$(cat pyproject.toml requirements/constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo ">> installing omniaudit$([ -n "$extras" ] && echo "[$extras]") with pinned dependencies" >&2
  .venv/bin/python -m pip install -q -c requirements/constraints.txt -e "$spec"
  echo "$want" > "$stamp"
fi
# DeepSpeed builds its CPU ops (Adam for optimizer offload, the shared-memory all-reduce) the first time a launch
# needs them, a minute or more on 2 cores; built here once per environment, into the folder the test suite's
# launches use (tests/training/test_training.py), so that no test pays a compiler's time
if [[ ",$extras," == *",train,"* ]] && [ ! -f .venv/torch_extensions/.omniaudit-built ]; then
  echo ">> building DeepSpeed's CPU ops once for this environment (.venv/torch_extensions)" >&2
  TORCH_EXTENSIONS_DIR="$PWD/.venv/torch_extensions" .venv/bin/python - <<'PY'
from deepspeed.accelerator import get_accelerator

accelerator = get_accelerator()
if accelerator.device_name() == "cpu":  # on a GPU machine DeepSpeed builds its own ops as it needs them
    for name in ("CPUAdamBuilder", "ShareMemCommBuilder"):
        builder = accelerator.create_op_builder(name)
        if builder is not None and builder.is_compatible():
            builder.load(verbose=False)
PY
  mkdir -p .venv/torch_extensions && touch .venv/torch_extensions/.omniaudit-built
fi
