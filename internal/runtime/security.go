package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// This file maps a pod's and a container's securityContext onto the CRI,
// and refuses what this node cannot honour. The rules on the manifest's
// own shape (enums, ranges, contradicting fields) are staging/manifest's;
// the rules here depend on the node (its kernel, its profiles) or on the
// image, so they are decided when the pod is about to run.

// SecurityError says why a container's securityContext cannot be honoured
// on this node. It matches ErrSecurityContext with errors.Is.
type SecurityError struct {
	Container string
	// Field is the offending field, as the pod spells it: securityContext.X
	// for the container's own, spec.securityContext.X for the pod's.
	Field  string
	Reason string
}

func (e *SecurityError) Error() string {
	return fmt.Sprintf("container %q: %s %s", e.Container, e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrSecurityContext) true.
func (e *SecurityError) Is(target error) bool { return target == ErrSecurityContext }

// hostSecurity is what the node can enforce, detected once at New.
type hostSecurity struct {
	appArmor bool
	seLinux  bool
}

// detectHostSecurity reads the kernel's view: AppArmor is on when its
// module says so, SELinux when selinuxfs is mounted where the kernel puts
// it. containerd may still have AppArmor turned off in its own config;
// CreateContainer then refuses, and createSecurityError names the field.
func detectHostSecurity() hostSecurity {
	var h hostSecurity
	if b, err := os.ReadFile("/sys/module/apparmor/parameters/enabled"); err == nil {
		h.appArmor = strings.TrimSpace(string(b)) == "Y"
	}
	if _, err := os.Stat("/sys/fs/selinux/enforce"); err == nil {
		h.seLinux = true
	}
	return h
}

// effectiveSecurity is a container's securityContext with the pod's
// defaults filled in, as the kubelet merges them: the container's own
// value wins; each field remembers where it was set, for messages.
type effectiveSecurity struct {
	runAsUser, runAsGroup *int64
	runAsNonRoot          *bool
	seLinux               *corev1.SELinuxOptions
	windows               *corev1.WindowsSecurityContextOptions
	seccomp               *corev1.SeccompProfile
	appArmor              *corev1.AppArmorProfile
	// csc and psc are the container's and the pod's own, never nil.
	csc *corev1.SecurityContext
	psc *corev1.PodSecurityContext
	// The fields the values above come from.
	userFrom, nonRootFrom, seLinuxFrom, windowsFrom, seccompFrom, appArmorFrom string
}

const (
	containerField = "securityContext."
	podField       = "spec.securityContext."
)

func effective(pod *corev1.Pod, c *corev1.Container) *effectiveSecurity {
	e := &effectiveSecurity{csc: c.SecurityContext, psc: pod.Spec.SecurityContext}
	if e.csc == nil {
		e.csc = &corev1.SecurityContext{}
	}
	if e.psc == nil {
		e.psc = &corev1.PodSecurityContext{}
	}
	pick := func(cset, pset bool, name string) string {
		switch {
		case cset:
			return containerField + name
		case pset:
			return podField + name
		}
		return ""
	}
	e.runAsUser = firstSet(e.csc.RunAsUser, e.psc.RunAsUser)
	e.userFrom = pick(e.csc.RunAsUser != nil, e.psc.RunAsUser != nil, "runAsUser")
	e.runAsGroup = firstSet(e.csc.RunAsGroup, e.psc.RunAsGroup)
	e.runAsNonRoot = firstSet(e.csc.RunAsNonRoot, e.psc.RunAsNonRoot)
	e.nonRootFrom = pick(e.csc.RunAsNonRoot != nil, e.psc.RunAsNonRoot != nil, "runAsNonRoot")
	e.seLinux = firstSet(e.csc.SELinuxOptions, e.psc.SELinuxOptions)
	e.seLinuxFrom = pick(e.csc.SELinuxOptions != nil, e.psc.SELinuxOptions != nil, "seLinuxOptions")
	e.windows = firstSet(e.csc.WindowsOptions, e.psc.WindowsOptions)
	e.windowsFrom = pick(e.csc.WindowsOptions != nil, e.psc.WindowsOptions != nil, "windowsOptions")
	e.seccomp = firstSet(e.csc.SeccompProfile, e.psc.SeccompProfile)
	e.seccompFrom = pick(e.csc.SeccompProfile != nil, e.psc.SeccompProfile != nil, "seccompProfile")
	e.appArmor = firstSet(e.csc.AppArmorProfile, e.psc.AppArmorProfile)
	e.appArmorFrom = pick(e.csc.AppArmorProfile != nil, e.psc.AppArmorProfile != nil, "appArmorProfile")
	return e
}

func firstSet[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

// checkPodSecurity refuses, before anything of the pod is created, every
// securityContext field of the pod and its containers that this node
// cannot honour. What depends on the image (runAsNonRoot) is checked per
// container at its start, by imageUserRefusal.
func (r *Runtime) checkPodSecurity(pod *corev1.Pod) error {
	var errs []error
	for _, c := range podtypes.Containers(&pod.Spec) {
		if err := r.checkContainerSecurity(pod, c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (r *Runtime) checkContainerSecurity(pod *corev1.Pod, c *corev1.Container) error {
	e := effective(pod, c)
	refuse := func(field, reason string) error {
		return &SecurityError{Container: c.Name, Field: field, Reason: reason}
	}
	if pod.Spec.HostUsers != nil && !*pod.Spec.HostUsers {
		return refuse("spec.hostUsers", "is false, but this agent does not run pods in user namespaces")
	}
	if podOS := pod.Spec.OS; podOS != nil && podOS.Name != corev1.Linux {
		return refuse("spec.os.name", fmt.Sprintf("is %q, but this node runs Linux containers", podOS.Name))
	}
	if e.windows != nil {
		return refuse(e.windowsFrom, "is set, but this node runs Linux containers")
	}
	if p := e.psc.SupplementalGroupsPolicy; p != nil && *p == corev1.SupplementalGroupsPolicyStrict {
		return refuse(podField+"supplementalGroupsPolicy",
			"is Strict, but the container runtime does not support it (it always merges the image's groups)")
	}
	// seLinuxOptions on a node without SELinux are not refused: there is
	// nothing to label, the runtime drops them, and the kubelet runs such
	// pods (the upstream conformance suite sets a level on most of its).
	if p := e.appArmor; p != nil && p.Type != corev1.AppArmorProfileTypeUnconfined && !r.host.appArmor {
		return refuse(e.appArmorFrom+".type", fmt.Sprintf("is %s, but AppArmor is not enabled on this node", p.Type))
	}
	if p := e.seccomp; p != nil && p.Type == corev1.SeccompProfileTypeLocalhost {
		path := localhostSeccompPath(r.opts.SeccompProfileRoot, p)
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			return refuse(e.seccompFrom+".localhostProfile", fmt.Sprintf("names %s, which cannot be read: %v", path, err))
		case !fi.Mode().IsRegular():
			return refuse(e.seccompFrom+".localhostProfile", fmt.Sprintf("names %s, which is not a regular file", path))
		}
	}
	return nil
}

// localhostSeccompPath is where a Localhost seccomp profile lives: below
// the profile root, as the kubelet keeps them below <root-dir>/seccomp.
// Cleaning it as an absolute path first keeps it below the root whatever
// it says (staging/manifest refuses ".." already).
func localhostSeccompPath(root string, p *corev1.SeccompProfile) string {
	name := ""
	if p.LocalhostProfile != nil {
		name = *p.LocalhostProfile
	}
	return filepath.Join(root, filepath.Clean("/"+name))
}

// imageUser is the user an image runs as, as the runtime's ImageStatus
// reports it: a numeric uid, or a name, or neither (root).
type imageUser struct {
	uid      *int64
	username string
}

func imageUserOf(img *runtimeapi.Image) imageUser {
	switch {
	case img.GetUid() != nil:
		uid := img.GetUid().GetValue()
		return imageUser{uid: &uid}
	case img.GetUsername() != "":
		return imageUser{username: img.GetUsername()}
	}
	return imageUser{}
}

// imageUserRefusal enforces runAsNonRoot as the kubelet does: runAsUser 0
// is refused; without runAsUser, an image that runs as root (uid 0, or no
// user at all) is refused, and so is one that names its user, which the
// agent cannot verify.
func imageUserRefusal(pod *corev1.Pod, c *corev1.Container, img imageUser) error {
	e := effective(pod, c)
	if e.runAsNonRoot == nil || !*e.runAsNonRoot {
		return nil
	}
	refuse := func(reason string) error {
		return &SecurityError{Container: c.Name, Field: e.nonRootFrom, Reason: reason}
	}
	switch {
	case e.runAsUser != nil && *e.runAsUser == 0:
		return refuse("is true but " + e.userFrom + " is 0 (root)")
	case e.runAsUser != nil:
		return nil
	case img.uid != nil && *img.uid == 0:
		return refuse("is true but the image runs as root (uid 0)")
	case img.uid != nil:
		return nil
	case img.username != "":
		return refuse(fmt.Sprintf("is true but the image runs as the non-numeric user %q, which cannot be verified to be non-root (set runAsUser)", img.username))
	}
	return refuse("is true but the image runs as root (it names no user)")
}

// securityContext is the CRI form of the container's securityContext with
// the pod's defaults, for a container that checkPodSecurity admitted.
func securityContext(pod *corev1.Pod, c *corev1.Container, img imageUser, seccompRoot string) *runtimeapi.LinuxContainerSecurityContext {
	e := effective(pod, c)
	sc := &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: namespaceOptions(pod)}
	if e.runAsUser != nil {
		sc.RunAsUser = &runtimeapi.Int64Value{Value: *e.runAsUser}
	}
	if e.runAsGroup != nil {
		sc.RunAsGroup = &runtimeapi.Int64Value{Value: *e.runAsGroup}
		// The runtime refuses a group without a user; the kubelet passes the
		// image's user then. Otherwise the runtime applies the image's
		// user:group itself, group included.
		if sc.RunAsUser == nil {
			if img.uid != nil {
				sc.RunAsUser = &runtimeapi.Int64Value{Value: *img.uid}
			} else if img.username != "" {
				sc.RunAsUsername = img.username
			} else {
				sc.RunAsUser = &runtimeapi.Int64Value{Value: 0}
			}
		}
	}
	// fsGroup joins the container's groups, so that it can use the volumes
	// the fsGroup owns.
	if g := e.psc.FSGroup; g != nil {
		sc.SupplementalGroups = append(sc.SupplementalGroups, *g)
	}
	sc.SupplementalGroups = append(sc.SupplementalGroups, e.psc.SupplementalGroups...)
	sc.Privileged = e.csc.Privileged != nil && *e.csc.Privileged
	sc.ReadonlyRootfs = e.csc.ReadOnlyRootFilesystem != nil && *e.csc.ReadOnlyRootFilesystem
	// Unset, the kubelet leaves no_new_privs off; only an explicit false
	// sets it (validation refuses false with privileged or CAP_SYS_ADMIN).
	sc.NoNewPrivs = e.csc.AllowPrivilegeEscalation != nil && !*e.csc.AllowPrivilegeEscalation
	if caps := e.csc.Capabilities; caps != nil {
		sc.Capabilities = &runtimeapi.Capability{}
		for _, a := range caps.Add {
			sc.Capabilities.AddCapabilities = append(sc.Capabilities.AddCapabilities, string(a))
		}
		for _, d := range caps.Drop {
			sc.Capabilities.DropCapabilities = append(sc.Capabilities.DropCapabilities, string(d))
		}
	}
	if s := e.seLinux; s != nil && *s != (corev1.SELinuxOptions{}) {
		sc.SelinuxOptions = &runtimeapi.SELinuxOption{User: s.User, Role: s.Role, Type: s.Type, Level: s.Level}
	}
	sc.Seccomp = seccompProfile(e.seccomp, seccompRoot)
	sc.Apparmor = appArmorProfile(e.appArmor)
	// procMount Default means the runtime's masked and read-only paths,
	// which it applies when none are given; Unmasked needs a user
	// namespace, which checkPodSecurity has refused (hostUsers).
	return sc
}

// sandboxSecurityContext is what of the pod's securityContext applies to
// its sandbox, as the kubelet sets it: the namespaces, privileged if any
// container is, the pod's user, group and supplemental groups (fsGroup
// included), its SELinux options and its seccomp profile, so that the
// pause process runs no freer than the pod asked for.
func sandboxSecurityContext(pod *corev1.Pod, seccompRoot string) *runtimeapi.LinuxSandboxSecurityContext {
	sc := &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: namespaceOptions(pod), Privileged: anyPrivileged(pod)}
	psc := pod.Spec.SecurityContext
	if psc == nil {
		sc.Seccomp = seccompProfile(nil, seccompRoot)
		return sc
	}
	if psc.RunAsUser != nil {
		sc.RunAsUser = &runtimeapi.Int64Value{Value: *psc.RunAsUser}
	}
	// The runtime refuses a group without a user, and pause has no user
	// of its own to pair it with: a group alone leaves pause as root.
	if psc.RunAsGroup != nil && psc.RunAsUser != nil {
		sc.RunAsGroup = &runtimeapi.Int64Value{Value: *psc.RunAsGroup}
	}
	if psc.FSGroup != nil {
		sc.SupplementalGroups = append(sc.SupplementalGroups, *psc.FSGroup)
	}
	sc.SupplementalGroups = append(sc.SupplementalGroups, psc.SupplementalGroups...)
	if s := psc.SELinuxOptions; s != nil && *s != (corev1.SELinuxOptions{}) {
		sc.SelinuxOptions = &runtimeapi.SELinuxOption{User: s.User, Role: s.Role, Type: s.Type, Level: s.Level}
	}
	sc.Seccomp = seccompProfile(psc.SeccompProfile, seccompRoot)
	return sc
}

// seccompProfile maps the effective profile; none is Unconfined, the
// kubelet's default when its SeccompDefault is off.
func seccompProfile(p *corev1.SeccompProfile, root string) *runtimeapi.SecurityProfile {
	if p == nil {
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
	}
	switch p.Type {
	case corev1.SeccompProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
	case corev1.SeccompProfileTypeLocalhost:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: localhostSeccompPath(root, p)}
	}
	return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
}

// appArmorProfile maps the effective profile; none leaves the choice to
// the runtime (its default profile where AppArmor is on), as the kubelet
// does. A Localhost profile is named, not a path: the kernel has it loaded.
func appArmorProfile(p *corev1.AppArmorProfile) *runtimeapi.SecurityProfile {
	if p == nil {
		return nil
	}
	switch p.Type {
	case corev1.AppArmorProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
	case corev1.AppArmorProfileTypeLocalhost:
		ref := ""
		if p.LocalhostProfile != nil {
			ref = *p.LocalhostProfile
		}
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: ref}
	}
	return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
}

// createSecurityError names the field when the runtime refuses a container
// for an AppArmor profile it cannot apply (containerd with AppArmor turned
// off in its config says only "apparmor is not supported").
func createSecurityError(pod *corev1.Pod, c *corev1.Container, err error) error {
	e := effective(pod, c)
	if e.appArmor != nil && strings.Contains(strings.ToLower(err.Error()), "apparmor") {
		return fmt.Errorf("%w: %w", &SecurityError{Container: c.Name, Field: e.appArmorFrom + ".type",
			Reason: fmt.Sprintf("is %s, but the container runtime cannot apply it", e.appArmor.Type)}, err)
	}
	return err
}
