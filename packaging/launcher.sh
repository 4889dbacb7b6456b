#!/bin/sh
# kafka-reassign-partitions @VERSION@ (kreassign), one self-contained file for Linux, glibc @GLIBC@ or newer.
# It carries its own Python, kreassign and their libraries: a tar.gz appended to this script from byte
# @OFFSET@ on (`tail -c +@OFFSET@ THIS-FILE | tar -xzf -` unpacks it by hand). Its first run unpacks it once into
# $KREASSIGN_CACHE_DIR, else $XDG_CACHE_HOME/kreassign, else ~/.cache/kreassign, else (no HOME)
# ${TMPDIR:-/tmp}/kreassign-UID, in a folder named @ID@; every run then runs kreassign from there.
# Removing that folder is safe: the next run unpacks it again. Nothing else is written outside it.
id=@ID@

private() { # a folder (not a link) of this user's, that no one else may write to: in a shared /tmp
  [ -d "$1" ] && [ ! -L "$1" ] || return 1
  # shellcheck disable=SC2046 # the fields of one line of ls, split on purpose
  set -- $(ls -ldn "$1")
  case $1 in d????-??-*) [ "$3" = "$uid" ] ;; *) return 1 ;; esac
}

if [ -n "${KREASSIGN_CACHE_DIR:-}" ]; then
  cache=$KREASSIGN_CACHE_DIR
elif [ -n "${XDG_CACHE_HOME:-}" ]; then
  cache=$XDG_CACHE_HOME/kreassign
elif [ -n "${HOME:-}" ] && [ "$HOME" != / ]; then
  cache=$HOME/.cache/kreassign
else
  uid=$(id -u)
  cache=${TMPDIR:-/tmp}/kreassign-$uid
  mkdir -m 700 "$cache" 2>/dev/null
  if ! private "$cache"; then
    echo "kafka-reassign-partitions: $cache is not a private folder of yours: set KREASSIGN_CACHE_DIR to one" >&2
    exit 1
  fi
fi
dir=$cache/$id

glibc_ok() { # the host's C library is glibc @GLIBC@ or newer (asked once, before the first unpacking)
  have=$(getconf GNU_LIBC_VERSION 2>/dev/null) || return 0 # no getconf: let the dynamic linker judge
  case $have in
    "glibc "*) ;;
    *)
      echo "kafka-reassign-partitions: this build needs glibc @GLIBC@ or newer; this host has no glibc (musl?)" >&2
      return 1
      ;;
  esac
  version=${have#glibc }
  major=${version%%.*} minor=${version#*.}
  minor=${minor%%.*}
  need_major=@GLIBC_MAJOR@ need_minor=@GLIBC_MINOR@
  [ "$major" -gt "$need_major" ] || { [ "$major" -eq "$need_major" ] && [ "$minor" -ge "$need_minor" ]; } && return 0
  echo "kafka-reassign-partitions: this build needs glibc @GLIBC@ or newer; this host has $version." >&2
  echo "kafka-reassign-partitions: use the Python package there (pip install kreassign, Python 3.11+)." >&2
  return 1
}

unpack() {
  glibc_ok || return 1
  mkdir -p "$cache" 2>/dev/null
  tmp=$(mktemp -d "$cache/.unpacking.XXXXXX" 2>/dev/null) || {
    echo "kafka-reassign-partitions: cannot unpack into $cache: set KREASSIGN_CACHE_DIR to a writable folder" >&2
    return 1
  }
  if ! tail -c +@OFFSET@ -- "$0" | gzip -dc | tar -xf - -C "$tmp"; then
    rm -rf "$tmp"
    echo "kafka-reassign-partitions: could not unpack $0 into $cache (disk full, or a damaged file?)" >&2
    return 1
  fi
  if [ ! -d "$dir" ]; then
    mv "$tmp/@BUNDLE@" "$dir" 2>/dev/null
    # another first run may have won the race: then its folder stays and ours, moved into it, goes
    [ ! -d "$dir/@BUNDLE@" ] || rm -rf "$dir/@BUNDLE@"
  fi
  rm -rf "$tmp"
  [ -d "$dir" ]
}

[ -d "$dir" ] || unpack || exit 1
exec "$dir/bin/python3" -I "$dir/bin/kreassign-main" "$0" "$@"
exit 1
