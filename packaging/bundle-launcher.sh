#!/bin/sh
# kafka-reassign-partitions (and kreassign, a link to it) in kreassign's self-contained bundle: runs kreassign
# on the interpreter carried beside this file, isolated from any Python environment of the host (-I).
self=$(readlink -f -- "$0" 2>/dev/null) || self=$0
here=${self%/*}
exec "$here/python3" -I "$here/kreassign-main" "$0" "$@"
