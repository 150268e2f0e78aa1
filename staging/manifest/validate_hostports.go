package manifest

import (
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// validateHostPorts refuses a pod whose containers ask twice for one host
// port (podtypes.HostPort.Conflicts says when two requests collide): only
// one of them could bind it. Conflicts between pods are the agent's to
// refuse, when it admits a pod.
func validateHostPorts(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	type seen struct {
		port podtypes.HostPort
		path *field.Path
	}
	var errs field.ErrorList
	var all []seen
	for _, list := range []struct {
		name       string
		containers []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i, c := range list.containers {
			for j, port := range c.Ports {
				if port.HostPort == 0 {
					continue
				}
				pp := p.Child(list.name).Index(i).Child("ports").Index(j)
				if port.HostIP != "" && net.ParseIP(port.HostIP) == nil {
					errs = append(errs, field.Invalid(pp.Child("hostIP"), port.HostIP, "must be an IP address"))
					continue
				}
				// The protocol is defaulted by now.
				hp := podtypes.HostPort{Container: c.Name, Port: port.HostPort, Protocol: port.Protocol, IP: port.HostIP}
				for _, s := range all {
					if s.port.Conflicts(hp) {
						errs = append(errs, field.Invalid(pp.Child("hostPort"), port.HostPort,
							fmt.Sprintf("container %q asks for host port %s, which container %q (%s) already asks for", c.Name, hp, s.port.Container, s.path)))
						break
					}
				}
				all = append(all, seen{port: hp, path: pp})
			}
		}
	}
	return errs
}
