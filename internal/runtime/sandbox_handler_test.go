package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeClasses resolves the classes of its map; any other is NotFound.
type fakeClasses map[string]string

func (f fakeClasses) Handler(_ context.Context, name string) (string, error) {
	if h, ok := f[name]; ok {
		return h, nil
	}
	return "", apierrors.NewNotFound(schema.GroupResource{Group: "node.k8s.io", Resource: "runtimeclass"}, name)
}

// A pod's sandbox runs with the handler of its RuntimeClass; a class
// that cannot be resolved, or that the runtime has no handler for,
// creates no sandbox, and the default handler is never taken instead.
func TestSandboxRuntimeHandler(t *testing.T) {
	classes := fakeClasses{"gvisor": "runsc", "default-class": ""}
	for _, tc := range []struct {
		name       string
		class      *string
		classes    RuntimeClasses // nil: standalone
		defHandler string
		inject     error // RunPodSandbox's refusal
		want       string
		wantErr    func(error) bool
		errText    string
	}{
		{name: "no class, default handler", classes: classes, want: ""},
		{name: "no class, configured default handler", classes: classes, defHandler: "runc", want: "runc"},
		{name: "empty class name", class: ptr(""), classes: classes, defHandler: "runc", want: "runc"},
		{name: "a class", class: ptr("gvisor"), classes: classes, defHandler: "runc", want: "runsc"},
		{name: "a class of the runtime's default handler", class: ptr("default-class"), classes: classes, defHandler: "runc", want: ""},
		{name: "a class that does not exist", class: ptr("missing"), classes: classes, defHandler: "runc",
			wantErr: apierrors.IsNotFound, errText: `runtimeclass.node.k8s.io "missing" not found`},
		{name: "standalone: no class resolves", class: ptr("gvisor"),
			wantErr: func(err error) bool { return errors.Is(err, ErrUnsupported) }, errText: "standalone"},
		{name: "standalone, no class", want: ""},
		{name: "a handler the runtime lacks", class: ptr("gvisor"), classes: classes,
			inject:  fmt.Errorf(`failed to get sandbox runtime: no runtime for "runsc" is configured`),
			wantErr: func(err error) bool { return true }, errText: `no runtime for "runsc" is configured`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.rt.opts.RuntimeClasses, w.rt.opts.RuntimeHandler = tc.classes, tc.defHandler
			if tc.inject != nil {
				w.cri.InjectError("RunPodSandbox", tc.inject)
			}
			pod := newPod(func(p *corev1.Pod) { p.Spec.RuntimeClassName = tc.class })
			res, err := w.sync(pod, nil)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("SyncPod: %v", err)
				}
				if len(w.cri.handlers) != 1 || w.cri.handlers[0] != tc.want {
					t.Errorf("sandboxes run with handlers %q, want [%q]", w.cri.handlers, tc.want)
				}
				return
			}
			if !errors.Is(err, ErrCreateSandbox) || !tc.wantErr(err) || !strings.Contains(err.Error(), tc.errText) {
				t.Errorf("SyncPod error = %v, want ErrCreateSandbox saying %q", err, tc.errText)
			}
			if WaitingReason(err) != "CreatePodSandboxError" {
				t.Errorf("waiting reason %q", WaitingReason(err))
			}
			if len(res.Actions) != 1 || res.Actions[0].Kind != ActionCreateSandbox || res.Actions[0].Err == nil {
				t.Errorf("actions = %+v, want one failed sandbox creation (the FailedCreatePodSandBox event)", res.Actions)
			}
			if tc.inject == nil && len(w.cri.handlers) != 0 {
				t.Errorf("RunPodSandbox called with %q for a class that did not resolve", w.cri.handlers)
			}
			if n := len(w.cri.handlers); tc.inject != nil && (n != 1 || w.cri.handlers[0] != "runsc") {
				t.Errorf("handlers %q: the class's handler was not asked for", w.cri.handlers)
			}
		})
	}
}

// The pod's overhead reaches the runtime with its sandbox, as the
// kubelet's: cpu as shares and quota, memory as a limit.
func TestSandboxOverhead(t *testing.T) {
	w := newWorld(t)
	none := w.rt.sandboxConfig(newPod(), 0)
	if none.Linux.Overhead != nil {
		t.Errorf("overhead without spec.overhead: %v", none.Linux.Overhead)
	}
	pod := newPod(func(p *corev1.Pod) {
		p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	})
	got := w.rt.sandboxConfig(pod, 0).Linux.Overhead
	want := &runtimeapi.LinuxContainerResources{CpuShares: 256, CpuPeriod: 100000, CpuQuota: 25000, MemoryLimitInBytes: 64 << 20}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("overhead (-want +got):\n%s", diff)
	}
}
