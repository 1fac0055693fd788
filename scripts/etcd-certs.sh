#!/bin/sh
# etcd-certs.sh — make the four TLS Secrets' files of deploy/kubernetes with
# openssl, from a new CA (for a test cluster, or where cert-manager is not
# used; deploy/kubernetes/overlays/example/cert-manager.yaml makes the same
# with cert-manager).
#
#   scripts/etcd-certs.sh OUTDIR
#
# writes OUTDIR/ca/{tls.crt,tls.key} (keep the CA key offline) and, each with
# ca.crt, tls.crt and tls.key (the names the manifests mount):
#   OUTDIR/etcd-server-tls        etcd's client-facing certificate: *.etcd.NS.svc,
#                                 etcd-client.NS.svc, localhost, 127.0.0.1;
#                                 server and client auth
#   OUTDIR/etcd-peer-tls          etcd's peer certificate: *.etcd.NS.svc and
#                                 etcd-N.etcd.NS.svc; server and client auth
#   OUTDIR/etcd-root-client-tls   CommonName root (the auth set-up Job)
#   OUTDIR/zlink-etcd-client-tls  CommonName $ZLINK_USER (the store's user)
# Then, for each: kubectl -n zlink create secret generic NAME --from-file=OUTDIR/NAME
#
# Environment: NAMESPACE (default zlink), CLUSTER_DOMAIN (cluster.local),
# ZLINK_USER (zlink), DAYS (365), MEMBERS (3: etcd-0..2).
set -eu
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$1
ns=${NAMESPACE:-zlink}
domain=${CLUSTER_DOMAIN:-cluster.local}
user=${ZLINK_USER:-zlink}
days=${DAYS:-365}
umask 077
mkdir -p "$out/ca"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

if [ ! -f "$out/ca/tls.crt" ]; then
	key "$out/ca/tls.key"
	openssl req -x509 -new -key "$out/ca/tls.key" -subj "/CN=zlink-etcd-ca" -days 3650 \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
		-out "$out/ca/tls.crt"
fi

# cert NAME CN EKU [SAN]
cert() {
	dir=$out/$1
	mkdir -p "$dir"
	key "$dir/tls.key"
	{
		echo "basicConstraints=critical,CA:FALSE"
		echo "keyUsage=critical,digitalSignature"
		echo "extendedKeyUsage=$3"
		[ -n "${4:-}" ] && echo "subjectAltName=$4"
	} >"$tmp/ext"
	openssl req -new -key "$dir/tls.key" -subj "/CN=$2" -out "$tmp/csr"
	openssl x509 -req -in "$tmp/csr" -CA "$out/ca/tls.crt" -CAkey "$out/ca/tls.key" -CAcreateserial \
		-days "$days" -extfile "$tmp/ext" -out "$dir/tls.crt" 2>/dev/null
	cp "$out/ca/tls.crt" "$dir/ca.crt"
	echo "$dir: CN=$2 ($3)"
}

members="DNS:*.etcd.$ns.svc,DNS:*.etcd.$ns.svc.$domain"
cert etcd-server-tls etcd serverAuth,clientAuth \
	"$members,DNS:etcd-client.$ns.svc,DNS:etcd-client.$ns.svc.$domain,DNS:localhost,IP:127.0.0.1"
# The plain names of every member (MEMBERS, default 3) serve etcd's check
# that a connecting peer's address matches its certificate (a reverse lookup
# against the wildcards, else a forward lookup of the plain names, in order).
# The StatefulSet switches that check off and takes the CommonName instead
# (--peer-skip-client-san-verification, --peer-cert-allowed-cn=etcd-peer):
# the lookups wait for a cut-off member's name (docs/reliability.md).
peers=$members
i=0
while [ "$i" -lt "${MEMBERS:-3}" ]; do
	peers="$peers,DNS:etcd-$i.etcd.$ns.svc"
	i=$((i + 1))
done
cert etcd-peer-tls etcd-peer serverAuth,clientAuth "$peers"
cert etcd-root-client-tls root clientAuth
cert zlink-etcd-client-tls "$user" clientAuth
rm -f "$out/ca/tls.srl"
