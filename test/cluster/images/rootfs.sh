#!/usr/bin/env bash
# The base layer of the images that test/cluster/images.ts assembles: a Debian bookworm root
# filesystem from Debian's repositories (mmdebstrap, `essential` variant: no apt, no docs, no man
# pages, no locales), written as one tar file.
#   rootfs.sh node OUT.tar NODE_BINARY   Node.js (the image's release) and the `node` user (1000)
#   rootfs.sh postgres OUT.tar           PostgreSQL 15 and its entrypoint (postgres-entrypoint.sh)
# Needs root and mmdebstrap (`apt-get install mmdebstrap`).
set -euo pipefail

kind=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
mirror=http://deb.debian.org/debian
args=(
  --format=tar
  --variant=essential
  # merged /usr through symlinks, as debootstrap does, instead of the usrmerge package (and perl)
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr
  --skip=output/dev
  --dpkgopt='path-exclude=/usr/share/man/*'
  --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/locale/*'
  --dpkgopt='path-exclude=/usr/share/lintian/*'
  --customize-hook='rm -rf "$1"/var/cache/* "$1"/var/log/*.log "$1"/var/lib/apt/lists/*'
)
case "$kind" in
  node)
    node=$3
    args+=(
      --include=libstdc++6,ca-certificates
      --customize-hook="copy-in $node /usr/local/bin"
      --customize-hook='chroot "$1" /usr/local/bin/node --version'
      # The non-root user of the Dockerfile's base image (node:*-slim): uid and gid 1000.
      --customize-hook='echo "node:x:1000:" >>"$1/etc/group"'
      --customize-hook='echo "node:x:1000:1000::/home/node:/bin/sh" >>"$1/etc/passwd"'
      --customize-hook='mkdir -p "$1/home/node" && chown 1000:1000 "$1/home/node"'
    )
    ;;
  postgres)
    args+=(
      --include=postgresql-15
      # No JIT (the entrypoint sets jit=off): without LLVM the image is about 130 MB smaller.
      --customize-hook='chroot "$1" dpkg --purge --force-depends libllvm14 libz3-4'
      --customize-hook='rm -rf "$1"/usr/lib/postgresql/15/lib/llvmjit* "$1"/usr/lib/postgresql/15/lib/bitcode'
      # postgresql-common creates a "main" cluster on install; the entrypoint makes its own.
      --customize-hook='rm -rf "$1"/var/lib/postgresql/15 "$1"/etc/postgresql/15'
      --customize-hook="copy-in $here/postgres-entrypoint.sh /usr/local/bin"
      --customize-hook='chmod 755 "$1/usr/local/bin/postgres-entrypoint.sh"'
      # In the chroot: the user's ids there, not the host's.
      --customize-hook='chroot "$1" install -d -o postgres -g postgres -m 700 /var/lib/postgresql/data'
      --customize-hook='chroot "$1" /usr/lib/postgresql/15/bin/postgres --version'
    )
    ;;
  *)
    echo "rootfs.sh: unknown kind '$kind' (node or postgres)" >&2
    exit 2
    ;;
esac

mmdebstrap "${args[@]}" bookworm "$out" \
  "deb $mirror bookworm main" \
  "deb $mirror bookworm-updates main" \
  "deb http://deb.debian.org/debian-security bookworm-security main"
