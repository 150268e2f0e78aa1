package app

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
)

// defaultResolvConf is the node's resolver file, the kubelet's default.
const defaultResolvConf = "/etc/resolv.conf"

func (o *Options) addDNSFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.ClusterDNS, "cluster-dns", o.ClusterDNS, "IP addresses of the cluster's DNS servers, comma-separated: pods with dnsPolicy ClusterFirst resolve through them. Without them such pods resolve as with dnsPolicy Default, with a MissingClusterDNS warning event")
	fs.StringVar(&o.ClusterDomain, "cluster-domain", o.ClusterDomain, "the cluster's DNS domain (cluster.local): pods with dnsPolicy ClusterFirst search <namespace>.svc.<domain>, svc.<domain> and <domain> before the node's search domains, and a pod's hostname with a subdomain is <hostname>.<subdomain>.<namespace>.svc.<domain>")
	fs.StringVar(&o.ResolvConf, "resolv-conf", o.ResolvConf, "the node's resolver file, whose nameservers, search domains and options pods with dnsPolicy Default get; \"\" for none (such pods then ask 127.0.0.1)")
}

// validateDNS checks the DNS options; the resolver file must be readable
// now, as every new sandbox reads it.
func (o *Options) validateDNS() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, s := range o.ClusterDNS {
		if a, err := netip.ParseAddr(s); err != nil || a.Zone() != "" {
			bad("--cluster-dns %q is not an IP address", s)
		}
	}
	if d := o.ClusterDomain; d != "" {
		if msgs := validation.IsDNS1123Subdomain(d); len(msgs) > 0 {
			bad("--cluster-domain %q: %s", d, strings.Join(msgs, "; "))
		}
	}
	if p := o.ResolvConf; p != "" {
		if !filepath.IsAbs(p) {
			bad("--resolv-conf %q must be an absolute path (or \"\" for none)", p)
		} else if f, err := os.Open(p); err != nil { // #nosec G304 -- the operator's file
			bad("--resolv-conf: %v (\"\" for none)", err)
		} else {
			fi, err := f.Stat()
			_ = f.Close()
			if err == nil && fi.IsDir() {
				bad("--resolv-conf %q is a directory, not a resolver file", p)
			}
		}
	}
	return errs
}
