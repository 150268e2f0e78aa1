package runtime

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The bounds of a pod's resolver configuration, the kubelet's and the
// apiserver's: what glibc's resolver reads of resolv.conf (3 nameservers),
// and the search list the apiserver admits (32 domains, 2048 characters
// on the line). A search domain longer than a DNS name makes some glibc
// versions abort, so it is dropped.
const (
	maxDNSNameservers  = 3
	maxDNSSearches     = 32
	maxDNSSearchLine   = 2048
	maxDNSSearchDomain = 253
	// A resolv.conf is a few lines; reading more than this is a mistake.
	maxResolvConfBytes = 1 << 20
)

// Reasons of the warnings that forming a pod's DNS configuration yields,
// the kubelet's event reasons.
const (
	// ReasonDNSConfigForming: the pod's nameservers or search list were cut
	// to the resolver's bounds.
	ReasonDNSConfigForming = "DNSConfigForming"
	// ReasonMissingClusterDNS: the pod asks for cluster DNS and the node
	// has no cluster DNS server; it gets the node's resolver instead.
	ReasonMissingClusterDNS = "MissingClusterDNS"
)

// Warning is something the runtime did otherwise than the pod asked, which
// the caller reports, as the kubelet reports it in a Warning event.
type Warning struct {
	Reason  string
	Message string
	// Node: the cause is the node's configuration; the kubelet reports
	// such a warning on the Node as well as on the pod.
	Node bool
}

// resolvConf is what a resolv.conf file says: nameservers in order,
// the last search line, and the options of every options line, a later
// one replacing an earlier one of the same name.
type resolvConf struct {
	servers, searches, options []string
}

// parseResolvConf reads resolv.conf syntax. Search domains lose a trailing
// dot, and the root domain is left out, so that one domain counts once.
func parseResolvConf(data []byte) (resolvConf, error) {
	var rc resolvConf
	var bad []string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "nameserver":
			if len(f) < 2 {
				bad = append(bad, "a nameserver line without an address")
				continue
			}
			rc.servers = append(rc.servers, f[1])
		case "search":
			rc.searches = nil
			for _, s := range f[1:] {
				if s != "." {
					rc.searches = append(rc.searches, strings.TrimSuffix(s, "."))
				}
			}
		case "options":
			rc.options = mergeOptions(rc.options, f[1:]...)
		}
	}
	if len(bad) > 0 {
		return rc, fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return rc, nil
}

// readResolvConf reads and parses the node's resolver file.
func readResolvConf(path string) (resolvConf, error) {
	f, err := os.Open(path) // #nosec G304 -- the operator's --resolv-conf
	if err != nil {
		return resolvConf{}, fmt.Errorf("resolv.conf: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxResolvConfBytes+1))
	if err != nil {
		return resolvConf{}, fmt.Errorf("resolv.conf %s: %w", path, err)
	}
	if len(data) > maxResolvConfBytes {
		return resolvConf{}, fmt.Errorf("resolv.conf %s: larger than %d bytes", path, maxResolvConfBytes)
	}
	rc, err := parseResolvConf(data)
	if err != nil {
		return resolvConf{}, fmt.Errorf("resolv.conf %s: %w", path, err)
	}
	return rc, nil
}

// nodeDNS is the node's side of a pod's DNS configuration.
type nodeDNS struct {
	clusterDNS    []string
	clusterDomain string
	// host is the node's resolv.conf; nil: the node has none to give
	// (--resolv-conf ""), and pods resolving like the node ask the
	// resolver on their own host.
	host    *resolvConf
	hostIPs []string
}

// podDNS forms the resolver configuration of the pod's sandbox from the
// node's settings (Options.ClusterDNS, ClusterDomain, ResolvConf).
func (r *Runtime) podDNS(pod *corev1.Pod) (*runtimeapi.DNSConfig, []Warning, error) {
	node := nodeDNS{clusterDNS: r.opts.ClusterDNS, clusterDomain: r.opts.ClusterDomain, hostIPs: r.opts.HostIPs}
	if r.opts.ResolvConf != "" {
		rc, err := readResolvConf(r.opts.ResolvConf)
		if err != nil {
			return nil, nil, err
		}
		node.host = &rc
	}
	dns, warnings := formPodDNS(pod, node)
	return dns, warnings, nil
}

// formPodDNS is the pod's resolver configuration as its dnsPolicy says:
//
//   - None: the pod's dnsConfig alone;
//   - ClusterFirst (off the host network) and ClusterFirstWithHostNet: the
//     cluster's DNS servers, the cluster's search domains for the pod's
//     namespace before the node's, and ndots:5; without cluster DNS
//     servers, a MissingClusterDNS warning and what Default gives;
//   - Default, and ClusterFirst on the host network: the node's
//     resolv.conf;
//
// then the pod's dnsConfig added (its options replacing those of the same
// name), and the whole cut to the resolver's bounds with a
// DNSConfigForming warning.
func formPodDNS(pod *corev1.Pod, node nodeDNS) (*runtimeapi.DNSConfig, []Warning) {
	var warnings []Warning
	dns := &runtimeapi.DNSConfig{}
	policy, cluster := pod.Spec.DNSPolicy, false
	switch policy {
	case corev1.DNSNone, corev1.DNSDefault:
	case corev1.DNSClusterFirstWithHostNet:
		cluster = true
	default: // ClusterFirst, the default; validation refuses any other
		policy, cluster = corev1.DNSClusterFirst, !pod.Spec.HostNetwork
	}
	if cluster && len(node.clusterDNS) == 0 {
		warnings = append(warnings, Warning{Reason: ReasonMissingClusterDNS, Node: true, Message: fmt.Sprintf(
			"nodeagent has no --cluster-dns configured and cannot create Pod using %q policy. Falling back to %q policy.",
			policy, corev1.DNSDefault)})
		cluster = false
	}
	switch {
	case policy == corev1.DNSNone:
	case cluster:
		dns.Servers = slices.Clone(node.clusterDNS)
		if d := node.clusterDomain; d != "" {
			dns.Searches = []string{pod.Namespace + ".svc." + d, "svc." + d, d}
		}
		if node.host != nil {
			dns.Searches = append(dns.Searches, node.host.searches...)
		}
		dns.Searches = unique(dns.Searches)
		dns.Options = []string{"ndots:5"}
	case node.host != nil:
		dns.Servers = slices.Clone(node.host.servers)
		dns.Searches = slices.Clone(node.host.searches)
		dns.Options = slices.Clone(node.host.options)
	default:
		// No resolv.conf to give: the resolver on the pod's own host, as
		// a resolver without nameservers would ask, and no search list.
		for _, ip := range node.hostIPs {
			if a, err := netip.ParseAddr(ip); err == nil && a.Unmap().Is6() {
				dns.Servers = append(dns.Servers, "::1")
			} else {
				dns.Servers = append(dns.Servers, "127.0.0.1")
			}
		}
		if len(dns.Servers) == 0 {
			dns.Servers = []string{"127.0.0.1"}
		}
		dns.Servers = unique(dns.Servers)
		dns.Searches = []string{"."}
	}
	if c := pod.Spec.DNSConfig; c != nil {
		dns.Servers = unique(append(dns.Servers, c.Nameservers...))
		dns.Searches = unique(append(dns.Searches, c.Searches...))
		for _, o := range c.Options {
			opt := o.Name
			if o.Value != nil && *o.Value != "" {
				opt += ":" + *o.Value
			}
			dns.Options = mergeOptions(dns.Options, opt)
		}
	}
	return dns, append(warnings, fitDNSLimits(dns)...)
}

// fitDNSLimits cuts dns to the resolver's bounds: the first 3
// nameservers; the first 32 search domains, without those too long for a
// DNS name, and then without the last ones until the line fits 2048
// characters.
func fitDNSLimits(dns *runtimeapi.DNSConfig) []Warning {
	var warnings []Warning
	if len(dns.Servers) > maxDNSNameservers {
		dns.Servers = dns.Servers[:maxDNSNameservers]
		warnings = append(warnings, Warning{Reason: ReasonDNSConfigForming, Message: fmt.Sprintf(
			"Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: %s",
			strings.Join(dns.Servers, " "))})
	}
	cut := false
	if len(dns.Searches) > maxDNSSearches {
		dns.Searches, cut = dns.Searches[:maxDNSSearches], true
	}
	n := len(dns.Searches)
	dns.Searches = slices.DeleteFunc(dns.Searches, func(s string) bool { return len(s) > maxDNSSearchDomain })
	cut = cut || len(dns.Searches) < n
	for len(dns.Searches) > 0 && len(strings.Join(dns.Searches, " ")) > maxDNSSearchLine {
		dns.Searches, cut = dns.Searches[:len(dns.Searches)-1], true
	}
	if cut {
		warnings = append(warnings, Warning{Reason: ReasonDNSConfigForming, Message: fmt.Sprintf(
			"Search Line limits were exceeded, some search paths have been omitted, the applied search line is: %s",
			strings.Join(dns.Searches, " "))})
	}
	return warnings
}

// mergeOptions adds resolver options ("ndots:5", "edns0") to opts: one of
// a name already there replaces it in its place, a new one is appended.
func mergeOptions(opts []string, more ...string) []string {
	name := func(o string) string { n, _, _ := strings.Cut(o, ":"); return n }
	for _, o := range more {
		if i := slices.IndexFunc(opts, func(e string) bool { return name(e) == name(o) }); i >= 0 {
			opts[i] = o
		} else {
			opts = append(opts, o)
		}
	}
	return opts
}

// unique keeps the first of each string, in order.
func unique(list []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
