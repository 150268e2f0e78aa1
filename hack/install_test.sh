#!/usr/bin/env bash
# Proves `make install` lays out what it says (hack/install.sh) under
# DESTDIR, with the unit naming the installed paths, that a second install
# keeps an edited config file, and that the installed nodeagent reads the
# installed config file: run with it and an empty --cri-endpoint, the one
# complaint must be that flag's (a bad setting in the file would be
# reported first). The example's settings themselves are checked by
# cmd/nodeagent/app's TestExampleConfig* tests.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$(repo_root)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
# expect_file PATH MODE: PATH is a regular file of mode MODE.
expect_file() {
  if [[ ! -f $1 ]]; then
    fail "$1 was not installed"
  elif [[ $(stat -c %a "$1") != "$2" ]]; then
    fail "$1 has mode $(stat -c %a "$1"), want $2"
  fi
}

# 1. The default layout.
dest=$work/default
make -s -C "$root" install DESTDIR="$dest" >/dev/null
expect_file "$dest/usr/local/bin/nodeagent" 755
expect_file "$dest/usr/local/bin/manifestctl" 755
unit=$dest/usr/local/lib/systemd/system/nodeagent.service
expect_file "$unit" 644
expect_file "$dest/etc/nodeagent/config.yaml" 600
[[ -d $dest/etc/nodeagent/manifests ]] || fail "$dest/etc/nodeagent/manifests was not made"
grep -qx 'ExecStart=/usr/local/bin/nodeagent --config /etc/nodeagent/config.yaml' "$unit" ||
  fail "$unit: ExecStart does not run /usr/local/bin/nodeagent with /etc/nodeagent/config.yaml"
for want in 'Restart=always' 'After=network-online.target containerd.service'; do
  grep -qx "$want" "$unit" || fail "$unit lacks $want"
done
! grep -q '@[A-Z]*@' "$unit" || fail "$unit keeps a placeholder: $(grep '@[A-Z]*@' "$unit")"
cmp -s "$root/deploy/config.yaml" "$dest/etc/nodeagent/config.yaml" ||
  fail "the installed config.yaml is not deploy/config.yaml"

out=$("$dest/usr/local/bin/nodeagent" --config "$dest/etc/nodeagent/config.yaml" --cri-endpoint= 2>&1) && rc=0 || rc=$?
if [[ $rc != 2 || $out != "nodeagent: --cri-endpoint is required"$'\n'"Run 'nodeagent --help' for the flags." ]]; then
  fail "the installed nodeagent with the installed config: exit $rc, output:"$'\n'"$out"
fi

# 2. Another PREFIX and SYSCONFDIR; a second install keeps the operator's file.
dest=$work/opt
make -s -C "$root" install DESTDIR="$dest" PREFIX=/opt/nodeagent SYSCONFDIR=/opt/nodeagent/etc >/dev/null
unit=$dest/opt/nodeagent/lib/systemd/system/nodeagent.service
grep -qx 'ExecStart=/opt/nodeagent/bin/nodeagent --config /opt/nodeagent/etc/nodeagent/config.yaml' "$unit" ||
  fail "$unit: ExecStart does not follow PREFIX and SYSCONFDIR: $(grep ExecStart= "$unit")"
conf=$dest/opt/nodeagent/etc/nodeagent/config.yaml
grep -qx 'manifest-dir: /opt/nodeagent/etc/nodeagent/manifests' "$conf" ||
  fail "$conf: manifest-dir does not follow SYSCONFDIR"
echo 'manifest-dir: /srv/manifests' >"$conf"
make -s -C "$root" install DESTDIR="$dest" PREFIX=/opt/nodeagent SYSCONFDIR=/opt/nodeagent/etc >/dev/null 2>&1
[[ $(cat "$conf") == 'manifest-dir: /srv/manifests' ]] || fail "a second install replaced the operator's $conf"
expect_file "$conf.example" 600

if ((failures > 0)); then
  echo "install_test: $failures failure(s)" >&2
  exit 1
fi
echo "install_test: ok"
