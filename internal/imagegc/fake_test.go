package imagegc

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/nodeagent/nodeagent/internal/runtime"
)

// fakeRuntime holds images on a filesystem of Capacity bytes, which they
// fill by their sizes, on top of Other bytes of something else.
type fakeRuntime struct {
	mu       sync.Mutex
	images   map[string]runtime.Image
	inUse    map[string]bool
	sandbox  string
	capacity uint64
	other    uint64
	// failRemove: removing these IDs fails; failList: listing fails.
	failRemove map[string]bool
	failList   error
	removed    []string
	lists      int
}

func newFakeRuntime(capacity uint64, sizes map[string]uint64) *fakeRuntime {
	f := &fakeRuntime{images: map[string]runtime.Image{}, inUse: map[string]bool{}, capacity: capacity, failRemove: map[string]bool{}}
	for id, size := range sizes {
		f.images[id] = runtime.Image{ID: id, Tags: []string{id + ":1"}, Size: size}
	}
	return f
}

// use sets the images in use.
func (f *fakeRuntime) use(ids ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inUse = map[string]bool{}
	for _, id := range ids {
		f.inUse[id] = true
	}
}

func (f *fakeRuntime) setOther(n uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.other = n
}

func (f *fakeRuntime) add(id string, size uint64, pinned bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.images[id] = runtime.Image{ID: id, Size: size, Pinned: pinned}
}

func (f *fakeRuntime) takeRemoved() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.removed
	f.removed = nil
	return r
}

func (f *fakeRuntime) left() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for id := range f.images {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func (f *fakeRuntime) ListImages(context.Context) ([]runtime.Image, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	if f.failList != nil {
		return nil, f.failList
	}
	var out []runtime.Image
	for _, i := range f.images {
		out = append(out, i)
	}
	return out, nil
}

func (f *fakeRuntime) ImagesInUse(context.Context) (map[string]bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]bool{}
	for id := range f.inUse {
		out[id] = true
	}
	return out, nil
}

func (f *fakeRuntime) ImageFilesystem(context.Context) (runtime.ImageFs, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return runtime.ImageFs{Mountpoint: "/images", UsedBytes: f.usedLocked() - f.other}, nil
}

func (f *fakeRuntime) RemoveImage(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failRemove[id] {
		return errors.New("read-only file system")
	}
	delete(f.images, id)
	f.removed = append(f.removed, id)
	return nil
}

func (f *fakeRuntime) SandboxImage(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sandbox, nil
}

func (f *fakeRuntime) usedLocked() uint64 {
	used := f.other
	for _, i := range f.images {
		used += i.Size
	}
	return used
}

// statfs measures the fake filesystem.
func (f *fakeRuntime) statfs(path string) (FsStats, error) {
	if path != "/images" {
		return FsStats{}, errors.New("no such mountpoint")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return FsStats{Capacity: f.capacity, Available: f.capacity - min(f.capacity, f.usedLocked())}, nil
}

// usage is the filesystem's usage in percent, as the Manager computes it.
func (f *fakeRuntime) usage() int {
	st, _ := f.statfs("/images")
	return 100 - int(st.Available*100/st.Capacity)
}
