package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func withPodSC(sc corev1.PodSecurityContext) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.SecurityContext = &sc }
}

func withSC(sc corev1.SecurityContext) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext = &sc }
}

var (
	podNamespaces = &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}
	unconfined    = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
)

// Every securityContext field reaches the CRI config, with the pod's
// values as defaults and the kubelet's defaults where neither says.
func TestSecurityContextMapping(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  []func(*corev1.Pod)
		img  imageUser
		want *runtimeapi.LinuxContainerSecurityContext
	}{
		{name: "nothing set: seccomp Unconfined, no_new_privs off, the image's user",
			want: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: podNamespaces, Seccomp: unconfined}},
		{name: "the pod's users and groups; fsGroup joins the groups",
			pod: []func(*corev1.Pod){withPodSC(corev1.PodSecurityContext{RunAsUser: ptr(int64(1000)), RunAsGroup: ptr(int64(2000)),
				SupplementalGroups: []int64{3000, 3001}, FSGroup: ptr(int64(4000))})},
			want: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: podNamespaces, Seccomp: unconfined,
				RunAsUser: &runtimeapi.Int64Value{Value: 1000}, RunAsGroup: &runtimeapi.Int64Value{Value: 2000},
				SupplementalGroups: []int64{4000, 3000, 3001}}},
		{name: "the container's values win over the pod's",
			pod: []func(*corev1.Pod){
				withPodSC(corev1.PodSecurityContext{RunAsUser: ptr(int64(1000)), RunAsGroup: ptr(int64(2000)),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					SELinuxOptions: &corev1.SELinuxOptions{Level: "s0:c1"}}),
				withSC(corev1.SecurityContext{RunAsUser: ptr(int64(1001)), RunAsGroup: ptr(int64(2001)),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined},
					SELinuxOptions: &corev1.SELinuxOptions{Type: "spc_t"}})},
			want: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: podNamespaces, Seccomp: unconfined,
				RunAsUser: &runtimeapi.Int64Value{Value: 1001}, RunAsGroup: &runtimeapi.Int64Value{Value: 2001},
				SelinuxOptions: &runtimeapi.SELinuxOption{Type: "spc_t"}}},
		{name: "the pod's seccomp profile applies to its containers",
			pod: []func(*corev1.Pod){withPodSC(corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}})},
			want: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: podNamespaces,
				Seccomp: &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}}},
		{name: "Localhost seccomp: a path below the profile root",
			pod: []func(*corev1.Pod){withSC(corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{
				Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr("profiles/audit.json")}})},
			want: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: podNamespaces,
				Seccomp: &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: "/seccomp/profiles/audit.json"}}},
		{name: "privileged, read-only root, capabilities",
			pod: []func(*corev1.Pod){withSC(corev1.SecurityContext{Privileged: ptr(true), ReadOnlyRootFilesystem: ptr(true),
				Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}, Drop: []corev1.Capability{"ALL"}}})},
			want: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: podNamespaces, Seccomp: unconfined,
				Privileged: true, ReadonlyRootfs: true,
				Capabilities: &runtimeapi.Capability{AddCapabilities: []string{"NET_ADMIN"}, DropCapabilities: []string{"ALL"}}}},
		{name: "allowPrivilegeEscalation false: no_new_privs",
			pod:  []func(*corev1.Pod){withSC(corev1.SecurityContext{AllowPrivilegeEscalation: ptr(false)})},
			want: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: podNamespaces, Seccomp: unconfined, NoNewPrivs: true}},
		{name: "allowPrivilegeEscalation true: no no_new_privs",
			pod:  []func(*corev1.Pod){withSC(corev1.SecurityContext{AllowPrivilegeEscalation: ptr(true)})},
			want: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: podNamespaces, Seccomp: unconfined}},
		{name: "AppArmor profiles",
			pod: []func(*corev1.Pod){withPodSC(corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{
				Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr("k8s-deny-write")}})},
			want: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: podNamespaces, Seccomp: unconfined,
				Apparmor: &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: "k8s-deny-write"}}},
		{name: "AppArmor Unconfined",
			pod:  []func(*corev1.Pod){withSC(corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}})},
			want: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: podNamespaces, Seccomp: unconfined, Apparmor: unconfined}},
		{name: "runAsGroup alone: the image's numeric user with it",
			pod: []func(*corev1.Pod){withSC(corev1.SecurityContext{RunAsGroup: ptr(int64(5))})}, img: imageUser{uid: ptr(int64(7))},
			want: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: podNamespaces, Seccomp: unconfined,
				RunAsUser: &runtimeapi.Int64Value{Value: 7}, RunAsGroup: &runtimeapi.Int64Value{Value: 5}}},
		{name: "runAsGroup alone: the image's named user with it",
			pod: []func(*corev1.Pod){withSC(corev1.SecurityContext{RunAsGroup: ptr(int64(5))})}, img: imageUser{username: "www"},
			want: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: podNamespaces, Seccomp: unconfined,
				RunAsUsername: "www", RunAsGroup: &runtimeapi.Int64Value{Value: 5}}},
		{name: "runAsGroup alone, an image without a user: root with it",
			pod: []func(*corev1.Pod){withSC(corev1.SecurityContext{RunAsGroup: ptr(int64(5))})},
			want: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: podNamespaces, Seccomp: unconfined,
				RunAsUser: &runtimeapi.Int64Value{Value: 0}, RunAsGroup: &runtimeapi.Int64Value{Value: 5}}},
		{name: "host namespaces",
			pod: []func(*corev1.Pod){func(p *corev1.Pod) { p.Spec.HostPID, p.Spec.HostIPC = true, true }},
			want: &runtimeapi.LinuxContainerSecurityContext{Seccomp: unconfined,
				NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_NODE, Ipc: runtimeapi.NamespaceMode_NODE}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod(tc.pod...)
			got := securityContext(pod, &pod.Spec.Containers[0], tc.img, "/seccomp")
			if diff := cmp.Diff(tc.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// What the node cannot honour is refused, naming the container and the
// field; what it can is let through.
func TestCheckPodSecurity(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "ok.json"), []byte(`{"defaultAction":"SCMP_ACT_ALLOW"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	localhost := func(name string) *corev1.SeccompProfile {
		return &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: &name}
	}
	strict := corev1.SupplementalGroupsPolicyStrict
	merge := corev1.SupplementalGroupsPolicyMerge
	for _, tc := range []struct {
		name string
		host hostSecurity
		pod  []func(*corev1.Pod)
		want string // "" for admitted
	}{
		{name: "nothing set"},
		{name: "hostUsers false", pod: []func(*corev1.Pod){func(p *corev1.Pod) { p.Spec.HostUsers = ptr(false) }},
			want: `container "app": spec.hostUsers is false, but this agent does not run pods in user namespaces`},
		{name: "hostUsers true", pod: []func(*corev1.Pod){func(p *corev1.Pod) { p.Spec.HostUsers = ptr(true) }}},
		{name: "os windows", pod: []func(*corev1.Pod){func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: corev1.Windows} }},
			want: `spec.os.name is "windows", but this node runs Linux containers`},
		{name: "pod windowsOptions", pod: []func(*corev1.Pod){withPodSC(corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{RunAsUserName: ptr("x")}})},
			want: `container "app": spec.securityContext.windowsOptions is set, but this node runs Linux containers`},
		{name: "container windowsOptions", pod: []func(*corev1.Pod){withSC(corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: ptr(true)}})},
			want: `container "app": securityContext.windowsOptions is set`},
		{name: "supplementalGroupsPolicy Strict", pod: []func(*corev1.Pod){withPodSC(corev1.PodSecurityContext{SupplementalGroupsPolicy: &strict})},
			want: `spec.securityContext.supplementalGroupsPolicy is Strict, but the container runtime does not support it`},
		{name: "supplementalGroupsPolicy Merge", pod: []func(*corev1.Pod){withPodSC(corev1.PodSecurityContext{SupplementalGroupsPolicy: &merge})}},
		// As the kubelet: nothing to label, nothing refused.
		{name: "seLinuxOptions, SELinux off", pod: []func(*corev1.Pod){withPodSC(corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Level: "s0:c1,c2"}})}},
		{name: "seLinuxOptions, SELinux on", host: hostSecurity{seLinux: true},
			pod: []func(*corev1.Pod){withSC(corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: "spc_t"}})}},
		{name: "empty seLinuxOptions mean nothing", pod: []func(*corev1.Pod){withSC(corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{}})}},
		{name: "AppArmor RuntimeDefault, AppArmor off",
			pod:  []func(*corev1.Pod){withSC(corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}})},
			want: `container "app": securityContext.appArmorProfile.type is RuntimeDefault, but AppArmor is not enabled on this node`},
		{name: "AppArmor Localhost from the pod, AppArmor off",
			pod:  []func(*corev1.Pod){withPodSC(corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr("p")}})},
			want: `spec.securityContext.appArmorProfile.type is Localhost, but AppArmor is not enabled`},
		{name: "AppArmor Unconfined, AppArmor off",
			pod: []func(*corev1.Pod){withSC(corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}})}},
		{name: "AppArmor RuntimeDefault, AppArmor on", host: hostSecurity{appArmor: true},
			pod: []func(*corev1.Pod){withSC(corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}})}},
		{name: "Localhost seccomp present", pod: []func(*corev1.Pod){withSC(corev1.SecurityContext{SeccompProfile: localhost("ok.json")})}},
		{name: "Localhost seccomp missing", pod: []func(*corev1.Pod){withPodSC(corev1.PodSecurityContext{SeccompProfile: localhost("missing.json")})},
			want: `container "app": spec.securityContext.seccompProfile.localhostProfile names ` + filepath.Join(root, "missing.json") + `, which cannot be read`},
		{name: "Localhost seccomp a directory", pod: []func(*corev1.Pod){withSC(corev1.SecurityContext{SeccompProfile: localhost("dir")})},
			want: `securityContext.seccompProfile.localhostProfile names ` + filepath.Join(root, "dir") + `, which is not a regular file`},
		{name: "an init container's field", pod: []func(*corev1.Pod){withInit("setup"), func(p *corev1.Pod) {
			p.Spec.InitContainers[0].SecurityContext = &corev1.SecurityContext{SeccompProfile: localhost("nope.json")}
		}}, want: `container "setup": securityContext.seccompProfile.localhostProfile`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.rt.opts.SeccompProfileRoot = root
			w.rt.host = tc.host
			err := w.rt.checkPodSecurity(newPod(tc.pod...))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			case tc.want != "" && !errors.Is(err, ErrSecurityContext):
				t.Errorf("error %v does not match ErrSecurityContext", err)
			}
		})
	}
}

// runAsNonRoot refuses a container whose user is or may be root, as the
// kubelet does.
func TestImageUserRefusal(t *testing.T) {
	nonRoot := func(p *corev1.Pod) { p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr(true)} }
	for _, tc := range []struct {
		name string
		pod  []func(*corev1.Pod)
		img  imageUser
		want string
	}{
		{name: "not asked", img: imageUser{uid: ptr(int64(0))}},
		{name: "false", pod: []func(*corev1.Pod){withSC(corev1.SecurityContext{RunAsNonRoot: ptr(false)})}},
		{name: "runAsUser 0", pod: []func(*corev1.Pod){withSC(corev1.SecurityContext{RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(0))})},
			img: imageUser{uid: ptr(int64(1000))}, want: `container "app": securityContext.runAsNonRoot is true but securityContext.runAsUser is 0 (root)`},
		{name: "the pod's runAsUser 0", pod: []func(*corev1.Pod){nonRoot, func(p *corev1.Pod) { p.Spec.SecurityContext.RunAsUser = ptr(int64(0)) }},
			want: `spec.securityContext.runAsNonRoot is true but spec.securityContext.runAsUser is 0 (root)`},
		{name: "runAsUser non-zero, root image", pod: []func(*corev1.Pod){nonRoot, withSC(corev1.SecurityContext{RunAsUser: ptr(int64(1000))})},
			img: imageUser{uid: ptr(int64(0))}},
		{name: "image uid 0", pod: []func(*corev1.Pod){nonRoot}, img: imageUser{uid: ptr(int64(0))},
			want: `container "app": spec.securityContext.runAsNonRoot is true but the image runs as root (uid 0)`},
		{name: "image without user", pod: []func(*corev1.Pod){withSC(corev1.SecurityContext{RunAsNonRoot: ptr(true)})},
			want: `container "app": securityContext.runAsNonRoot is true but the image runs as root (it names no user)`},
		{name: "image uid 1000", pod: []func(*corev1.Pod){nonRoot}, img: imageUser{uid: ptr(int64(1000))}},
		{name: "image named user", pod: []func(*corev1.Pod){nonRoot}, img: imageUser{username: "nobody"},
			want: `runs as the non-numeric user "nobody", which cannot be verified to be non-root`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod(tc.pod...)
			err := imageUserRefusal(pod, &pod.Spec.Containers[0], tc.img)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrSecurityContext)):
				t.Errorf("error = %v, want an ErrSecurityContext containing %q", err, tc.want)
			}
		})
	}
}

// Through SyncPod: a refusal creates nothing, and the status reason is the
// kubelet's CreateContainerConfigError with the refusal as message.
func TestSyncPodRefusesSecurity(t *testing.T) {
	t.Run("node cannot honour: no sandbox", func(t *testing.T) {
		w := newWorld(t)
		pod := newPod(withSC(corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}}))
		_, err := w.sync(pod, nil)
		if !errors.Is(err, ErrSecurityContext) || WaitingReason(err) != "CreateContainerConfigError" {
			t.Fatalf("SyncPod error = %v (reason %q), want a CreateContainerConfigError", err, WaitingReason(err))
		}
		if calls := w.calls(); len(calls) != 0 {
			t.Errorf("CRI calls %v, want none", calls)
		}
	})
	t.Run("runAsNonRoot with a root image: no container", func(t *testing.T) {
		w := newWorld(t)
		pod := newPod(withSC(corev1.SecurityContext{RunAsNonRoot: ptr(true)}))
		res, err := w.sync(pod, nil)
		if !errors.Is(err, ErrSecurityContext) {
			t.Fatalf("SyncPod error = %v, want ErrSecurityContext", err)
		}
		if got := err.Error(); strings.Count(got, `container "app"`) != 1 {
			t.Errorf("error %q names the container other than once", got)
		}
		var failed *Action
		for i := range res.Actions {
			if res.Actions[i].Kind == ActionStartContainer {
				failed = &res.Actions[i]
			}
		}
		if failed == nil || WaitingReason(failed.Err) != "CreateContainerConfigError" ||
			failed.Err.Error() != `container "app": securityContext.runAsNonRoot is true but the image runs as root (it names no user)` {
			t.Errorf("start action %+v, want a CreateContainerConfigError naming the field", failed)
		}
		for _, c := range w.calls() {
			if c == "CreateContainer" {
				t.Error("a container was created")
			}
		}
	})
	t.Run("AppArmor on in the kernel, off in the runtime: the field named", func(t *testing.T) {
		w := newWorld(t)
		w.rt.host.appArmor = true
		w.cri.InjectError("CreateContainer", errors.New("failed to generate apparmor spec opts: apparmor is not supported"))
		pod := newPod(withPodSC(corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}}))
		_, err := w.sync(pod, nil)
		want := `container "app": spec.securityContext.appArmorProfile.type is RuntimeDefault, but the container runtime cannot apply it`
		if !errors.Is(err, ErrSecurityContext) || !strings.Contains(err.Error(), want) || WaitingReason(err) != "CreateContainerConfigError" {
			t.Errorf("SyncPod error = %v, want a CreateContainerConfigError containing %q", err, want)
		}
	})
	t.Run("runAsNonRoot with a non-root image: started", func(t *testing.T) {
		w := newWorld(t)
		w.images.Lock()
		w.images.Images["busybox:1"].Uid = &runtimeapi.Int64Value{Value: 65534}
		w.images.Unlock()
		pod := newPod(withSC(corev1.SecurityContext{RunAsNonRoot: ptr(true)}))
		w.mustSync(pod)
		if sc := w.lastContainerConfig().GetLinux().GetSecurityContext(); sc.GetRunAsUser() != nil {
			t.Errorf("RunAsUser = %v, want unset: the runtime applies the image's user", sc.GetRunAsUser())
		}
	})
}

// The sandbox gets what of the pod's securityContext the kubelet gives it:
// the pause process runs as the pod's user, in its groups, under its
// seccomp profile, and privileged only if a container is.
func TestSandboxSecurityContext(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  []func(*corev1.Pod)
		want *runtimeapi.LinuxSandboxSecurityContext
	}{
		{name: "nothing set: Unconfined, as the containers",
			want: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: podNamespaces, Seccomp: unconfined}},
		{name: "the pod's user, groups, fsGroup, SELinux options and seccomp profile",
			pod: []func(*corev1.Pod){withPodSC(corev1.PodSecurityContext{RunAsUser: ptr(int64(1000)), RunAsGroup: ptr(int64(2000)),
				SupplementalGroups: []int64{3000}, FSGroup: ptr(int64(4000)),
				SELinuxOptions: &corev1.SELinuxOptions{Level: "s0:c1"},
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}})},
			want: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: podNamespaces,
				RunAsUser: &runtimeapi.Int64Value{Value: 1000}, RunAsGroup: &runtimeapi.Int64Value{Value: 2000},
				SupplementalGroups: []int64{4000, 3000}, SelinuxOptions: &runtimeapi.SELinuxOption{Level: "s0:c1"},
				Seccomp: &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}}},
		{name: "a group without a user is the containers' only: the runtime refuses it for pause",
			pod:  []func(*corev1.Pod){withPodSC(corev1.PodSecurityContext{RunAsGroup: ptr(int64(2000))})},
			want: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: podNamespaces, Seccomp: unconfined}},
		{name: "a container's own values stay the container's",
			pod: []func(*corev1.Pod){withSC(corev1.SecurityContext{RunAsUser: ptr(int64(1001)),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}})},
			want: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: podNamespaces, Seccomp: unconfined}},
		{name: "privileged if any container is",
			pod:  []func(*corev1.Pod){withSC(corev1.SecurityContext{Privileged: ptr(true)})},
			want: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: podNamespaces, Seccomp: unconfined, Privileged: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod(tc.pod...)
			got := sandboxSecurityContext(pod, "/var/lib/nodeagent/seccomp")
			if diff := cmp.Diff(tc.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("sandbox security context (-want +got):\n%s", diff)
			}
		})
	}
}
