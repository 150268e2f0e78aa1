package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeagent/nodeagent/internal/localapi"
)

// CVE-2017-1002101: a container replaces the directory that another
// container of its pod mounts as a subPath with a symlink to a host
// directory. The other container's restart must be refused, with the
// volume, the subPath and the reason in the pod's timeline, and so must
// the new pod of the manifest re-applied. No container ever sees the host
// directory, and it is never mounted.
func TestBinarySubPathSymlinkCannotEscape(t *testing.T) {
	h := newAgent(t)
	host, vol, marks := t.TempDir(), t.TempDir(), t.TempDir()
	canary := filepath.Join(host, "canary")
	if err := os.WriteFile(canary, []byte("host secret"), 0o644); err != nil {
		t.Fatal(err)
	}

	planter := shContainer("planter", fmt.Sprintf(
		"while [ ! -e /marks/run-0 ]; do sleep 0.1; done; rm -rf /vol/sub; ln -s %s /vol/sub; touch /marks/planted; %s", host, sleepForever))
	planter.VolumeMounts = []corev1.VolumeMount{{Name: "vol", MountPath: "/vol"}, {Name: "marks", MountPath: "/marks"}}
	// Each run records what it sees at /mnt and its mounts, tries the
	// canary, and exits to be restarted. The planter plants its symlink
	// once the first run started.
	victim := shContainer("victim",
		"n=$(ls /marks | grep -c '^run-'); { ls -a /mnt; cat /proc/self/mountinfo; } > /marks/run-$n; "+
			"if [ -f /mnt/canary ]; then echo pwned > /mnt/canary; fi; sleep 1; exit 1")
	victim.VolumeMounts = []corev1.VolumeMount{{Name: "vol", MountPath: "/mnt", SubPath: "sub"}, {Name: "marks", MountPath: "/marks"}}
	pod := testPod("subpath", planter, victim)
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "vol", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: vol}}},
		{Name: "marks", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: marks}}},
	}
	h.writeManifest(pod)

	// The symlink is planted; the victim's next start is refused.
	waitExists(t, filepath.Join(marks, "planted"), 60*time.Second)
	first := h.waitPod("subpath", "running its planter", 10*time.Second, runningContainer("planter"))
	checkRefusal(t, h.waitRefusal(first.UID, "", 90*time.Second))
	if target, err := os.Readlink(filepath.Join(vol, "sub")); err != nil || target != host {
		t.Fatalf("vol/sub -> %q (%v); the planter did not plant its symlink", target, err)
	}
	runs, _ := filepath.Glob(filepath.Join(marks, "run-*"))
	t.Logf("the victim ran %d time(s)", len(runs))
	for _, run := range runs {
		data, err := os.ReadFile(run)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "canary") {
			t.Errorf("%s: the victim saw the host directory at /mnt:\n%s", filepath.Base(run), data)
		}
		if lines := mountsOf(string(data), host); len(lines) > 0 {
			t.Errorf("%s: the host directory is mounted in the victim:\n%s", filepath.Base(run), strings.Join(lines, "\n"))
		}
	}
	checkHostDir(t, canary, host)

	// Re-applied (changed, so a new pod): refused before any container.
	pod.Annotations = map[string]string{"attempt": "2"}
	h.writeManifest(pod)
	checkRefusal(t, h.waitRefusal("", first.UID, 60*time.Second))
	second := h.waitPod("subpath", "the new pod", 5*time.Second, func(p localapi.Pod) bool { return p.UID != first.UID })
	resp, err := h.cri.Runtime.ListContainers(context.Background(), &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		LabelSelector: map[string]string{"io.kubernetes.pod.uid": second.UID},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Containers) > 0 {
		t.Errorf("the refused pod has %d containers, want none", len(resp.Containers))
	}
	checkHostDir(t, canary, host)

	// Once the pods are gone, so are their subPath mounts.
	h.removeManifest("subpath")
	pods := filepath.Join(h.dir, "root", "pods")
	deadline := time.Now().Add(60 * time.Second)
	for len(mountsUnder(t, pods)) > 0 || len(h.sandboxes("subpath")) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("60s after the manifest was removed, mounts remain:\n%s", strings.Join(mountsUnder(t, pods), "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	checkHostDir(t, canary, host)
}

// waitExists waits until path exists.
func waitExists(t *testing.T, path string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %v", path, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitRefusal waits until the timeline of the pod called subpath, of UID
// uid or else of any UID but not, shows a sync error about a subPath, and
// returns it.
func (h *agentHarness) waitRefusal(uid, not string, timeout time.Duration) string {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		detail, err := h.client.Pod(context.Background(), "default", h.podName("subpath"))
		if err == nil && (uid == "" || detail.UID == uid) && detail.UID != not {
			for _, e := range detail.Timeline {
				if e.Kind == "error" && strings.Contains(e.Message, "subPath") {
					return e.Message
				}
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("no subPath refusal within %v\n%s", timeout, h.log(30))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func checkRefusal(t *testing.T, refusal string) {
	t.Helper()
	t.Logf("refused: %s", refusal)
	for _, want := range []string{`volume "vol"`, `subPath "sub"`, "outside the volume", `container "victim"`} {
		if !strings.Contains(refusal, want) {
			t.Errorf("the refusal %q does not say %s", refusal, want)
		}
	}
}

// mountsOf picks the mountinfo lines whose source root or mount point is
// dir or beneath it.
func mountsOf(mountinfo, dir string) []string {
	var out []string
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		for _, p := range f[3:5] {
			if p == dir || strings.HasPrefix(p, dir+"/") {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return mountsOf(string(data), dir)
}

// checkHostDir checks that the canary is unchanged and that nothing of
// the host directory is mounted in the host's mount namespace.
func checkHostDir(t *testing.T, canary, host string) {
	t.Helper()
	if got, err := os.ReadFile(canary); err != nil || string(got) != "host secret" {
		t.Errorf("canary = %q, %v; want it unchanged", got, err)
	}
	if lines := mountsUnder(t, host); len(lines) > 0 {
		t.Errorf("the host directory is mounted:\n%s", strings.Join(lines, "\n"))
	}
}
