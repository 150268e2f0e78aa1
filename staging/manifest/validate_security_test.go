package manifest

import (
	"errors"
	"strings"
	"testing"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// Each securityContext or host port mistake is refused naming its field.
func TestParseManifestRefusesSecurityAndPorts(t *testing.T) {
	const c = "  containers:\n  - name: main\n    image: nginx:1\n"
	sc := func(s string) string { return podWithSpec(c + "    securityContext: " + s + "\n") }
	psc := func(s string) string { return podWithSpec("  securityContext: " + s + "\n" + c) }
	tests := []struct {
		name     string
		manifest string
		field    string
		detail   string
	}{
		{"negative runAsUser", sc("{runAsUser: -1}"), "spec.containers[0].securityContext.runAsUser", "between 0 and 2147483647"},
		{"runAsGroup too large", psc("{runAsGroup: 2147483648}"), "spec.securityContext.runAsGroup", "between 0 and 2147483647"},
		{"negative fsGroup", psc("{fsGroup: -5}"), "spec.securityContext.fsGroup", "between 0 and 2147483647"},
		{"negative supplemental group", psc("{supplementalGroups: [1, -2]}"), "spec.securityContext.supplementalGroups[1]", "between 0"},
		{"bad groups policy", psc("{supplementalGroupsPolicy: Loose}"), "spec.securityContext.supplementalGroupsPolicy", `"Loose"`},
		{"bad fsGroup policy", psc("{fsGroupChangePolicy: Never}"), "spec.securityContext.fsGroupChangePolicy", `"Never"`},
		{"bad SELinux change policy", psc("{seLinuxChangePolicy: Sometimes}"), "spec.securityContext.seLinuxChangePolicy", `"Sometimes"`},
		{"bad procMount", sc("{procMount: Partial}"), "spec.containers[0].securityContext.procMount", `"Partial"`},
		{"Unmasked with host users", sc("{procMount: Unmasked}"), "spec.containers[0].securityContext.procMount", "needs spec.hostUsers false"},
		{"no_new_privs with privileged", sc("{allowPrivilegeEscalation: false, privileged: true}"), "spec.containers[0].securityContext.allowPrivilegeEscalation", "privileged true"},
		{"no_new_privs with SYS_ADMIN", sc("{allowPrivilegeEscalation: false, capabilities: {add: [NET_RAW, CAP_SYS_ADMIN]}}"), "spec.containers[0].securityContext.allowPrivilegeEscalation", "capabilities.add[1] CAP_SYS_ADMIN"},
		{"bad seccomp type", sc("{seccompProfile: {type: Strict}}"), "spec.containers[0].securityContext.seccompProfile.type", `"Strict"`},
		{"Localhost seccomp without a profile", psc("{seccompProfile: {type: Localhost}}"), "spec.securityContext.seccompProfile.localhostProfile", "Required value"},
		{"seccomp profile with another type", sc("{seccompProfile: {type: RuntimeDefault, localhostProfile: p.json}}"), "spec.containers[0].securityContext.seccompProfile.localhostProfile", "only be set with type Localhost"},
		{"seccomp profile leaving its directory", sc("{seccompProfile: {type: Localhost, localhostProfile: ../../etc/x.json}}"), "spec.containers[0].securityContext.seccompProfile.localhostProfile", "without '..'"},
		{"absolute seccomp profile", sc("{seccompProfile: {type: Localhost, localhostProfile: /etc/x.json}}"), "spec.containers[0].securityContext.seccompProfile.localhostProfile", "relative path"},
		{"bad AppArmor type", psc("{appArmorProfile: {type: Enforce}}"), "spec.securityContext.appArmorProfile.type", `"Enforce"`},
		{"Localhost AppArmor without a profile", sc("{appArmorProfile: {type: Localhost}}"), "spec.containers[0].securityContext.appArmorProfile.localhostProfile", "Required value"},
		{"init container's context", podWithSpec(c + "  initContainers:\n  - name: init\n    image: i\n    securityContext: {runAsUser: -1}\n"), "spec.initContainers[0].securityContext.runAsUser", "between 0"},
		{"sysctl not namespaced", psc("{sysctls: [{name: vm.overcommit_memory, value: '1'}]}"), "spec.securityContext.sysctls[0].name", "not namespaced"},
		{"net sysctl on the host network", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  hostNetwork: true\n  securityContext: {sysctls: [{name: net.ipv4.ip_forward, value: '1'}]}\n" + c, "spec.securityContext.sysctls[0].name", "(hostNetwork)"},
		{"ipc sysctl on the host IPC", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  hostIPC: true\n  securityContext: {sysctls: [{name: kernel.shm_rmid_forced, value: '1'}]}\n" + c, "spec.securityContext.sysctls[0].name", "(hostIPC)"},
		{"bad sysctl name", psc("{sysctls: [{name: 'net..x', value: '1'}]}"), "spec.securityContext.sysctls[0].name", "sysctl name"},
		{"duplicate sysctl", psc("{sysctls: [{name: kernel.shm_rmid_forced, value: '1'}, {name: kernel.shm_rmid_forced, value: '0'}]}"), "spec.securityContext.sysctls[1].name", "Duplicate"},
		{"one host port twice", podWithSpec(c + "    ports: [{containerPort: 80, hostPort: 8080}]\n  - name: side\n    image: i\n    ports: [{containerPort: 81, hostPort: 8080}]\n"),
			"spec.containers[1].ports[0].hostPort", `container "side" asks for host port 8080/TCP, which container "main" (spec.containers[0].ports[0]) already asks for`},
		{"every address against one", podWithSpec(c + "    ports: [{containerPort: 80, hostPort: 8080, hostIP: 127.0.0.1}, {containerPort: 81, hostPort: 8080}]\n"),
			"spec.containers[0].ports[1].hostPort", `host port 8080/TCP, which container "main" (spec.containers[0].ports[0]) already asks for`},
		{"bad host IP", podWithSpec(c + "    ports: [{containerPort: 80, hostPort: 8080, hostIP: localhost}]\n"), "spec.containers[0].ports[0].hostIP", "must be an IP address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods, err := ParseManifest([]byte(tt.manifest), ParseOptions{NodeName: "node1", Source: podtypes.FileSource, Origin: "/m/web.yaml"})
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseManifest = %d pods, %v; want an Invalid refusal", len(pods), err)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.field+": ") || !strings.Contains(msg, tt.detail) {
				t.Errorf("error %q\nwant it to name the field %q and contain %q", msg, tt.field, tt.detail)
			}
		})
	}
}

// A pod that uses every field well is taken.
func TestParseManifestAcceptsSecurityAndPorts(t *testing.T) {
	full := podWithSpec(`  securityContext:
    runAsUser: 1000
    runAsGroup: 1000
    runAsNonRoot: true
    fsGroup: 2000
    fsGroupChangePolicy: OnRootMismatch
    supplementalGroups: [3000]
    supplementalGroupsPolicy: Merge
    seccompProfile: {type: RuntimeDefault}
    appArmorProfile: {type: Unconfined}
    sysctls: [{name: net.ipv4.ip_local_port_range, value: "32768 60999"}, {name: kernel.shm_rmid_forced, value: "1"}]
  containers:
  - name: main
    image: nginx:1
    ports: [{containerPort: 80, hostPort: 8080, hostIP: 127.0.0.1}, {containerPort: 80, hostPort: 8080, hostIP: 127.0.0.2}, {containerPort: 53, hostPort: 8080, protocol: UDP}]
    securityContext:
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}
      procMount: Default
      seccompProfile: {type: Localhost, localhostProfile: profiles/main.json}
  - name: debug
    image: busybox:1
    securityContext: {privileged: true, allowPrivilegeEscalation: true, capabilities: {add: [SYS_ADMIN]}}
`)
	if _, err := ParseManifest([]byte(full), ParseOptions{NodeName: "node1", Source: podtypes.FileSource, Origin: "/m/web.yaml"}); err != nil {
		t.Fatalf("a valid pod was refused: %v", err)
	}
}
