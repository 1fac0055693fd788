//go:build docker || cluster

package deploy

import (
	"context"
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
)

// The rendered base run in Docker, as the kubelet would run it: the images
// `make images` built, the manifests' arguments and environment (downward
// API and ConfigMap values filled in), the Secrets' files mounted
// read-only with mode 0440 and group 65532 (what fsGroup makes of
// defaultMode 0400), a read-only root filesystem, uid 65532, no
// capabilities, on private Docker networks (--internal: no route out)
// whose aliases are the Services' DNS names. The Docker tests
// (docker_test.go, make images-smoke) and the cluster test
// (cluster_test.go, make cluster-test) share it.

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

// dockerEnv is the rendered base and what a test made in Docker for it;
// everything is removed when the test ends.
type dockerEnv struct {
	ctx context.Context
	t   *testing.T
	// name prefixes every container, volume and network.
	name    string
	objs    []object
	cms     map[string]*corev1.ConfigMap
	secrets string
	sts     *appsv1.StatefulSet
	job     *batchv1.Job
	cron    *batchv1.CronJob
	deploy  *appsv1.Deployment
}

// newDockerEnv renders the base, checks that its images are built and
// makes the Secrets' files. Names start with prefix and the test's pid.
func newDockerEnv(t *testing.T, prefix string) *dockerEnv {
	t.Helper()
	if _, err := exec.LookPath("docker"); err != nil {
		t.Fatal("docker not found: run make images-engine")
	}
	e := &dockerEnv{ctx: context.Background(), t: t, name: fmt.Sprintf("%s-%d", prefix, os.Getpid()), objs: render(t, baseDir)}
	e.cms = configMaps(e.objs)
	e.sts = find(t, e.objs, "StatefulSet", "etcd").obj.(*appsv1.StatefulSet)
	e.job = find(t, e.objs, "Job", "zlink-auth-setup").obj.(*batchv1.Job)
	e.cron = find(t, e.objs, "CronJob", "zlink-gc").obj.(*batchv1.CronJob)
	e.deploy = find(t, e.objs, "Deployment", "meshnode").obj.(*appsv1.Deployment)
	for _, image := range []string{e.sts.Spec.Template.Spec.Containers[0].Image, e.job.Spec.Template.Spec.Containers[0].Image,
		e.deploy.Spec.Template.Spec.Containers[0].Image} {
		if _, err := docker(e.ctx, t, "image", "inspect", image); err != nil {
			t.Fatalf("image %s of the manifests is not built: run make images (%v)", image, err)
		}
	}
	e.secrets = secretDirs(t)
	return e
}

// network makes a private network (--internal) named after the env and
// suffix, with a subnet of its own so that containers can be given fixed
// addresses (a mesh node needs its POD_IP before it starts; a container
// reconnected after a partition gets its address back). Docker picks a
// free subnet, then the network is made again with it, explicitly. It
// returns the network's name and the first three octets of its addresses
// ("172.18.0.").
func (e *dockerEnv) network(suffix string) (name, base string) {
	e.t.Helper()
	name = e.name + "-" + suffix
	mustDocker(e.ctx, e.t, "network", "create", "--internal", name)
	subnet := mustDocker(e.ctx, e.t, "network", "inspect", "-f", "{{(index .IPAM.Config 0).Subnet}}", name)
	mustDocker(e.ctx, e.t, "network", "rm", name)
	mustDocker(e.ctx, e.t, "network", "create", "--internal", "--subnet", subnet, name)
	e.cleanup(func() { docker(e.ctx, e.t, "network", "rm", name) })
	ip, _, _ := strings.Cut(subnet, "/")
	return name, ip[:strings.LastIndex(ip, ".")+1]
}

// container registers a container name for removal and returns it.
func (e *dockerEnv) container(name string) string {
	id := e.name + "-" + name
	e.cleanup(func() { docker(e.ctx, e.t, "rm", "-f", id) })
	return id
}

// cleanup registers f to run when the test ends, unless ZLINK_DOCKER_KEEP
// is set and the test failed: then everything is left for a look (remove
// it with docker rm -f, docker volume rm and docker network rm; the names
// start with the env's name).
func (e *dockerEnv) cleanup(f func()) {
	e.t.Cleanup(func() {
		if e.t.Failed() && os.Getenv("ZLINK_DOCKER_KEEP") != "" {
			return
		}
		f()
	})
}

// etcdMember is one container of the etcd StatefulSet.
type etcdMember struct {
	name      string // the pod's name, etcd-N
	container string
	ip        string
	metrics   string // http://ip:port of the probes' listener
}

// startEtcd starts the StatefulSet's pods etcd-0..N-1 on net, each at
// address base+(10+i), reachable by the headless and client Services'
// names, each with a named volume for its data.
func (e *dockerEnv) startEtcd(net, base string) []etcdMember {
	e.t.Helper()
	pod := e.sts.Spec.Template.Spec
	c := pod.Containers[0]
	if c.VolumeMounts[0].Name != "data" {
		e.t.Fatalf("etcd's first mount is %s, want the data claim", c.VolumeMounts[0].Name)
	}
	probePort := 0
	for _, p := range c.Ports {
		if p.Name == c.ReadinessProbe.HTTPGet.Port.StrVal {
			probePort = int(p.ContainerPort)
		}
	}
	var members []etcdMember
	for i := range int(*e.sts.Spec.Replicas) {
		m := etcdMember{name: fmt.Sprintf("etcd-%d", i), ip: fmt.Sprintf("%s%d", base, 10+i)}
		volume := e.name + "-" + m.name
		// Cleanups run last first: the volume after its container.
		e.cleanup(func() { docker(e.ctx, e.t, "volume", "rm", volume) })
		m.container = e.container(m.name)
		m.metrics = fmt.Sprintf("http://%s:%d", m.ip, probePort)
		env := podEnv(e.t, c, m.name, "", e.cms)
		args := []string{"run", "-d", "--name", m.container, "--ip", m.ip,
			"--network-alias", m.name + ".etcd.zlink.svc", "--network-alias", "etcd-client.zlink.svc",
			"-v", volume + ":" + c.VolumeMounts[0].MountPath}
		args = append(args, runArgs(e.t, pod, c, env, e.secrets, net)...)
		args = append(args, c.Image)
		args = append(args, containerArgs(c, env)...)
		mustDocker(e.ctx, e.t, args...)
		members = append(members, m)
	}
	return members
}

// httpGet answers a GET with a short timeout: the status (0 when the
// request failed) and the body.
func httpGet(url string) (int, string) {
	client := &http.Client{Timeout: 3 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	return resp.StatusCode, string(body)
}

// waitReady waits until the member answers its readiness probe, as the
// kubelet sends it (and fails the test after within).
func (e *dockerEnv) waitReady(m etcdMember, within time.Duration) {
	e.t.Helper()
	path := e.sts.Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Path
	deadline := time.Now().Add(within)
	for {
		code, body := httpGet(m.metrics + path)
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			logs, _ := docker(e.ctx, e.t, "logs", "--tail", "30", m.container)
			e.t.Fatalf("%s not ready after %v (%d %s); logs:\n%s", m.name, within, code, strings.TrimSpace(body), logs)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// jobRun are the docker run arguments of the auth set-up Job's container
// (root certificate) on net, without the image.
func (e *dockerEnv) jobRun(net string) (args []string, env map[string]string) {
	pod := e.job.Spec.Template.Spec
	c := pod.Containers[0]
	env = podEnv(e.t, c, "zlink-auth-setup", "", e.cms)
	return append([]string{"run", "--rm"}, runArgs(e.t, pod, c, env, e.secrets, net)...), env
}

// gcRun are the docker run arguments of the GC CronJob's container (the
// store's certificate) on net, without the image.
func (e *dockerEnv) gcRun(net string) (args []string, env map[string]string) {
	pod := e.cron.Spec.JobTemplate.Spec.Template.Spec
	c := pod.Containers[0]
	env = podEnv(e.t, c, "zlink-gc", "", e.cms)
	return append([]string{"run", "--rm"}, runArgs(e.t, pod, c, env, e.secrets, net)...), env
}

// runAuthSetup runs the auth set-up Job's container once on net and
// returns its output, after checking that it holds no key material.
func (e *dockerEnv) runAuthSetup(net string) string {
	e.t.Helper()
	c := e.job.Spec.Template.Spec.Containers[0]
	args, env := e.jobRun(net)
	out, err := docker(e.ctx, e.t, append(append(args, c.Image), containerArgs(c, env)...)...)
	if err != nil {
		e.t.Fatalf("auth set-up Job: %v", err)
	}
	// No key material: no PEM, no line of the keys the Job mounts.
	for _, secret := range keyMaterial(e.t, filepath.Join(e.secrets, "etcd-root-client-tls", "tls.key"), filepath.Join(e.secrets, "zlink-etcd-client-tls", "tls.key")) {
		if strings.Contains(out, secret) {
			e.t.Errorf("auth set-up Job's output contains key material %q", secret)
		}
	}
	return out
}

// etcdctlImage is the etcdctl image beside the manifests' etcd image.
func (e *dockerEnv) etcdctlImage() string {
	return strings.Replace(e.sts.Spec.Template.Spec.Containers[0].Image, "/etcd:", "/etcdctl:", 1)
}
