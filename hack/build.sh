#!/usr/bin/env bash
# Builds cmd/nodeagent (or cmd/manifestctl) the one way it ships: static (CGO_ENABLED=0: Go's
# own resolver; with no libc mapped the idle agent's RSS is 2 MiB
# smaller), without build paths (-trimpath), symbol table or DWARF (-s -w:
# a third of the file, no RSS effect; profiles and panics still name
# functions), with its version stamped in. make build, make run and the
# integration tests all build through it, so what they run and measure is
# what ships.
#
# Usage: hack/build.sh [OUTPUT]     (default bin/nodeagent)
# OUTPUT's file name names the command: .../nodeagent or .../manifestctl.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
out=${1:-bin/nodeagent}
name=$(basename "$out")
cd "$(repo_root)"
if [[ ! -d cmd/$name ]]; then
  echo "build.sh: $out: no command cmd/$name (the output's file name names the command)" >&2
  exit 2
fi
mkdir -p "$(dirname "$out")"
version=v0.0.0-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
CGO_ENABLED=0 go build -trimpath -o "$out" \
  -ldflags "-s -w -X k8s.io/component-base/version/verflag.programName=$name -X k8s.io/component-base/version.gitVersion=$version" \
  "./cmd/$name"
