package runtime

import (
	"context"
	"errors"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
)

// statusInfo is the fake runtime answering a verbose Status with info,
// as containerd does with its configuration.
type statusInfo struct {
	*recorder
	info map[string]string
}

func (s *statusInfo) Status(ctx context.Context, verbose bool) (*runtimeapi.StatusResponse, error) {
	resp, err := s.recorder.Status(ctx, verbose)
	if err == nil && verbose {
		resp.Info = s.info
	}
	return resp, err
}

func TestListImagesAndRemove(t *testing.T) {
	w := newWorld(t)
	w.images.SetFakeImageSize(42)
	w.images.SetFakeImagePinned("busybox:2", true)
	w.images.SetFakeImages([]string{"busybox:1", "busybox:2"}) // sized and pinned as set
	got, err := w.rt.ListImages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Image{}
	for _, i := range got {
		byID[i.ID] = i
	}
	want := map[string]Image{
		"busybox:1": {ID: "busybox:1", Tags: []string{"busybox:1"}, Size: 42},
		"busybox:2": {ID: "busybox:2", Tags: []string{"busybox:2"}, Size: 42, Pinned: true},
	}
	if d := cmp.Diff(want, byID); d != "" {
		t.Errorf("ListImages (-want +got):\n%s", d)
	}

	if err := w.rt.RemoveImage(context.Background(), "busybox:1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.images.Images["busybox:1"]; ok {
		t.Error("busybox:1 is still there after RemoveImage")
	}
	w.images.InjectError("RemoveImage", grpcstatus.Error(codes.NotFound, "no such image"))
	if err := w.rt.RemoveImage(context.Background(), "busybox:1"); err != nil {
		t.Errorf("removing an image already gone: %v, want no error", err)
	}
	boom := errors.New("read-only filesystem")
	w.images.InjectError("RemoveImage", boom)
	if err := w.rt.RemoveImage(context.Background(), "busybox:2"); !errors.Is(err, boom) {
		t.Errorf("RemoveImage: %v, want %v", err, boom)
	}
}

func TestImagesInUseCountsEveryContainer(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sb, err := w.cri.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Uid: "u", Namespace: "n"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	// One container made by someone else, never started: it counts too.
	for _, image := range []string{"busybox:1", "other:3"} {
		if _, err := w.cri.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: image}, Image: &runtimeapi.ImageSpec{Image: image}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := w.rt.ImagesInUse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !got["busybox:1"] || !got["other:3"] || got["busybox:2"] {
		t.Errorf("ImagesInUse = %v, want busybox:1 and other:3 only", got)
	}
}

func TestImageFilesystem(t *testing.T) {
	w := newWorld(t)
	w.images.SetFakeFilesystemUsage([]*runtimeapi.FilesystemUsage{{
		FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: "/var/lib/containerd/snapshots"}, UsedBytes: &runtimeapi.UInt64Value{Value: 1000}}})
	got, err := w.rt.ImageFilesystem(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := (ImageFs{Mountpoint: "/var/lib/containerd/snapshots", UsedBytes: 1000}); got != want {
		t.Errorf("ImageFilesystem = %+v, want %+v", got, want)
	}
	w.images.SetFakeFilesystemUsage(nil)
	if _, err := w.rt.ImageFilesystem(context.Background()); err == nil {
		t.Error("ImageFilesystem without an image filesystem: no error")
	}
}

func TestSandboxImage(t *testing.T) {
	for _, tc := range []struct {
		name string
		info map[string]string
		want string
	}{
		{"containerd's config", map[string]string{"config": `{"sandboxImage": "busybox:2", "other": 1}`}, "busybox:2"},
		{"an image it does not hold", map[string]string{"config": `{"sandboxImage": "pause:9"}`}, ""},
		{"no config", nil, ""},
		{"a config of another shape", map[string]string{"config": `[1, 2]`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{FakeRuntimeService: critest.NewFakeRuntimeService(), stops: map[string]int64{}}
			images := critest.NewFakeImageService()
			images.SetFakeImages([]string{"busybox:2"})
			rt := newRuntime(Options{Endpoint: "unix:///fake.sock", Logger: testr.New(t)}, &statusInfo{recorder: rec, info: tc.info}, images)
			got, err := rt.SandboxImage(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("SandboxImage = %q, want %q", got, tc.want)
			}
		})
	}
}
