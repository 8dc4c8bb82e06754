#!/usr/bin/env bash
# Writes on stdout the nginx configuration of kiln.conf.in for the given
# <name>-server replicas (HOST:PORT each).
#   render.sh [--listen ADDR:PORT] [--per-client N] REPLICA...
#   --listen      where nginx listens (default 127.0.0.1:8080)
#   --per-client  connections one client address may hold open (default 64)
set -euo pipefail
usage() {
  echo "usage: render.sh [--listen ADDR:PORT] [--per-client N] HOST:PORT..." >&2
  exit 2
}
listen=127.0.0.1:8080
per_client=64
while [ $# -gt 0 ]; do
  case $1 in
    --listen) [ $# -ge 2 ] || usage; listen=$2; shift 2 ;;
    --per-client) [ $# -ge 2 ] || usage; per_client=$2; shift 2 ;;
    -*) echo "render.sh: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || usage
[[ $per_client =~ ^[1-9][0-9]*$ ]] || { echo "render.sh: --per-client takes a positive integer" >&2; exit 2; }
address='^[A-Za-z0-9.:_-]+:[0-9]+$|^\[[0-9A-Fa-f:.]+\]:[0-9]+$'
for a in "$listen" "$@"; do
  [[ $a =~ $address ]] || { echo "render.sh: '$a' is not HOST:PORT" >&2; exit 2; }
done

servers=""
for replica in "$@"; do
  # max_fails/fail_timeout: the passive health check (see kiln.conf.in).
  servers+="    server $replica max_fails=2 fail_timeout=10s;"$'\n'
done
conf=$(<"$(dirname "$0")/kiln.conf.in")
conf=${conf//@LISTEN@/$listen}
conf=${conf//@PER_CLIENT@/$per_client}
conf=${conf//@REPLICAS@/${servers%$'\n'}}
printf '%s\n' "$conf"
