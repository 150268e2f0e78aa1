package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/fake"
)

// forgetInterval is how often the fakes' call records are dropped.
const forgetInterval = 30 * time.Second

func main() {
	endpoint := flag.String("endpoint", "", "path of the unix socket to serve the CRI on (created; an old socket there is replaced)")
	flag.Parse()
	if err := run(*endpoint); err != nil {
		fmt.Fprintln(os.Stderr, "hollowcri:", err)
		os.Exit(1)
	}
}

func run(endpoint string) error {
	if endpoint == "" || !filepath.IsAbs(endpoint) {
		return fmt.Errorf("--endpoint %q must be an absolute socket path", endpoint)
	}
	if err := os.MkdirAll(filepath.Dir(endpoint), 0o700); err != nil {
		return fmt.Errorf("--endpoint %q: %w", endpoint, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	rt := newRuntime(filepath.Dir(endpoint))
	if err := rt.Start("unix://" + endpoint); err != nil {
		return fmt.Errorf("--endpoint %q: %w", endpoint, err)
	}
	defer rt.Stop()
	forgetCalls(ctx, rt, forgetInterval)
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		return context.Cause(ctx)
	}
	return nil
}

// newRuntime is the fake runtime whose image and container filesystems are
// dir, empty: a node's image GC and eviction statfs the mountpoint the
// runtime names, so it must exist; the socket's directory does.
func newRuntime(dir string) *fake.RemoteRuntime {
	rt := fake.NewFakeRemoteRuntime()
	usage := func(mountpoint string) []*runtimeapi.FilesystemUsage {
		return []*runtimeapi.FilesystemUsage{{
			Timestamp:  time.Now().UnixNano(),
			FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: mountpoint},
			UsedBytes:  &runtimeapi.UInt64Value{Value: 0},
			InodesUsed: &runtimeapi.UInt64Value{Value: 0},
		}}
	}
	rt.ImageService.SetFakeFilesystemUsage(usage(dir))
	rt.ImageService.SetFakeContainerFilesystemUsage(usage(dir))
	return rt
}

// forgetCalls drops the fakes' records of calls every interval until ctx
// ends: they are kept for tests and would otherwise grow with every relist.
func forgetCalls(ctx context.Context, rt *fake.RemoteRuntime, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			rt.RuntimeService.Lock()
			rt.RuntimeService.Called = nil
			rt.RuntimeService.Unlock()
			rt.ImageService.Lock()
			rt.ImageService.Called = nil
			rt.ImageService.Unlock()
		}
	}
}
