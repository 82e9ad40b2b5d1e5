#!/usr/bin/env bash
# The whole test suite, offline, in .venv (created and installed on first run). Extra args go to pytest.
# `scripts/test.sh --quick [ARGS]` runs only the tests not marked slow (the longer training and launch runs left out).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=()
if [ "${1:-}" = "--quick" ]; then quick=(-m "not slow"); shift; fi
scripts/system_deps.sh --test   # + chromium, for the browser test of scorecard.html
scripts/setup_env.sh media,train,serve,inspect,dev
export HF_HUB_OFFLINE=1 MPLBACKEND=Agg
.venv/bin/ruff check .
.venv/bin/python -m pytest "${quick[@]}" "$@"
