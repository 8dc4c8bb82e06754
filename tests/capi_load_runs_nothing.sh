#!/bin/sh
# capi_load_runs_nothing.sh LIBRARY: loading LIBRARY runs none of kiln's
# code: its .init_array (what the loader calls before anything else) holds
# only the toolchain's own entries, built for any CPU. So a host on a CPU
# without what LIBRARY was compiled for loads it safely, and kiln_model_load
# tells it so (capi/cpu_gate.cpp); a static initializer of kiln's, compiled
# for the wider instruction set, could crash it first.
set -eu
lib=$1
allowed='frame_dummy __cpu_indicator_init'
# The .init_array's address and size, and the functions its entries point to
# (the targets of the relocations that fill it in).
set -- $(readelf -SW "$lib" | sed -n 's/.*\] \.init_array *INIT_ARRAY *\([0-9a-f]*\) [0-9a-f]* \([0-9a-f]*\).*/\1 \2/p')
[ $# -eq 2 ] || { echo "capi_load_runs_nothing: no .init_array in $lib" >&2; exit 1; }
start=$((0x$1)) end=$((0x$1 + 0x$2))
bad=0 entries=0
relocations=$(readelf -rW "$lib" | awk '$3 ~ /_RELATIVE$/ { print $1 "=" $4 }')
for relocation in $relocations; do
  offset=$((0x${relocation%=*})) target=${relocation#*=}
  [ "$offset" -ge "$start" ] && [ "$offset" -lt "$end" ] || continue
  entries=$((entries + 1))
  name=$(nm "$lib" | awk -v a="$target" '{ sub(/^0+/, "", $1) } $1 == a { print $3; exit }')
  case " $allowed " in
    *" $name "*) ;;
    *) echo "capi_load_runs_nothing: $lib runs ${name:-the code at 0x$target} when loaded" >&2; bad=1 ;;
  esac
done
[ "$entries" -gt 0 ] || { echo "capi_load_runs_nothing: found no .init_array entries in $lib" >&2; exit 1; }
[ "$bad" -eq 0 ] || exit 1
echo "capi_load_runs_nothing: $lib runs only the toolchain's start-up code when loaded ($entries entries)"
