package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// The kustomizations the tests render.
const (
	baseDir    = "kubernetes/base"
	overlayDir = "kubernetes/overlays/example"
)

// object is one decoded Kubernetes resource.
type object struct {
	// source names where it came from: a file and document, or a rendering.
	source string
	gvk    schema.GroupVersionKind
	name   string
	// obj is the typed value: a k8s.io/api type or a cert-manager mirror.
	obj any
}

func (o object) String() string { return fmt.Sprintf("%s %s (%s)", o.gvk.Kind, o.name, o.source) }

// kubeScheme knows the built-in kinds the manifests may use.
var kubeScheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme,
		policyv1.AddToScheme, networkingv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err) // the API packages' own registrations: cannot fail
		}
	}
	return s
})

// errUnknownKind marks a resource of a kind the tests cannot decode.
var errUnknownKind = errors.New("unknown kind")

// decodeDocument decodes one YAML document strictly: an unknown or
// duplicated field is an error, as it would be for the API server's strict
// field validation.
func decodeDocument(source string, doc []byte) (object, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return object{}, fmt.Errorf("%s: %w", source, err)
	}
	gvk := schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind)
	var obj any
	if newMirror, ok := certManagerKinds[gvk]; ok {
		obj = newMirror()
	} else {
		typed, err := kubeScheme().New(gvk)
		if err != nil {
			return object{}, fmt.Errorf("%s: %w %s: %w", source, errUnknownKind, gvk, err)
		}
		obj = typed
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return object{}, fmt.Errorf("%s: %s: %w", source, gvk.Kind, err)
	}
	meta, ok := obj.(interface{ GetName() string })
	if !ok || meta.GetName() == "" {
		return object{}, fmt.Errorf("%s: %s has no metadata.name", source, gvk.Kind)
	}
	return object{source: source, gvk: gvk, name: meta.GetName(), obj: obj}, nil
}

// decodeStream decodes every document of a multi-document YAML stream.
func decodeStream(source string, data []byte) ([]object, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []object
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", source, i, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		o, err := decodeDocument(fmt.Sprintf("%s#%d", source, i), doc)
		if err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
}

// stripComments drops comment-only lines, to recognise empty documents.
func stripComments(doc []byte) []byte {
	var out bytes.Buffer
	for line := range bytes.Lines(doc) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out.Write(line)
		}
	}
	return out.Bytes()
}

// manifestFiles lists every YAML file under kubernetes/ but the
// kustomizations.
func manifestFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("kubernetes", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) &&
			d.Name() != "kustomization.yaml" {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// render runs the kustomize build of dir in-process (as `kubectl kustomize`
// does) and decodes the result strictly. Renderings are cached: every test
// looks at the same output.
func render(t *testing.T, dir string) []object {
	t.Helper()
	r := renderings(dir)
	if r.err != nil {
		t.Fatalf("kustomize build %s: %v", dir, r.err)
	}
	return r.objs
}

type rendering struct {
	objs []object
	err  error
}

var (
	renderMu    sync.Mutex
	renderCache = map[string]rendering{}
)

func renderings(dir string) rendering {
	renderMu.Lock()
	defer renderMu.Unlock()
	if r, ok := renderCache[dir]; ok {
		return r
	}
	var r rendering
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resources, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		r.err = err
	} else if out, err := resources.AsYaml(); err != nil {
		r.err = err
	} else {
		r.objs, r.err = decodeStream("kustomize build "+dir, out)
	}
	renderCache[dir] = r
	return r
}

// find returns the rendered object of kind and name.
func find(t *testing.T, objs []object, kind, name string) object {
	t.Helper()
	for _, o := range objs {
		if o.gvk.Kind == kind && o.name == name {
			return o
		}
	}
	t.Fatalf("no %s %s among %d objects", kind, name, len(objs))
	return object{}
}

func TestEveryManifestDecodesStrictly(t *testing.T) {
	files := manifestFiles(t)
	if len(files) == 0 {
		t.Fatal("no manifests under kubernetes/")
	}
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := decodeStream(file, data)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) == 0 {
				t.Fatalf("%s holds no resource", file)
			}
		})
	}
}

// TestStrictDecodingRejects shows the decoder is strict: a misspelt field, a
// duplicated one and an unknown kind are errors.
func TestStrictDecodingRejects(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"unknown field", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndatta: {}\n", `unknown field "datta"`},
		{"unknown nested field", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  replica: 1\n", `unknown field "replica"`},
		{"duplicate field", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n", `key "name" already set`},
		{"unknown kind", "apiVersion: v1\nkind: Pood\nmetadata:\n  name: a\n", errUnknownKind.Error()},
		{"cert-manager unknown field", "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: a\nspec:\n  secretNam: x\n", `unknown field "secretNam"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeDocument("test", []byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("decodeDocument: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestKustomizeRenders(t *testing.T) {
	want := []string{
		"Namespace zlink",
		"ServiceAccount etcd", "ServiceAccount meshnode", "ServiceAccount zlink-auth-setup", "ServiceAccount zlink-gc",
		"ConfigMap zlink-store",
		"Service etcd", "Service etcd-client",
		"PodDisruptionBudget etcd", "PodDisruptionBudget meshnode",
		"StatefulSet etcd", "Job zlink-auth-setup", "CronJob zlink-gc", "Deployment meshnode",
		"NetworkPolicy default-deny", "NetworkPolicy allow-dns", "NetworkPolicy etcd",
		"NetworkPolicy etcd-clients", "NetworkPolicy meshnode",
	}
	overlayOnly := []string{
		"Issuer zlink-selfsigned", "Issuer zlink-etcd-ca", "Certificate zlink-etcd-ca",
		"Certificate etcd-server", "Certificate etcd-peer", "Certificate etcd-root-client", "Certificate zlink-etcd-client",
	}
	for _, tt := range []struct {
		dir  string
		want []string
	}{
		{baseDir, want},
		{overlayDir, slices.Concat(want, overlayOnly)},
	} {
		t.Run(tt.dir, func(t *testing.T) {
			var got []string
			for _, o := range render(t, tt.dir) {
				got = append(got, o.gvk.Kind+" "+o.name)
				ns := o.obj.(interface{ GetNamespace() string }).GetNamespace()
				if o.gvk.Kind != "Namespace" && ns != "zlink" {
					t.Errorf("%s is in namespace %q, want zlink", o, ns)
				}
			}
			slices.Sort(got)
			slices.Sort(tt.want)
			if !slices.Equal(got, tt.want) {
				t.Errorf("rendered resources:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}
