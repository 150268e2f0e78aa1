package config

import (
	"context"
	"sync"
	"time"
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

// stop ends the reads under way and waits for them: a read is bounded by
// MaxManifestBytes, so this is short.
func (a *asyncReads) stop() {
	a.cancel()
	a.wg.Wait()
	clear(a.s.reading)
}
