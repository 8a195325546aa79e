#!/usr/bin/env bash
# Creates the cluster's certificates and keys with openssl into $1 (a CA; the API server's serving
# certificate; client certificates for the admin, controller-manager, scheduler, kubelet,
# kube-proxy, kube-router and the API server's kubelet client; the kubelet's serving certificate; the
# service-account key pair), the aggregation layer's own CA and the API server's proxy client
# certificate (front-proxy, as kubeadm makes them), and a kubeconfig per client. $2: the machine's address.
set -euo pipefail
source "$(dirname "$0")/config.sh"
pki=$1 host=$2
mkdir -p "$pki"
cd "$pki"

openssl genrsa -out ca.key 2048 2>/dev/null
openssl req -x509 -new -key ca.key -days 3650 -subj /CN=observatory-cluster-ca -out ca.crt 2>/dev/null

# [CA=<ca name>] sign <name> <subject> [subjectAltName]
sign() {
  local name=$1 subj=$2 san=${3:-} ext
  openssl genrsa -out "$name.key" 2048 2>/dev/null
  openssl req -new -key "$name.key" -subj "$subj" -out "$name.csr" 2>/dev/null
  ext=$(mktemp)
  if [[ -n $san ]]; then
    printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=%s\n' "$san" >"$ext"
  else
    printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' >"$ext"
  fi
  openssl x509 -req -in "$name.csr" -CA "${CA:-ca}.crt" -CAkey "${CA:-ca}.key" -CAcreateserial -days 3650 -extfile "$ext" -out "$name.crt" 2>/dev/null
  rm -f "$name.csr" "$ext"
}

sign apiserver /CN=kube-apiserver \
  "DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.$CLUSTER_DOMAIN,IP:127.0.0.1,IP:$host,IP:$SERVICE_FIRST_IP"
sign kubelet-serving "/CN=$NODE_NAME" "DNS:$NODE_NAME,DNS:localhost,IP:127.0.0.1,IP:$host"
sign admin /O=system:masters/CN=observatory-admin
sign controller-manager /CN=system:kube-controller-manager
sign scheduler /CN=system:kube-scheduler
sign kubelet "/O=system:nodes/CN=system:node:$NODE_NAME"
sign kube-proxy /CN=system:kube-proxy
sign kube-router /CN=observatory:kube-router
sign apiserver-kubelet-client /O=system:masters/CN=kube-apiserver-kubelet-client
# The aggregation layer (metrics.k8s.io and other APIServices): the API server proxies as this
# client, and extension API servers trust the user it names only from this CA's certificates.
openssl genrsa -out front-proxy-ca.key 2048 2>/dev/null
openssl req -x509 -new -key front-proxy-ca.key -days 3650 -subj /CN=observatory-front-proxy-ca -out front-proxy-ca.crt 2>/dev/null
CA=front-proxy-ca sign front-proxy-client /CN=front-proxy-client
openssl genrsa -out sa.key 2048 2>/dev/null
openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null

# kubeconfig <client> <server>
kubeconfig() {
  cat <<YAML
apiVersion: v1
kind: Config
clusters:
- name: observatory
  cluster:
    server: $2
    certificate-authority-data: $(base64 -w0 ca.crt)
users:
- name: $1
  user:
    client-certificate-data: $(base64 -w0 "$1.crt")
    client-key-data: $(base64 -w0 "$1.key")
contexts:
- name: observatory
  context: {cluster: observatory, user: $1}
current-context: observatory
YAML
}
for c in admin controller-manager scheduler kubelet kube-proxy kube-router; do
  kubeconfig "$c" "https://127.0.0.1:$API_PORT" >"$c.kubeconfig"
done
chmod 600 ./*.key ./*.kubeconfig
