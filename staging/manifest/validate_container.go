package manifest

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	pullPolicies             = []string{string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever)}
	protocols                = []string{string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP)}
	messagePolicy            = []string{string(corev1.TerminationMessageReadFile), string(corev1.TerminationMessageFallbackToLogsOnError)}
	containerRestartPolicies = []string{string(corev1.ContainerRestartPolicyAlways), string(corev1.ContainerRestartPolicyOnFailure),
		string(corev1.ContainerRestartPolicyNever)}
	exitCodeOperators = []string{string(corev1.ContainerRestartRuleOnExitCodesOpIn), string(corev1.ContainerRestartRuleOnExitCodesOpNotIn)}
)

// validateContainers checks one list of containers. names holds the
// container names seen so far across lists: init and app containers share
// one namespace.
func validateContainers(containers []corev1.Container, p *field.Path, volumes, names sets.Set[string], hostNetwork, init bool) field.ErrorList {
	var errs field.ErrorList
	for i := range containers {
		c := &containers[i]
		cp := p.Index(i)
		errs = append(errs, validateDNSLabel(c.Name, cp.Child("name"))...)
		if c.Name != "" && names.Has(c.Name) {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		}
		names.Insert(c.Name)
		switch {
		case c.Image == "":
			errs = append(errs, field.Required(cp.Child("image"), "a container needs an image"))
		case strings.TrimSpace(c.Image) != c.Image:
			errs = append(errs, field.Invalid(cp.Child("image"), c.Image, "must not have leading or trailing whitespace"))
		}
		if !contains(pullPolicies, string(c.ImagePullPolicy)) {
			errs = append(errs, field.NotSupported(cp.Child("imagePullPolicy"), c.ImagePullPolicy, pullPolicies))
		}
		if !contains(messagePolicy, string(c.TerminationMessagePolicy)) {
			errs = append(errs, field.NotSupported(cp.Child("terminationMessagePolicy"), c.TerminationMessagePolicy, messagePolicy))
		}
		errs = append(errs, validatePorts(c.Ports, cp.Child("ports"), hostNetwork)...)
		errs = append(errs, validateEnv(c.Env, cp.Child("env"))...)
		errs = append(errs, validateMounts(c.VolumeMounts, cp.Child("volumeMounts"), volumes)...)
		if len(c.VolumeDevices) > 0 {
			errs = append(errs, field.Forbidden(cp.Child("volumeDevices"), "raw block devices come from persistent volume claims, which static pods may not use"))
		}
		errs = append(errs, validateResources(&c.Resources, cp.Child("resources"))...)
		errs = append(errs, validateProbes(c, cp, init)...)
		errs = append(errs, validateRestart(c, cp)...)
	}
	return errs
}

// validateRestart checks a container's own restart policy and rules
// (ContainerRestartRules): the rules need a policy to fall back on, and
// only the action Restart on exit codes is known.
func validateRestart(c *corev1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.RestartPolicy != nil && !contains(containerRestartPolicies, string(*c.RestartPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), *c.RestartPolicy, containerRestartPolicies))
	}
	if len(c.RestartPolicyRules) > 0 && c.RestartPolicy == nil {
		errs = append(errs, field.Required(p.Child("restartPolicy"), "restartPolicyRules need the container's restartPolicy"))
	}
	for i, r := range c.RestartPolicyRules {
		rp := p.Child("restartPolicyRules").Index(i)
		if r.Action != corev1.ContainerRestartRuleActionRestart {
			errs = append(errs, field.NotSupported(rp.Child("action"), r.Action, []string{string(corev1.ContainerRestartRuleActionRestart)}))
		}
		switch {
		case r.ExitCodes == nil:
			errs = append(errs, field.Required(rp.Child("exitCodes"), "a rule matches on exit codes"))
		case !contains(exitCodeOperators, string(r.ExitCodes.Operator)):
			errs = append(errs, field.NotSupported(rp.Child("exitCodes", "operator"), r.ExitCodes.Operator, exitCodeOperators))
		}
	}
	return errs
}

func validatePorts(ports []corev1.ContainerPort, p *field.Path, hostNetwork bool) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		pp := p.Index(i)
		if port.Name != "" {
			for _, msg := range validation.IsValidPortName(port.Name) {
				errs = append(errs, field.Invalid(pp.Child("name"), port.Name, msg))
			}
			if names.Has(port.Name) {
				errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
			}
			names.Insert(port.Name)
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(pp.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				errs = append(errs, field.Invalid(pp.Child("containerPort"), port.ContainerPort, msg))
			}
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				errs = append(errs, field.Invalid(pp.Child("hostPort"), port.HostPort, msg))
			}
			if hostNetwork && port.HostPort != port.ContainerPort {
				errs = append(errs, field.Invalid(pp.Child("hostPort"), port.HostPort, "must equal containerPort on the host network"))
			}
		}
		if !contains(protocols, string(port.Protocol)) {
			errs = append(errs, field.NotSupported(pp.Child("protocol"), port.Protocol, protocols))
		}
	}
	return errs
}

func validateEnv(env []corev1.EnvVar, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range env {
		ep := p.Index(i)
		if e.Name == "" {
			errs = append(errs, field.Required(ep.Child("name"), ""))
		} else {
			for _, msg := range validation.IsEnvVarName(e.Name) {
				errs = append(errs, field.Invalid(ep.Child("name"), e.Name, msg))
			}
		}
		if e.Value != "" && e.ValueFrom != nil {
			errs = append(errs, field.Invalid(ep.Child("valueFrom"), "", "may not be set together with value"))
		}
	}
	return errs
}

func validateMounts(mounts []corev1.VolumeMount, p *field.Path, volumes sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	paths := sets.New[string]()
	for i, m := range mounts {
		mp := p.Index(i)
		if !volumes.Has(m.Name) {
			errs = append(errs, field.NotFound(mp.Child("name"), m.Name))
		}
		switch {
		case m.MountPath == "":
			errs = append(errs, field.Required(mp.Child("mountPath"), ""))
		case paths.Has(m.MountPath):
			errs = append(errs, field.Invalid(mp.Child("mountPath"), m.MountPath, "must be unique"))
		}
		paths.Insert(m.MountPath)
	}
	return errs
}

func validateResources(r *corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []struct {
		name string
		rl   corev1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for name, q := range list.rl {
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(p.Child(list.name).Key(string(name)), q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	for name, req := range r.Requests {
		if lim, ok := r.Limits[name]; ok && req.Cmp(lim) > 0 {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), req.String(),
				"must be less than or equal to the limit "+lim.String()))
		}
	}
	return errs
}
