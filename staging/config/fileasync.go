package config

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/manifest"
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
	batch uint64 // the window (flush) that asked for it
	again bool   // the file changed since the read began
}

func (s *FileSource) newAsyncReads(ctx context.Context) *asyncReads {
	ctx, cancel := context.WithCancel(ctx)
	return &asyncReads{s: s, ctx: ctx, cancel: cancel,
		slots: make(chan struct{}, maxConcurrentReads), results: make(chan fileRead)}
}

// start reads path in the background for window batch; first is when its
// events began, attempt how many looks at it came before. Called on the
// Run goroutine.
func (a *asyncReads) start(path string, first time.Time, attempt int, batch uint64) {
	s := a.s
	if u := s.reading[path]; u != nil {
		u.again = true
		return
	}
	s.reads++
	gen := s.reads
	s.reading[path] = &readUnderWay{gen: gen, batch: batch}
	s.open[batch]++
	last, holds := s.lastSum(path), s.holds(path)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		select {
		case a.slots <- struct{}{}:
		case <-a.ctx.Done():
			return
		}
		r := s.read(path, last, holds, attempt)
		<-a.slots
		r.gen, r.first, r.batch = gen, first, batch
		select {
		case a.results <- r:
		case <-a.ctx.Done():
		}
	}()
}

// doneReading forgets the read of path under way, if any.
func (s *FileSource) doneReading(path string) {
	u := s.reading[path]
	if u == nil {
		return
	}
	delete(s.reading, path)
	if s.open[u.batch]--; s.open[u.batch] <= 0 {
		delete(s.open, u.batch)
	}
}

// finish reports whether r is to be applied: it is the read of its file
// under way (a full re-read since makes it stale), and the file did not
// change while it was read; if it did, the file is read again, in the same
// window. Called on the Run goroutine.
func (a *asyncReads) finish(r fileRead) bool {
	u := a.s.reading[r.path]
	if u == nil || u.gen != r.gen {
		return false
	}
	a.s.doneReading(r.path)
	if u.again {
		a.start(r.path, r.first, r.attempt, u.batch)
		return false
	}
	return true
}

// applyReads applies r and every other read already done, then, once no
// read of the windows they belong to is under way, resolves them together
// and sends the pods if they changed. It reports whether a read looked
// transient and was queued for another look.
func (s *FileSource) applyReads(ctx context.Context, reads *asyncReads, r fileRead) (settling bool, err error) {
	for {
		if reads.finish(r) {
			switch s.apply(r) {
			case readChanged:
				s.unresolved[r.batch] = true
				s.picked = append(s.picked, r.first)
			case readUnsettled:
				s.settle(r.path, r.first, r.attempt+1)
				settling = true
			}
		}
		select {
		case r = <-reads.results:
			continue
		default:
		}
		break
	}
	if len(s.unresolved) == 0 {
		return settling, nil
	}
	for b := range s.unresolved {
		if s.open[b] > 0 {
			return settling, nil // a read of the same window is under way
		}
	}
	clear(s.unresolved)
	picked := s.picked
	s.picked = nil
	if !s.resolve() {
		return settling, nil
	}
	if err := s.emit(ctx); err != nil {
		return settling, err
	}
	for _, first := range picked {
		s.opts.Metrics.observePickup(s.opts.Clock.Since(first))
	}
	return settling, nil
}

// stop ends the reads under way and waits for them: a read is bounded by
// manifest.MaxManifestBytes, so this is short.
func (a *asyncReads) stop() {
	a.cancel()
	a.wg.Wait()
	clear(a.s.reading)
	clear(a.s.open)
}

// readResult says what manifest.ReadFile found.
type readResult int

const (
	readOK     readResult = iota
	readAbsent            // gone, or a directory: not a manifest
	readFailed            // there, but refused; the error says why
)

// fileRead is what reading one manifest found. It is made off the Run
// goroutine and applied on it.
type fileRead struct {
	path string
	res  readResult
	err  error // why the file is refused, if it is
	sum  [sha256.Size]byte
	// unchanged: the content is what was read last, so nothing was parsed.
	unchanged bool
	// unsettled: the read looked transient (see read); nothing was parsed.
	unsettled bool
	pods      []*corev1.Pod
	// attempt counts the looks at the file before this one. An
	// asynchronous read's place among the reads of its file, its window,
	// and when the event that asked for it came.
	attempt int
	gen     uint64
	batch   uint64
	first   time.Time
}

// read reads and parses one manifest. It touches no state of the source,
// so any goroutine may run it; last is the sum of the content read before,
// holds whether the file has accepted pods. A read that looks transient is
// marked unsettled instead of parsed: the first look at a file that holds
// pods and is gone, or is empty (a writer between truncating and writing),
// and a file that changed while it was read (up to maxSettleAttempts
// looks).
func (s *FileSource) read(path string, last *[sha256.Size]byte, holds bool, attempt int) fileRead {
	r := fileRead{path: path, attempt: attempt}
	before, statErr := os.Stat(path)
	data, found, err := manifest.ReadFile(path, s.opts.MaxFileBytes)
	r.err = err
	switch {
	case err != nil:
		r.res = readFailed
		return r
	case !found:
		r.res = readAbsent
		r.unsettled = holds && attempt == 0
		return r
	}
	after, afterErr := os.Stat(path)
	moved := statErr != nil || afterErr != nil || before.Size() != after.Size() || !before.ModTime().Equal(after.ModTime())
	if moved && attempt < maxSettleAttempts || holds && attempt == 0 && len(bytes.TrimSpace(data)) == 0 {
		r.unsettled = true
		return r
	}
	r.sum = sha256.Sum256(data)
	if last != nil && *last == r.sum {
		r.unchanged = true // same content: same pods, or the same refusal
		return r
	}
	r.pods, r.err = s.parse(data, manifest.ParseOptions{
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
