#!/usr/bin/env bash
# The main job on the embedded defaults: the shortcut scorecard of the reference models (each with one planted
# shortcut), through all four audits. `scripts/demo.sh preference` runs the earlier demo instead: the shortcut audit of
# the embedded synthetic preference benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/system_deps.sh
scripts/setup_env.sh media
export HF_HUB_OFFLINE=1
if [ "${1:-}" = "preference" ]; then
  .venv/bin/omniaudit audit preference --out runs/demo
  exit 0
fi
.venv/bin/omniaudit scorecard --model oracle=scripted:oracle pos=scripted:position-locked \
  label=scripted:label-follower deaf=scripted:deaf verbose=scripted:verbose --out runs/card
