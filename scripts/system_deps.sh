#!/usr/bin/env bash
# Debian packages the tests and the embedded speech set need, installed only if missing: espeak-ng (offline TTS) and
# ffmpeg (the FFmpeg libraries torchcodec loads when `datasets` decodes an Audio/Video cell). With --test (what
# scripts/test.sh passes) also chromium: the headless browser that opens a card's scorecard.html in
# tests/evaluation/scorecard/test_scorecard_browser.py (without it that test is skipped, saying so).
set -euo pipefail
missing=()
command -v espeak-ng >/dev/null || missing+=(espeak-ng)
command -v ffmpeg >/dev/null || missing+=(ffmpeg)
if [ "${1:-}" = "--test" ]; then
  command -v chromium >/dev/null || command -v chromium-browser >/dev/null || missing+=(chromium)
fi
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo ">> installing Debian packages: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
