package config

import (
	"bytes"
	"fmt"
)

// The file source's tests read a large manifest beside small ones. This is
// a copy of staging/manifest's test generator (limits_bench_test.go),
// which a test of another module cannot import.

// largePodList is a valid PodList manifest of pods of about 12 KiB each
// (two containers with long command lines, 60 environment variables,
// ports, mounts, probes, resources; labels and annotations), as many as fit
// under size bytes. It is what a node's control plane manifests look like,
// made large.
func largePodList(size int) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: v1\nkind: PodList\nitems:\n")
	var pod bytes.Buffer
	for i := 0; ; i++ {
		pod.Reset()
		writeLargePod(&pod, i)
		if b.Len()+pod.Len() > size {
			return b.Bytes()
		}
		b.Write(pod.Bytes())
	}
}

func writeLargePod(b *bytes.Buffer, i int) {
	fmt.Fprintf(b, `- metadata:
    name: app-%d
    namespace: kube-system
    labels: {app: app-%d, tier: control-plane, component: app}
    annotations:
      example.com/description: "pod %d of a large manifest, padded to a realistic size with a long description line"
  spec:
    hostNetwork: true
    priorityClassName: system-node-critical
    volumes:
    - {name: data, hostPath: {path: /var/lib/app-%d, type: DirectoryOrCreate}}
    - {name: certs, hostPath: {path: /etc/kubernetes/pki, type: Directory}}
    - {name: scratch, emptyDir: {}}
    containers:
`, i, i, i, i)
	for c := range 2 {
		port := 10000 + 2*i + c
		fmt.Fprintf(b, `    - name: c%d
      image: registry.local/app:1.%d
      command:
      - /usr/local/bin/app
`, c, i)
		for a := range 40 {
			fmt.Fprintf(b, "      - --flag-number-%d=value-%d-%d\n", a, i, a)
		}
		b.WriteString("      env:\n")
		for e := range 60 {
			fmt.Fprintf(b, "      - {name: APP_SETTING_%d, value: \"setting-%d-of-container-%d\"}\n", e, e, c)
		}
		fmt.Fprintf(b, `      ports: [{containerPort: %d, name: http}]
      resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {memory: 256Mi}}
      livenessProbe: {httpGet: {port: %d, path: /healthz}, initialDelaySeconds: 10, periodSeconds: 10}
      readinessProbe: {httpGet: {port: %d, path: /readyz}}
      volumeMounts:
      - {name: data, mountPath: /var/lib/app}
      - {name: certs, mountPath: /etc/kubernetes/pki, readOnly: true}
      - {name: scratch, mountPath: /tmp}
`, port, port, port)
	}
}
