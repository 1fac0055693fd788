package deploy

import (
	"bufio"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// imageVars reads deploy/images.mk, the one place that names the images:
// its `NAME ?= value` lines, with $(NAME) references expanded.
func imageVars(t *testing.T) map[string]string {
	t.Helper()
	vars := map[string]string{}
	line := regexp.MustCompile(`^([A-Z_]+)\s*\?=\s*(\S*)\s*$`)
	sc := bufio.NewScanner(strings.NewReader(readFile(t, "images.mk")))
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		m := line.FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("images.mk: %q is not a NAME ?= value line", text)
		}
		vars[m[1]] = varRef.ReplaceAllStringFunc(m[2], func(ref string) string {
			name := varRef.FindStringSubmatch(ref)[1]
			v, ok := vars[name]
			if !ok {
				t.Fatalf("images.mk: %s refers to $(%s) before it is set", m[1], name)
			}
			return v
		})
	}
	for _, name := range []string{"IMAGE_REPO", "VERSION", "IMAGE_TAG", "ETCD_VERSION"} {
		if vars[name] == "" {
			t.Fatalf("images.mk sets no %s", name)
		}
	}
	return vars
}

// imageRefs are the references `make images` tags, by image name, under repo.
func imageRefs(vars map[string]string, repo string) map[string]string {
	return map[string]string{
		"zlinketcd": fmt.Sprintf("%s/zlinketcd:%s", repo, vars["IMAGE_TAG"]),
		"meshnode":  fmt.Sprintf("%s/meshnode:%s", repo, vars["IMAGE_TAG"]),
		"etcd":      fmt.Sprintf("%s/etcd:%s", repo, vars["ETCD_VERSION"]),
		"etcdctl":   fmt.Sprintf("%s/etcdctl:%s", repo, vars["ETCD_VERSION"]),
	}
}

// TestManifestImagesAreTheBuiltOnes checks that every container of the
// rendered base runs an image `make images` builds, under the names and tags
// of images.mk, and the overlay the same names and tags under its registry.
func TestManifestImagesAreTheBuiltOnes(t *testing.T) {
	vars := imageVars(t)
	tests := []struct{ dir, repo string }{
		{baseDir, vars["IMAGE_REPO"]},
		{overlayDir, "registry.example.com/" + vars["IMAGE_REPO"]},
	}
	// The image of each workload's container.
	want := map[string]string{
		"StatefulSet etcd/etcd":           "etcd",
		"Job zlink-auth-setup/auth-setup": "zlinketcd",
		"CronJob zlink-gc/gc":             "zlinketcd",
		"Deployment meshnode/meshnode":    "meshnode",
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			refs := imageRefs(vars, tt.repo)
			got := map[string]string{}
			for _, w := range workloads(render(t, tt.dir)) {
				for _, c := range slices.Concat(w.pod.InitContainers, w.pod.Containers) {
					got[w.String()+"/"+c.Name] = c.Image
					if c.ImagePullPolicy != "" && c.ImagePullPolicy != corev1.PullIfNotPresent {
						t.Errorf("%s/%s: imagePullPolicy %s (tags are versions: IfNotPresent)", w, c.Name, c.ImagePullPolicy)
					}
				}
			}
			wantRefs := map[string]string{}
			for container, image := range want {
				wantRefs[container] = refs[image]
			}
			if !maps.Equal(got, wantRefs) {
				t.Errorf("images:\n got %v\nwant %v (deploy/images.mk; base kustomization.yaml `images:`)", got, wantRefs)
			}
		})
	}
}

// goModRequire returns the version of module in a go.mod's require lines.
func goModRequire(t *testing.T, file, module string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(module) + `\s+(v\S+)`).FindStringSubmatch(readFile(t, file))
	if m == nil {
		t.Fatalf("%s does not require %s", file, module)
	}
	return m[1]
}

// TestEtcdVersionIsOneVersion checks that the etcd images are built at the
// etcd version the library is built and tested with.
func TestEtcdVersionIsOneVersion(t *testing.T) {
	want := imageVars(t)["ETCD_VERSION"]
	for _, c := range []struct{ file, module string }{
		{"../go.mod", "go.etcd.io/etcd/server/v3"},
		{"tools/etcd/go.mod", "go.etcd.io/etcd/server/v3"},
		{"tools/etcd/go.mod", "go.etcd.io/etcd/etcdctl/v3"},
	} {
		if got := goModRequire(t, c.file, c.module); got != want {
			t.Errorf("%s requires %s %s; images.mk's ETCD_VERSION is %s", c.file, c.module, got, want)
		}
	}
}

// imageConfig is what a final Dockerfile stage makes of an image.
type imageConfig struct {
	User, Entrypoint string
	Expose           []string
	Labels           map[string]string
	// Copies are the destinations of COPY, with their --chown.
	Copies []string
}

// dockerStage is one stage of a Dockerfile.
type dockerStage struct {
	from         string
	instructions [][2]string // keyword, rest
}

// parseDockerfile returns the stages by name and the images FROM names.
func parseDockerfile(t *testing.T, path string) (stages map[string]*dockerStage, froms []string) {
	t.Helper()
	stages = map[string]*dockerStage{}
	var cur *dockerStage
	var logical strings.Builder
	lines := strings.Split(readFile(t, path), "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "#") || l == "" {
			continue
		}
		logical.Reset()
		for strings.HasSuffix(l, "\\") {
			logical.WriteString(strings.TrimSuffix(l, "\\") + " ")
			i++
			l = strings.TrimSpace(lines[i])
		}
		logical.WriteString(l)
		kw, rest, _ := strings.Cut(logical.String(), " ")
		kw, rest = strings.ToUpper(kw), strings.TrimSpace(rest)
		switch kw {
		case "FROM":
			f := strings.Fields(rest)
			if len(f) != 3 || !strings.EqualFold(f[1], "AS") {
				t.Fatalf("%s: FROM %q: every stage must be named", path, rest)
			}
			cur = &dockerStage{from: f[0]}
			stages[f[2]] = cur
			froms = append(froms, f[0])
		case "ARG":
			if cur == nil {
				continue // before the first FROM
			}
			fallthrough
		default:
			if cur == nil {
				t.Fatalf("%s: %s before FROM", path, kw)
			}
			cur.instructions = append(cur.instructions, [2]string{kw, rest})
		}
	}
	return stages, froms
}

// config follows a target's chain of stages back to scratch.
func config(t *testing.T, stages map[string]*dockerStage, target string) imageConfig {
	t.Helper()
	var chain []*dockerStage
	for name := target; ; {
		s, ok := stages[name]
		if !ok {
			t.Fatalf("no stage %s", name)
		}
		chain = append([]*dockerStage{s}, chain...)
		if s.from == "scratch" {
			break
		}
		name = s.from
	}
	cfg := imageConfig{Labels: map[string]string{}}
	label := regexp.MustCompile(`([a-z.]+)="([^"]*)"`)
	for _, s := range chain {
		for _, in := range s.instructions {
			switch in[0] {
			case "USER":
				cfg.User = in[1]
			case "ENTRYPOINT":
				cfg.Entrypoint = in[1]
			case "EXPOSE":
				cfg.Expose = append(cfg.Expose, strings.Fields(in[1])...)
			case "LABEL":
				for _, m := range label.FindAllStringSubmatch(in[1], -1) {
					cfg.Labels[m[1]] = m[2]
				}
			case "COPY":
				f := strings.Fields(in[1])
				chown := ""
				for _, flag := range f {
					if v, ok := strings.CutPrefix(flag, "--chown="); ok {
						chown = v
					}
				}
				cfg.Copies = append(cfg.Copies, f[len(f)-1]+" "+chown)
			}
		}
	}
	slices.Sort(cfg.Copies)
	return cfg
}

// TestDockerfilesMakeTheSameImages compares the offline Dockerfile (make
// images) with the one for users' CI: every image gets the same user,
// entrypoint, ports, labels and files, and the offline one starts from
// nothing but scratch.
func TestDockerfilesMakeTheSameImages(t *testing.T) {
	offline, offlineFroms := parseDockerfile(t, "docker/scratch.Dockerfile")
	ci, _ := parseDockerfile(t, "docker/Dockerfile")
	for _, from := range offlineFroms {
		if _, isStage := offline[from]; from != "scratch" && !isStage {
			t.Errorf("scratch.Dockerfile: FROM %s would pull an image", from)
		}
	}
	for _, target := range slices.Sorted(maps.Keys(imageRefs(imageVars(t), ""))) {
		t.Run(target, func(t *testing.T) {
			a, b := config(t, offline, target), config(t, ci, target)
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("image %s differs:\n offline %+v\n      ci %+v", target, a, b)
			}
			if a.User != fmt.Sprintf("%d:%d", nonRootUID, nonRootUID) {
				t.Errorf("image %s runs as %q", target, a.User)
			}
			if a.Entrypoint != fmt.Sprintf(`["/usr/local/bin/%s"]`, target) {
				t.Errorf("image %s: entrypoint %s", target, a.Entrypoint)
			}
			for _, l := range []string{"title", "version", "revision", "source", "licenses"} {
				if a.Labels["org.opencontainers.image."+l] == "" {
					t.Errorf("image %s: no org.opencontainers.image.%s label", target, l)
				}
			}
		})
	}
}
