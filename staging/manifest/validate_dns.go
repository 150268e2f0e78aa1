package manifest

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The apiserver's bounds of a pod's dnsConfig, which are also what a
// resolver reads.
const (
	maxNameservers   = 3
	maxSearchLine    = 2048
	maxHostnameLabel = 64
)

// validateDNS checks what reaches a pod's resolv.conf, /etc/hosts and
// hostname as the apiserver checks it: an invalid value here would be
// written into the pod's files, and its mirror refused.
func validateDNS(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	dp := p.Child("dnsConfig")
	if c := spec.DNSConfig; c != nil {
		if spec.DNSPolicy == corev1.DNSNone && len(c.Nameservers) == 0 {
			errs = append(errs, field.Required(dp.Child("nameservers"), "dnsPolicy None needs at least one nameserver"))
		}
		if len(c.Nameservers) > maxNameservers {
			errs = append(errs, field.TooMany(dp.Child("nameservers"), len(c.Nameservers), maxNameservers))
		}
		for i, ns := range c.Nameservers {
			errs = append(errs, validation.IsValidIP(dp.Child("nameservers").Index(i), ns)...)
		}
		if n := len(strings.Join(c.Searches, " ")); n > maxSearchLine {
			errs = append(errs, field.Invalid(dp.Child("searches"), fmt.Sprintf("%d characters", n),
				fmt.Sprintf("must not have more than %d characters (spaces included) in the search list", maxSearchLine)))
		}
		for i, s := range c.Searches {
			if s == "." {
				continue
			}
			for _, msg := range validation.IsDNS1123SubdomainWithUnderscore(strings.TrimSuffix(s, ".")) {
				errs = append(errs, field.Invalid(dp.Child("searches").Index(i), s, msg))
			}
		}
		for i, o := range c.Options {
			if o.Name == "" {
				errs = append(errs, field.Required(dp.Child("options").Index(i).Child("name"), ""))
			}
		}
	}
	for i, a := range spec.HostAliases {
		ap := p.Child("hostAliases").Index(i)
		errs = append(errs, validation.IsValidIP(ap.Child("ip"), a.IP)...)
		for j, h := range a.Hostnames {
			for _, msg := range validation.IsDNS1123Subdomain(h) {
				errs = append(errs, field.Invalid(ap.Child("hostnames").Index(j), h, msg))
			}
		}
	}
	if o := spec.HostnameOverride; o != nil {
		op := p.Child("hostnameOverride")
		switch {
		case spec.SetHostnameAsFQDN != nil && *spec.SetHostnameAsFQDN:
			errs = append(errs, field.Forbidden(op, "may not be specified when setHostnameAsFQDN is true"))
		case spec.HostNetwork:
			errs = append(errs, field.Forbidden(op, "may not be specified when hostNetwork is true"))
		case len(*o) > maxHostnameLabel:
			errs = append(errs, field.TooLong(op, *o, maxHostnameLabel))
		default:
			for _, msg := range validation.IsDNS1123Subdomain(*o) {
				errs = append(errs, field.Invalid(op, *o, msg))
			}
		}
	}
	return errs
}
