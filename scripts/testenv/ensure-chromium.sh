#!/usr/bin/env bash
# Makes sure Debian's chromium is installed at ${MODELDOCK_CHROMIUM:-/usr/bin/chromium} for the
# dashboard's browser test (driven by playwright-core, which downloads no browser of its own).
# Installs the `chromium` package with apt-get when absent and we are root; otherwise says what to do.
set -euo pipefail
bin="${MODELDOCK_CHROMIUM:-/usr/bin/chromium}"
if [ -x "$bin" ]; then echo "[chromium] $("$bin" --version 2>/dev/null | head -n1) at $bin" >&2; exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "[chromium] $bin is missing and this is not root: run 'sudo apt-get install -y chromium' (Debian/Ubuntu), or set MODELDOCK_CHROMIUM to a Chromium binary" >&2
  exit 1
fi
echo "[chromium] installing Debian's chromium package" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
if [ ! -x "$bin" ]; then echo "[chromium] apt-get installed chromium but $bin is not there" >&2; exit 1; fi
echo "[chromium] $("$bin" --version 2>/dev/null | head -n1) at $bin" >&2
