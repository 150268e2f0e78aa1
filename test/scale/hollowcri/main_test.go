package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/fake"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve starts the fake on a socket in a temporary directory and dials it.
func serve(t *testing.T) (runtimeapi.RuntimeServiceClient, runtimeapi.ImageServiceClient, string) {
	t.Helper()
	dir := t.TempDir()
	sock := filepath.Join(dir, "cri.sock")
	rt := newRuntime(dir)
	if err := rt.Start("unix://" + sock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Stop)
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return runtimeapi.NewRuntimeServiceClient(conn), runtimeapi.NewImageServiceClient(conn), dir
}

func TestAPodStartsAsANodeExpects(t *testing.T) {
	rs, is, dir := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	img := &runtimeapi.ImageSpec{Image: "registry.k8s.io/pause:3.10"}
	if st, err := is.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: img}); err != nil || st.GetImage() != nil {
		t.Fatalf("an image never pulled: %v, %v; want absent", st, err)
	}
	if _, err := is.PullImage(ctx, &runtimeapi.PullImageRequest{Image: img}); err != nil {
		t.Fatal(err)
	}
	if st, err := is.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: img}); err != nil || st.GetImage() == nil {
		t.Fatalf("the pulled image: %v, %v; want present", st, err)
	}
	fs, err := is.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	if err != nil || len(fs.GetImageFilesystems()) != 1 || fs.GetImageFilesystems()[0].GetFsId().GetMountpoint() != dir {
		t.Fatalf("ImageFsInfo = %v, %v; want one filesystem at %s, which a node can statfs", fs, err, dir)
	}

	sbConfig := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "ns", Uid: "u"}}
	sb, err := rs.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sbConfig})
	if err != nil {
		t.Fatal(err)
	}
	sbs, err := rs.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.GetPodSandboxId()})
	if err != nil || sbs.GetStatus().GetState() != runtimeapi.PodSandboxState_SANDBOX_READY || sbs.GetStatus().GetNetwork().GetIp() == "" {
		t.Fatalf("sandbox status = %v, %v; want READY with an address", sbs, err)
	}
	c, err := rs.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId:  sb.GetPodSandboxId(),
		Config:        &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "c"}, Image: img},
		SandboxConfig: sbConfig,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.GetContainerId()}); err != nil {
		t.Fatal(err)
	}
	cs, err := rs.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.GetContainerId()})
	if err != nil || cs.GetStatus().GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING || cs.GetStatus().GetStartedAt() == 0 {
		t.Fatalf("container status = %v, %v; want RUNNING with a start time", cs, err)
	}
}

func TestCallRecordsAreForgotten(t *testing.T) {
	rt := newRuntime(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := rt.RuntimeService.Version(ctx, "v1"); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.ImageService.ListImages(ctx, nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { forgetCalls(ctx, rt, time.Millisecond); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for len(rt.RuntimeService.GetCalls()) > 0 || imageCalls(rt) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the calls are still recorded after 10s of forgetting every millisecond")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
}

func imageCalls(rt *fake.RemoteRuntime) int {
	rt.ImageService.Lock()
	defer rt.ImageService.Unlock()
	return len(rt.ImageService.Called)
}
