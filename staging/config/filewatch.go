package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"k8s.io/utils/clock"
)

var errWatchEnded = errors.New("the watch ended")

// errWatchAvailable ends a session that ran without inotify once a watch
// can be had again: the next session watches.
var errWatchAvailable = errors.New("inotify is available again")

// Run watches the manifests until ctx ends, and returns nil then. A
// missing path is not an error: it counts as no pods, and is retried with
// backoff until it appears. Any other failure (the watch breaks, the
// directory cannot be listed) keeps the pods and starts over after the
// same backoff.
func (s *FileSource) Run(ctx context.Context) error {
	const retryMin = 50 * time.Millisecond
	delay := retryMin
	for {
		started, err := s.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errWatchAvailable) {
			s.log.Info("inotify is available again; watching the manifests")
			continue
		}
		if started {
			delay = retryMin
		}
		// Only a path that is gone takes its pods with it; a watch that
		// failed otherwise starts over, keeping them.
		if _, statErr := os.Stat(s.opts.Path); errors.Is(statErr, fs.ErrNotExist) {
			if s.pathMissing(ctx, statErr) != nil {
				return nil
			}
		} else {
			s.log.Error(err, "Watching the manifests failed; starting over")
			s.mu.Lock()
			s.published[s.opts.Path] = fmt.Errorf("%s: %w", s.opts.Path, err)
			s.mu.Unlock()
		}
		t := s.opts.Clock.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
		delay = min(2*delay, s.opts.RetryMax)
	}
}

// pathMissing drops every pod and records why, once per disappearance.
func (s *FileSource) pathMissing(ctx context.Context, cause error) error {
	err := fmt.Errorf("%s: %w: %w", s.opts.Path, ErrPathMissing, cause)
	s.mu.Lock()
	_, known := s.published[s.opts.Path]
	s.published[s.opts.Path] = err
	s.mu.Unlock()
	if !known {
		s.log.Info("Manifest path is not there; retrying", "reason", cause.Error())
	}
	hadPods := len(s.state.pods()) > 0
	for _, path := range s.state.paths() {
		s.state.drop(path)
		s.clearError(path)
	}
	if hadPods || !s.sent {
		return s.emit(ctx) // no pods, and the source is ready
	}
	return nil
}

// session watches the path while it exists. started says whether it got
// as far as a first full read.
func (s *FileSource) session(ctx context.Context) (started bool, err error) {
	fi, err := os.Stat(s.opts.Path)
	if err != nil {
		return false, err
	}
	dir := s.opts.Path
	s.singleFile = ""
	if !fi.IsDir() {
		dir, s.singleFile = filepath.Dir(s.opts.Path), filepath.Base(s.opts.Path)
	}
	w, err := s.watch(dir)
	if err != nil {
		s.log.Error(err, "inotify is unavailable (its instances or watches may be used up on this host); falling back to periodic re-reads, and trying again at each", "interval", s.opts.ResyncInterval)
	} else {
		defer w.Close()
	}
	s.mu.Lock()
	delete(s.published, s.opts.Path)
	s.mu.Unlock()
	if err := s.scan(ctx); err != nil {
		return false, err
	}
	return true, s.loop(ctx, w, dir)
}

// scan re-reads every manifest and sends the pods if they changed, or if
// nothing was sent yet. What looks transient (a file gone that held pods,
// an empty file, one changing while read) is left as it was and queued
// for another look.
func (s *FileSource) scan(ctx context.Context) error {
	changed := false
	seen := make(map[string]bool)
	look := func(path string) {
		switch s.refresh(path, 0) {
		case readChanged:
			changed = true
		case readUnsettled:
			s.settle(path, s.opts.Clock.Now(), 1)
		}
	}
	if s.singleFile != "" {
		look(s.opts.Path)
		seen[s.opts.Path] = true
	} else {
		ents, err := os.ReadDir(s.opts.Path)
		if err != nil {
			return err
		}
		for _, ent := range ents {
			if !s.candidate(ent.Name()) {
				continue
			}
			path := filepath.Join(s.opts.Path, ent.Name())
			seen[path] = true
			look(path)
		}
	}
	for _, path := range s.state.paths() {
		if !seen[path] {
			look(path)
		}
	}
	if changed && s.resolve() || !s.sent {
		return s.emit(ctx)
	}
	return ctx.Err()
}

// settle queues another look at a file whose read looked transient.
// first is when the change it belongs to was first seen.
func (s *FileSource) settle(path string, first time.Time, attempt int) {
	now := s.opts.Clock.Now()
	s.pending[path] = &pendingFile{first: first, last: now, notBefore: now.Add(s.opts.SettleDelay), attempt: attempt}
}

// maxSettleAttempts bounds the looks again at a file whose reads keep
// looking transient: the next read is taken as it is.
const maxSettleAttempts = 5

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// pendingFile is a file with unread events.
type pendingFile struct {
	first, last time.Time
	// notBefore: a look again after a transient read, or the end of the
	// file's change interval.
	notBefore time.Time
	// attempt counts the looks at a file whose reads look transient.
	attempt int
}

// loop handles events until ctx ends or the path goes away.
func (s *FileSource) loop(ctx context.Context, w *fsnotify.Watcher, dir string) error {
	var events chan fsnotify.Event
	var watchErrs chan error
	if w != nil {
		events, watchErrs = w.Events, w.Errors
	}
	resync := s.opts.Clock.NewTimer(s.opts.ResyncInterval)
	defer resync.Stop()
	var debounce clock.Timer
	defer func() {
		if debounce != nil {
			debounce.Stop()
		}
	}()
	pending := s.pending
	rescan := false
	reads := s.newAsyncReads(ctx)
	defer reads.stop()

	for {
		var fire <-chan time.Time
		if debounce != nil {
			fire = debounce.C()
		}
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				return errWatchEnded
			}
			if ev.Name == dir && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				return fmt.Errorf("%s was removed or renamed", dir)
			}
			path, full := s.classify(ev)
			now := s.opts.Clock.Now()
			switch {
			case full:
				rescan = true
			case path != "":
				if p := pending[path]; p != nil {
					p.last = now
				} else {
					pending[path] = &pendingFile{first: now, last: now}
				}
			default:
				continue
			}
			if debounce == nil {
				debounce = s.opts.Clock.NewTimer(s.opts.Debounce)
			}
		case err, ok := <-watchErrs:
			if !ok {
				return errWatchEnded
			}
			s.log.Error(err, "inotify reported an error; re-reading everything")
			rescan = true
			if debounce == nil {
				debounce = s.opts.Clock.NewTimer(s.opts.Debounce)
			}
		case r := <-reads.results:
			settling, err := s.applyReads(ctx, reads, r)
			if err != nil {
				return err
			}
			if settling && debounce == nil {
				debounce = s.opts.Clock.NewTimer(s.opts.SettleDelay)
			}
		case <-fire:
			debounce = nil
			next, err := s.flush(ctx, pending, &rescan, reads)
			if err != nil {
				return err
			}
			if next > 0 {
				debounce = s.opts.Clock.NewTimer(next)
			}
		case <-resync.C():
			if w == nil {
				// Without inotify, each resync tries for it again: a host
				// whose instances were used up may have freed some, and a
				// watch brings back pickups in milliseconds, not seconds.
				if probe, err := s.watch(dir); err == nil {
					_ = probe.Close()
					return errWatchAvailable
				}
			}
			if err := s.scan(ctx); err != nil {
				return err
			}
			resync.Reset(s.opts.ResyncInterval)
			if len(pending) > 0 && debounce == nil {
				debounce = s.opts.Clock.NewTimer(s.opts.Debounce) // looks again the scan queued
			}
		}
	}
}

// watch watches dir with inotify.
func (s *FileSource) watch(dir string) (*fsnotify.Watcher, error) {
	w, err := s.newWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(dir); err != nil {
		_ = w.Close() // the Add error is the one to report
		return nil, err
	}
	return w, nil
}

// classify maps an event to the manifest it concerns, or asks for a full
// re-read when a directory or symlink (such as an atomic writer's ..data)
// changed, since that can change what the manifests resolve to.
func (s *FileSource) classify(ev fsnotify.Event) (path string, rescan bool) {
	name := filepath.Base(ev.Name)
	if s.candidate(name) {
		return ev.Name, false
	}
	if s.singleFile != "" || ev.Has(fsnotify.Write) || ev.Has(fsnotify.Chmod) {
		return "", false
	}
	fi, err := os.Lstat(ev.Name)
	if err != nil {
		// Gone: only a link or directory that manifests resolve through
		// matters, and there is no telling any more; re-read if it was
		// hidden like an atomic writer's links.
		return "", strings.HasPrefix(name, "..")
	}
	return "", fi.IsDir() || fi.Mode()&os.ModeSymlink != 0
}

// flush starts reading the files that are due, as one window whose
// results are resolved together (a full re-read, if one is asked for,
// happens at once), and returns when to fire next (0: nothing pending).
func (s *FileSource) flush(ctx context.Context, pending map[string]*pendingFile, rescan *bool, reads *asyncReads) (time.Duration, error) {
	now := s.opts.Clock.Now()
	maxWait := 10 * s.opts.Debounce
	if *rescan {
		*rescan = false
		if err := s.scan(ctx); err != nil {
			return 0, err
		}
	}
	s.batches++
	batch := s.batches
	var next time.Duration
	for path, p := range pending {
		wait := min(p.last.Add(s.opts.Debounce).Sub(now), p.first.Add(maxWait).Sub(now))
		if e := s.state.entries[path]; e != nil && !e.changedAt.IsZero() {
			// A file whose content changed lately waits out its change
			// interval: a flapping file moves its pods at most once per
			// interval, with the newest content.
			p.notBefore = later(p.notBefore, e.changedAt.Add(s.opts.ChangeInterval))
		}
		wait = max(wait, p.notBefore.Sub(now))
		if wait > 0 {
			if next == 0 || wait < next {
				next = wait
			}
			continue
		}
		delete(pending, path)
		reads.start(path, p.first, p.attempt, batch)
	}
	return next, nil
}
