package deploy

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// How the kubelet would start a container of a rendered pod template: its
// environment (downward API and ConfigMap values filled in) and its
// arguments with $(VAR) expanded. The tests that parse the mesh node's
// configuration and the Docker tests share them.

// expand replaces $(VAR) with env's value, as the kubelet expands args and
// env values; an undefined reference stays as it is.
func expand(s string, env map[string]string) string {
	return varRef.ReplaceAllStringFunc(s, func(ref string) string {
		if v, ok := env[varRef.FindStringSubmatch(ref)[1]]; ok {
			return v
		}
		return ref
	})
}

// podEnv resolves a container's environment for a pod named podName.
func podEnv(t *testing.T, c corev1.Container, podName, podIP string, configMaps map[string]*corev1.ConfigMap) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = expand(e.Value, env)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			env[e.Name] = podName
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env[e.Name] = "zlink"
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP" && podIP != "":
			env[e.Name] = podIP
		case e.ValueFrom.ResourceFieldRef != nil && e.ValueFrom.ResourceFieldRef.Resource == "limits.memory":
			env[e.Name] = fmt.Sprint(c.Resources.Limits.Memory().Value())
		case e.ValueFrom.ConfigMapKeyRef != nil:
			ref := e.ValueFrom.ConfigMapKeyRef
			env[e.Name] = configMaps[ref.Name].Data[ref.Key]
		default:
			t.Fatalf("container %s: env %s: source not handled by this test", c.Name, e.Name)
		}
	}
	return env
}

// containerArgs are c's arguments as the kubelet expands them with env.
func containerArgs(c corev1.Container, env map[string]string) []string {
	var out []string
	for _, a := range c.Args {
		out = append(out, expand(a, env))
	}
	return out
}

// configMaps are the ConfigMaps among objs, by name.
func configMaps(objs []object) map[string]*corev1.ConfigMap {
	out := map[string]*corev1.ConfigMap{}
	for _, o := range objs {
		if cm, ok := o.obj.(*corev1.ConfigMap); ok {
			out[o.name] = cm
		}
	}
	return out
}
