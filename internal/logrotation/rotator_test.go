package logrotation

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	testclock "k8s.io/utils/clock/testing"
)

// fakeRuntime plays containerd: a reopen creates a new, empty file at the
// container's log path.
type fakeRuntime struct {
	mu        sync.Mutex
	logs      map[string]string // container ID -> log path
	reopenErr error
	reopens   atomic.Int32
	inFlight  atomic.Int32
	maxFlight atomic.Int32
	delay     time.Duration
}

func (f *fakeRuntime) RunningContainers(context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for id := range f.logs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

func (f *fakeRuntime) ContainerLogPath(_ context.Context, id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.logs[id], nil
}

func (f *fakeRuntime) ReopenContainerLog(_ context.Context, id string) error {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxFlight.Load()
		if n <= m || f.maxFlight.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(f.delay)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reopenErr != nil {
		return f.reopenErr
	}
	f.reopens.Add(1)
	return os.WriteFile(f.logs[id], nil, 0o600)
}

type harness struct {
	t     *testing.T
	rt    *fakeRuntime
	clock *testclock.FakeClock
	r     *Rotator
	dir   string
}

func newHarness(t *testing.T, tweak func(*Options)) *harness {
	t.Helper()
	dir := t.TempDir()
	h := &harness{t: t, dir: dir, rt: &fakeRuntime{logs: map[string]string{}},
		clock: testclock.NewFakeClock(time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC))}
	opts := Options{Runtime: h.rt, MaxSize: 100, MaxFiles: 3, Workers: 1, Interval: 10 * time.Second, Clock: h.clock, Logger: testr.New(t)}
	if tweak != nil {
		tweak(&opts)
	}
	var err error
	if h.r, err = New(opts); err != nil {
		t.Fatal(err)
	}
	return h
}

// container adds a running container whose log holds size bytes.
func (h *harness) container(id string, size int) string {
	h.t.Helper()
	path := filepath.Join(h.dir, id, "0.log")
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		h.t.Fatal(err)
	}
	h.write(path, size, 'a')
	h.rt.mu.Lock()
	h.rt.logs[id] = path
	h.rt.mu.Unlock()
	return path
}

func (h *harness) write(path string, size int, b byte) {
	h.t.Helper()
	if err := os.WriteFile(path, bytes.Repeat([]byte{b}, size), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) files(id string) []string {
	h.t.Helper()
	entries, err := os.ReadDir(filepath.Join(h.dir, id))
	if err != nil {
		h.t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestRotatesALogThatReachedItsSize(t *testing.T) {
	h := newHarness(t, nil)
	big := h.container("big", 100)
	h.container("small", 99)
	h.r.check(context.Background())
	if got, want := h.files("big"), []string{"0.log", "0.log.20261128-100000"}; !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
	if fi, err := os.Stat(big); err != nil || fi.Size() != 0 {
		t.Errorf("the reopened log: %v, %v", fi, err)
	}
	if got := h.files("small"); !slices.Equal(got, []string{"0.log"}) {
		t.Errorf("a log under the size was rotated: %v", got)
	}
}

// With MaxFiles 3, a container keeps its current log, the newest rotated
// one as it is, and one older one compressed.
func TestKeepsMaxFilesAndCompressesAllButTheNewest(t *testing.T) {
	h := newHarness(t, nil)
	path := h.container("c", 100)
	for i := range 5 {
		h.write(path, 100+i, byte('a'+i))
		h.r.check(context.Background())
		h.clock.Step(time.Minute)
	}
	want := []string{"0.log", "0.log.20261128-100300.gz", "0.log.20261128-100400"}
	if got := h.files("c"); !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	f, err := os.Open(filepath.Join(h.dir, "c", want[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat("d", 103); string(data) != want {
		t.Errorf("the compressed log holds %q..., want the fourth log", data[:min(len(data), 10)])
	}
	if data, _ := os.ReadFile(filepath.Join(h.dir, "c", want[2])); string(data) != strings.Repeat("e", 104) {
		t.Errorf("the newest rotated log holds %q...", data[:min(len(data), 10)])
	}
}

func TestAReopenThatFailsRenamesTheLogBack(t *testing.T) {
	h := newHarness(t, nil)
	path := h.container("c", 150)
	h.rt.reopenErr = errors.New("container is not running")
	h.r.check(context.Background())
	if got := h.files("c"); !slices.Equal(got, []string{"0.log"}) {
		t.Fatalf("files %v, want the log alone", got)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 150 {
		t.Errorf("the log after a failed reopen: %v, %v", fi, err)
	}
}

// What an interrupted compression left is removed; files that are not
// rotated logs are left alone.
func TestLeftoversAreCleanedAndOthersKept(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.MaxFiles = 5 })
	path := h.container("c", 100)
	for name, size := range map[string]int{
		"0.log.20261128-090000":        10, // compressed already: the original stayed
		"0.log.20261128-090000.gz":     5,
		"0.log.20261128-091000.gz.tmp": 3, // a compression cut short
		"0.log.backup":                 7, // not a rotated log
		"1.log":                        7, // the previous instance's
	} {
		h.write(filepath.Join(filepath.Dir(path), name), size, 'x')
	}
	h.r.check(context.Background())
	want := []string{"0.log", "0.log.20261128-090000.gz", "0.log.20261128-100000", "0.log.backup", "1.log"}
	if got := h.files("c"); !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
}

func TestRotatesWorkersAtOnce(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Workers = 2 })
	h.rt.delay = 20 * time.Millisecond
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		h.container(id, 200)
	}
	h.r.check(context.Background())
	if got := h.rt.reopens.Load(); got != 6 {
		t.Errorf("%d logs rotated, want 6", got)
	}
	if got := h.rt.maxFlight.Load(); got > 2 {
		t.Errorf("%d rotations at once, want at most the 2 workers", got)
	}
}

func TestRunChecksEveryIntervalUntilTheContextEnds(t *testing.T) {
	h := newHarness(t, nil)
	h.container("c", 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.r.Run(ctx) }()
	for h.rt.reopens.Load() == 0 {
		h.clock.Step(10 * time.Second)
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

func TestOptionsAreChecked(t *testing.T) {
	for name, tweak := range map[string]func(*Options){
		"MaxSize":  func(o *Options) { o.MaxSize = 0 },
		"MaxFiles": func(o *Options) { o.MaxFiles = 1 },
		"Workers":  func(o *Options) { o.Workers = 0 },
		"Interval": func(o *Options) { o.Interval = time.Second },
	} {
		o := Options{Runtime: &fakeRuntime{}, MaxSize: 1, MaxFiles: 2, Workers: 1, Interval: MinInterval}
		tweak(&o)
		if _, err := New(o); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
