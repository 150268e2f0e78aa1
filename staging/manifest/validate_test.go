package manifest

import (
	"errors"
	"strings"
	"testing"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// podWithSpec is a manifest of pod "web" whose spec is the given YAML.
func podWithSpec(spec string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n" + spec
}

func TestParseManifestValidation(t *testing.T) {
	const c = "  containers:\n  - name: main\n    image: nginx:1\n"
	tests := []struct {
		name     string
		manifest string
		field    string // every error must name this field
		detail   string
	}{
		{"missing name", strings.Replace(podManifest("web", "i"), "  name: web\n", "  labels: {a: b}\n", 1), "metadata.name", "Required value"},
		{"name not DNS-1123", podManifest("Web_Server", "i"), "metadata.name", "RFC 1123 subdomain"},
		{"name too long with the node suffix", podManifest(strings.Repeat("a", 250), "i"), "metadata.name", "253"},
		{"bad namespace", strings.Replace(podManifest("web", "i"), "  name: web\n", "  name: web\n  namespace: Kube_System\n", 1), "metadata.namespace", "RFC 1123 label"},
		{"bad label", strings.Replace(podManifest("web", "i"), "  name: web\n", "  name: web\n  labels: {\"a b\": c}\n", 1), "metadata.labels", "name part must consist"},
		{"mirror annotation", strings.Replace(podManifest("web", "i"), "  name: web\n", "  name: web\n  annotations: {kubernetes.io/config.mirror: x}\n", 1), "metadata.annotations[kubernetes.io/config.mirror]", "mirror pod"},
		{"deletion requested", strings.Replace(podManifest("web", "i"), "  name: web\n", "  name: web\n  deletionTimestamp: \"2026-01-01T00:00:00Z\"\n", 1), "metadata.deletionTimestamp", "cannot request its own deletion"},
		{"no containers", podWithSpec("  containers: []\n"), "spec.containers", "at least one container"},
		{"no spec", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n", "spec.containers", "at least one container"},
		{"duplicate containers", podWithSpec(c + "  - name: main\n    image: other:1\n"), "spec.containers[1].name", `Duplicate value: "main"`},
		{"init container shares a name", podWithSpec(c + "  initContainers:\n  - name: main\n    image: init:1\n"), "spec.containers[0].name", `Duplicate value: "main"`},
		{"container name not a label", podWithSpec("  containers:\n  - name: Main.1\n    image: i\n"), "spec.containers[0].name", "RFC 1123 label"},
		{"container without a name", podWithSpec("  containers:\n  - image: i\n"), "spec.containers[0].name", "Required value"},
		{"empty image", podWithSpec("  containers:\n  - name: main\n    image: \"\"\n"), "spec.containers[0].image", "needs an image"},
		{"image with spaces", podWithSpec("  containers:\n  - name: main\n    image: \" nginx\"\n"), "spec.containers[0].image", "whitespace"},
		{"port zero", podWithSpec(c + "    ports: [{containerPort: 0}]\n"), "spec.containers[0].ports[0].containerPort", "Required value"},
		{"port too large", podWithSpec(c + "    ports: [{containerPort: 70000}]\n"), "spec.containers[0].ports[0].containerPort", "between 1 and 65535"},
		{"host port too large", podWithSpec(c + "    ports: [{containerPort: 80, hostPort: 65536}]\n"), "spec.containers[0].ports[0].hostPort", "between 1 and 65535"},
		{"bad protocol", podWithSpec(c + "    ports: [{containerPort: 80, protocol: HTTP}]\n"), "spec.containers[0].ports[0].protocol", `"HTTP"`},
		{"duplicate port names", podWithSpec(c + "    ports: [{containerPort: 80, name: web}, {containerPort: 81, name: web}]\n"), "spec.containers[0].ports[1].name", "Duplicate"},
		{"bad port name", podWithSpec(c + "    ports: [{containerPort: 80, name: Web_Port}]\n"), "spec.containers[0].ports[0].name", "alpha-numeric"},
		{"host network port mismatch", podWithSpec("  hostNetwork: true\n" + c + "    ports: [{containerPort: 80, hostPort: 8080}]\n"), "spec.containers[0].ports[0].hostPort", "must equal containerPort"},
		{"resource claim of a container", podWithSpec(c + "    resources: {claims: [{name: gpu}]}\n"), "spec.containers[0].resources.claims", "resource claims"},
		{"raw block device", podWithSpec(c + "    volumeDevices: [{name: disk, devicePath: /dev/xvda}]\n"), "spec.containers[0].volumeDevices", "persistent volume claims"},
		{"bad restart policy", podWithSpec("  restartPolicy: Sometimes\n" + c), "spec.restartPolicy", `"Sometimes"`},
		{"bad dns policy", podWithSpec("  dnsPolicy: Google\n" + c), "spec.dnsPolicy", `"Google"`},
		{"dns policy None without config", podWithSpec("  dnsPolicy: None\n" + c), "spec.dnsConfig", "needs a dnsConfig"},
		{"dns policy None without a nameserver", podWithSpec("  dnsPolicy: None\n  dnsConfig: {searches: [a.example]}\n" + c), "spec.dnsConfig.nameservers", "at least one nameserver"},
		{"four nameservers", podWithSpec("  dnsConfig: {nameservers: [1.1.1.1, 1.0.0.1, 8.8.8.8, 8.8.4.4]}\n" + c), "spec.dnsConfig.nameservers", "must have at most 3 items"},
		{"a nameserver not an IP", podWithSpec("  dnsConfig: {nameservers: [dns.example]}\n" + c), "spec.dnsConfig.nameservers[0]", "must be a valid IP address"},
		{"a bad search domain", podWithSpec("  dnsConfig: {searches: [ok.example., Bad!]}\n" + c), "spec.dnsConfig.searches[1]", "RFC 1123 subdomain"},
		{"a search line too long", podWithSpec("  dnsConfig: {searches: [" + strings.TrimSuffix(strings.Repeat(strings.Repeat("a", 63)+".b, ", 32), ", ") + "]}\n" + c), "spec.dnsConfig.searches", "2048 characters"},
		{"a DNS option without a name", podWithSpec("  dnsConfig: {options: [{value: \"2\"}]}\n" + c), "spec.dnsConfig.options[0].name", "Required value"},
		{"a host alias IP", podWithSpec("  hostAliases: [{ip: 10.0.0.256, hostnames: [a]}]\n" + c), "spec.hostAliases[0].ip", "must be a valid IP address"},
		{"a host alias name", podWithSpec("  hostAliases: [{ip: 10.0.0.1, hostnames: [a, B_b]}]\n" + c), "spec.hostAliases[0].hostnames[1]", "RFC 1123 subdomain"},
		{"hostnameOverride with setHostnameAsFQDN", podWithSpec("  hostnameOverride: h\n  setHostnameAsFQDN: true\n" + c), "spec.hostnameOverride", "setHostnameAsFQDN"},
		{"hostnameOverride on the host network", podWithSpec("  hostnameOverride: h\n  hostNetwork: true\n" + c), "spec.hostnameOverride", "hostNetwork"},
		{"hostnameOverride not a subdomain", podWithSpec("  hostnameOverride: Not-RFC1123\n" + c), "spec.hostnameOverride", "RFC 1123 subdomain"},
		{"negative grace period", podWithSpec("  terminationGracePeriodSeconds: -1\n" + c), "spec.terminationGracePeriodSeconds", "must be >= 0"},
		{"zero active deadline", podWithSpec("  activeDeadlineSeconds: 0\n" + c), "spec.activeDeadlineSeconds", "must be > 0"},
		{"bad pull policy", podWithSpec(c + "    imagePullPolicy: Sometimes\n"), "spec.containers[0].imagePullPolicy", `"Sometimes"`},
		{"bad env name", podWithSpec(c + "    env: [{name: \"1=bad\", value: x}]\n"), "spec.containers[0].env[0].name", "valid environment variable name"},
		{"duplicate volumes", podWithSpec(c + "  volumes: [{name: data, emptyDir: {}}, {name: data, emptyDir: {}}]\n"), "spec.volumes[1].name", "Duplicate"},
		{"volume with two sources", podWithSpec(c + "  volumes: [{name: data, emptyDir: {}, hostPath: {path: /x}}]\n"), "spec.volumes[0]", "exactly one source, found 2"},
		{"relative host path", podWithSpec(c + "  volumes: [{name: data, hostPath: {path: var/x}}]\n"), "spec.volumes[0].hostPath.path", "absolute"},
		{"mount of an unknown volume", podWithSpec(c + "    volumeMounts: [{name: nope, mountPath: /x}]\n"), "spec.containers[0].volumeMounts[0].name", "Not found"},
		{"request above the limit", podWithSpec(c + "    resources: {limits: {cpu: 100m}, requests: {cpu: 200m}}\n"), "spec.containers[0].resources.requests[cpu]", "less than or equal to the limit"},
		{"negative request", podWithSpec(c + "    resources: {requests: {memory: -1Gi}}\n"), "spec.containers[0].resources.requests[memory]", "greater than or equal to 0"},
		{"probe without a handler", podWithSpec(c + "    readinessProbe: {periodSeconds: 2}\n"), "spec.containers[0].readinessProbe", "one of exec, httpGet"},
		{"probe with two handlers", podWithSpec(c + "    livenessProbe: {exec: {command: [x]}, tcpSocket: {port: 80}}\n"), "spec.containers[0].livenessProbe", "only one of"},
		{"liveness success threshold", podWithSpec(c + "    livenessProbe: {exec: {command: [x]}, successThreshold: 2}\n"), "spec.containers[0].livenessProbe.successThreshold", "must be 1"},
		{"probe named port not declared", podWithSpec(c + "    ports: [{containerPort: 80, name: web}]\n    readinessProbe: {httpGet: {port: admin}}\n"), "spec.containers[0].readinessProbe.httpGet.port", "name of one of the container's ports"},
		{"probe scheme", podWithSpec(c + "    readinessProbe: {httpGet: {port: 80, scheme: FTP}}\n"), "spec.containers[0].readinessProbe.httpGet.scheme", `"FTP"`},
		{"readiness grace period", podWithSpec(c + "    readinessProbe: {exec: {command: [x]}, terminationGracePeriodSeconds: 5}\n"), "spec.containers[0].readinessProbe.terminationGracePeriodSeconds", "readiness"},
		{"exec probe without a command", podWithSpec(c + "    startupProbe: {exec: {}}\n"), "spec.containers[0].startupProbe.exec.command", "runs a command"},
		{"grpc port", podWithSpec(c + "    livenessProbe: {grpc: {port: 0}}\n"), "spec.containers[0].livenessProbe.grpc.port", "between 1 and 65535"},
		{"probe of an init container", podWithSpec(c + "  initContainers:\n  - name: init\n    image: i\n    readinessProbe: {exec: {command: [x]}}\n"), "spec.initContainers[0].readinessProbe", "only as a sidecar"},
		{"bad container restart policy", podWithSpec(c + "    restartPolicy: Sometimes\n"), "spec.containers[0].restartPolicy", `"Sometimes"`},
		{"restart rules without a container policy", podWithSpec(c + "    restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [42]}}]\n"), "spec.containers[0].restartPolicy", "need the container's restartPolicy"},
		{"restart rule action", podWithSpec(c + "    restartPolicy: Never\n    restartPolicyRules: [{action: Retry, exitCodes: {operator: In, values: [42]}}]\n"), "spec.containers[0].restartPolicyRules[0].action", `"Retry"`},
		{"restart rule operator", podWithSpec(c + "    restartPolicy: Never\n    restartPolicyRules: [{action: Restart, exitCodes: {operator: Is, values: [42]}}]\n"), "spec.containers[0].restartPolicyRules[0].exitCodes.operator", `"Is"`},
		{"restart rule without exit codes", podWithSpec(c + "    restartPolicy: Never\n    restartPolicyRules: [{action: Restart}]\n"), "spec.containers[0].restartPolicyRules[0].exitCodes", "Required value"},
		{"ephemeral containers", podWithSpec(c + "  ephemeralContainers: [{name: dbg, image: busybox}]\n"), "spec.ephemeralContainers", "ephemeral"},
		{"image pull secret", podWithSpec("  imagePullSecrets: [{name: x}]\n" + c), "spec.imagePullSecrets", "may not reference secrets"},
		{"required secret env", podWithSpec(c + "    env: [{name: S, valueFrom: {secretKeyRef: {name: x, key: k}}}]\n"), "spec.containers[0].env[0].valueFrom.secretKeyRef", "mark the reference optional: true"},
		{"secret env optional: false", podWithSpec(c + "    env: [{name: S, valueFrom: {secretKeyRef: {name: x, key: k, optional: false}}}]\n"), "spec.containers[0].env[0].valueFrom.secretKeyRef", "may not depend on secrets"},
		{"required config map env in an init container", podWithSpec(c + "  initContainers: [{name: i, image: i, env: [{name: C, valueFrom: {configMapKeyRef: {name: x, key: k}}}]}]\n"), "spec.initContainers[0].env[0].valueFrom.configMapKeyRef", "mark the reference optional: true"},
		{"required secret envFrom", podWithSpec(c + "    envFrom: [{secretRef: {name: x}}]\n"), "spec.containers[0].envFrom[0].secretRef", "mark the reference optional: true"},
		{"optional secret env without a key", podWithSpec(c + "    env: [{name: S, valueFrom: {secretKeyRef: {name: x, optional: true}}}]\n"), "spec.containers[0].env[0].valueFrom.secretKeyRef.key", "Required value"},
		{"optional config map envFrom without a name", podWithSpec(c + "    envFrom: [{configMapRef: {optional: true}}]\n"), "spec.containers[0].envFrom[0].configMapRef.name", "Required value"},
		{"env with two sources", podWithSpec(c + "    env: [{name: S, valueFrom: {fieldRef: {fieldPath: metadata.name}, secretKeyRef: {name: x, key: k, optional: true}}}]\n"), "spec.containers[0].env[0].valueFrom", "more than one source"},
		{"envFrom with two sources", podWithSpec(c + "    envFrom: [{secretRef: {name: x, optional: true}, configMapRef: {name: cm, optional: true}}]\n"), "spec.containers[0].envFrom[0]", "more than one source"},
		{"secret volume", podWithSpec(c + "  volumes: [{name: s, secret: {secretName: x}}]\n"), "spec.volumes[0].secret", "may not reference secrets"},
		{"config map env", podWithSpec(c + "    envFrom: [{configMapRef: {name: x}}]\n"), "spec.containers[0].envFrom[0].configMapRef", "may not depend on config maps"},
		{"projected token", podWithSpec(c + "  volumes: [{name: t, projected: {sources: [{serviceAccountToken: {path: t}}]}}]\n"), "spec.volumes[0].projected.sources[0].serviceAccountToken", "service accounts"},
		{"claim", podWithSpec(c + "  volumes: [{name: d, persistentVolumeClaim: {claimName: x}}]\n"), "spec.volumes[0].persistentVolumeClaim", "persistent volume claims"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods, err := ParseManifest([]byte(tt.manifest), ParseOptions{NodeName: "node1", Source: podtypes.FileSource, Origin: "/m/web.yaml"})
			var me *ManifestError
			if !errors.As(err, &me) {
				t.Fatalf("ParseManifest = %d pods, %v; want a *ManifestError", len(pods), err)
			}
			if me.Reason != ReasonInvalid || !errors.Is(err, ErrInvalid) {
				t.Errorf("reason %s, want Invalid: %v", me.Reason, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "/m/web.yaml: pod is invalid: ") || !strings.Contains(msg, tt.field+": ") || !strings.Contains(msg, tt.detail) {
				t.Errorf("error %q\nwant it to name the file, the field %q and contain %q", msg, tt.field, tt.detail)
			}
		})
	}
}

func TestParseManifestAcceptsAFullPod(t *testing.T) {
	full := podWithSpec(`  hostNetwork: true
  priorityClassName: system-node-critical
  initContainers:
  - {name: setup, image: "busybox:1.36", command: [sh, -c, "true"]}
  containers:
  - name: main
    image: registry.local:5000/etcd:3.5
    ports: [{name: client, containerPort: 2379}, {containerPort: 2380, protocol: TCP}]
    env: [{name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]
    volumeMounts: [{name: data, mountPath: /var/lib/etcd}, {name: info, mountPath: /etc/podinfo}]
    resources: {requests: {cpu: 100m}, limits: {cpu: "1", memory: 1Gi}}
    livenessProbe: {httpGet: {port: 2381, path: /health}}
  - name: job
    image: busybox:1.36
    restartPolicy: Never
    restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [42]}}]
  volumes:
  - {name: data, hostPath: {path: /var/lib/etcd, type: DirectoryOrCreate}}
  - {name: info, downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}}
`)
	if _, err := ParseManifest([]byte(full), ParseOptions{NodeName: "node1", Source: podtypes.FileSource, Origin: "/m/etcd.yaml"}); err != nil {
		t.Fatalf("a full, valid pod was refused: %v", err)
	}
}

// Optional references and a service account name are accepted: the pod
// runs without them (and cannot be mirrored, which the agent reports).
func TestParseManifestAcceptsOptionalReferences(t *testing.T) {
	m := podWithSpec(`  serviceAccountName: app
  initContainers:
  - {name: setup, image: i, envFrom: [{configMapRef: {name: setup, optional: true}}]}
  containers:
  - name: main
    image: i
    env:
    - {name: TOKEN, valueFrom: {secretKeyRef: {name: token, key: t, optional: true}}}
    - {name: MODE, valueFrom: {configMapKeyRef: {name: app, key: mode, optional: true}}}
    envFrom: [{secretRef: {name: creds, optional: true}, prefix: CREDS_}]
`)
	pods, err := ParseManifest([]byte(m), ParseOptions{NodeName: "node1", Source: podtypes.FileSource, Origin: "/m/app.yaml"})
	if err != nil {
		t.Fatalf("a pod with optional references was refused: %v", err)
	}
	if got := pods[0].Spec.ServiceAccountName; got != "app" {
		t.Errorf("serviceAccountName = %q, want it kept", got)
	}
}
