package deploy

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// pod is a traffic end for the NetworkPolicy evaluator.
type pod struct {
	namespace string
	labels    map[string]string
}

// namespaceLabels are the labels of the namespaces the flows involve, as
// Kubernetes sets them (kubernetes.io/metadata.name).
var namespaceLabels = map[string]map[string]string{
	"zlink":       {"kubernetes.io/metadata.name": "zlink"},
	"monitoring":  {"kubernetes.io/metadata.name": "monitoring"},
	"kube-system": {"kubernetes.io/metadata.name": "kube-system"},
}

// policyEvaluator answers whether the rendered NetworkPolicies let a
// connection through, the way the NetworkPolicy API defines it: a pod
// selected by no policy of a direction is open in that direction; a selected
// pod accepts what one of the rules of its policies allows. It handles what
// the manifests use (pod and namespace selectors, numeric ports) and fails
// on anything else.
type policyEvaluator struct {
	t        *testing.T
	policies []*networkingv1.NetworkPolicy
}

func (e policyEvaluator) allowed(from, to pod, proto corev1.Protocol, port int) bool {
	return e.direction(from, to, proto, port, networkingv1.PolicyTypeEgress) &&
		e.direction(to, from, proto, port, networkingv1.PolicyTypeIngress)
}

// direction evaluates the policies of self for traffic with peer.
func (e policyEvaluator) direction(self, peer pod, proto corev1.Protocol, port int, dir networkingv1.PolicyType) bool {
	selected := false
	for _, p := range e.policies {
		if p.Namespace != self.namespace || !e.matches(&p.Spec.PodSelector, self.labels) || !hasType(p, dir) {
			continue
		}
		selected = true
		if dir == networkingv1.PolicyTypeIngress {
			for _, r := range p.Spec.Ingress {
				if e.peersMatch(p.Namespace, r.From, peer) && e.portsMatch(r.Ports, proto, port) {
					return true
				}
			}
		} else {
			for _, r := range p.Spec.Egress {
				if e.peersMatch(p.Namespace, r.To, peer) && e.portsMatch(r.Ports, proto, port) {
					return true
				}
			}
		}
	}
	return !selected
}

func hasType(p *networkingv1.NetworkPolicy, dir networkingv1.PolicyType) bool {
	for _, t := range p.Spec.PolicyTypes {
		if t == dir {
			return true
		}
	}
	return false
}

func (e policyEvaluator) matches(sel *metav1.LabelSelector, l map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		e.t.Fatalf("label selector %v: %v", sel, err)
	}
	return s.Matches(labels.Set(l))
}

func (e policyEvaluator) peersMatch(policyNamespace string, peers []networkingv1.NetworkPolicyPeer, p pod) bool {
	if len(peers) == 0 {
		return true
	}
	for _, peer := range peers {
		if peer.IPBlock != nil {
			e.t.Fatalf("the evaluator does not handle ipBlock peers")
		}
		nsOK := p.namespace == policyNamespace
		if peer.NamespaceSelector != nil {
			nsOK = e.matches(peer.NamespaceSelector, namespaceLabels[p.namespace])
		}
		podOK := peer.PodSelector == nil || e.matches(peer.PodSelector, p.labels)
		if nsOK && podOK {
			return true
		}
	}
	return false
}

func (e policyEvaluator) portsMatch(ports []networkingv1.NetworkPolicyPort, proto corev1.Protocol, port int) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		want := corev1.ProtocolTCP
		if p.Protocol != nil {
			want = *p.Protocol
		}
		if p.Port == nil || p.Port.Type != intstr.Int || p.EndPort != nil {
			e.t.Fatalf("the evaluator handles numeric single ports only, got %v", p.Port)
		}
		if want == proto && p.Port.IntValue() == port {
			return true
		}
	}
	return false
}

// TestNetworkPoliciesAllowOnlyTheFlowsTheStoreNeeds evaluates the rendered
// policies for the pods of the rendered workloads (their own labels), a
// Prometheus, the cluster DNS and a stranger pod in the namespace.
func TestNetworkPoliciesAllowOnlyTheFlowsTheStoreNeeds(t *testing.T) {
	objs := render(t, baseDir)
	e := policyEvaluator{t: t}
	for _, o := range objs {
		if p, ok := o.obj.(*networkingv1.NetworkPolicy); ok {
			e.policies = append(e.policies, p)
		}
	}
	pods := map[string]pod{
		"prometheus": {"monitoring", map[string]string{"app.kubernetes.io/name": "prometheus"}},
		"dns":        {"kube-system", map[string]string{"k8s-app": "kube-dns"}},
		"stranger":   {"zlink", map[string]string{"app.kubernetes.io/name": "something-else"}},
	}
	for _, w := range workloads(objs) {
		pods[w.name] = pod{"zlink", w.labels}
	}
	const tcp, udp = corev1.ProtocolTCP, corev1.ProtocolUDP
	tests := []struct {
		from, to string
		proto    corev1.Protocol
		port     int
		want     bool
	}{
		// Clients of etcd.
		{"meshnode", "etcd", tcp, 2379, true},
		{"zlink-gc", "etcd", tcp, 2379, true},
		{"zlink-auth-setup", "etcd", tcp, 2379, true},
		{"stranger", "etcd", tcp, 2379, false},
		{"prometheus", "etcd", tcp, 2379, false},
		// Peers.
		{"etcd", "etcd", tcp, 2380, true},
		{"meshnode", "etcd", tcp, 2380, false},
		{"etcd", "etcd", tcp, 2379, false},
		// Mesh nodes among themselves.
		{"meshnode", "meshnode", tcp, 7100, true},
		{"zlink-gc", "meshnode", tcp, 7100, false},
		{"etcd", "meshnode", tcp, 7100, false},
		{"meshnode", "meshnode", tcp, 9090, false},
		// Prometheus.
		{"prometheus", "meshnode", tcp, 9090, true},
		{"prometheus", "etcd", tcp, 2381, true},
		{"stranger", "meshnode", tcp, 9090, false},
		{"meshnode", "etcd", tcp, 2381, false},
		// DNS, and nothing else out.
		{"meshnode", "dns", udp, 53, true},
		{"etcd", "dns", tcp, 53, true},
		{"zlink-gc", "dns", udp, 53, true},
		{"meshnode", "dns", tcp, 80, false},
		{"meshnode", "prometheus", tcp, 9090, false},
		{"etcd", "prometheus", tcp, 443, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s->%s:%s/%d", tt.from, tt.to, tt.proto, tt.port), func(t *testing.T) {
			from, ok1 := pods[tt.from]
			to, ok2 := pods[tt.to]
			if !ok1 || !ok2 {
				t.Fatalf("unknown pod %s or %s", tt.from, tt.to)
			}
			if got := e.allowed(from, to, tt.proto, tt.port); got != tt.want {
				t.Errorf("allowed = %v, want %v", got, tt.want)
			}
		})
	}
}
