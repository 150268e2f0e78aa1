package config_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nodeagent/nodeagent/staging/config"
	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func Example() {
	dir, _ := os.MkdirTemp("", "manifests")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(`apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: nginx
    image: nginx:1.27
`), 0o644)

	merger := config.NewMerger(config.MergerOptions{Mode: config.Incremental})
	files, err := config.NewFileSource(config.FileOptions{Path: dir, NodeName: "node1", Sink: merger})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- files.Run(ctx) }()

	u := <-merger.Updates()
	pod := u.Pods[0]
	fmt.Println(u.Op, u.Source, podtypes.PodFullName(pod), pod.Spec.RestartPolicy, pod.Spec.Containers[0].ImagePullPolicy)
	fmt.Println("file source ready:", merger.SeenAllSources(podtypes.FileSource))

	// A broken manifest is refused with its field; the running pod stays.
	bad := filepath.Join(dir, "db.yaml")
	_ = os.WriteFile(bad, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: db}\nspec:\n  containers:\n  - {name: pg, imagee: postgres}\n"), 0o644)
	for files.Err(bad) == nil {
		time.Sleep(time.Millisecond)
	}
	var me *manifest.ManifestError
	if errors.As(files.Err(bad), &me) {
		fmt.Println(me.Reason, me.Field(), errors.Is(me, manifest.ErrStrict))
	}
	fmt.Println("pods:", len(merger.Pods()))

	cancel()
	<-done
	// Output:
	// ADD file web-node1_default Always IfNotPresent
	// file source ready: true
	// UnknownField spec.containers[0].imagee true
	// pods: 1
}
