#!/bin/sh
# capi_exports.sh LIBRARY HEADER: the dynamic symbols LIBRARY defines are
# exactly the functions HEADER declares with KILN_API, no more, no fewer.
set -eu
lib=$1 header=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$lib" | awk '{ print $NF }' | sort > "$tmp/exported"
tr '\n' ' ' < "$header" | grep -o 'KILN_API[^;]*;' | grep -o 'kiln_[a-z_0-9]*(' | tr -d '(' | sort > "$tmp/declared"
if ! [ -s "$tmp/declared" ]; then
  echo "capi_exports: no KILN_API functions found in $header" >&2
  exit 1
fi
if ! diff -u "$tmp/declared" "$tmp/exported"; then
  echo "capi_exports: $lib exports other symbols than $header declares (- declared only, + exported only)" >&2
  exit 1
fi
echo "capi_exports: $(wc -l < "$tmp/exported") symbols, all declared in kiln.h"
