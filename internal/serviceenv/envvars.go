package serviceenv

import (
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// hasClusterIP: headless Services (None) and those without an address
// (ExternalName) give no variables.
func hasClusterIP(s *corev1.Service) bool {
	return s.Spec.ClusterIP != "" && s.Spec.ClusterIP != corev1.ClusterIPNone
}

// envName is a Service or port name as a variable name: upper case, '-'
// as '_'.
func envName(name string) string {
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// addVars adds the variables of one Service to vars, as the kubelet names
// them:
//
//	<SVC>_SERVICE_HOST                 the cluster IP
//	<SVC>_SERVICE_PORT                 the first port
//	<SVC>_SERVICE_PORT_<PORTNAME>      each named port
//	<SVC>_PORT                         <proto>://<ip>:<first port>
//	<SVC>_PORT_<port>_<PROTO>          <proto>://<ip>:<port>, for each port,
//	                                   and its _PROTO, _PORT and _ADDR
func addVars(vars map[string]string, s *corev1.Service) {
	if !hasClusterIP(s) || len(s.Spec.Ports) == 0 {
		return
	}
	prefix, ip := envName(s.Name), s.Spec.ClusterIP
	vars[prefix+"_SERVICE_HOST"] = ip
	vars[prefix+"_SERVICE_PORT"] = strconv.Itoa(int(s.Spec.Ports[0].Port))
	for i := range s.Spec.Ports {
		p := &s.Spec.Ports[i]
		if p.Name != "" {
			vars[prefix+"_SERVICE_PORT_"+envName(p.Name)] = strconv.Itoa(int(p.Port))
		}
	}
	for i := range s.Spec.Ports {
		p := &s.Spec.Ports[i]
		proto := string(corev1.ProtocolTCP)
		if p.Protocol != "" {
			proto = string(p.Protocol)
		}
		port := strconv.Itoa(int(p.Port))
		url := strings.ToLower(proto) + "://" + net.JoinHostPort(ip, port)
		if i == 0 {
			vars[prefix+"_PORT"] = url
		}
		pp := prefix + "_PORT_" + port + "_" + strings.ToUpper(proto)
		vars[pp] = url
		vars[pp+"_PROTO"] = strings.ToLower(proto)
		vars[pp+"_PORT"] = port
		vars[pp+"_ADDR"] = ip
	}
}
