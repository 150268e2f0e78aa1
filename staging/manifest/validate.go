package manifest

import (
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// validateStaticPod checks what a node needs of a static pod, after
// defaulting and naming: the apiserver's pod validation is not importable,
// so this covers the rules that keep a pod runnable and, but for optional
// references and a service account name (see validateNoAPIReferences), its
// mirror admissible. Every error names its field below root.
func validateStaticPod(pod *corev1.Pod, root *field.Path) field.ErrorList {
	meta := root.Child("metadata")
	errs := apivalidation.ValidateObjectMeta(&pod.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, meta)
	if _, ok := pod.Annotations[podtypes.ConfigMirrorAnnotationKey]; ok {
		errs = append(errs, field.Forbidden(meta.Child("annotations").Key(podtypes.ConfigMirrorAnnotationKey),
			"a manifest may not declare itself a mirror pod"))
	}
	if pod.DeletionTimestamp != nil || pod.DeletionGracePeriodSeconds != nil {
		errs = append(errs, field.Forbidden(meta.Child("deletionTimestamp"), "a manifest cannot request its own deletion; remove the file"))
	}
	errs = append(errs, validatePodSpec(&pod.Spec, root.Child("spec"))...)
	errs = append(errs, validateNoAPIReferences(&pod.Spec, root.Child("spec"))...)
	errs = append(errs, validateSecurity(&pod.Spec, root.Child("spec"))...)
	errs = append(errs, validateHostPorts(&pod.Spec, root.Child("spec"))...)
	return errs
}

var (
	restartPolicies = []string{string(corev1.RestartPolicyAlways), string(corev1.RestartPolicyOnFailure), string(corev1.RestartPolicyNever)}
	dnsPolicies     = []string{string(corev1.DNSClusterFirst), string(corev1.DNSClusterFirstWithHostNet), string(corev1.DNSDefault), string(corev1.DNSNone)}
)

func validatePodSpec(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	volumes, errs := validateVolumes(spec.Volumes, p.Child("volumes"))
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), "a pod needs at least one container"))
	}
	names := sets.New[string]()
	errs = append(errs, validateContainers(spec.InitContainers, p.Child("initContainers"), volumes, names, spec.HostNetwork, true)...)
	errs = append(errs, validateContainers(spec.Containers, p.Child("containers"), volumes, names, spec.HostNetwork, false)...)
	if len(spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(p.Child("ephemeralContainers"), "static pods may not have ephemeral containers"))
	}
	if !contains(restartPolicies, string(spec.RestartPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), spec.RestartPolicy, restartPolicies))
	}
	if !contains(dnsPolicies, string(spec.DNSPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("dnsPolicy"), spec.DNSPolicy, dnsPolicies))
	} else if spec.DNSPolicy == corev1.DNSNone && spec.DNSConfig == nil {
		errs = append(errs, field.Required(p.Child("dnsConfig"), "dnsPolicy None needs a dnsConfig"))
	}
	errs = append(errs, validateDNS(spec, p)...)
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *g, "must be >= 0"))
	}
	if d := spec.ActiveDeadlineSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), *d, "must be > 0"))
	}
	for _, f := range []struct{ name, value string }{{"hostname", spec.Hostname}, {"subdomain", spec.Subdomain}} {
		if f.value == "" {
			continue
		}
		for _, msg := range validation.IsDNS1123Label(f.value) {
			errs = append(errs, field.Invalid(p.Child(f.name), f.value, msg))
		}
	}
	return errs
}

// validateVolumes checks names and sources and returns the volume names.
func validateVolumes(volumes []corev1.Volume, p *field.Path) (sets.Set[string], field.ErrorList) {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, v := range volumes {
		vp := p.Index(i)
		errs = append(errs, validateDNSLabel(v.Name, vp.Child("name"))...)
		if names.Has(v.Name) {
			errs = append(errs, field.Duplicate(vp.Child("name"), v.Name))
		}
		names.Insert(v.Name)
		if n := volumeSourceCount(&v.VolumeSource); n != 1 {
			errs = append(errs, field.Invalid(vp, v.Name, fmt.Sprintf("a volume needs exactly one source, found %d", n)))
		}
		if hp := v.HostPath; hp != nil && !strings.HasPrefix(hp.Path, "/") {
			errs = append(errs, field.Invalid(vp.Child("hostPath", "path"), hp.Path, "must be an absolute path"))
		}
	}
	return names, errs
}

// volumeSourceCount counts the sources set in a VolumeSource: each is a
// pointer field, and a volume must set exactly one.
func volumeSourceCount(vs *corev1.VolumeSource) int {
	n := 0
	v := reflect.ValueOf(vs).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			n++
		}
	}
	return n
}

func validateDNSLabel(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}
