#!/usr/bin/env bash
# Builds the OCI image tool used to assemble Graphdock's images without a container engine
# (go-containerregistry's `crane`) from the Go module proxy, once, into a cache outside the clone.
# Kept apart from test/cluster/build-tools.sh so that changing one never rebuilds the other.
# Idempotent and safe to run concurrently (flock); prints the bin directory.
set -euo pipefail

CRANE_VERSION=v0.22.1 # github.com/google/go-containerregistry
TOOLS_KEY="crane-${CRANE_VERSION}"

CACHE_ROOT="${GRAPHDOCK_IMAGE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/graphdock/image-tools}"
ROOT="$CACHE_ROOT/$TOOLS_KEY"
BIN="$ROOT/bin"

if [[ -x "$BIN/crane" ]]; then
  echo "$BIN"
  exit 0
fi

mkdir -p "$ROOT"
exec 9>"$ROOT/.lock"
if ! flock -n 9; then
  echo "build-image-tools: another build holds $ROOT/.lock; waiting for it" >&2
  flock 9
fi
if [[ -x "$BIN/crane" ]]; then
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
if ! command -v go >/dev/null; then
  echo "build-image-tools: Go 1.26 or newer is needed (https://go.dev/doc/install) and 'go' is not on PATH" >&2
  exit 1
fi
export GOFLAGS="-mod=mod -buildvcs=false"
export CGO_ENABLED=0
export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"
started=$(date +%s)

dir="$ROOT/src/crane"
mkdir -p "$dir" "$BIN"
printf 'module graphdock.local/tools/crane\n\ngo 1.26\n\nrequire github.com/google/go-containerregistry %s\n' "$CRANE_VERSION" >"$dir/go.mod"
pkg=github.com/google/go-containerregistry/cmd/crane
# Built into a staging name and renamed, so a killed build never leaves a half binary.
(cd "$dir" && go get "$pkg@$CRANE_VERSION" && nice -n 10 go build -trimpath \
  -ldflags="-s -w -X github.com/google/go-containerregistry/cmd/crane/cmd.Version=$CRANE_VERSION" \
  -o "$BIN/crane.tmp" "$pkg" && mv "$BIN/crane.tmp" "$BIN/crane")
echo "build-image-tools: crane $CRANE_VERSION built ($(($(date +%s) - started)) s)" >&2
echo "$BIN"
