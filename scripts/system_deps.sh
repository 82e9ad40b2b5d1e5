#!/usr/bin/env bash
# Debian packages the tests and the embedded speech set need, installed only if missing: espeak-ng (offline TTS) and
# ffmpeg (the FFmpeg libraries torchcodec loads when `datasets` decodes an Audio/Video cell).
set -euo pipefail
missing=()
command -v espeak-ng >/dev/null || missing+=(espeak-ng)
command -v ffmpeg >/dev/null || missing+=(ffmpeg)
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo ">> installing Debian packages: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
