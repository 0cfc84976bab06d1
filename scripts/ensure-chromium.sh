#!/usr/bin/env bash
# Browser tests drive Debian's Chromium; install it when it is missing (needs root or sudo).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
echo "Chromium is missing; installing Debian's chromium package for the browser tests." >&2
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "error: cannot install chromium without root; run: apt-get install -y chromium" >&2
  exit 1
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
command -v chromium >/dev/null
