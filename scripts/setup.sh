#!/usr/bin/env bash
# Installs the Debian packages kiln needs to build (as root), or prints the
# apt-get line to run and stops (as any other user).
set -euo pipefail

# Arguments name more packages to install (.ci/fuzz.sh asks for clang; .ci/run
# for nginx, whose test of deploy/nginx is skipped where there is none: not
# installed for everyone, as Debian's package starts a system nginx on port
# 80 where systemd runs; and for chromium, which the chat page's test drives
# and which is large).
# xxHash hashes files, nlohmann-json reads JSON; cpp-httplib and pkgconf build
# <name>-server.
packages=(g++ cmake make libxsimd-dev doctest-dev python3 libxxhash-dev nlohmann-json3-dev libcpp-httplib-dev pkgconf
  "$@")
# node and npm run the server's tests with real clients (tests/clients); any
# install of them does (Debian's packages where there is none).
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  echo "kiln: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "kiln: missing packages: ${missing[*]}" >&2
  echo "kiln: install them with:  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
