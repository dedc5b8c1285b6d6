#!/usr/bin/env bash
# Removes everything a real node of one test cluster left on the machine, by force: its
# processes (by cgroup, by the containerd socket in their command line), its mounts, shim
# sockets, cgroups, network namespace (and with it the veth pair, the pods' bridge and every
# iptables rule kube-proxy and CNI made), kubelet's log symlinks, and the kernel tunables kubelet
# changed. Used by stop() after a graceful stop and by the watchdog when the owner died.
# Usage: node-cleanup.sh <node dir>   (reads <node dir>/node.env written before anything starts)
set -uo pipefail
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

NODE_DIR=${1:?node dir}
[[ -f "$NODE_DIR/node.env" ]] || exit 0
# shellcheck source=/dev/null
source "$NODE_DIR/node.env" # NETNS HOST_IF CGROUP SOCKET STATE_DIR PIDS_FILE CREATED_DIRS

cgroup_dirs() {
  local d
  for d in /sys/fs/cgroup/*/"${CGROUP#/}" /sys/fs/cgroup/"${CGROUP#/}"; do [[ -d $d ]] && echo "$d"; done
}

node_pids() {
  local d p
  [[ -f $PIDS_FILE ]] && cat "$PIDS_FILE"
  for d in $(cgroup_dirs); do find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null; done
  # containerd's shims stay in containerd's cgroup; they name the socket in their arguments.
  for p in /proc/[0-9]*; do
    grep -qsF -- "$SOCKET" "$p/cmdline" && echo "${p#/proc/}"
  done
}

# Sockets the node's live shims listen on in containerd's fixed folder: a killed shim leaves its
# socket file behind.
shim_sockets=""
for p in /proc/[0-9]*; do
  grep -qsF -- "$SOCKET" "$p/cmdline" || continue
  for inode in $(find "$p/fd" -lname 'socket:*' -printf '%l\n' 2>/dev/null | tr -dc '0-9\n'); do
    shim_sockets="$shim_sockets $(awk -v i="$inode" '$7 == i && index($8, "/run/containerd/s/") == 1 {print $8}' "$p/net/unix" 2>/dev/null)"
  done
done

for _ in $(seq 1 50); do
  pids=$(node_pids | sort -u | grep -v "^$$\$" || true)
  live=""
  for p in $pids; do kill -0 "$p" 2>/dev/null && live="$live $p"; done
  [[ -z $live ]] && break
  # shellcheck disable=SC2086
  kill -9 $live 2>/dev/null
  sleep 0.1
done

# shellcheck disable=SC2086
[[ -n ${shim_sockets// /} ]] && rm -f $shim_sockets
# Same for shims already gone: a socket's name is sha256(<containerd socket>/<namespace>/<id>).
for ns_dir in "$STATE_DIR"/io.containerd.runtime.v2.task/*; do
  [[ -d $ns_dir ]] || continue
  for task in "$ns_dir"/*; do
    [[ -e $task ]] || continue
    hash=$(printf '%s' "$SOCKET/$(basename "$ns_dir")/$(basename "$task")" | sha256sum | cut -d' ' -f1)
    rm -f "/run/containerd/s/$hash"
  done
done

# Mounts under the node folder (overlay root filesystems, pods' tmpfs volumes, pods' network
# namespaces), deepest first.
for _ in 1 2 3; do
  mounts=$(awk -v d="$NODE_DIR/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | awk '{print length, $0}' | sort -rn | cut -d' ' -f2-)
  [[ -z $mounts ]] && break
  for m in $mounts; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
done

for d in $(cgroup_dirs); do find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null; done

ip link del "$HOST_IF" 2>/dev/null
ip netns del "$NETNS" 2>/dev/null

# kubelet links each container's log into this fixed folder.
[[ -d /var/log/containers ]] && find /var/log/containers -maxdepth 1 -lname "$NODE_DIR/*" -delete 2>/dev/null
# Fixed folders that were missing before this node made them: removed unless another kubelet
# (another cluster's node) is running, since it shares them.
if ! pgrep -x kubelet >/dev/null; then
  for dir in ${CREATED_DIRS:-}; do
    case $dir in
    /var/lib/kubelet) rm -rf /var/lib/kubelet/device-plugins && rmdir /var/lib/kubelet ;;
    /run/containerd) rmdir /run/containerd/s /run/containerd 2>/dev/null ;;
    *) rmdir "$dir" 2>/dev/null ;;
    esac
  done
fi

# kubelet sets a few kernel tunables on start; put back what was there.
if [[ -f "$NODE_DIR/sysctl-before" ]]; then
  while read -r key value; do
    [[ -n $key ]] && sysctl -q -w "$key=$value" >/dev/null 2>&1
  done <"$NODE_DIR/sysctl-before"
fi
exit 0
