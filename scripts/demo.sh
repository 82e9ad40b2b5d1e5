#!/usr/bin/env bash
# The main job on the embedded default: build the synthetic preference benchmark and audit it for shortcuts.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup_env.sh
export HF_HUB_OFFLINE=1
.venv/bin/omniaudit audit preference --out runs/demo
