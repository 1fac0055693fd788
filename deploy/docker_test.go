//go:build docker

package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// These tests run the rendered base's containers in Docker, as the kubelet
// would run them: the images `make images` built, the manifests' arguments
// and environment (downward API and ConfigMap values filled in), the
// Secrets' files mounted read-only with mode 0440 and group 65532 (what
// fsGroup makes of defaultMode 0400), a read-only root filesystem, uid 65532,
// no capabilities, on a private Docker network (--internal) whose aliases
// are the Services' DNS names. `make images-smoke` runs them:
//
//	cd deploy && go test -tags docker -run InDocker -count=1 ./...

// docker runs the docker CLI and returns its combined output.
func docker(ctx context.Context, t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

func mustDocker(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	out, err := docker(ctx, t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// secretDirs makes the Secrets' files (scripts/etcd-certs.sh) with the
// owner and mode a Secret volume with defaultMode 0400 and fsGroup 65532
// gets.
func secretDirs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("../scripts/etcd-certs.sh", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("etcd-certs.sh: %v: %s", err, out)
	}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(path, 0, nonRootUID); err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(path, 0o750)
		}
		return os.Chmod(path, 0o440)
	})
	if err != nil {
		t.Fatalf("setting the Secret files' owner (run as root): %v", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runArgs are the docker run flags of a container of pod on network net.
func runArgs(t *testing.T, pod corev1.PodSpec, c corev1.Container, env map[string]string, secrets, net string) []string {
	t.Helper()
	args := []string{
		"--network", net, "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"--user", fmt.Sprintf("%d:%d", *pod.SecurityContext.RunAsUser, *pod.SecurityContext.RunAsGroup),
		"--group-add", fmt.Sprint(*pod.SecurityContext.FSGroup),
		"--memory", fmt.Sprint(c.Resources.Limits.Memory().Value()),
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range env {
			if !yield(k) {
				return
			}
		}
	}) {
		args = append(args, "-e", k+"="+env[k])
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		if v, ok := volumes[m.Name]; ok && v.Secret != nil {
			args = append(args, "-v", filepath.Join(secrets, v.Secret.SecretName)+":"+m.MountPath+":ro")
		}
	}
	return args
}

func TestManifestsRunInDocker(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		t.Fatal("docker not found: run make images-engine")
	}
	ctx := context.Background()
	objs := render(t, baseDir)
	configMaps := configMaps(objs)
	sts := find(t, objs, "StatefulSet", "etcd").obj.(*appsv1.StatefulSet)
	job := find(t, objs, "Job", "zlink-auth-setup").obj.(*batchv1.Job)
	cron := find(t, objs, "CronJob", "zlink-gc").obj.(*batchv1.CronJob)
	for _, image := range []string{sts.Spec.Template.Spec.Containers[0].Image, job.Spec.Template.Spec.Containers[0].Image} {
		if _, err := docker(ctx, t, "image", "inspect", image); err != nil {
			t.Fatalf("image %s of the manifests is not built: run make images (%v)", image, err)
		}
	}
	secrets := secretDirs(t)
	suffix := fmt.Sprint(os.Getpid())
	net := "zlink-manifests-" + suffix
	// The mesh nodes need their address before they start (POD_IP): that
	// takes a network with a subnet of its own. Docker picks a free one,
	// then the network is made again with it, explicitly.
	mustDocker(ctx, t, "network", "create", "--internal", net)
	subnet := mustDocker(ctx, t, "network", "inspect", "-f", "{{(index .IPAM.Config 0).Subnet}}", net)
	mustDocker(ctx, t, "network", "rm", net)
	mustDocker(ctx, t, "network", "create", "--internal", "--subnet", subnet, net)
	var containers, volumes []string
	t.Cleanup(func() {
		for _, c := range containers {
			docker(ctx, t, "rm", "-f", c)
		}
		for _, v := range volumes {
			docker(ctx, t, "volume", "rm", v)
		}
		docker(ctx, t, "network", "rm", net)
	})

	// The three etcd members: the StatefulSet's pods etcd-0..2, reachable
	// by the headless and client Services' names.
	pod := sts.Spec.Template.Spec
	c := pod.Containers[0]
	var ips []string
	for i := range int(*sts.Spec.Replicas) {
		name := fmt.Sprintf("etcd-%d", i)
		env := podEnv(t, c, name, "", configMaps)
		volume := "zlink-manifests-" + name + "-" + suffix
		volumes = append(volumes, volume)
		container := "zlink-manifests-" + name + "-" + suffix
		containers = append(containers, container)
		args := []string{"run", "-d", "--name", container,
			"--network-alias", name + ".etcd.zlink.svc", "--network-alias", "etcd-client.zlink.svc",
			"-v", volume + ":" + c.VolumeMounts[0].MountPath}
		if c.VolumeMounts[0].Name != "data" {
			t.Fatalf("etcd's first mount is %s, want the data claim", c.VolumeMounts[0].Name)
		}
		args = append(args, runArgs(t, pod, c, env, secrets, net)...)
		args = append(args, c.Image)
		args = append(args, containerArgs(c, env)...)
		mustDocker(ctx, t, args...)
		ips = append(ips, mustDocker(ctx, t, "inspect", "-f",
			fmt.Sprintf("{{(index .NetworkSettings.Networks %q).IPAddress}}", net), containers[i]))
	}

	// The probes, as the kubelet sends them, until every member is ready.
	start := time.Now()
	probePort := 0
	for _, p := range c.Ports {
		if p.Name == c.ReadinessProbe.HTTPGet.Port.StrVal {
			probePort = int(p.ContainerPort)
		}
	}
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(ip, path string) (int, string) {
		resp, err := client.Get(fmt.Sprintf("http://%s:%d%s", ip, probePort, path))
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	for i, ip := range ips {
		deadline := time.Now().Add(120 * time.Second)
		for {
			code, body := get(ip, c.ReadinessProbe.HTTPGet.Path)
			if code == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				logs, _ := docker(ctx, t, "logs", "--tail", "30", containers[i])
				t.Fatalf("etcd-%d not ready after 120 s (%d %s); logs:\n%s", i, code, body, logs)
			}
			time.Sleep(500 * time.Millisecond)
		}
		for _, p := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe} {
			if code, body := get(ip, p.HTTPGet.Path); code != http.StatusOK {
				t.Errorf("etcd-%d: %s answers %d %s", i, p.HTTPGet.Path, code, body)
			}
		}
	}
	t.Logf("three etcd members ready (readiness probe %s) %v after start", c.ReadinessProbe.HTTPGet.Path, time.Since(start).Round(time.Millisecond))

	// A client of the Job (root certificate) and of the CronJob (the store's
	// certificate) through TLS, with the manifests' endpoints.
	jobPod := job.Spec.Template.Spec
	jobC := jobPod.Containers[0]
	jobEnv := podEnv(t, jobC, "zlink-auth-setup", "", configMaps)
	etcdctlImage := strings.Replace(c.Image, "/etcd:", "/etcdctl:", 1)
	ctlArgs := append([]string{"run", "--rm"}, runArgs(t, jobPod, jobC, jobEnv, secrets, net)...)
	ctlArgs = append(ctlArgs, etcdctlImage, "--endpoints", jobEnv["ZLINK_ETCD_ENDPOINTS"],
		"--cacert", "/etc/zlink/etcd-root/ca.crt", "--cert", "/etc/zlink/etcd-root/tls.crt", "--key", "/etc/zlink/etcd-root/tls.key")
	out := mustDocker(ctx, t, append(ctlArgs, "endpoint", "health", "--cluster")...)
	t.Logf("etcdctl endpoint health --cluster (root certificate, TLS):\n%s", out)
	if strings.Count(out, "is healthy") != 3 {
		t.Errorf("want three healthy members, got:\n%s", out)
	}

	// The auth set-up Job, run twice (it is idempotent), when the
	// subcommand exists; then the store's user reads its prefix only.
	jobArgs := append([]string{"run", "--rm"}, runArgs(t, jobPod, jobC, jobEnv, secrets, net)...)
	jobArgs = append(jobArgs, jobC.Image)
	authOn := false
	if _, err := docker(ctx, t, append(jobArgs, "help", "auth")...); err != nil {
		t.Logf("zlinketcd has no auth subcommand yet: the set-up Job is not run (%v)", err)
	} else {
		for run := 1; run <= 2; run++ {
			out, err := docker(ctx, t, append(jobArgs, containerArgs(jobC, jobEnv)...)...)
			if err != nil {
				t.Fatalf("auth set-up Job, run %d: %v", run, err)
			}
			t.Logf("auth set-up Job, run %d:\n%s", run, out)
			// No key material: no PEM, no line of the keys the Job mounts.
			for _, secret := range keyMaterial(t, filepath.Join(secrets, "etcd-root-client-tls", "tls.key"), filepath.Join(secrets, "zlink-etcd-client-tls", "tls.key")) {
				if strings.Contains(out, secret) {
					t.Errorf("auth set-up Job's output contains key material %q", secret)
				}
			}
		}
		authOn = true
	}

	// The GC CronJob's container, with the store's certificate.
	gcPod := cron.Spec.JobTemplate.Spec.Template.Spec
	gcC := gcPod.Containers[0]
	gcEnv := podEnv(t, gcC, "zlink-gc", "", configMaps)
	gcArgs := append([]string{"run", "--rm"}, runArgs(t, gcPod, gcC, gcEnv, secrets, net)...)
	gcArgs = append(gcArgs, gcC.Image)
	out = mustDocker(ctx, t, append(gcArgs, containerArgs(gcC, gcEnv)...)...)
	t.Logf("GC CronJob (zlinketcd %s):\n%s", strings.Join(containerArgs(gcC, gcEnv), " "), out)

	if authOn {
		// The store's certificate outside the store's prefix.
		storeCtl := append([]string{"run", "--rm"}, runArgs(t, gcPod, gcC, gcEnv, secrets, net)...)
		storeCtl = append(storeCtl, etcdctlImage, "--endpoints", gcEnv["ZLINK_ETCD_ENDPOINTS"],
			"--cacert", "/etc/zlink/etcd/ca.crt", "--cert", "/etc/zlink/etcd/tls.crt", "--key", "/etc/zlink/etcd/tls.key",
			"put", "/outside-the-prefix", "x")
		out, err := docker(ctx, t, storeCtl...)
		if err == nil || !strings.Contains(out, "permission denied") {
			t.Errorf("the store's user wrote outside its prefix (or failed otherwise): %v %s", err, out)
		} else {
			t.Logf("the store's user (CN zlink) writing outside its prefix: %s", lastLine(out))
		}
	}

	meshNodes(ctx, t, objs, configMaps, secrets, net)
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// keyMaterial returns what must never appear in a log: PEM markers and
// every line of the key files.
func keyMaterial(t *testing.T, files ...string) []string {
	t.Helper()
	out := []string{"PRIVATE KEY", "-----BEGIN"}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(b)) {
			if line = strings.TrimSpace(line); len(line) > 16 && !strings.HasPrefix(line, "-----") {
				out = append(out, line)
			}
		}
	}
	return out
}

// meshNodes runs two pods of the mesh-node Deployment: the image's
// --check-config accepts the Deployment's configuration, both pods pass
// their probes, serve /metrics and connect to each other on the mesh port,
// and stop by themselves within terminationGracePeriodSeconds of a SIGTERM,
// exit 0.
func meshNodes(ctx context.Context, t *testing.T, objs []object, configMaps map[string]*corev1.ConfigMap, secrets, net string) {
	deploy := find(t, objs, "Deployment", "meshnode").obj.(*appsv1.Deployment)
	pod := deploy.Spec.Template.Spec
	c := pod.Containers[0]
	if _, err := docker(ctx, t, "image", "inspect", c.Image); err != nil {
		t.Fatalf("image %s of the manifests is not built: run make images (%v)", c.Image, err)
	}
	subnet := mustDocker(ctx, t, "network", "inspect", "-f", "{{(index .IPAM.Config 0).Subnet}}", net)
	prefix, _, _ := strings.Cut(subnet, "/")
	prefix = prefix[:strings.LastIndex(prefix, ".")+1]
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(ip string, port intstr.IntOrString, path string) (int, string) {
		n := port.IntVal
		if port.Type == intstr.String {
			n = ports[port.StrVal]
		}
		resp, err := client.Get(fmt.Sprintf("http://%s:%d%s", ip, n, path))
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(body)
	}
	type node struct{ name, ip, id string }
	var nodes []node
	for i := range 2 {
		n := node{name: fmt.Sprintf("meshnode-%d", i), ip: fmt.Sprintf("%s%d", prefix, 200+i)}
		env := podEnv(t, c, n.name, n.ip, configMaps)
		n.id = "zlink-manifests-" + n.name + "-" + fmt.Sprint(os.Getpid())
		if i == 0 {
			// The image's own check of the Deployment's configuration,
			// with the Secret's files mounted: exit 0 and the node's id.
			check := append([]string{"run", "--rm"}, runArgs(t, pod, c, env, secrets, net)...)
			check = append(append(check, c.Image), containerArgs(c, env)...)
			out := mustDocker(ctx, t, append(check, "--check-config")...)
			if !strings.Contains(out, `"nodeId": "`+n.name+`"`) || !strings.Contains(out, `"tls": true`) {
				t.Errorf("meshnode --check-config with the Deployment's configuration:\n%s", out)
			}
		}
		t.Cleanup(func() { docker(ctx, t, "rm", "-f", n.id) })
		args := []string{"run", "-d", "--name", n.id, "--ip", n.ip}
		args = append(args, runArgs(t, pod, c, env, secrets, net)...)
		args = append(args, c.Image)
		args = append(args, containerArgs(c, env)...)
		mustDocker(ctx, t, args...)
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		deadline := time.Now().Add(time.Duration(c.StartupProbe.FailureThreshold*c.StartupProbe.PeriodSeconds) * time.Second)
		for {
			code, body := get(n.ip, c.ReadinessProbe.HTTPGet.Port, c.ReadinessProbe.HTTPGet.Path)
			if code == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				logs, _ := docker(ctx, t, "logs", "--tail", "30", n.id)
				t.Fatalf("%s not ready within its startup budget (%d %s); logs:\n%s", n.name, code, body, logs)
			}
			time.Sleep(500 * time.Millisecond)
		}
		if code, body := get(n.ip, c.LivenessProbe.HTTPGet.Port, c.LivenessProbe.HTTPGet.Path); code != http.StatusOK {
			t.Errorf("%s: liveness %d %s", n.name, code, body)
		}
		port := intstr.FromString("metrics")
		if code, body := get(n.ip, port, "/metrics"); code != http.StatusOK || !strings.Contains(body, "# TYPE") {
			t.Errorf("%s: /metrics answers %d with no metrics", n.name, code)
		}
	}
	// The two nodes connect to each other on the mesh port, across the
	// private network, each advertising its pod IP.
	deadline := time.Now().Add(60 * time.Second)
	for _, n := range nodes {
		for {
			var st struct{ Peers []string }
			_, body := get(n.ip, intstr.FromString("metrics"), "/debug/state")
			if json.Unmarshal([]byte(body), &st) == nil && len(st.Peers) == 1 && strings.HasPrefix(st.Peers[0], "meshnode-") && st.Peers[0] != n.name {
				t.Logf("%s: connected to %s", n.name, st.Peers[0])
				break
			}
			if time.Now().After(deadline) {
				logs, _ := docker(ctx, t, "logs", "--tail", "30", n.id)
				t.Fatalf("%s: not connected to the other node within 60 s (/debug/state %s); logs:\n%s", n.name, body, logs)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	grace := *pod.TerminationGracePeriodSeconds
	for _, n := range nodes {
		start := time.Now()
		mustDocker(ctx, t, "stop", "-t", fmt.Sprint(grace), n.id)
		took := time.Since(start)
		code := mustDocker(ctx, t, "inspect", "-f", "{{.State.ExitCode}}", n.id)
		if code != "0" || took >= time.Duration(grace)*time.Second {
			logs, _ := docker(ctx, t, "logs", "--tail", "20", n.id)
			t.Errorf("%s: SIGTERM to exit took %v (budget %ds), exit status %s; logs:\n%s", n.name, took, grace, code, logs)
		} else {
			t.Logf("%s: left after SIGTERM in %v (budget %ds), exit status 0", n.name, took.Round(time.Millisecond), grace)
		}
		logs := mustDocker(ctx, t, "logs", n.id)
		for _, secret := range keyMaterial(t, filepath.Join(secrets, "zlink-etcd-client-tls", "tls.key")) {
			if strings.Contains(logs, secret) {
				t.Errorf("%s's logs contain key material %q", n.name, secret)
			}
		}
		if !strings.Contains(logs, `"msg":"left the mesh"`) {
			t.Errorf("%s's logs (JSON) do not say it left the mesh:\n%s", n.name, logs)
		}
	}
}
