package deploy

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// workload is a rendered pod template and what runs it.
type workload struct {
	kind, name string
	// longRunning pods are restarted when they stop: they need probes.
	longRunning bool
	pod         corev1.PodSpec
	labels      map[string]string
}

func (w workload) String() string { return w.kind + " " + w.name }

// workloads returns the pod templates among objs.
func workloads(objs []object) []workload {
	var ws []workload
	for _, o := range objs {
		switch v := o.obj.(type) {
		case *appsv1.StatefulSet:
			ws = append(ws, workload{"StatefulSet", o.name, true, v.Spec.Template.Spec, v.Spec.Template.Labels})
		case *appsv1.Deployment:
			ws = append(ws, workload{"Deployment", o.name, true, v.Spec.Template.Spec, v.Spec.Template.Labels})
		case *batchv1.Job:
			ws = append(ws, workload{"Job", o.name, false, v.Spec.Template.Spec, v.Spec.Template.Labels})
		case *batchv1.CronJob:
			ws = append(ws, workload{"CronJob", o.name, false, v.Spec.JobTemplate.Spec.Template.Spec, v.Spec.JobTemplate.Spec.Template.Labels})
		}
	}
	return ws
}

// secretsMounted lists, sorted, the Secrets the workloads among objs mount.
func secretsMounted(objs []object) []string {
	var names []string
	for _, w := range workloads(objs) {
		for _, v := range w.pod.Volumes {
			if v.Secret != nil && !slices.Contains(names, v.Secret.SecretName) {
				names = append(names, v.Secret.SecretName)
			}
		}
	}
	slices.Sort(names)
	return names
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// nonRootUID is the uid every image and pod runs as (deploy/docker).
const nonRootUID = 65532

// varRef is a $(VAR) reference in an argument or an env value.
var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// secretish matches environment variable names that would carry a secret.
var secretish = regexp.MustCompile(`(?i)pass(word|wd)?|secret|token|credential`)

// TestWorkloadsAreLockedDown checks, for every pod template of the base and
// the overlay, the restricted Pod Security Standard and the project's own
// rules: non-root, read-only root filesystem, no capability, no privilege
// escalation, seccomp, requests and limits, probes for long-running pods, no
// shell, no password, no Kubernetes token, references that resolve.
func TestWorkloadsAreLockedDown(t *testing.T) {
	for _, dir := range []string{baseDir, overlayDir} {
		objs := render(t, dir)
		configMaps := map[string]*corev1.ConfigMap{}
		for _, o := range objs {
			if cm, ok := o.obj.(*corev1.ConfigMap); ok {
				configMaps[o.name] = cm
			}
		}
		ws := workloads(objs)
		if len(ws) != 4 {
			t.Fatalf("%s: %d workloads, want 4 (etcd, auth set-up, gc, mesh node)", dir, len(ws))
		}
		for _, w := range ws {
			t.Run(dir+"/"+w.String(), func(t *testing.T) {
				checkPod(t, w)
				for _, c := range slices.Concat(w.pod.InitContainers, w.pod.Containers) {
					checkContainer(t, w, c, configMaps)
				}
			})
		}
	}
}

func checkPod(t *testing.T, w workload) {
	p := w.pod
	sc := p.SecurityContext
	if sc == nil {
		t.Fatalf("%s: no pod securityContext", w)
	}
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("%s: runAsNonRoot is not true", w)
	}
	if sc.RunAsUser == nil || *sc.RunAsUser != nonRootUID || sc.RunAsGroup == nil || *sc.RunAsGroup != nonRootUID {
		t.Errorf("%s: runAsUser/runAsGroup %v/%v, want %d", w, sc.RunAsUser, sc.RunAsGroup, nonRootUID)
	}
	if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: seccompProfile is not RuntimeDefault", w)
	}
	if p.AutomountServiceAccountToken == nil || *p.AutomountServiceAccountToken {
		t.Errorf("%s: automountServiceAccountToken is not false (no workload calls the API)", w)
	}
	if p.ServiceAccountName == "" || p.ServiceAccountName == "default" {
		t.Errorf("%s: runs as the default service account", w)
	}
	if p.HostNetwork || p.HostPID || p.HostIPC {
		t.Errorf("%s: shares a host namespace", w)
	}
	if w.longRunning && (p.TerminationGracePeriodSeconds == nil || *p.TerminationGracePeriodSeconds < 10) {
		t.Errorf("%s: terminationGracePeriodSeconds %v leaves no time for a graceful stop", w, p.TerminationGracePeriodSeconds)
	}
	if !w.longRunning && p.RestartPolicy != corev1.RestartPolicyNever && p.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("%s: restartPolicy %q", w, p.RestartPolicy)
	}
	for _, v := range p.Volumes {
		if v.HostPath != nil {
			t.Errorf("%s: hostPath volume %s", w, v.Name)
		}
		if v.Secret != nil {
			// The kubelet gives group fsGroup read access to Secret files;
			// without it uid 65532 cannot read files of mode 0400.
			if sc.FSGroup == nil || *sc.FSGroup != nonRootUID {
				t.Errorf("%s: mounts Secret %s without fsGroup %d", w, v.Secret.SecretName, nonRootUID)
			}
			if v.Secret.DefaultMode == nil || *v.Secret.DefaultMode != 0o400 {
				t.Errorf("%s: Secret %s defaultMode is not 0400", w, v.Secret.SecretName)
			}
		}
	}
}

func checkContainer(t *testing.T, w workload, c corev1.Container, configMaps map[string]*corev1.ConfigMap) {
	where := w.String() + " container " + c.Name
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Errorf("%s: no securityContext", where)
	default:
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s: readOnlyRootFilesystem is not true", where)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: allowPrivilegeEscalation is not false", where)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("%s: privileged", where)
		}
		if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("%s: runAsNonRoot is not true", where)
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			t.Errorf("%s: runs as root", where)
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
			t.Errorf("%s: capabilities must drop ALL and add none", where)
		}
	}
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, hasReq := c.Resources.Requests[res]
		limit, hasLimit := c.Resources.Limits[res]
		if !hasReq || !hasLimit {
			t.Errorf("%s: %s needs a request and a limit", where, res)
		} else if req.Cmp(limit) > 0 {
			t.Errorf("%s: %s request %s above limit %s", where, res, req.String(), limit.String())
		}
	}
	// The image's entrypoint runs: no command, so no shell.
	if len(c.Command) > 0 {
		t.Errorf("%s: command %q overrides the image's entrypoint", where, c.Command)
	}
	for _, a := range c.Args {
		if strings.Contains(a, "/bin/") || a == "-c" || strings.HasPrefix(a, "--password") {
			t.Errorf("%s: argument %q (no shell, no password)", where, a)
		}
		if name, value, ok := strings.Cut(a, "="); ok && name == "--user" && strings.Contains(value, ":") {
			t.Errorf("%s: --user %q carries a password", where, value)
		}
	}
	if len(c.EnvFrom) > 0 {
		t.Errorf("%s: envFrom: name each variable (a missing key must stop the pod)", where)
	}
	defined := map[string]bool{}
	for _, e := range c.Env {
		if secretish.MatchString(e.Name) {
			t.Errorf("%s: environment variable %s looks like a secret", where, e.Name)
		}
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			t.Errorf("%s: %s comes from a Secret: secrets are files, never environment", where, e.Name)
		}
		if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
			ref := e.ValueFrom.ConfigMapKeyRef
			if ref.Optional != nil && *ref.Optional {
				t.Errorf("%s: %s is optional: an empty value must not start the pod", where, e.Name)
			}
			if cm, ok := configMaps[ref.Name]; !ok || cm.Data[ref.Key] == "" {
				t.Errorf("%s: %s reads ConfigMap %s key %s, which is missing or empty", where, e.Name, ref.Name, ref.Key)
			}
		}
		for _, m := range varRef.FindAllStringSubmatch(e.Value, -1) {
			if !defined[m[1]] {
				t.Errorf("%s: %s refers to $(%s) before it is defined", where, e.Name, m[1])
			}
		}
		defined[e.Name] = true
	}
	for _, a := range c.Args {
		for _, m := range varRef.FindAllStringSubmatch(a, -1) {
			if !defined[m[1]] {
				t.Errorf("%s: argument %q refers to $(%s), which no env entry defines (Kubernetes would pass it verbatim)", where, a, m[1])
			}
		}
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range w.pod.Volumes {
		volumes[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		isClaim := w.kind == "StatefulSet" // volumeClaimTemplates are checked below
		if !ok && !isClaim {
			t.Errorf("%s: mounts unknown volume %s", where, m.Name)
		}
		if ok && v.Secret != nil && !m.ReadOnly {
			t.Errorf("%s: Secret volume %s is mounted read-write", where, m.Name)
		}
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	probes := map[string]*corev1.Probe{"startup": c.StartupProbe, "liveness": c.LivenessProbe, "readiness": c.ReadinessProbe}
	if w.longRunning {
		for kind, p := range probes {
			if p == nil {
				t.Errorf("%s: no %s probe", where, kind)
			}
		}
	}
	for kind, p := range probes {
		if p == nil {
			continue
		}
		if p.HTTPGet == nil {
			t.Errorf("%s: %s probe is not an HTTP GET of a health endpoint", where, kind)
			continue
		}
		if port := p.HTTPGet.Port; port.Type == intstr.String {
			if _, ok := ports[port.StrVal]; !ok {
				t.Errorf("%s: %s probe's port %q is not a container port", where, kind, port.StrVal)
			}
		}
		if !slices.Contains([]string{"/livez", "/readyz", "/health"}, p.HTTPGet.Path) {
			t.Errorf("%s: %s probe path %q", where, kind, p.HTTPGet.Path)
		}
	}
	if c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil && c.LivenessProbe.HTTPGet.Path != "/livez" {
		t.Errorf("%s: liveness probes /livez, not %s", where, c.LivenessProbe.HTTPGet.Path)
	}
	if c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil && c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("%s: readiness probes /readyz, not %s", where, c.ReadinessProbe.HTTPGet.Path)
	}
}

// TestStatefulSetKeepsQuorum checks what keeps etcd's quorum through node
// loss and voluntary disruptions.
func TestStatefulSetKeepsQuorum(t *testing.T) {
	objs := render(t, baseDir)
	sts := find(t, objs, "StatefulSet", "etcd").obj.(*appsv1.StatefulSet)
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != 3 {
		t.Errorf("etcd replicas %v, want 3", sts.Spec.Replicas)
	}
	pod := sts.Spec.Template.Spec
	aa := pod.Affinity
	if aa == nil || aa.PodAntiAffinity == nil || len(aa.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 ||
		aa.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey != "kubernetes.io/hostname" {
		t.Errorf("etcd: no required pod anti-affinity per node")
	}
	if len(pod.TopologySpreadConstraints) == 0 {
		t.Errorf("etcd: no topology spread constraint")
	}
	pdb := find(t, objs, "PodDisruptionBudget", "etcd").obj.(*policyv1.PodDisruptionBudget)
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
		t.Errorf("etcd PodDisruptionBudget: want maxUnavailable 1 (quorum is 2 of 3)")
	}
	for _, ct := range sts.Spec.VolumeClaimTemplates {
		if ct.Name != "data" {
			t.Errorf("etcd: unexpected claim template %s", ct.Name)
		}
	}
	c := pod.Containers[0]
	want := []string{"--client-cert-auth=true", "--peer-client-cert-auth=true", "--listen-metrics-urls=http://0.0.0.0:2381", "--data-dir=/var/lib/etcd/data",
		// Peers known by their certificate's CommonName, not by DNS
		// lookups of its names (docs/reliability.md, "Containers under
		// faults").
		"--peer-skip-client-san-verification=true", "--peer-cert-allowed-cn=etcd-peer"}
	for _, a := range want {
		if !slices.Contains(c.Args, a) {
			t.Errorf("etcd: argument %s missing", a)
		}
	}
	for _, a := range c.Args {
		if strings.Contains(a, "http://") && !strings.HasPrefix(a, "--listen-metrics-urls=") {
			t.Errorf("etcd: %s is plain HTTP (only the metrics listener may be)", a)
		}
	}
}

// TestJobsAreBounded checks the auth set-up Job and the GC CronJob: a
// deadline, one GC run at a time, the commands of zlinketcd.
func TestJobsAreBounded(t *testing.T) {
	objs := render(t, baseDir)
	job := find(t, objs, "Job", "zlink-auth-setup").obj.(*batchv1.Job)
	if job.Spec.ActiveDeadlineSeconds == nil || job.Spec.BackoffLimit == nil {
		t.Errorf("auth set-up Job: needs activeDeadlineSeconds and backoffLimit")
	}
	args := job.Spec.Template.Spec.Containers[0].Args
	if len(args) < 2 || args[0] != "auth" || args[1] != "setup" {
		t.Errorf("auth set-up Job runs %q, want zlinketcd auth setup", args)
	}
	for _, a := range []string{"--role=zlink", "--user=zlink", "--prefix=$(ZLINK_ETCD_PREFIX)", "--endpoints=$(ZLINK_ETCD_ENDPOINTS)"} {
		if !slices.Contains(args, a) {
			t.Errorf("auth set-up Job: argument %s missing from %q", a, args)
		}
	}
	cron := find(t, objs, "CronJob", "zlink-gc").obj.(*batchv1.CronJob)
	if cron.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("GC CronJob: concurrencyPolicy %q, want Forbid", cron.Spec.ConcurrencyPolicy)
	}
	if cron.Spec.JobTemplate.Spec.ActiveDeadlineSeconds == nil {
		t.Errorf("GC CronJob: no activeDeadlineSeconds")
	}
	gcArgs := cron.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args
	if len(gcArgs) < 2 || gcArgs[0] != "gc" || !slices.Contains(gcArgs, "--apply") {
		t.Errorf("GC CronJob runs %q, want zlinketcd gc --apply", gcArgs)
	}
}
