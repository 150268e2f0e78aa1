#!/usr/bin/env bash
# Installs what `make build` made and what runs it, the layout of
# `make install`:
#   $DESTDIR$PREFIX/bin/nodeagent, $DESTDIR$PREFIX/bin/manifestctl
#   $DESTDIR$SYSTEMDUNITDIR/nodeagent.service     (deploy/systemd)
#   $DESTDIR$SYSCONFDIR/nodeagent/config.yaml     (deploy/config.yaml; an
#       existing one is kept, the example goes next to it as .example)
#   $DESTDIR$SYSCONFDIR/nodeagent/manifests/      (the static pod directory)
# PREFIX defaults to /usr/local, SYSCONFDIR to /etc, SYSTEMDUNITDIR to
# $PREFIX/lib/systemd/system (a directory systemd reads units from);
# DESTDIR (staging for a package) is empty. The unit names the installed
# paths without DESTDIR. Enabling the unit is left to the operator (see
# docs/operations.md).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$(repo_root)"
prefix=${PREFIX:-/usr/local}
sysconfdir=${SYSCONFDIR:-/etc}
unitdir=${SYSTEMDUNITDIR:-$prefix/lib/systemd/system}
dest=${DESTDIR:-}
for p in "$prefix" "$sysconfdir" "$unitdir"; do
  if [[ $p != /* ]]; then
    echo "install.sh: PREFIX, SYSCONFDIR and SYSTEMDUNITDIR must be absolute paths, not $p" >&2
    exit 2
  fi
done
for b in nodeagent manifestctl; do
  if [[ ! -x bin/$b ]]; then
    echo "install.sh: bin/$b is missing: run make build (make install does)" >&2
    exit 2
  fi
  install -D -m 0755 "bin/$b" "$dest$prefix/bin/$b"
done

unit=$(mktemp)
trap 'rm -f "$unit"' EXIT
sed -e "s|@BINDIR@|$prefix/bin|g" -e "s|@SYSCONFDIR@|$sysconfdir|g" deploy/systemd/nodeagent.service >"$unit"
install -D -m 0644 "$unit" "$dest$unitdir/nodeagent.service"

conf=$dest$sysconfdir/nodeagent/config.yaml
example=$(mktemp)
trap 'rm -f "$unit" "$example"' EXIT
sed -e "s|/etc/nodeagent/|$sysconfdir/nodeagent/|g" deploy/config.yaml >"$example"
if [[ -e $conf ]]; then
  install -D -m 0600 "$example" "$conf.example"
  log "install: kept $conf; the example is $conf.example"
else
  install -D -m 0600 "$example" "$conf"
fi
install -d -m 0755 "$dest$sysconfdir/nodeagent/manifests"
log "install: nodeagent and manifestctl in $dest$prefix/bin, nodeagent.service in $dest$unitdir, settings in $conf"
