#!/usr/bin/env bash
# Builds what a real (non-kwok) node of the test cluster needs on top of build-tools.sh:
# kubelet and kube-proxy (same pinned Kubernetes module), upstream's pause binary (C source from
# that module, built static with the machine's gcc), a small OCI-archive writer on
# go-containerregistry, and two images as OCI archives: the sandbox (pause) image and a busybox
# test image from Debian's busybox-static. Installs the Debian packages the node runs (containerd,
# runc, CNI plugins, iptables) when missing. Separate cache key from build-tools.sh so adding the
# node never rebuilds the control plane. Idempotent and flock-safe like build-tools.sh; prints
# the bin directory.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# CI's environment may lack the sbin folders where Debian puts runc, iptables and conntrack.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
# One pinned Kubernetes version for the whole cluster: read it from build-tools.sh.
K8S_VERSION=$(sed -n 's/^K8S_VERSION=\([^ ]*\).*/\1/p' "$HERE/build-tools.sh")
GGCR_VERSION=v0.20.7 # github.com/google/go-containerregistry
RECIPE=1             # bump when this script builds something differently
NODE_KEY="node-k8s-${K8S_VERSION}_ggcr-${GGCR_VERSION}_r${RECIPE}"
DEBS=(containerd runc containernetworking-plugins iptables conntrack)
# Commands the node runs, one per package above (containernetworking-plugins: /usr/lib/cni).
DEB_COMMANDS=(containerd runc /usr/lib/cni/bridge iptables conntrack)

CACHE_ROOT="${GRAPHDOCK_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/graphdock/tools}"
ROOT="$CACHE_ROOT/$NODE_KEY"
BIN="$ROOT/bin"
OUTPUTS=(kubelet kube-proxy oci-image pause images/pause.oci.tar images/busybox.oci.tar)

all_built() {
  local o c
  for o in "${OUTPUTS[@]}"; do [[ -s "$BIN/$o" ]] || return 1; done
  for c in "${DEB_COMMANDS[@]}"; do command -v "$c" >/dev/null || return 1; done
}

if all_built; then
  echo "$BIN"
  exit 0
fi

mkdir -p "$ROOT"
exec 9>"$ROOT/.lock"
if ! flock -n 9; then
  echo "build-node-tools: another build holds $ROOT/.lock; waiting for it" >&2
  flock 9
fi
if all_built; then
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
export GOFLAGS="-mod=mod -buildvcs=false"
export CGO_ENABLED=0
export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"
BUILD=(nice -n 10 go build -trimpath)
mkdir -p "$BIN/images"
started=$(date +%s)
log() { echo "build-node-tools: $* ($(($(date +%s) - started)) s)" >&2; }

apt_get() {
  DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=600 "$@"
}

install_debs() {
  local c missing=0
  for c in "${DEB_COMMANDS[@]}"; do command -v "$c" >/dev/null || missing=1; done
  [[ $missing == 1 ]] || return 0
  if [[ $(id -u) != 0 ]]; then
    echo "build-node-tools: as root, run: apt-get install ${DEBS[*]}" >&2
    exit 1
  fi
  apt_get install -y --no-install-recommends "${DEBS[@]}" >&2 ||
    { apt_get update >&2 && apt_get install -y --no-install-recommends "${DEBS[@]}" >&2; }
  log "installed ${DEBS[*]}"
}

build_kubernetes_node() {
  [[ -x "$BIN/kubelet" && -x "$BIN/kube-proxy" ]] && return 0
  local dir="$ROOT/src/kubernetes"
  mkdir -p "$dir/out"
  # Same wrapper module as build-tools.sh: pin every staging module to the published v0.X.Y.
  local upstream_mod staging_version="v0${K8S_VERSION#v1}"
  upstream_mod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  {
    printf 'module graphdock.local/tools/kubernetes-node\n\ngo 1.26\n\nrequire k8s.io/kubernetes %s\n\n' "$K8S_VERSION"
    grep -E '^[[:space:]]+k8s\.io/[a-z0-9-]+ v0\.0\.0$' "$upstream_mod" | awk -v v="$staging_version" '{print "replace " $1 " => " $1 " " v}'
  } >"$dir/go.mod"
  local pkgs=(k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy)
  local minor="${K8S_VERSION#v1.}"
  minor="${minor%%.*}"
  local ver="-X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
  ver="$ver -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
  (cd "$dir" && go get "${pkgs[@]/%/@$K8S_VERSION}" && "${BUILD[@]}" -ldflags="-s -w $ver" -o "$dir/out/" "${pkgs[@]}")
  mv "$dir/out/kubelet" "$BIN/kubelet"
  mv "$dir/out/kube-proxy" "$BIN/kube-proxy"
  log "kubelet and kube-proxy $K8S_VERSION built"
}

# Writes an OCI image archive (an OCI image layout, tarred) from layer tarballs and config
# fields. go-containerregistry does the image and layout work; GNU tar packs the folder.
build_oci_image_tool() {
  [[ -x "$BIN/oci-image" ]] && return 0
  local dir="$ROOT/src/oci-image"
  mkdir -p "$dir"
  printf 'module graphdock.local/tools/oci-image\n\ngo 1.26\n\nrequire github.com/google/go-containerregistry %s\n' "$GGCR_VERSION" >"$dir/go.mod"
  cat >"$dir/main.go" <<'SRC'
// Generated by build-node-tools.sh. Usage:
//   oci-image -name graphdock.test/x:1 -out x.oci.tar -layer rootfs.tar [-layer more.tar]
//             [-entrypoint '["/bin/sh"]'] [-cmd '[...]'] [-env K=V]... [-workdir /]
// writes a single-platform (linux/GOARCH) OCI image archive that `ctr images import` loads
// under -name (io.containerd.image.name; org.opencontainers.image.ref.name holds the tag).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var layers, env list
	ref := flag.String("name", "", "image name with tag")
	out := flag.String("out", "", "archive to write")
	entrypoint := flag.String("entrypoint", "", "JSON array")
	cmd := flag.String("cmd", "", "JSON array")
	workdir := flag.String("workdir", "", "working directory")
	flag.Var(&layers, "layer", "layer tarball (repeatable, bottom first)")
	flag.Var(&env, "env", "K=V (repeatable)")
	flag.Parse()
	if err := run(*ref, *out, layers, env, *entrypoint, *cmd, *workdir); err != nil {
		fmt.Fprintln(os.Stderr, "oci-image:", err)
		os.Exit(1)
	}
}

func run(ref, out string, layers, env list, entrypoint, cmd, workdir string) error {
	tag, err := name.NewTag(ref)
	if err != nil || out == "" || len(layers) == 0 {
		return fmt.Errorf("need -name <repo:tag>, -out and at least one -layer (%v)", err)
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	for _, path := range layers {
		layer, err := tarball.LayerFromFile(path, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return err
		}
		if img, err = mutate.AppendLayers(img, layer); err != nil {
			return err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	for _, field := range []struct {
		raw string
		to  *[]string
	}{{entrypoint, &cf.Config.Entrypoint}, {cmd, &cf.Config.Cmd}} {
		if field.raw != "" {
			if err := json.Unmarshal([]byte(field.raw), field.to); err != nil {
				return fmt.Errorf("%q is not a JSON array of strings: %w", field.raw, err)
			}
		}
	}
	cf.Config.Env = append(cf.Config.Env, env...)
	cf.Config.WorkingDir = workdir
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "oci-layout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	annotations := map[string]string{
		"io.containerd.image.name":         tag.Name(),
		"org.opencontainers.image.ref.name": tag.TagStr(),
	}
	platform := &v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	if err := p.AppendImage(img, layout.WithAnnotations(annotations), layout.WithPlatform(*platform)); err != nil {
		return err
	}
	tmp := out + ".tmp"
	if outp, err := exec.Command("tar", "-C", dir, "-cf", tmp, ".").CombinedOutput(); err != nil {
		return fmt.Errorf("tar: %v: %s", err, outp)
	}
	return os.Rename(tmp, out)
}
SRC
  (cd "$dir" && go mod tidy && "${BUILD[@]}" -ldflags="-s -w" -o "$BIN/oci-image.tmp" . && mv "$BIN/oci-image.tmp" "$BIN/oci-image")
  log "oci-image (go-containerregistry $GGCR_VERSION) built"
}

# The sandbox ("pause") image: upstream's pause.c from the pinned module, built as the
# upstream Makefile does (-Os -static), alone in one layer.
build_pause() {
  [[ -s "$BIN/images/pause.oci.tar" ]] && return 0
  local src rootfs="$ROOT/src/pause-rootfs"
  src=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  rm -rf "$rootfs" && mkdir -p "$rootfs"
  gcc -Os -Wall -Werror -static "-DVERSION=${K8S_VERSION}-graphdock" -o "$BIN/pause.tmp" "$src/build/pause/linux/pause.c"
  mv "$BIN/pause.tmp" "$BIN/pause"
  cp "$BIN/pause" "$rootfs/pause"
  tar --numeric-owner --owner=0 --group=0 -C "$rootfs" -cf "$ROOT/src/pause-layer.tar" .
  "$BIN/oci-image" -name graphdock.test/pause:1 -out "$BIN/images/pause.oci.tar" \
    -layer "$ROOT/src/pause-layer.tar" -entrypoint '["/pause"]'
  log "pause image built"
}

# A test image: Debian's busybox-static (sh, httpd, wget, nc, ...) with one symlink per applet.
build_busybox() {
  [[ -s "$BIN/images/busybox.oci.tar" ]] && return 0
  local work="$ROOT/src/busybox" rootfs applet
  rm -rf "$work" && mkdir -p "$work/deb"
  (cd "$work/deb" && { apt-get download busybox-static >&2 || { apt_get update >&2 && apt-get download busybox-static >&2; }; })
  dpkg-deb -x "$work"/deb/busybox-static_*.deb "$work/extracted"
  rootfs="$work/rootfs"
  mkdir -p "$rootfs/bin" "$rootfs/tmp" "$rootfs/etc"
  cp "$work/extracted/bin/busybox" "$rootfs/bin/busybox"
  for applet in $("$rootfs/bin/busybox" --list); do
    [[ $applet == busybox ]] || ln -sf busybox "$rootfs/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
  tar --numeric-owner --owner=0 --group=0 -C "$rootfs" -cf "$work/layer.tar" .
  "$BIN/oci-image" -name graphdock.test/busybox:1 -out "$BIN/images/busybox.oci.tar" \
    -layer "$work/layer.tar" -env PATH=/bin -cmd '["/bin/sh"]'
  log "busybox image built"
}

log "building into $BIN"
install_debs
build_oci_image_tool
build_pause
build_busybox
build_kubernetes_node
all_built
log "all node tools built"
echo "$BIN"
