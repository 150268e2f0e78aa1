package manifest

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateSecurity checks the shape of the pod's and its containers'
// securityContexts, as the apiserver would: enums, id ranges, profiles and
// fields that contradict each other. Whether the node can honour a valid
// context (AppArmor, SELinux, profile files, the image's user) is the
// runtime's to decide when the pod runs.
func validateSecurity(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	hostUsers := spec.HostUsers == nil || *spec.HostUsers
	if sc := spec.SecurityContext; sc != nil {
		errs = append(errs, validatePodSecurityContext(sc, spec, p.Child("securityContext"))...)
	}
	for _, list := range []struct {
		name       string
		containers []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i := range list.containers {
			if sc := list.containers[i].SecurityContext; sc != nil {
				errs = append(errs, validateSecurityContext(sc, hostUsers, p.Child(list.name).Index(i).Child("securityContext"))...)
			}
		}
	}
	return errs
}

var (
	groupsPolicies   = []string{string(corev1.SupplementalGroupsPolicyMerge), string(corev1.SupplementalGroupsPolicyStrict)}
	fsGroupPolicies  = []string{string(corev1.FSGroupChangeOnRootMismatch), string(corev1.FSGroupChangeAlways)}
	seLinuxPolicies  = []string{string(corev1.SELinuxChangePolicyRecursive), string(corev1.SELinuxChangePolicyMountOption)}
	procMountTypes   = []string{string(corev1.DefaultProcMount), string(corev1.UnmaskedProcMount)}
	seccompTypes     = []string{string(corev1.SeccompProfileTypeRuntimeDefault), string(corev1.SeccompProfileTypeUnconfined), string(corev1.SeccompProfileTypeLocalhost)}
	appArmorTypes    = []string{string(corev1.AppArmorProfileTypeRuntimeDefault), string(corev1.AppArmorProfileTypeUnconfined), string(corev1.AppArmorProfileTypeLocalhost)}
	sysctlNameFormat = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)
)

func validatePodSecurityContext(sc *corev1.PodSecurityContext, spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateID(sc.RunAsUser, p.Child("runAsUser"))...)
	errs = append(errs, validateID(sc.RunAsGroup, p.Child("runAsGroup"))...)
	errs = append(errs, validateID(sc.FSGroup, p.Child("fsGroup"))...)
	for i := range sc.SupplementalGroups {
		errs = append(errs, validateID(&sc.SupplementalGroups[i], p.Child("supplementalGroups").Index(i))...)
	}
	errs = append(errs, validateEnum(sc.SupplementalGroupsPolicy, groupsPolicies, p.Child("supplementalGroupsPolicy"))...)
	errs = append(errs, validateEnum(sc.FSGroupChangePolicy, fsGroupPolicies, p.Child("fsGroupChangePolicy"))...)
	errs = append(errs, validateEnum(sc.SELinuxChangePolicy, seLinuxPolicies, p.Child("seLinuxChangePolicy"))...)
	errs = append(errs, validateSeccomp(sc.SeccompProfile, p.Child("seccompProfile"))...)
	errs = append(errs, validateAppArmor(sc.AppArmorProfile, p.Child("appArmorProfile"))...)
	errs = append(errs, validateSysctls(sc.Sysctls, spec, p.Child("sysctls"))...)
	return errs
}

func validateSecurityContext(sc *corev1.SecurityContext, hostUsers bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateID(sc.RunAsUser, p.Child("runAsUser"))...)
	errs = append(errs, validateID(sc.RunAsGroup, p.Child("runAsGroup"))...)
	errs = append(errs, validateEnum(sc.ProcMount, procMountTypes, p.Child("procMount"))...)
	if sc.ProcMount != nil && *sc.ProcMount == corev1.UnmaskedProcMount && hostUsers {
		errs = append(errs, field.Invalid(p.Child("procMount"), *sc.ProcMount, "Unmasked needs spec.hostUsers false (a user namespace)"))
	}
	errs = append(errs, validateSeccomp(sc.SeccompProfile, p.Child("seccompProfile"))...)
	errs = append(errs, validateAppArmor(sc.AppArmorProfile, p.Child("appArmorProfile"))...)
	// no_new_privs cannot hold for a process that may do anything anyway.
	if ape := sc.AllowPrivilegeEscalation; ape != nil && !*ape {
		if sc.Privileged != nil && *sc.Privileged {
			errs = append(errs, field.Invalid(p.Child("allowPrivilegeEscalation"), false, "may not be false with privileged true"))
		}
		if sc.Capabilities != nil {
			for i, c := range sc.Capabilities.Add {
				if name := strings.TrimPrefix(strings.ToUpper(string(c)), "CAP_"); name == "SYS_ADMIN" {
					errs = append(errs, field.Invalid(p.Child("allowPrivilegeEscalation"), false,
						"may not be false with capabilities.add["+strconv.Itoa(i)+"] "+string(c)))
				}
			}
		}
	}
	return errs
}

// validateID checks a user or group ID: the apiserver takes 0 to 2^31-1.
func validateID(id *int64, p *field.Path) field.ErrorList {
	if id == nil || (*id >= 0 && *id <= math.MaxInt32) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, *id, "must be between 0 and 2147483647")}
}

func validateEnum[T ~string](v *T, allowed []string, p *field.Path) field.ErrorList {
	if v == nil || contains(allowed, string(*v)) {
		return nil
	}
	return field.ErrorList{field.NotSupported(p, *v, allowed)}
}

func validateSeccomp(sp *corev1.SeccompProfile, p *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	return validateProfile(string(sp.Type), sp.LocalhostProfile, seccompTypes, string(corev1.SeccompProfileTypeLocalhost), true, p)
}

func validateAppArmor(ap *corev1.AppArmorProfile, p *field.Path) field.ErrorList {
	if ap == nil {
		return nil
	}
	return validateProfile(string(ap.Type), ap.LocalhostProfile, appArmorTypes, string(corev1.AppArmorProfileTypeLocalhost), false, p)
}

// validateProfile checks a seccomp or AppArmor profile: a known type, and
// a localhostProfile exactly when the type is Localhost. A seccomp profile
// is a file below the node's profile root, so its name must stay there.
func validateProfile(typ string, localhost *string, types []string, localhostType string, isPath bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !contains(types, typ) {
		errs = append(errs, field.NotSupported(p.Child("type"), typ, types))
	}
	lp := p.Child("localhostProfile")
	switch {
	case typ == localhostType && (localhost == nil || *localhost == ""):
		errs = append(errs, field.Required(lp, "type Localhost needs a profile"))
	case typ != localhostType && localhost != nil:
		errs = append(errs, field.Invalid(lp, *localhost, "may only be set with type Localhost"))
	case localhost != nil && isPath && (strings.HasPrefix(*localhost, "/") || hasDotDotPart(*localhost)):
		errs = append(errs, field.Invalid(lp, *localhost, "must be a relative path below the node's seccomp profile directory, without '..'"))
	}
	return errs
}

func hasDotDotPart(path string) bool {
	for _, part := range strings.Split(path, "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

// validateSysctls checks names and that each sysctl belongs to a
// namespace the pod owns: one that is not namespaced would change the
// whole node, and a namespaced one would change the host's when the pod
// shares that namespace with the host. The list of safe sysctls depends
// on the node (its kernel, its --allowed-unsafe-sysctls): the agent's
// admission applies it, to every pod, as the kubelet does.
func validateSysctls(sysctls []corev1.Sysctl, spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, s := range sysctls {
		sp := p.Index(i).Child("name")
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(sp, ""))
			continue
		case len(s.Name) > 253 || !sysctlNameFormat.MatchString(s.Name):
			errs = append(errs, field.Invalid(sp, s.Name, "must be a sysctl name such as net.ipv4.ip_local_port_range"))
			continue
		case names.Has(s.Name):
			errs = append(errs, field.Duplicate(sp, s.Name))
		}
		names.Insert(s.Name)
		switch sysctlNamespace(s.Name) {
		case "":
			errs = append(errs, field.Forbidden(sp, s.Name+" is not namespaced: setting it would change the whole node"))
		case "net":
			if spec.HostNetwork {
				errs = append(errs, field.Forbidden(sp, s.Name+" is in the network namespace, which this pod shares with the host (hostNetwork)"))
			}
		case "ipc":
			if spec.HostIPC {
				errs = append(errs, field.Forbidden(sp, s.Name+" is in the IPC namespace, which this pod shares with the host (hostIPC)"))
			}
		}
	}
	return errs
}

// sysctlNamespace names the kernel namespace that scopes a sysctl, as the
// kubelet knows them, or "" for one the whole node shares.
func sysctlNamespace(name string) string {
	name = strings.ReplaceAll(name, "/", ".")
	switch {
	case strings.HasPrefix(name, "net."):
		return "net"
	case name == "kernel.sem", strings.HasPrefix(name, "kernel.shm"), strings.HasPrefix(name, "kernel.msg"), strings.HasPrefix(name, "fs.mqueue."):
		return "ipc"
	}
	return ""
}
