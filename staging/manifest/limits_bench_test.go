package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

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

// largePodListJSON is largePodList's pods as a JSON PodList of at most
// size bytes.
func largePodListJSON(tb testing.TB, size int) []byte {
	tb.Helper()
	b := []byte(`{"apiVersion":"v1","kind":"PodList","items":[`)
	var item bytes.Buffer
	for i := 0; ; i++ {
		item.Reset()
		item.WriteString("apiVersion: v1\nkind: PodList\nitems:\n")
		writeLargePod(&item, i)
		pods, err := DecodeManifest(item.Bytes())
		if err != nil {
			tb.Fatal(err)
		}
		j, err := json.Marshal(pods[0])
		if err != nil {
			tb.Fatal(err)
		}
		if len(b)+len(j)+3 > size {
			return append(b, "]}"...)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, j...)
	}
}

// denseYAML is a legal manifest just under size bytes made of as many
// values as YAML allows: a container's args, one letter a line.
func denseYAML(size int) []byte {
	head := "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  - name: c\n    image: i\n    args:\n"
	n, _, _ := yamlNodeBound([]byte(head))
	entries := min((size-len(head))/8, (maxYAMLNodes-n)/2)
	body := head + strings.Repeat("    - a\n", entries)
	if pad := size - len(body) - 3; pad > 0 {
		body += "# " + strings.Repeat("x", pad) + "\n" // a comment holds no value
	}
	return []byte(body)
}

// BenchmarkParseManifestAtLimit decodes, defaults and validates a legal
// manifest just under MaxManifestBytes: control plane pods made large, as
// YAML and as JSON, and the YAML of the most values a manifest may hold
// (yaml-dense). Besides ns/op
// and B/op (every byte allocated, the peak heap is less) it reports the CPU
// time per manifest, which a machine shared with other work inflates less
// than the wall-clock time.
func BenchmarkParseManifestAtLimit(b *testing.B) {
	opts := ParseOptions{NodeName: testNode, Source: podtypes.FileSource, Origin: "/m/large"}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"yaml", largePodList(MaxManifestBytes)},
		{"json", largePodListJSON(b, MaxManifestBytes)},
		{"yaml-dense", denseYAML(MaxManifestBytes)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.data)))
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				if _, err := ParseManifest(tc.data, opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
