package config

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// maxConcurrentReads bounds the manifests the file source reads and parses
// at once. Two is enough for a small manifest never to wait behind a large
// one being parsed, and keeps the memory of parsing to two manifests'
// worth.
const maxConcurrentReads = 2

// asyncReads reads the files that events name off the Run goroutine, so
// that parsing a large manifest does not hold up the pickup of the others;
// Run applies each result when it comes. A file is read by one goroutine
// at a time: an event during its read asks for another read after it, and
// the outdated result is dropped. A session's reads end with it.
type asyncReads struct {
	s       *FileSource
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	slots   chan struct{}
	results chan fileRead
}

// readUnderWay is a file being read in the background.
type readUnderWay struct {
	gen   uint64
	again bool // the file changed since the read began
}

func (s *FileSource) newAsyncReads(ctx context.Context) *asyncReads {
	ctx, cancel := context.WithCancel(ctx)
	return &asyncReads{s: s, ctx: ctx, cancel: cancel,
		slots: make(chan struct{}, maxConcurrentReads), results: make(chan fileRead)}
}

// start reads path in the background; first is when its events began.
// Called on the Run goroutine.
func (a *asyncReads) start(path string, first time.Time) {
	if u := a.s.reading[path]; u != nil {
		u.again = true
		return
	}
	a.s.reads++
	gen := a.s.reads
	a.s.reading[path] = &readUnderWay{gen: gen}
	last := a.s.lastSum(path)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		select {
		case a.slots <- struct{}{}:
		case <-a.ctx.Done():
			return
		}
		r := a.s.read(path, last)
		<-a.slots
		r.gen, r.first = gen, first
		select {
		case a.results <- r:
		case <-a.ctx.Done():
		}
	}()
}

// finish reports whether r is to be applied: it is the read of its file
// under way (a full re-read since makes it stale), and the file did not
// change while it was read; if it did, the file is read again. Called on
// the Run goroutine.
func (a *asyncReads) finish(r fileRead) bool {
	u := a.s.reading[r.path]
	if u == nil || u.gen != r.gen {
		return false
	}
	delete(a.s.reading, r.path)
	if u.again {
		a.start(r.path, r.first)
		return false
	}
	return true
}

// applyReads applies r and every other read already done, then sends the
// pods if they changed.
func (s *FileSource) applyReads(ctx context.Context, reads *asyncReads, r fileRead) error {
	var picked []time.Time
	for {
		if reads.finish(r) && s.apply(r) {
			picked = append(picked, r.first)
		}
		select {
		case r = <-reads.results:
			continue
		default:
		}
		break
	}
	if len(picked) == 0 {
		return nil
	}
	if err := s.emit(ctx); err != nil {
		return err
	}
	for _, first := range picked {
		s.opts.Metrics.observePickup(s.opts.Clock.Since(first))
	}
	return nil
}

// stop ends the reads under way and waits for them: a read is bounded by
// MaxManifestBytes, so this is short.
func (a *asyncReads) stop() {
	a.cancel()
	a.wg.Wait()
	clear(a.s.reading)
}

// fileRead is what reading one manifest found. It is made off the Run
// goroutine and applied on it.
type fileRead struct {
	path string
	res  readResult
	err  error // why the file is refused, if it is
	sum  [sha256.Size]byte
	// unchanged: the content is what was read last, so nothing was parsed.
	unchanged bool
	pods      []*corev1.Pod
	// An asynchronous read's place among the reads of its file, and when
	// the event that asked for it came.
	gen   uint64
	first time.Time
}

// read reads and parses one manifest. It touches no state of the source,
// so any goroutine may run it; last is the sum of the content read before.
func (s *FileSource) read(path string, last *[sha256.Size]byte) fileRead {
	r := fileRead{path: path}
	data, res, err := readManifestFile(path, s.opts.MaxFileBytes)
	r.res, r.err = res, err
	if res != readOK {
		return r
	}
	r.sum = sha256.Sum256(data)
	if last != nil && *last == r.sum {
		r.unchanged = true // same content: same pods, or the same refusal
		return r
	}
	r.pods, r.err = s.parse(data, ParseOptions{
		NodeName: s.opts.NodeName, Source: podtypes.FileSource, Origin: path, Now: s.opts.Clock.Now(),
	})
	return r
}

// lastSum returns the sum of the content of path read last, or nil.
func (s *FileSource) lastSum(path string) *[sha256.Size]byte {
	e := s.state.entries[path]
	if e == nil || !e.read {
		return nil
	}
	sum := e.sum
	return &sum
}
