package runtime

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
)

const (
	// etcHosts is where containers find their hosts file, and where the
	// node keeps its own.
	etcHosts = "/etc/hosts"
	// hostsFileName is the pod's managed hosts file in its directory.
	hostsFileName = "etc-hosts"

	// The first line of a hosts file the agent wrote, the kubelet's: tools
	// and the conformance suite tell a managed file by it.
	managedHostsHeader            = "# Kubernetes-managed hosts file.\n"
	managedHostsHeaderHostNetwork = "# Kubernetes-managed hosts file (host network).\n"

	// maxHostname is what a hostname may hold (a DNS label), maxFQDN what
	// the kernel's nodename holds.
	maxHostname = 63
	maxFQDN     = 64
)

// podHostname is the pod's hostname and, when it has a subdomain, its
// domain: spec.hostnameOverride as it is; otherwise spec.hostname or the
// pod's name, cut to a DNS label, in <subdomain>.<namespace>.svc.<cluster
// domain>.
func podHostname(pod *corev1.Pod, clusterDomain string) (hostname, domain string) {
	if o := pod.Spec.HostnameOverride; o != nil && *o != "" {
		return cutHostname(*o), ""
	}
	hostname = pod.Spec.Hostname
	if hostname == "" {
		hostname = pod.Name
	}
	if sub := pod.Spec.Subdomain; sub != "" {
		domain = sub + "." + pod.Namespace + ".svc"
		if clusterDomain != "" {
			domain += "." + clusterDomain
		}
	}
	return cutHostname(hostname), domain
}

func cutHostname(h string) string {
	if len(h) > maxHostname {
		h = strings.TrimRight(h[:maxHostname], "-.")
	}
	return h
}

// sandboxHostname is the hostname the pod's sandbox gets: its FQDN with
// setHostnameAsFQDN and a subdomain, else its hostname. An FQDN longer
// than the kernel takes is an error, as under the kubelet.
func sandboxHostname(pod *corev1.Pod, clusterDomain string) (string, error) {
	hostname, domain := podHostname(pod, clusterDomain)
	if f := pod.Spec.SetHostnameAsFQDN; f == nil || !*f || domain == "" {
		return hostname, nil
	}
	fqdn := hostname + "." + domain
	if len(fqdn) > maxFQDN {
		return "", fmt.Errorf("failed to construct FQDN from pod hostname and cluster domain, FQDN %s is too long (%d characters is the max, %d characters requested)",
			fqdn, maxFQDN, len(fqdn))
	}
	return fqdn, nil
}

// managedHosts is the hosts file of a pod on the pod network: localhost
// in both families, the pod's addresses under its hostname (its FQDN
// first when it has a domain), then its hostAliases.
func managedHosts(ips []string, hostname, domain string, aliases []corev1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeader)
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	for _, ip := range ips {
		if domain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, hostname, domain, hostname)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
		}
	}
	writeHostAliases(&b, aliases)
	return b.Bytes()
}

// hostNetworkHosts is the hosts file of a pod on the host's network: the
// node's own, then the pod's hostAliases.
func hostNetworkHosts(node []byte, aliases []corev1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeaderHostNetwork)
	b.Write(node)
	writeHostAliases(&b, aliases)
	return b.Bytes()
}

// writeHostAliases appends one line per alias: its IP, then its names.
func writeHostAliases(b *bytes.Buffer, aliases []corev1.HostAlias) {
	if len(aliases) == 0 {
		return
	}
	b.WriteString("\n# Entries added by HostAliases.\n")
	for _, a := range aliases {
		fmt.Fprintf(b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
	}
}

// hostsMount writes the pod's hosts file, <PodsDir>/<uid>/etc-hosts, and
// returns its mount at /etc/hosts; ips are the sandbox's. It returns nil,
// and writes nothing, without PodsDir, for a Windows pod, and for a pod
// on the pod network whose addresses are unknown.
//
// The file is rewritten in place (one inode, which every container of the
// pod has mounted) and only when its content changes, so a container's
// restart does not undo what another one wrote there unless the pod's
// addresses changed.
func (r *Runtime) hostsMount(pod *corev1.Pod, ips []string) (*Mount, error) {
	if r.opts.PodsDir == "" || (pod.Spec.OS != nil && pod.Spec.OS.Name == corev1.Windows) {
		return nil, nil
	}
	var content []byte
	if pod.Spec.HostNetwork {
		node, err := os.ReadFile(etcHosts)
		if err != nil {
			return nil, fmt.Errorf("%w: the node's hosts file: %w", ErrCreateContainer, err)
		}
		content = hostNetworkHosts(node, pod.Spec.HostAliases)
	} else {
		if len(ips) == 0 {
			return nil, nil
		}
		hostname, domain := podHostname(pod, r.opts.ClusterDomain)
		content = managedHosts(ips, hostname, domain, pod.Spec.HostAliases)
	}
	dir := filepath.Join(r.opts.PodsDir, string(pod.UID))
	path := filepath.Join(dir, hostsFileName)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("%w: hosts file: %w", ErrCreateContainer, err)
	}
	if err := writeInPlace(path, content); err != nil {
		return nil, fmt.Errorf("%w: hosts file: %w", ErrCreateContainer, err)
	}
	return &Mount{ContainerPath: etcHosts, HostPath: path, SELinuxRelabel: true}, nil
}

// writeInPlace makes the regular file at path hold content, mode 0644,
// writing only if it holds something else. A symlink there is refused.
func writeInPlace(path string, content []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644) // #nosec G302 G304 -- PodsDir and a checked UID (SyncPod); the hosts file is world-readable, as the kubelet's
	if err != nil {
		return err
	}
	defer f.Close()
	old, err := io.ReadAll(io.NewSectionReader(f, 0, int64(len(content))+1))
	if err != nil {
		return err
	}
	if bytes.Equal(old, content) {
		return nil
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(content, 0); err != nil {
		return err
	}
	// Chmod, not the create mode, which the umask would narrow.
	if err := f.Chmod(0o644); err != nil { // #nosec G302 -- every container user reads /etc/hosts, as under the kubelet
		return err
	}
	return f.Close()
}

// mountsEtcHosts says whether the container mounts a volume at
// /etc/hosts itself, which the managed file then leaves alone.
func mountsEtcHosts(c *corev1.Container) bool {
	for _, m := range c.VolumeMounts {
		if m.MountPath == etcHosts {
			return true
		}
	}
	return false
}
