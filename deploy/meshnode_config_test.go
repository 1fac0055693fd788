package deploy

import (
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	meshconfig "github.com/zlink-systems/zlink-etcd/examples/meshnode/config"
)

// TestMeshNodeDeploymentConfigParses runs the mesh node's own configuration
// parser (examples/meshnode/config, what the binary runs first) on the
// arguments and environment the kubelet gives a pod of the rendered
// Deployment, and checks what the node would do with them against the rest
// of the manifests: the ConfigMap's store, the pod's name and address, the
// container's ports and probes, the Secret's mount, and a shutdown that
// fits in terminationGracePeriodSeconds. Every ZLINK_ variable the
// Deployment sets must be one the binary reads (a misspelt one would be
// ignored silently).
func TestMeshNodeDeploymentConfigParses(t *testing.T) {
	const podName, podIP = "meshnode-5c7d9b8f4-x2x8z", "10.244.1.7"
	for _, dir := range []string{baseDir, overlayDir} {
		t.Run(dir, func(t *testing.T) {
			objs := render(t, dir)
			cms := configMaps(objs)
			store := cms["zlink-store"].Data
			deploy := find(t, objs, "Deployment", "meshnode").obj.(*appsv1.Deployment)
			pod := deploy.Spec.Template.Spec
			c := pod.Containers[0]
			env := podEnv(t, c, podName, podIP, cms)
			cfg, err := meshconfig.Parse(containerArgs(c, env), func(k string) string { return env[k] })
			if err != nil {
				t.Fatalf("the Deployment's configuration is refused by the binary: %v", err)
			}

			ports := map[string]int32{}
			for _, p := range c.Ports {
				ports[p.Name] = p.ContainerPort
			}
			want := map[string]string{
				"endpoints":       store["ZLINK_ETCD_ENDPOINTS"],
				"prefix":          store["ZLINK_ETCD_PREFIX"],
				"mesh":            store["ZLINK_MESH"],
				"node id":         podName,
				"advertise":       podIP + ":" + itoa(ports["mesh"]),
				"listen port":     itoa(ports["mesh"]),
				"metrics port":    itoa(ports["metrics"]),
				"TLS directory":   mountOf(t, pod, c, "zlink-etcd-client-tls"),
				"dial to peers":   "true",
				"logs":            "json",
				"grace fits":      "true",
				"endpoint scheme": "https",
			}
			got := map[string]string{
				"endpoints":       strings.Join(cfg.Endpoints, ","),
				"prefix":          cfg.Prefix,
				"mesh":            cfg.Mesh,
				"node id":         cfg.NodeID,
				"advertise":       cfg.Advertise,
				"listen port":     portOf(cfg.Listen),
				"metrics port":    portOf(cfg.MetricsAddr),
				"TLS directory":   commonDir(cfg.CACert, cfg.Cert, cfg.Key),
				"dial to peers":   strconv.FormatBool(cfg.DialPeers),
				"logs":            map[bool]string{true: "json", false: "text"}[cfg.LogJSON],
				"grace fits":      strconv.FormatBool(cfg.ShutdownGrace+2*time.Second <= time.Duration(*pod.TerminationGracePeriodSeconds)*time.Second),
				"endpoint scheme": strings.SplitN(cfg.Endpoints[0], ":", 2)[0],
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s: the binary would use %q, the manifests say %q", k, got[k], w)
				}
			}
			for _, p := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
				if p.HTTPGet == nil || p.HTTPGet.Port.StrVal != "metrics" {
					t.Errorf("a probe of the mesh node is not an HTTP GET on the metrics port: %+v", p)
				}
			}
			if c.LivenessProbe.HTTPGet.Path != "/livez" || c.StartupProbe.HTTPGet.Path != "/livez" || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
				t.Errorf("probe paths: startup %s, liveness %s, readiness %s; the binary serves /livez and /readyz",
					c.StartupProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Path)
			}
			if a := deploy.Spec.Template.Annotations; a["prometheus.io/port"] != itoa(ports["metrics"]) || a["prometheus.io/path"] != "/metrics" {
				t.Errorf("metrics annotations %v do not match the metrics port %d and /metrics", a, ports["metrics"])
			}
			read := map[string]bool{"POD_NAME": true, "POD_IP": true, "GOMEMLIMIT": true}
			for _, s := range meshconfig.Settings() {
				read[s.Env] = true
			}
			for _, e := range c.Env {
				if !read[e.Name] {
					t.Errorf("the Deployment sets %s, which the binary does not read", e.Name)
				}
			}
		})
	}
}

// mountOf is where container c mounts the Secret secret.
func mountOf(t *testing.T, pod corev1.PodSpec, c corev1.Container, secret string) string {
	t.Helper()
	for _, v := range pod.Volumes {
		if v.Secret == nil || v.Secret.SecretName != secret {
			continue
		}
		for _, m := range c.VolumeMounts {
			if m.Name == v.Name {
				return m.MountPath
			}
		}
	}
	t.Fatalf("container %s mounts no Secret %s", c.Name, secret)
	return ""
}

// commonDir is the directory of the given files, or "" when they differ.
func commonDir(files ...string) string {
	dir := ""
	for i, f := range files {
		d := f[:max(strings.LastIndex(f, "/"), 0)]
		if i > 0 && d != dir {
			return ""
		}
		dir = d
	}
	return dir
}

func portOf(addr string) string { return addr[strings.LastIndex(addr, ":")+1:] }

func itoa(n int32) string { return strconv.Itoa(int(n)) }
