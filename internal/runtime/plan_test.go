package runtime

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestComputePlan(t *testing.T) {
	pod := newPod()
	changed := newPod(func(p *corev1.Pod) { p.Spec.Containers[0].Image = "busybox:2" })
	onFailure := newPod(withPolicy(corev1.RestartPolicyOnFailure))
	never := newPod(withPolicy(corev1.RestartPolicyNever))
	host := newPod(withHostNetwork)
	inits := newPod(withInit("i0", "i1"))
	initsNever := newPod(withInit("i0", "i1"), withPolicy(corev1.RestartPolicyNever))
	twoApps := newPod(withApp("side"), withPolicy(corev1.RestartPolicyOnFailure))
	deleting := newPod(func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: t0} })
	sidecar := newPod(withSidecar("proxy"), withInit("i1"))
	probed := newPod(withSidecar("proxy"), withInit("i1"), func(p *corev1.Pod) {
		p.Spec.InitContainers[0].StartupProbe = &corev1.Probe{}
	})
	lastProbed := newPod(withSidecar("proxy"), func(p *corev1.Pod) {
		p.Spec.InitContainers[0].StartupProbe = &corev1.Probe{}
	})
	passed := func(id string) bool { return id == "c1" }
	debug := newPod(withEphemeral("debug", ""))
	targeted := newPod(withEphemeral("debug", "app"))
	debugInit := newPod(withInit("i0"), withEphemeral("debug", ""))
	debugNever := newPod(withPolicy(corev1.RestartPolicyNever), withEphemeral("debug", ""))
	// Container-level restart policies and rules (ContainerRestartRules).
	appNever := newPod(withAppPolicy(corev1.ContainerRestartPolicyNever)) // under the pod's Always
	appAlways := newPod(withPolicy(corev1.RestartPolicyNever), withAppPolicy(corev1.ContainerRestartPolicyAlways))
	appOnFailure := newPod(withPolicy(corev1.RestartPolicyNever), withAppPolicy(corev1.ContainerRestartPolicyOnFailure))
	rule42 := newPod(withPolicy(corev1.RestartPolicyNever), withAppPolicy(corev1.ContainerRestartPolicyNever), func(p *corev1.Pod) {
		p.Spec.Containers[0].RestartPolicyRules = []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestart,
			ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
	})
	initOnFailure := newPod(withInit("i0"), withPolicy(corev1.RestartPolicyNever), func(p *corev1.Pod) {
		onFailure := corev1.ContainerRestartPolicyOnFailure
		p.Spec.InitContainers[0].RestartPolicy = &onFailure
	})

	sb1, sb2 := readySandbox("sb1", 0), readySandbox("sb2", 1)
	noIP := readySandbox("sb1", 0)
	noIP.IP = ""
	hostSB := readySandbox("sb1", 0)
	hostSB.HostNetwork, hostSB.IP = true, ""

	prev := func(c ContainerStatus) *ContainerStatus { return &c }

	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		status  *PodStatus
		started func(containerID string) bool
		want    plan
	}{{
		name:   "nothing in the runtime: create the sandbox, start the app",
		pod:    pod,
		status: nil,
		want: plan{CreateSandbox: true, SandboxReason: "no sandbox",
			Start: []startStep{{Index: 0, Name: "app", Reason: "new sandbox"}}},
	}, {
		name:   "running with the same spec: nothing to do",
		pod:    pod,
		status: status(sandboxes(sb1), running(pod, "app", "c1", "sb1")),
		want:   plan{SandboxID: "sb1"},
	}, {
		name:   "host network pod in a host network sandbox without IP: nothing to do",
		pod:    host,
		status: status(sandboxes(hostSB), running(host, "app", "c1", "sb1")),
		want:   plan{SandboxID: "sb1"},
	}, {
		name:   "sandbox not ready: kill, new sandbox with the next attempt, restart count continues",
		pod:    pod,
		status: status(sandboxes(deadSandbox("sb1", 0)), exited(pod, "app", "c1", "sb1", 137)),
		want: plan{KillPod: true, CreateSandbox: true, SandboxAttempt: 1, SandboxReason: "sandbox is not ready",
			Start: []startStep{{Index: 0, Name: "app", Reason: "new sandbox", Previous: prev(exited(pod, "app", "c1", "sb1", 137))}}},
	}, {
		name:   "network mode changed: kill and recreate",
		pod:    host,
		status: status(sandboxes(sb1), running(host, "app", "c1", "sb1")),
		want: plan{KillPod: true, CreateSandbox: true, SandboxAttempt: 1, SandboxReason: "network mode changed",
			Start: []startStep{{Index: 0, Name: "app", Reason: "new sandbox", Previous: prev(running(host, "app", "c1", "sb1"))}}},
	}, {
		name:   "two ready sandboxes: kill and recreate after the newest",
		pod:    pod,
		status: status(sandboxes(sb2, sb1), running(pod, "app", "c1", "sb2")),
		want: plan{KillPod: true, CreateSandbox: true, SandboxAttempt: 2, SandboxReason: "several sandboxes are ready",
			Start: []startStep{{Index: 0, Name: "app", Reason: "new sandbox", Previous: prev(running(pod, "app", "c1", "sb2"))}}},
	}, {
		name:   "pod network sandbox without IP: recreate",
		pod:    pod,
		status: status(sandboxes(noIP)),
		want: plan{KillPod: true, CreateSandbox: true, SandboxAttempt: 1, SandboxReason: "sandbox has no IP",
			Start: []startStep{{Index: 0, Name: "app", Reason: "new sandbox"}}},
	}, {
		name:   "spec changed: replace the container whatever the policy",
		pod:    changed,
		status: status(sandboxes(sb1), running(pod, "app", "c1", "sb1")),
		want: plan{SandboxID: "sb1",
			Kill:  []killStep{{ID: "c1", Name: "app", Reason: "spec changed", PreStop: true}},
			Start: []startStep{{Index: 0, Name: "app", Reason: "spec changed", Previous: prev(running(pod, "app", "c1", "sb1"))}}},
	}, {
		name:   "Always restarts a container that succeeded",
		pod:    pod,
		status: status(sandboxes(sb1), exited(pod, "app", "c1", "sb1", 0)),
		want: plan{SandboxID: "sb1",
			Start: []startStep{{Index: 0, Name: "app", Reason: "exited with code 0", Previous: prev(exited(pod, "app", "c1", "sb1", 0))}}},
	}, {
		name:   "OnFailure restarts a container that failed",
		pod:    onFailure,
		status: status(sandboxes(sb1), exited(onFailure, "app", "c1", "sb1", 3)),
		want: plan{SandboxID: "sb1",
			Start: []startStep{{Index: 0, Name: "app", Reason: "exited with code 3", Previous: prev(exited(onFailure, "app", "c1", "sb1", 3))}}},
	}, {
		name:   "OnFailure: every container succeeded, the pod is done",
		pod:    onFailure,
		status: status(sandboxes(sb1), exited(onFailure, "app", "c1", "sb1", 0)),
		want:   plan{SandboxID: "sb1", KillPod: true, Done: true, DoneReason: "every container terminated and none restarts"},
	}, {
		name:   "Never: a failed container stays dead and the pod is done",
		pod:    never,
		status: status(sandboxes(sb1), exited(never, "app", "c1", "sb1", 3)),
		want:   plan{SandboxID: "sb1", KillPod: true, Done: true, DoneReason: "every container terminated and none restarts"},
	}, {
		name:   "container Never under the pod's Always: a failed container stays dead and the pod is done",
		pod:    appNever,
		status: status(sandboxes(sb1), exited(appNever, "app", "c1", "sb1", 1)),
		want:   plan{SandboxID: "sb1", KillPod: true, Done: true, DoneReason: "every container terminated and none restarts"},
	}, {
		name:   "container Always under the pod's Never: restarted",
		pod:    appAlways,
		status: status(sandboxes(sb1), exited(appAlways, "app", "c1", "sb1", 1)),
		want: plan{SandboxID: "sb1",
			Start: []startStep{{Index: 0, Name: "app", Reason: "exited with code 1", Previous: prev(exited(appAlways, "app", "c1", "sb1", 1))}}},
	}, {
		name:   "container OnFailure under the pod's Never: a failure restarts it",
		pod:    appOnFailure,
		status: status(sandboxes(sb1), exited(appOnFailure, "app", "c1", "sb1", 1)),
		want: plan{SandboxID: "sb1",
			Start: []startStep{{Index: 0, Name: "app", Reason: "exited with code 1", Previous: prev(exited(appOnFailure, "app", "c1", "sb1", 1))}}},
	}, {
		name:   "container OnFailure under the pod's Never: a success ends it",
		pod:    appOnFailure,
		status: status(sandboxes(sb1), exited(appOnFailure, "app", "c1", "sb1", 0)),
		want:   plan{SandboxID: "sb1", KillPod: true, Done: true, DoneReason: "every container terminated and none restarts"},
	}, {
		name:   "restart rule: an exit code In its values restarts the container",
		pod:    rule42,
		status: status(sandboxes(sb1), exited(rule42, "app", "c1", "sb1", 42)),
		want: plan{SandboxID: "sb1",
			Start: []startStep{{Index: 0, Name: "app", Reason: "exited with code 42", Previous: prev(exited(rule42, "app", "c1", "sb1", 42))}}},
	}, {
		name:   "restart rule: another exit code leaves it to the container's Never",
		pod:    rule42,
		status: status(sandboxes(sb1), exited(rule42, "app", "c1", "sb1", 1)),
		want:   plan{SandboxID: "sb1", KillPod: true, Done: true, DoneReason: "every container terminated and none restarts"},
	}, {
		name:   "container OnFailure, new sandbox: a container that succeeded does not start again",
		pod:    newPod(withAppPolicy(corev1.ContainerRestartPolicyOnFailure), withApp("side")),
		status: status(sandboxes(deadSandbox("sb1", 0)), exited(appOnFailure, "app", "c1", "sb1", 0)),
		want: plan{KillPod: true, CreateSandbox: true, SandboxAttempt: 1, SandboxReason: "sandbox is not ready",
			Start: []startStep{{Index: 1, Name: "side", Reason: "new sandbox"}}},
	}, {
		name:   "init container OnFailure under the pod's Never: a failure is retried",
		pod:    initOnFailure,
		status: status(sandboxes(sb1), exited(initOnFailure, "i0", "c1", "sb1", 1)),
		want: plan{SandboxID: "sb1",
			Start: []startStep{{Init: true, Index: 0, Name: "i0", Reason: "exited with code 1", Previous: prev(exited(initOnFailure, "i0", "c1", "sb1", 1))}}},
	}, {
		name:   "a container in an unknown state is killed before its restart",
		pod:    pod,
		status: status(sandboxes(sb1), inState(pod, "app", "c1", "sb1", ContainerStateUnknown)),
		want: plan{SandboxID: "sb1",
			Kill:  []killStep{{ID: "c1", Name: "app", Reason: "state unknown before restart"}},
			Start: []startStep{{Index: 0, Name: "app", Reason: "in state unknown", Previous: prev(inState(pod, "app", "c1", "sb1", ContainerStateUnknown))}}},
	}, {
		name:   "a pod being deleted restarts nothing",
		pod:    deleting,
		status: status(sandboxes(sb1), exited(deleting, "app", "c1", "sb1", 0)),
		want:   plan{SandboxID: "sb1", KillPod: true, Done: true, DoneReason: "every container terminated and none restarts"},
	}, {
		name:   "Never: a lost sandbox is not recreated once containers ran",
		pod:    never,
		status: status(sandboxes(deadSandbox("sb1", 0)), exited(never, "app", "c1", "sb1", 0)),
		want:   plan{KillPod: true, Done: true, DoneReason: "sandbox lost (sandbox is not ready) and restartPolicy is Never"},
	}, {
		name:   "Never: a lost sandbox is recreated if no container was created",
		pod:    never,
		status: status(sandboxes(deadSandbox("sb1", 0))),
		want: plan{KillPod: true, CreateSandbox: true, SandboxAttempt: 1, SandboxReason: "sandbox is not ready",
			Start: []startStep{{Index: 0, Name: "app", Reason: "new sandbox"}}},
	}, {
		name:   "OnFailure, new sandbox: only the containers that did not succeed start",
		pod:    twoApps,
		status: status(sandboxes(deadSandbox("sb1", 0)), exited(twoApps, "app", "c1", "sb1", 0), exited(twoApps, "side", "c2", "sb1", 1)),
		want: plan{KillPod: true, CreateSandbox: true, SandboxAttempt: 1, SandboxReason: "sandbox is not ready",
			Start: []startStep{{Index: 1, Name: "side", Reason: "new sandbox", Previous: prev(exited(twoApps, "side", "c2", "sb1", 1))}}},
	}, {
		name:   "OnFailure, new sandbox, everything succeeded: done, no sandbox",
		pod:    onFailure,
		status: status(sandboxes(deadSandbox("sb1", 0)), exited(onFailure, "app", "c1", "sb1", 0)),
		want:   plan{KillPod: true, Done: true, DoneReason: "every container succeeded"},
	}, {
		name:   "init containers: a new sandbox starts the first one only",
		pod:    inits,
		status: nil,
		want: plan{CreateSandbox: true, SandboxReason: "no sandbox",
			Start: []startStep{{Init: true, Index: 0, Name: "i0", Reason: "new sandbox"}}},
	}, {
		name:   "init containers: a running one is waited for",
		pod:    inits,
		status: status(sandboxes(sb1), running(inits, "i0", "c1", "sb1")),
		want:   plan{SandboxID: "sb1"},
	}, {
		name:   "init containers: the next one starts after the previous succeeded",
		pod:    inits,
		status: status(sandboxes(sb1), exited(inits, "i0", "c1", "sb1", 0)),
		want: plan{SandboxID: "sb1",
			Start: []startStep{{Init: true, Index: 1, Name: "i1", Reason: "previous init container done"}}},
	}, {
		name:   "init containers: after the last succeeded, the app containers start",
		pod:    inits,
		status: status(sandboxes(sb1), exited(inits, "i1", "c2", "sb1", 0), exited(inits, "i0", "c1", "sb1", 0)),
		want: plan{SandboxID: "sb1",
			Start: []startStep{{Index: 0, Name: "app", Reason: "not created"}}},
	}, {
		name:   "init containers: a failure is retried unless the policy is Never",
		pod:    inits,
		status: status(sandboxes(sb1), exited(inits, "i0", "c1", "sb1", 2)),
		want: plan{SandboxID: "sb1",
			Start: []startStep{{Init: true, Index: 0, Name: "i0", Reason: "exited with code 2", Previous: prev(exited(inits, "i0", "c1", "sb1", 2))}}},
	}, {
		name:   "init containers: a failure under Never fails the pod",
		pod:    initsNever,
		status: status(sandboxes(sb1), exited(initsNever, "i1", "c2", "sb1", 2), exited(initsNever, "i0", "c1", "sb1", 0)),
		want: plan{SandboxID: "sb1", KillPod: true, Done: true, Failed: true,
			DoneReason: "init container i1 exited with code 2 and its restart policy does not restart it"},
	}, {
		name:   "init containers: once an app container ran in the sandbox, init is done even if its containers were removed",
		pod:    inits,
		status: status(sandboxes(sb1), running(inits, "app", "c3", "sb1")),
		want:   plan{SandboxID: "sb1"},
	}, {
		name:   "init containers: instances in an older sandbox do not count",
		pod:    inits,
		status: status(sandboxes(sb2, deadSandbox("sb1", 0)), exited(inits, "i1", "c2", "sb1", 0), exited(inits, "i0", "c1", "sb1", 0)),
		want: plan{SandboxID: "sb2", SandboxAttempt: 1,
			Start: []startStep{{Init: true, Index: 0, Name: "i0", Reason: "initialization starts", Previous: prev(exited(inits, "i0", "c1", "sb1", 0))}}},
	}, {
		name:   "sidecar: running counts as done, the next init container starts",
		pod:    sidecar,
		status: status(sandboxes(sb1), running(sidecar, "proxy", "c1", "sb1")),
		want: plan{SandboxID: "sb1",
			Start: []startStep{{Init: true, Index: 1, Name: "i1", Reason: "previous init container done"}}},
	}, {
		name:   "sidecar: restarted after initialization, and does not keep the pod alive alone",
		pod:    sidecar,
		status: status(sandboxes(sb1), exited(sidecar, "proxy", "c1", "sb1", 1), running(sidecar, "app", "c3", "sb1")),
		want: plan{SandboxID: "sb1",
			Start: []startStep{{Init: true, Index: 0, Name: "proxy", Reason: "sidecar exited with code 1", Previous: prev(exited(sidecar, "proxy", "c1", "sb1", 1))}}},
	}, {
		name:   "sidecar with a startup probe not passed yet: the next init container waits",
		pod:    probed,
		status: status(sandboxes(sb1), running(probed, "proxy", "c1", "sb1")),
		want:   plan{SandboxID: "sb1"},
	}, {
		name:    "sidecar with a startup probe passed by another instance: still waiting",
		pod:     probed,
		status:  status(sandboxes(sb1), running(probed, "proxy", "c2", "sb1")),
		started: passed,
		want:    plan{SandboxID: "sb1"},
	}, {
		name:    "sidecar whose startup probe passed: the next init container starts",
		pod:     probed,
		status:  status(sandboxes(sb1), running(probed, "proxy", "c1", "sb1")),
		started: passed,
		want: plan{SandboxID: "sb1",
			Start: []startStep{{Init: true, Index: 1, Name: "i1", Reason: "previous init container done"}}},
	}, {
		name:   "last init container a sidecar whose startup probe has not passed: the app waits",
		pod:    lastProbed,
		status: status(sandboxes(sb1), running(lastProbed, "proxy", "c1", "sb1")),
		want:   plan{SandboxID: "sb1"},
	}, {
		name:    "last init container a sidecar whose startup probe passed: the app starts",
		pod:     lastProbed,
		status:  status(sandboxes(sb1), running(lastProbed, "proxy", "c1", "sb1")),
		started: passed,
		want: plan{SandboxID: "sb1",
			Start: []startStep{{Index: 0, Name: "app", Reason: "not created"}}},
	}, {
		name:   "an ephemeral container added to a running pod starts",
		pod:    debug,
		status: status(sandboxes(sb1), running(debug, "app", "c1", "sb1")),
		want: plan{SandboxID: "sb1",
			Start: []startStep{{Ephemeral: true, Index: 0, Name: "debug", Reason: "ephemeral container added"}}},
	}, {
		name:   "an ephemeral container that ran is never restarted",
		pod:    debug,
		status: status(sandboxes(sb1), running(debug, "app", "c1", "sb1"), exited(debug, "debug", "c2", "sb1", 1)),
		want:   plan{SandboxID: "sb1"},
	}, {
		name:   "an ephemeral container joins its running target",
		pod:    targeted,
		status: status(sandboxes(sb1), running(targeted, "app", "c1", "sb1")),
		want: plan{SandboxID: "sb1",
			Start: []startStep{{Ephemeral: true, Index: 0, Name: "debug", Reason: "ephemeral container added", TargetID: "c1"}}},
	}, {
		name:   "an ephemeral container whose target does not run cannot start",
		pod:    targeted,
		status: status(sandboxes(sb1), exited(targeted, "app", "c1", "sb1", 0)),
		want: plan{SandboxID: "sb1", Start: []startStep{
			{Index: 0, Name: "app", Reason: "exited with code 0", Previous: prev(exited(targeted, "app", "c1", "sb1", 0))},
			{Ephemeral: true, Index: 0, Name: "debug", Reason: "ephemeral container added", TargetMissing: true}}},
	}, {
		name:   "an ephemeral container starts while init containers run",
		pod:    debugInit,
		status: status(sandboxes(sb1), running(debugInit, "i0", "c1", "sb1")),
		want: plan{SandboxID: "sb1",
			Start: []startStep{{Ephemeral: true, Index: 0, Name: "debug", Reason: "ephemeral container added"}}},
	}, {
		name:   "a finished pod starts no ephemeral container",
		pod:    debugNever,
		status: status(sandboxes(sb1), exited(debugNever, "app", "c1", "sb1", 0)),
		want:   plan{SandboxID: "sb1", KillPod: true, Done: true, DoneReason: "every container terminated and none restarts"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := computePlan(tc.pod, tc.status, tc.started)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(plan{}, startStep{}, killStep{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHashContainerCoversTheWholeSpec(t *testing.T) {
	base := corev1.Container{Name: "app", Image: "busybox:1", Command: []string{"sleep", "1"}}
	same := base
	if HashContainer(&base) != HashContainer(&same) {
		t.Fatal("equal specs hash differently")
	}
	for name, mod := range map[string]func(*corev1.Container){
		"image":   func(c *corev1.Container) { c.Image = "busybox:2" },
		"command": func(c *corev1.Container) { c.Command = []string{"sleep", "2"} },
		"env":     func(c *corev1.Container) { c.Env = []corev1.EnvVar{{Name: "A", Value: "1"}} },
	} {
		c := base
		mod(&c)
		if HashContainer(&c) == HashContainer(&base) {
			t.Errorf("changing %s does not change the hash", name)
		}
	}
}
