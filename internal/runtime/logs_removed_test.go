package runtime

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cri-client/pkg/logs"
)

func TestReadRemovedLogs(t *testing.T) {
	root := t.TempDir()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "done", UID: "0f1e2d3c-0000-4000-8000-000000000001"}}
	dir := filepath.Join(root, "ns_done_"+string(pod.UID), "app")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Instances log to <restart count>.log; 10 sorts after 9 as a number.
	for name, line := range map[string]string{"9.log": "nine", "10.log": "ten", "notes.txt": "no", "007.log": "no"} {
		text := "2026-11-28T05:00:00.000000000Z stdout F " + line + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := newRuntime(Options{LogRoot: root}, nil, nil)
	read := func(container string, previous, follow bool) (string, error) {
		var out bytes.Buffer
		opts := &logs.LogOptions{Follow: follow}
		err := r.ReadRemovedLogs(context.Background(), pod, container, previous, opts, &out, &out)
		return out.String(), err
	}
	for _, tc := range []struct {
		container        string
		previous, follow bool
		want             string
		err              error
	}{
		{container: "app", want: "ten\n"},
		// A follow of a removed container ends at the end of its log.
		{container: "app", follow: true, want: "ten\n"},
		{container: "app", previous: true, want: "nine\n"},
		{container: "other", err: ErrNoLog},
		{container: "../ns_done", err: ErrNoLog},
	} {
		got, err := read(tc.container, tc.previous, tc.follow)
		if !errors.Is(err, tc.err) || got != tc.want {
			t.Errorf("%s previous=%v follow=%v: %q, %v; want %q, %v", tc.container, tc.previous, tc.follow, got, err, tc.want, tc.err)
		}
	}
	// With one instance only, there is no previous one.
	if err := os.Remove(filepath.Join(dir, "9.log")); err != nil {
		t.Fatal(err)
	}
	if _, err := read("app", true, false); !errors.Is(err, ErrNoLog) {
		t.Errorf("previous of a single instance: %v, want ErrNoLog", err)
	}
}
