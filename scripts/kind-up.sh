#!/usr/bin/env bash
# Graphdock on a local kind cluster, for machines with Docker (or Podman): creates the cluster,
# builds the image, loads it into the cluster's nodes, runs a throw-away PostgreSQL in it and
# installs the chart. Re-running is safe: every step reuses what already exists.
#
#   scripts/kind-up.sh                 # cluster "graphdock", release "graphdock" in "graphdock"
#   KIND_CLUSTER=dev scripts/kind-up.sh --set operator.computeId=dev   # extra args go to helm
#
# Needs: docker (or podman with KIND_EXPERIMENTAL_PROVIDER=podman), kind, kubectl, helm.
# Not runnable on the project's CI machines (no container engine); the tests use test/cluster.
set -euo pipefail

CLUSTER="${KIND_CLUSTER:-graphdock}"
NAMESPACE="${GRAPHDOCK_NAMESPACE:-graphdock}"
RELEASE="${GRAPHDOCK_RELEASE:-graphdock}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION="$(node -p "require('$ROOT/package.json').version")"
IMAGE="graphdock:${VERSION}"
CONTEXT="kind-${CLUSTER}"

for tool in docker kind kubectl helm node; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    if [[ "$tool" == docker && -n "${KIND_EXPERIMENTAL_PROVIDER:-}" ]]; then continue; fi
    echo "kind-up: '$tool' is not installed (see docs/helm.md)" >&2
    exit 1
  fi
done

if ! kind get clusters | grep -qx "$CLUSTER"; then
  echo "==> creating kind cluster $CLUSTER"
  kind create cluster --name "$CLUSTER" --wait 120s
fi

echo "==> building $IMAGE"
docker build -t "$IMAGE" "$ROOT"
echo "==> loading $IMAGE into $CLUSTER"
kind load docker-image "$IMAGE" --name "$CLUSTER"

kubectl --context "$CONTEXT" create namespace "$NAMESPACE" --dry-run=client -o yaml |
  kubectl --context "$CONTEXT" apply -f -

# A single-pod PostgreSQL for trying things out (no volume: data is lost with the pod).
echo "==> PostgreSQL (development only)"
kubectl --context "$CONTEXT" -n "$NAMESPACE" apply -f - <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: { name: postgres }
spec:
  selector: { matchLabels: { app: postgres } }
  template:
    metadata: { labels: { app: postgres } }
    spec:
      containers:
        - name: postgres
          image: postgres:17
          env:
            - { name: POSTGRES_USER, value: graphdock }
            - { name: POSTGRES_PASSWORD, value: graphdock }
            - { name: POSTGRES_DB, value: graphdock }
          ports: [{ containerPort: 5432 }]
          readinessProbe: { exec: { command: [pg_isready, -U, graphdock] } }
---
apiVersion: v1
kind: Service
metadata: { name: postgres }
spec:
  selector: { app: postgres }
  ports: [{ port: 5432 }]
YAML
kubectl --context "$CONTEXT" -n "$NAMESPACE" rollout status deployment/postgres --timeout=180s

PG="postgres.${NAMESPACE}.svc.cluster.local:5432"
echo "==> installing chart as $RELEASE"
helm --kube-context "$CONTEXT" upgrade --install "$RELEASE" "$ROOT/charts/graphdock" \
  --namespace "$NAMESPACE" \
  --set fullnameOverride="$RELEASE" \
  --set image.repository=graphdock \
  --set image.tag="$VERSION" \
  --set image.pullPolicy=Never \
  --set database.url="postgresql://graphdock:graphdock@${PG}/graphdock" \
  --set operator.database.adminUrl="postgresql://graphdock:graphdock@${PG}/postgres" \
  --set operator.database.host="$PG" \
  --wait --timeout 5m \
  "$@"

KEY_CMD="kubectl --context $CONTEXT -n $NAMESPACE get secret ${RELEASE}-bootstrap -o jsonpath='{.data.GRAPHDOCK_BOOTSTRAP_API_KEY}' | base64 -d"
cat <<MSG

Graphdock is running in kind cluster "$CLUSTER", namespace "$NAMESPACE".
  API key:  $KEY_CMD
  API:      kubectl --context $CONTEXT -n $NAMESPACE port-forward svc/${RELEASE}-api 8080:8080
  Remove:   kind delete cluster --name $CLUSTER
MSG
