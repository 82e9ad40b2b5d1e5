#!/usr/bin/env bash
# The main job on the embedded defaults: the shortcut scorecard of the reference models (each with one planted
# shortcut) through all four audits, plus the tiny random omni thinker where torch is installed (scripts/test.sh
# installs it). `scripts/demo.sh preference` runs the earlier demo instead: the shortcut audit of the embedded
# synthetic preference benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/system_deps.sh
scripts/setup_env.sh media
export HF_HUB_OFFLINE=1
if [ "${1:-}" = "preference" ]; then
  .venv/bin/omniaudit audit preference --out runs/demo
  exit 0
fi
models=(oracle=scripted:oracle pos=scripted:position-locked label=scripted:label-follower deaf=scripted:deaf
        verbose=scripted:verbose dominant=scripted:audio-dominant)
if .venv/bin/python -c "import torch" 2>/dev/null; then  # torch installed (scripts/test.sh does): the tiny omni too
  [ -f runs/tiny-omni/config.json ] || .venv/bin/python -c "from omniaudit.tiny_models import tiny_omni; tiny_omni('runs/tiny-omni')"
  models+=(omni=hf:runs/tiny-omni)
fi
# --size small: the quick sets (about a minute); drop it for the defaults sized by power (README: what each detects)
OMP_NUM_THREADS=1 .venv/bin/omniaudit scorecard --model "${models[@]}" --size small --out runs/card
