//go:build docker

package deploy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// These tests run the rendered base's containers in Docker
// (dockerenv_test.go says how). `make images-smoke` runs them:
//
//	cd deploy && go test -tags docker -run InDocker -count=1 ./...

func TestManifestsRunInDocker(t *testing.T) {
	e := newDockerEnv(t, "zlink-manifests")
	ctx := e.ctx
	net, base := e.network("net")

	// The three etcd members: the StatefulSet's pods etcd-0..2, reachable
	// by the headless and client Services' names; the probes, as the
	// kubelet sends them, until every member is ready.
	start := time.Now()
	members := e.startEtcd(net, base)
	c := e.sts.Spec.Template.Spec.Containers[0]
	for _, m := range members {
		e.waitReady(m, 120*time.Second)
		for _, p := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe} {
			if code, body := httpGet(m.metrics + p.HTTPGet.Path); code != http.StatusOK {
				t.Errorf("%s: %s answers %d %s", m.name, p.HTTPGet.Path, code, body)
			}
		}
	}
	t.Logf("three etcd members ready (readiness probe %s) %v after start", c.ReadinessProbe.HTTPGet.Path, time.Since(start).Round(time.Millisecond))

	// A client of the Job (root certificate) through TLS, with the
	// manifests' endpoints.
	jobArgs, jobEnv := e.jobRun(net)
	ctlArgs := append(jobArgs, e.etcdctlImage(), "--endpoints", jobEnv["ZLINK_ETCD_ENDPOINTS"],
		"--cacert", "/etc/zlink/etcd-root/ca.crt", "--cert", "/etc/zlink/etcd-root/tls.crt", "--key", "/etc/zlink/etcd-root/tls.key")
	out := mustDocker(ctx, t, append(ctlArgs, "endpoint", "health", "--cluster")...)
	t.Logf("etcdctl endpoint health --cluster (root certificate, TLS):\n%s", out)
	if strings.Count(out, "is healthy") != 3 {
		t.Errorf("want three healthy members, got:\n%s", out)
	}

	// The auth set-up Job, run twice (it is idempotent); then the store's
	// user reads its prefix only.
	for run := 1; run <= 2; run++ {
		t.Logf("auth set-up Job, run %d:\n%s", run, e.runAuthSetup(net))
	}

	// The GC CronJob's container, with the store's certificate.
	gcC := e.cron.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
	gcArgs, gcEnv := e.gcRun(net)
	out = mustDocker(ctx, t, append(append(gcArgs, gcC.Image), containerArgs(gcC, gcEnv)...)...)
	t.Logf("GC CronJob (zlinketcd %s):\n%s", strings.Join(containerArgs(gcC, gcEnv), " "), out)

	// The store's certificate outside the store's prefix.
	storeCtl := append(gcArgs, e.etcdctlImage(), "--endpoints", gcEnv["ZLINK_ETCD_ENDPOINTS"],
		"--cacert", "/etc/zlink/etcd/ca.crt", "--cert", "/etc/zlink/etcd/tls.crt", "--key", "/etc/zlink/etcd/tls.key",
		"put", "/outside-the-prefix", "x")
	if out, err := docker(ctx, t, storeCtl...); err == nil || !strings.Contains(out, "permission denied") {
		t.Errorf("the store's user wrote outside its prefix (or failed otherwise): %v %s", err, out)
	} else {
		t.Logf("the store's user (CN zlink) writing outside its prefix: %s", lastLine(out))
	}

	meshNodes(e, net, base)
}

// meshNodes runs two pods of the mesh-node Deployment: the image's
// --check-config accepts the Deployment's configuration, both pods pass
// their probes, serve /metrics and connect to each other on the mesh port,
// and stop by themselves within terminationGracePeriodSeconds of a SIGTERM,
// exit 0.
func meshNodes(e *dockerEnv, net, base string) {
	ctx, t, secrets := e.ctx, e.t, e.secrets
	pod := e.deploy.Spec.Template.Spec
	c := pod.Containers[0]
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
		n := node{name: fmt.Sprintf("meshnode-%d", i), ip: fmt.Sprintf("%s%d", base, 200+i)}
		env := podEnv(t, c, n.name, n.ip, e.cms)
		n.id = e.container(n.name)
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
