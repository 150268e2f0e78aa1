package imagegc

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	testingclock "k8s.io/utils/clock/testing"
)

type fixture struct {
	t     *testing.T
	rt    *fakeRuntime
	clock *testingclock.FakeClock
	rec   *record.FakeRecorder
	m     *Manager
}

// newFixture is a Manager with the kubelet's thresholds unless mod
// changes them, over rt, at a fake time.
func newFixture(t *testing.T, rt *fakeRuntime, mod func(*Options)) *fixture {
	t.Helper()
	f := &fixture{t: t, rt: rt, clock: testingclock.NewFakeClock(time.Unix(1_000_000, 0)), rec: record.NewFakeRecorder(20)}
	opts := Options{
		Runtime: rt, HighThresholdPercent: DefaultHighThresholdPercent, LowThresholdPercent: DefaultLowThresholdPercent,
		MinAge: DefaultMinAge, Statfs: rt.statfs, Recorder: f.rec, NodeName: "node-a",
		Registry: metrics.NewKubeRegistry(), Clock: f.clock, Logger: testr.New(t),
	}
	if mod != nil {
		mod(&opts)
	}
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	return f
}

// pass steps the clock by d and makes one pass.
func (f *fixture) pass(d time.Duration) error {
	f.t.Helper()
	f.clock.Step(d)
	return f.m.GarbageCollect(context.Background())
}

func (f *fixture) mustPass(d time.Duration) {
	f.t.Helper()
	if err := f.pass(d); err != nil {
		f.t.Fatalf("GarbageCollect: %v", err)
	}
}

func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func counter(t *testing.T, c metrics.CounterMetric) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(c)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestUnderHighThresholdNothingIsRemoved(t *testing.T) {
	rt := newFakeRuntime(1000, map[string]uint64{"a": 100, "b": 100})
	rt.setOther(640) // 84%
	f := newFixture(t, rt, nil)
	f.mustPass(0)
	f.mustPass(time.Hour)
	if got := rt.takeRemoved(); len(got) != 0 {
		t.Errorf("removed %v at %d%%, under the high threshold", got, rt.usage())
	}
}

// The images stopped being used one after another; when the disk fills,
// the one unused longest goes first, and only as many as bring usage
// under the low threshold.
func TestOverHighThresholdLeastRecentlyUsedGoFirstDownToLow(t *testing.T) {
	rt := newFakeRuntime(1000, map[string]uint64{"a": 100, "b": 100, "c": 100, "d": 100, "e": 200})
	f := newFixture(t, rt, func(o *Options) { o.HighThresholdPercent, o.LowThresholdPercent = 75, 50 })
	rt.use("d", "b", "a", "c", "e")
	f.mustPass(0)
	for _, using := range [][]string{{"d", "b", "c", "e"}, {"d", "c", "e"}, {"d", "e"}} { // a, then b, then c stop
		rt.use(using...)
		f.mustPass(time.Minute)
	}
	if got := rt.takeRemoved(); len(got) != 0 {
		t.Fatalf("removed %v at %d%%", got, rt.usage())
	}

	rt.setOther(200) // 600 of images + 200: 80%
	f.mustPass(time.Minute)
	// To get to 50%: 300 bytes, the three unused longest.
	if d := cmp.Diff([]string{"a", "b", "c"}, rt.takeRemoved()); d != "" {
		t.Errorf("removed (-want +got):\n%s", d)
	}
	if u := rt.usage(); u > 50 {
		t.Errorf("usage %d%% after the pass, want at most 50%%", u)
	}
	if got := counter(t, f.m.metrics.removed.WithLabelValues(reasonSpace)); got != 3 {
		t.Errorf("images removed for space: %v, want 3", got)
	}
	if got := counter(t, f.m.metrics.freed.WithLabelValues(reasonSpace)); got != 300 {
		t.Errorf("bytes freed for space: %v, want 300", got)
	}
	if evs := f.events(); len(evs) != 0 {
		t.Errorf("events %q, want none", evs)
	}
}

// Images never used go before used ones, the first detected first.
func TestNeverUsedGoBeforeUsedOnes(t *testing.T) {
	rt := newFakeRuntime(1000, map[string]uint64{"used": 100, "old": 100})
	f := newFixture(t, rt, func(o *Options) { o.HighThresholdPercent, o.LowThresholdPercent = 50, 45 })
	rt.use("used")
	f.mustPass(0)
	rt.use()
	rt.add("new", 100, false)
	f.mustPass(10 * time.Minute)
	rt.setOther(300) // 60%; down to 45%: 150 bytes
	f.mustPass(10 * time.Minute)
	if d := cmp.Diff([]string{"old", "new"}, rt.takeRemoved()); d != "" {
		t.Errorf("removed (-want +got):\n%s", d)
	}
}

// In use, pinned, the sandbox image and images younger than MinAge stay,
// however full the disk: the pass fails, with the kubelet's event.
func TestProtectedImagesStay(t *testing.T) {
	rt := newFakeRuntime(1000, map[string]uint64{"running": 200, "exited": 200, "pause": 100})
	rt.add("pinned", 100, true)
	rt.sandbox = "pause"
	f := newFixture(t, rt, nil)
	rt.add("young", 100, false)
	rt.use("running", "exited")
	f.mustPass(0)
	rt.setOther(200) // 90%
	err := f.pass(DefaultMinAge - time.Second)
	if !errors.Is(err, ErrNotEnoughFreed) {
		t.Fatalf("GarbageCollect: %v, want ErrNotEnoughFreed", err)
	}
	if got := rt.takeRemoved(); len(got) != 0 {
		t.Errorf("removed %v, all protected", got)
	}
	evs := f.events()
	if len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning FreeDiskSpaceFailed Insufficient free disk space on the node's image filesystem (90% of") {
		t.Errorf("events %q, want one FreeDiskSpaceFailed", evs)
	}
	if got := counter(t, f.m.metrics.failedPasses); got != 1 {
		t.Errorf("failed passes: %v, want 1", got)
	}

	// Once old enough, the young image may go.
	f.mustPass(time.Second)
	if d := cmp.Diff([]string{"young"}, rt.takeRemoved()); d != "" {
		t.Errorf("removed (-want +got):\n%s", d)
	}
}

// An image that disappears and comes back is new again: MinAge counts
// from its return.
func TestAnImageThatReturnsIsNew(t *testing.T) {
	rt := newFakeRuntime(1000, map[string]uint64{"a": 100})
	f := newFixture(t, rt, nil)
	f.mustPass(0)
	rt.mu.Lock()
	delete(rt.images, "a")
	rt.mu.Unlock()
	f.mustPass(time.Hour)
	rt.add("a", 100, false)
	rt.setOther(900)
	if err := f.pass(time.Minute); !errors.Is(err, ErrNotEnoughFreed) {
		t.Errorf("GarbageCollect: %v, want ErrNotEnoughFreed", err)
	}
	if got := rt.takeRemoved(); len(got) != 0 {
		t.Errorf("removed %v a minute after it returned", got)
	}
}

func TestMaxAgeRemovesImagesUnusedForLongerWhateverTheUsage(t *testing.T) {
	rt := newFakeRuntime(1000, map[string]uint64{"a": 100, "never": 100, "running": 100})
	rt.add("pinned", 100, true)
	f := newFixture(t, rt, func(o *Options) { o.MaxAge = 10 * time.Minute })
	rt.use("a", "running")
	f.mustPass(0)
	rt.use("running")
	f.mustPass(5 * time.Minute) // a last used at 0
	// The Manager has not watched for MaxAge yet: it cannot know.
	f.mustPass(5 * time.Minute)
	if got := rt.takeRemoved(); len(got) != 0 {
		t.Fatalf("removed %v before MaxAge since the start", got)
	}
	f.mustPass(time.Second)
	if d := cmp.Diff([]string{"never", "a"}, rt.takeRemoved()); d != "" {
		t.Errorf("removed (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"pinned", "running"}, rt.left()); d != "" {
		t.Errorf("left (-want +got):\n%s", d)
	}
	if got := counter(t, f.m.metrics.removed.WithLabelValues(reasonAge)); got != 2 {
		t.Errorf("images removed for age: %v, want 2", got)
	}

	rt.use()
	f.mustPass(10 * time.Minute) // running last used just now
	f.mustPass(time.Second)
	if d := cmp.Diff([]string{"running"}, rt.takeRemoved()); d != "" {
		t.Errorf("removed (-want +got):\n%s", d)
	}
}

// A removal that fails does not stop the others; the pass fails, and
// the next pass tries again.
func TestARemovalFailureDoesNotStopTheOthers(t *testing.T) {
	rt := newFakeRuntime(1000, map[string]uint64{"a": 100, "b": 100, "c": 100})
	rt.failRemove["a"] = true
	f := newFixture(t, rt, nil)
	f.mustPass(0)
	rt.setOther(600) // 90%; down to 80%: 100 bytes
	err := f.pass(DefaultMinAge)
	if err == nil || !strings.Contains(err.Error(), "read-only file system") {
		t.Fatalf("GarbageCollect: %v, want the removal's error", err)
	}
	if d := cmp.Diff([]string{"b"}, rt.takeRemoved()); d != "" {
		t.Errorf("removed (-want +got):\n%s", d)
	}
	if got := counter(t, f.m.metrics.removeFailures); got != 1 {
		t.Errorf("remove failures: %v, want 1", got)
	}
	delete(rt.failRemove, "a")
	rt.setOther(700)
	f.mustPass(time.Minute)
	if d := cmp.Diff([]string{"a"}, rt.takeRemoved()); d != "" {
		t.Errorf("removed on the next pass (-want +got):\n%s", d)
	}
}

func TestZeroCapacityIsAnError(t *testing.T) {
	rt := newFakeRuntime(0, nil)
	f := newFixture(t, rt, nil)
	if err := f.pass(0); err == nil {
		t.Fatal("GarbageCollect on a filesystem of no capacity: no error")
	}
	if evs := f.events(); len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning InvalidDiskCapacity ") {
		t.Errorf("events %q, want one InvalidDiskCapacity", evs)
	}
}

func TestValidate(t *testing.T) {
	rt := newFakeRuntime(1000, nil)
	for _, tc := range []struct {
		name string
		mod  func(*Options)
		want string // in the error; "" for none
	}{
		{"the defaults", func(*Options) {}, ""},
		{"always collect", func(o *Options) { o.HighThresholdPercent, o.LowThresholdPercent = 0, 0 }, "LowThresholdPercent 0 must be less than HighThresholdPercent 0"},
		{"off", func(o *Options) { o.HighThresholdPercent = 100 }, ""},
		{"high over 100", func(o *Options) { o.HighThresholdPercent = 101 }, "HighThresholdPercent 101 must be between 0 and 100"},
		{"low negative", func(o *Options) { o.LowThresholdPercent = -1 }, "LowThresholdPercent -1 must be between 0 and 100"},
		{"low equals high", func(o *Options) { o.LowThresholdPercent = 85 }, "LowThresholdPercent 85 must be less than HighThresholdPercent 85"},
		{"negative min age", func(o *Options) { o.MinAge = -time.Second }, "MinAge -1s must not be negative"},
		{"negative max age", func(o *Options) { o.MaxAge = -time.Second }, "MaxAge -1s must not be negative"},
		{"max age not over min age", func(o *Options) { o.MaxAge = 2 * time.Minute }, "MaxAge 2m0s must be greater than MinAge 2m0s"},
		{"max age", func(o *Options) { o.MaxAge = time.Hour }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Runtime: rt, HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: 2 * time.Minute}
			tc.mod(&o)
			err := o.Validate(nil)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v, want no error", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate: %v, want %q", err, tc.want)
			}
		})
	}
}

// Standalone, without a recorder, what would be an event is a log line.
func TestWithoutARecorderFailuresAreLogged(t *testing.T) {
	rt := newFakeRuntime(1000, map[string]uint64{"running": 900})
	f := newFixture(t, rt, func(o *Options) { o.Recorder = nil })
	rt.use("running")
	if err := f.pass(0); !errors.Is(err, ErrNotEnoughFreed) {
		t.Errorf("GarbageCollect: %v, want ErrNotEnoughFreed", err)
	}
}

// Before the eviction manager evicts a pod for disk, every unused image
// old enough goes, whatever the usage; images in use and young ones stay.
func TestFreeUnusedRemovesEveryUnusedImageOldEnough(t *testing.T) {
	rt := newFakeRuntime(1000, map[string]uint64{"a": 100, "b": 100, "c": 100})
	f := newFixture(t, rt, nil)
	rt.use("a")
	f.mustPass(0)
	f.clock.Step(DefaultMinAge)
	rt.add("young", 50, false)
	freed, err := f.m.FreeUnused(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"b", "c"}, rt.takeRemoved()); d != "" || freed != 200 {
		t.Errorf("freed %d, removed (-want +got):\n%s", freed, d)
	}
}

// AfterRemoval runs after a pass that removed images, once they are gone,
// and not after a pass that removed none.
func TestAfterRemovalFollowsThePassesThatRemoved(t *testing.T) {
	rt := newFakeRuntime(1000, map[string]uint64{"a": 100, "b": 100, "c": 100})
	var after [][]string // the runtime's images at each call
	f := newFixture(t, rt, func(o *Options) {
		o.AfterRemoval = func(ctx context.Context) {
			imgs, err := rt.ListImages(ctx)
			if err != nil {
				t.Error(err)
			}
			var ids []string
			for _, img := range imgs {
				ids = append(ids, img.ID)
			}
			slices.Sort(ids)
			after = append(after, ids)
		}
	})
	rt.use("a")
	f.mustPass(0)
	f.mustPass(DefaultMinAge)
	if len(after) != 0 {
		t.Fatalf("AfterRemoval called %d times with nothing removed", len(after))
	}
	rt.setOther(600) // 90%
	f.mustPass(time.Minute)
	if _, err := f.m.FreeUnused(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([][]string{{"a", "c"}, {"a"}}, after); d != "" {
		t.Errorf("the images at each AfterRemoval (-want +got):\n%s", d)
	}
}
