package deploy

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The cert-manager kinds of the overlay example, mirrored from cert-manager's
// v1 API (cert-manager.io/v1) for the fields the manifests may use: decoding
// is strict, so a field outside this subset, or misspelt, fails the tests.
// The mirror keeps the deploy module free of cert-manager's dependencies.
var certManagerKinds = map[schema.GroupVersionKind]func() any{
	{Group: "cert-manager.io", Version: "v1", Kind: "Issuer"}:        func() any { return new(cmIssuer) },
	{Group: "cert-manager.io", Version: "v1", Kind: "ClusterIssuer"}: func() any { return new(cmIssuer) },
	{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}:   func() any { return new(cmCertificate) },
}

type cmIssuer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		SelfSigned *struct {
			CRLDistributionPoints []string `json:"crlDistributionPoints,omitempty"`
		} `json:"selfSigned,omitempty"`
		CA *struct {
			SecretName            string   `json:"secretName"`
			CRLDistributionPoints []string `json:"crlDistributionPoints,omitempty"`
			OCSPServers           []string `json:"ocspServers,omitempty"`
		} `json:"ca,omitempty"`
	} `json:"spec"`
}

type cmCertificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		SecretName  string           `json:"secretName"`
		CommonName  string           `json:"commonName,omitempty"`
		DNSNames    []string         `json:"dnsNames,omitempty"`
		IPAddresses []string         `json:"ipAddresses,omitempty"`
		Duration    *metav1.Duration `json:"duration,omitempty"`
		RenewBefore *metav1.Duration `json:"renewBefore,omitempty"`
		IsCA        bool             `json:"isCA,omitempty"`
		Usages      []string         `json:"usages,omitempty"`
		PrivateKey  *struct {
			RotationPolicy string `json:"rotationPolicy,omitempty"`
			Encoding       string `json:"encoding,omitempty"`
			Algorithm      string `json:"algorithm,omitempty"`
			Size           int    `json:"size,omitempty"`
		} `json:"privateKey,omitempty"`
		IssuerRef struct {
			Name  string `json:"name"`
			Kind  string `json:"kind,omitempty"`
			Group string `json:"group,omitempty"`
		} `json:"issuerRef"`
	} `json:"spec"`
}

// cmUsages are the key usages cert-manager v1 accepts.
var cmUsages = []string{
	"signing", "digital signature", "content commitment", "key encipherment", "key agreement",
	"data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
	"server auth", "client auth", "code signing", "email protection", "s/mime", "ipsec end system",
	"ipsec tunnel", "ipsec user", "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc",
}

// TestCertificatesMakeTheSecretsTheBaseMounts checks the cert-manager
// example against the base: one Certificate per Secret the workloads mount,
// issued by an Issuer of the overlay, with the CommonNames etcd
// authenticates ("root" for the set-up Job, "zlink" for the store's user)
// and the usages each side of TLS needs.
func TestCertificatesMakeTheSecretsTheBaseMounts(t *testing.T) {
	objs := render(t, overlayDir)
	issuers := map[string]bool{}
	certs := map[string]*cmCertificate{} // by secret name
	for _, o := range objs {
		switch v := o.obj.(type) {
		case *cmIssuer:
			issuers[o.name] = true
		case *cmCertificate:
			certs[v.Spec.SecretName] = v
		}
	}
	want := []struct {
		secret, commonName string
		usages             []string
		dnsNames           []string
	}{
		{"etcd-server-tls", "etcd", []string{"server auth", "client auth"}, []string{"*.etcd.zlink.svc", "etcd-client.zlink.svc"}},
		{"etcd-peer-tls", "etcd-peer", []string{"server auth", "client auth"},
			[]string{"*.etcd.zlink.svc", "etcd-0.etcd.zlink.svc", "etcd-1.etcd.zlink.svc", "etcd-2.etcd.zlink.svc"}},
		{"etcd-root-client-tls", "root", []string{"client auth"}, nil},
		{"zlink-etcd-client-tls", "zlink", []string{"client auth"}, nil},
	}
	mounted := secretsMounted(render(t, baseDir))
	var wantSecrets []string
	for _, w := range want {
		wantSecrets = append(wantSecrets, w.secret)
		c, ok := certs[w.secret]
		if !ok {
			t.Errorf("no Certificate makes Secret %s", w.secret)
			continue
		}
		if c.Spec.CommonName != w.commonName {
			t.Errorf("Secret %s: commonName %q, want %q", w.secret, c.Spec.CommonName, w.commonName)
		}
		for _, u := range w.usages {
			if !slices.Contains(c.Spec.Usages, u) {
				t.Errorf("Secret %s: usages %v lack %q", w.secret, c.Spec.Usages, u)
			}
		}
		for _, d := range w.dnsNames {
			if !slices.Contains(c.Spec.DNSNames, d) {
				t.Errorf("Secret %s: dnsNames %v lack %q", w.secret, c.Spec.DNSNames, d)
			}
		}
	}
	for secret, c := range certs {
		if !issuers[c.Spec.IssuerRef.Name] || c.Spec.IssuerRef.Kind != "Issuer" {
			t.Errorf("Secret %s: issuer %s %q is not an Issuer of the overlay", secret, c.Spec.IssuerRef.Kind, c.Spec.IssuerRef.Name)
		}
		for _, u := range c.Spec.Usages {
			if !slices.Contains(cmUsages, u) {
				t.Errorf("Secret %s: cert-manager knows no usage %q", secret, u)
			}
		}
		if pk := c.Spec.PrivateKey; pk != nil && !slices.Contains([]string{"RSA", "ECDSA", "Ed25519"}, pk.Algorithm) {
			t.Errorf("Secret %s: private key algorithm %q", secret, pk.Algorithm)
		}
	}
	slices.Sort(wantSecrets)
	if !slices.Equal(mounted, wantSecrets) {
		t.Errorf("the base mounts Secrets %v, the Certificates are checked for %v", mounted, wantSecrets)
	}
}

// TestReadmesListEverySecret checks that both READMEs name every Secret the
// base mounts.
func TestReadmesListEverySecret(t *testing.T) {
	secrets := secretsMounted(render(t, baseDir))
	for _, file := range []string{"kubernetes/README.md", "../README.md"} {
		text := readFile(t, file)
		for _, s := range secrets {
			if !strings.Contains(text, s) {
				t.Errorf("%s does not mention Secret %s", file, s)
			}
		}
	}
}
