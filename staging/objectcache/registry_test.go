package objectcache

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// recordingStore writes down every call the registry makes.
type recordingStore struct{ calls []string }

func (r *recordingStore) addRef(k objectKey)  { r.calls = append(r.calls, "add "+k.String()) }
func (r *recordingStore) dropRef(k objectKey) { r.calls = append(r.calls, "drop "+k.String()) }
func (r *recordingStore) refresh(k objectKey) { r.calls = append(r.calls, "refresh "+k.String()) }

func TestRegistryAppliesExactlyTheDifference(t *testing.T) {
	rec := &recordingStore{}
	r := newRegistry(ConfigMapNames, rec)
	p := func(name string, cms ...string) *corev1.Pod { return podWithConfigMaps(name, cms...) }
	renamedUID := p("p1", "a")
	renamedUID.UID = "uid-p1-second"

	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"register p1", func() { r.register(p("p1", "a", "b")) },
			[]string{"add default/a", "add default/b", "refresh default/a", "refresh default/b"}},
		{"register p1 unchanged: refresh only", func() { r.register(p("p1", "b", "a")) },
			[]string{"refresh default/a", "refresh default/b"}},
		{"p1 drops a, adds c", func() { r.register(p("p1", "b", "c")) },
			[]string{"add default/c", "refresh default/b", "refresh default/c", "drop default/a"}},
		{"p2 shares b: counted for p2", func() { r.register(p("p2", "b")) },
			[]string{"add default/b", "refresh default/b"}},
		{"a new pod with p1's name and another UID is another pod", func() { r.register(renamedUID) },
			[]string{"add default/a", "refresh default/a"}},
		{"p1 drops everything", func() { r.register(p("p1")) },
			[]string{"drop default/b", "drop default/c"}},
		{"unregister p1: nothing left", func() { r.unregister(p("p1")) }, nil},
		{"unregister p2", func() { r.unregister(p("p2")) }, []string{"drop default/b"}},
		{"unregister p2 again", func() { r.unregister(p("p2")) }, nil},
		{"unregister the second p1", func() { r.unregister(renamedUID) }, []string{"drop default/a"}},
	}
	for _, step := range steps {
		rec.calls = nil
		step.do()
		if diff := cmp.Diff(step.want, rec.calls); diff != "" {
			t.Errorf("%s (-want +got):\n%s", step.name, diff)
		}
	}
	if len(r.pods) != 0 {
		t.Errorf("registry still holds %v", r.pods)
	}
}

func TestDiffSorted(t *testing.T) {
	tests := []struct {
		prev, next, added, dropped []string
	}{
		{},
		{next: []string{"a"}, added: []string{"a"}},
		{prev: []string{"a"}, dropped: []string{"a"}},
		{prev: []string{"a", "c", "e"}, next: []string{"b", "c", "d", "f"}, added: []string{"b", "d", "f"}, dropped: []string{"a", "e"}},
		{prev: []string{"a", "b"}, next: []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.prev, "->", tt.next), func(t *testing.T) {
			added, dropped := diffSorted(tt.prev, tt.next)
			if diff := cmp.Diff([][]string{tt.added, tt.dropped}, [][]string{added, dropped}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
