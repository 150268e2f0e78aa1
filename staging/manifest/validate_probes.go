package manifest

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

var probeSchemes = []string{string(corev1.URISchemeHTTP), string(corev1.URISchemeHTTPS)}

// validateProbes checks a container's probes, after defaulting, as the
// apiserver does, and refuses what could not work on the node: a named
// port the container does not declare. An init container that is not a
// sidecar may not have probes.
func validateProbes(c *corev1.Container, p *field.Path, init bool) field.ErrorList {
	var errs field.ErrorList
	sidecar := podtypes.IsSidecar(c)
	for _, pr := range []struct {
		name       string
		probe      *corev1.Probe
		oneSuccess bool
	}{
		{"livenessProbe", c.LivenessProbe, true},
		{"readinessProbe", c.ReadinessProbe, false},
		{"startupProbe", c.StartupProbe, true},
	} {
		if pr.probe == nil {
			continue
		}
		pp := p.Child(pr.name)
		if init && !sidecar {
			errs = append(errs, field.Forbidden(pp, "an init container may have probes only as a sidecar (restartPolicy: Always)"))
			continue
		}
		errs = append(errs, validateProbe(pr.probe, pp, c.Ports)...)
		if pr.oneSuccess && pr.probe.SuccessThreshold != 1 {
			errs = append(errs, field.Invalid(pp.Child("successThreshold"), pr.probe.SuccessThreshold, "must be 1"))
		}
		if g := pr.probe.TerminationGracePeriodSeconds; g != nil {
			switch {
			case pr.name == "readinessProbe":
				errs = append(errs, field.Invalid(pp.Child("terminationGracePeriodSeconds"), *g, "must not be set for a readiness probe"))
			case *g <= 0:
				errs = append(errs, field.Invalid(pp.Child("terminationGracePeriodSeconds"), *g, "must be greater than 0"))
			}
		}
	}
	return errs
}

func validateProbe(pr *corev1.Probe, p *field.Path, ports []corev1.ContainerPort) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name  string
		value int32
		min   int32
	}{
		{"initialDelaySeconds", pr.InitialDelaySeconds, 0}, {"timeoutSeconds", pr.TimeoutSeconds, 1},
		{"periodSeconds", pr.PeriodSeconds, 1}, {"successThreshold", pr.SuccessThreshold, 1},
		{"failureThreshold", pr.FailureThreshold, 1},
	} {
		if f.value < f.min {
			errs = append(errs, field.Invalid(p.Child(f.name), f.value, "must be at least "+strconv.Itoa(int(f.min))))
		}
	}
	handlers := 0
	h := &pr.ProbeHandler
	if h.Exec != nil {
		handlers++
		if len(h.Exec.Command) == 0 {
			errs = append(errs, field.Required(p.Child("exec", "command"), "an exec probe runs a command"))
		}
	}
	if h.HTTPGet != nil {
		handlers++
		hp := p.Child("httpGet")
		errs = append(errs, validateProbePort(h.HTTPGet.Port, hp.Child("port"), ports)...)
		if !contains(probeSchemes, string(h.HTTPGet.Scheme)) {
			errs = append(errs, field.NotSupported(hp.Child("scheme"), h.HTTPGet.Scheme, probeSchemes))
		}
		for i, hd := range h.HTTPGet.HTTPHeaders {
			for _, msg := range validation.IsHTTPHeaderName(hd.Name) {
				errs = append(errs, field.Invalid(hp.Child("httpHeaders").Index(i).Child("name"), hd.Name, msg))
			}
		}
	}
	if h.TCPSocket != nil {
		handlers++
		errs = append(errs, validateProbePort(h.TCPSocket.Port, p.Child("tcpSocket", "port"), ports)...)
	}
	if h.GRPC != nil {
		handlers++
		for _, msg := range validation.IsValidPortNum(int(h.GRPC.Port)) {
			errs = append(errs, field.Invalid(p.Child("grpc", "port"), h.GRPC.Port, msg))
		}
	}
	switch {
	case handlers == 0:
		errs = append(errs, field.Required(p, "a probe needs one of exec, httpGet, tcpSocket or grpc"))
	case handlers > 1:
		errs = append(errs, field.Forbidden(p, "a probe may have only one of exec, httpGet, tcpSocket or grpc"))
	}
	return errs
}

// validateProbePort accepts a port number, or the name of one of the
// container's ports: the probe would find no other.
func validateProbePort(port intstr.IntOrString, p *field.Path, ports []corev1.ContainerPort) field.ErrorList {
	if port.Type == intstr.Int {
		var errs field.ErrorList
		for _, msg := range validation.IsValidPortNum(int(port.IntVal)) {
			errs = append(errs, field.Invalid(p, port.IntVal, msg))
		}
		return errs
	}
	for _, cp := range ports {
		if cp.Name == port.StrVal {
			return nil
		}
	}
	return field.ErrorList{field.Invalid(p, port.StrVal, "must be a port number or the name of one of the container's ports")}
}
