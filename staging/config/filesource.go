package config

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// ErrPathMissing is recorded (under the configured path) while the
// manifest directory or file does not exist.
var ErrPathMissing = errors.New("manifest path does not exist")

// FileOptions configure a FileSource. Path, NodeName and Sink are required.
type FileOptions struct {
	// Path is a directory of manifests (not descended into), or one file.
	Path     string
	NodeName string
	Sink     Sink
	// Extensions a manifest's name must end with, matched without regard
	// to case; default .yaml, .yml, .json. Hidden files and editor
	// artifacts are ignored whatever their extension. A single-file Path
	// is read whatever its name.
	Extensions []string
	// Debounce is how long a file must be quiet after an event before it
	// is read; default 5ms. Bursts of events are read at most every
	// 10*Debounce.
	Debounce time.Duration
	// ResyncInterval is the period of the full re-read that catches what
	// inotify misses (symlink targets, network filesystems); default 20s.
	ResyncInterval time.Duration
	// MaxFileBytes bounds a manifest's size; default and at most
	// manifest.MaxManifestBytes.
	MaxFileBytes int64
	// RetryMax caps the backoff while Path does not exist; default 5s.
	RetryMax time.Duration
	// SettleDelay is how long to wait before looking again at a file whose
	// read looked transient (gone while it held pods, empty, changing while
	// read), so that a writer that truncates, or removes and recreates, a
	// manifest never stops its pods; default 10*Debounce. After a few looks
	// the read is taken as it is.
	SettleDelay time.Duration
	// ChangeInterval is the least time between two changes of one file's
	// pods: an edit within it waits for its end and applies the newest
	// content, so a file rewritten in a loop moves its pods at most once
	// per interval. The first edit after a quiet interval applies at once.
	// Default 1s.
	ChangeInterval time.Duration
	// Holders maps pod full names to the file that held each before a
	// restart (the agent's checkpoint knows): when two files define one
	// name, the one that held it keeps it, as it would have had the agent
	// not restarted.
	Holders  map[string]string
	Recorder EventRecorder
	Logger   logr.Logger
	Clock    clock.Clock
	Metrics  *Metrics
}

// FileSource watches a directory of static pod manifests and sends the
// pods of all valid files to its Sink as a SET, every time they change.
type FileSource struct {
	opts    FileOptions
	log     logr.Logger
	nodeRef *corev1.ObjectReference

	// state, pending and the reads below are owned by the Run goroutine.
	state   *fileState
	pending map[string]*pendingFile
	// reading holds the files being read in the background; reads counts
	// the reads started, batches the windows (flushes) that started them.
	// A window's reads are resolved together, once all of them are done,
	// so that their order cannot change which file wins a name: open
	// counts the reads under way per window, unresolved lists the windows
	// whose results are applied but not resolved yet, and picked holds when
	// the changes waiting for resolution were first seen.
	reading    map[string]*readUnderWay
	reads      uint64
	batches    uint64
	open       map[uint64]int
	unresolved map[uint64]bool
	picked     []time.Time
	// parse is manifest.ParseManifest; a test may slow it down.
	parse func([]byte, manifest.ParseOptions) ([]*corev1.Pod, error)
	// newWatcher is fsnotify.NewWatcher; a test may make it fail.
	newWatcher func() (*fsnotify.Watcher, error)
	sent       bool // a SET was sent since the path (re)appeared
	singleFile string

	mu        sync.Mutex
	published map[string]error
}

// validate reports every invalid option at once, each wrapping
// ErrInvalidOptions and naming the field; zero means the default.
func (o FileOptions) validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: FileOptions.%s", ErrInvalidOptions, fmt.Sprintf(format, args...)))
	}
	for _, f := range []struct {
		name    string
		missing bool
	}{{"Path", o.Path == ""}, {"NodeName", o.NodeName == ""}, {"Sink", o.Sink == nil}} {
		if f.missing {
			bad("%s is required", f.name)
		}
	}
	if o.MaxFileBytes > manifest.MaxManifestBytes {
		bad("MaxFileBytes %d is above MaxManifestBytes (%d), the most a manifest may hold", o.MaxFileBytes, manifest.MaxManifestBytes)
	}
	if o.MaxFileBytes < 0 {
		bad("MaxFileBytes is negative (%d)", o.MaxFileBytes)
	}
	for name, d := range map[string]time.Duration{
		"Debounce": o.Debounce, "ResyncInterval": o.ResyncInterval, "RetryMax": o.RetryMax,
		"SettleDelay": o.SettleDelay, "ChangeInterval": o.ChangeInterval,
	} {
		if d < 0 {
			bad("%s is negative (%v)", name, d)
		}
	}
	return errors.Join(errs...)
}

// NewFileSource returns a FileSource, or an error naming a missing option.
func NewFileSource(opts FileOptions) (*FileSource, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.Debounce == 0 {
		opts.Debounce = 5 * time.Millisecond
	}
	if opts.ResyncInterval == 0 {
		opts.ResyncInterval = 20 * time.Second
	}
	if opts.MaxFileBytes == 0 {
		opts.MaxFileBytes = manifest.MaxManifestBytes
	}
	if opts.RetryMax == 0 {
		opts.RetryMax = 5 * time.Second
	}
	if opts.SettleDelay == 0 {
		opts.SettleDelay = 10 * opts.Debounce
	}
	if opts.ChangeInterval == 0 {
		opts.ChangeInterval = time.Second
	}
	if opts.Recorder == nil {
		opts.Recorder = nopRecorder{}
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	opts.Path = filepath.Clean(opts.Path)
	return &FileSource{
		opts:       opts,
		log:        opts.Logger.WithName("file-source").WithValues("path", opts.Path),
		nodeRef:    nodeReference(opts.NodeName),
		state:      newFileState(opts.Holders),
		pending:    make(map[string]*pendingFile),
		reading:    make(map[string]*readUnderWay),
		open:       make(map[uint64]int),
		unresolved: make(map[uint64]bool),
		parse:      manifest.ParseManifest,
		newWatcher: fsnotify.NewWatcher,
		published:  make(map[string]error),
	}, nil
}

// Errors returns the current refusal of every refused file, by path, and
// ErrPathMissing under the configured path while it does not exist. A file
// whose last content was accepted has no entry.
func (s *FileSource) Errors() map[string]error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.published)
}

// Err returns the current refusal of one file, or nil.
func (s *FileSource) Err(path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.published[filepath.Clean(path)]
}

// candidate reports whether a name in the watched directory is a manifest.
func (s *FileSource) candidate(name string) bool {
	if s.singleFile != "" {
		return name == s.singleFile
	}
	return manifest.IsManifestName(name, s.opts.Extensions...)
}

// refreshResult says what a read of one file found.
type refreshResult int

const (
	readSame      refreshResult = iota // what the file defines did not change
	readChanged                        // it changed (or the file is gone)
	readUnsettled                      // the read looked transient: look again later
)

// refresh re-reads one file in place (a full re-read) and reports whether
// what it defines changed. A read of the file still under way is older:
// it is dropped.
func (s *FileSource) refresh(path string, attempt int) refreshResult {
	s.doneReading(path)
	return s.apply(s.read(path, s.lastSum(path), s.holds(path), attempt))
}

// holds reports whether path has accepted pods.
func (s *FileSource) holds(path string) bool {
	e := s.state.entries[path]
	return e != nil && len(e.pods) > 0
}

// apply records what a read found and reports whether what the file
// defines changed. Which pods are accepted is resolve's to decide.
func (s *FileSource) apply(r fileRead) refreshResult {
	switch {
	case r.unsettled:
		return readUnsettled
	case r.res == readAbsent:
		if s.forget(r.path) {
			return readChanged
		}
		return readSame
	case r.res == readFailed:
		e := s.state.entry(r.path)
		changed := e.read || e.invalid == nil || e.invalid.Error() != r.err.Error()
		e.read, e.parsed, e.invalid = false, nil, r.err
		if changed {
			return readChanged
		}
		return readSame
	case r.unchanged:
		return readSame
	}
	e := s.state.entry(r.path)
	if e.read {
		e.changedAt = s.opts.Clock.Now()
	}
	e.sum, e.read = r.sum, true
	e.parsed, e.invalid = r.pods, r.err
	return readChanged
}

// forget drops a file that is gone and reports whether anything went with it.
func (s *FileSource) forget(path string) bool {
	return s.state.drop(path) || s.Err(path) != nil
}

// resolve decides which pods are accepted (see fileState.resolve),
// publishes each file's refusal, and reports whether the accepted pods
// changed.
func (s *FileSource) resolve() bool {
	changed := s.state.resolve()
	for path := range s.publishedPaths() {
		if _, ok := s.state.entries[path]; !ok {
			s.clearError(path)
		}
	}
	for _, path := range s.state.paths() {
		e := s.state.entries[path]
		if e.err != nil {
			s.setError(path, e, e.err)
		} else {
			s.clearError(path)
		}
	}
	return changed
}

func (s *FileSource) publishedPaths() map[string]error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.published)
}

func (s *FileSource) setError(path string, e *fileEntry, err error) {
	s.mu.Lock()
	old := s.published[path]
	s.published[path] = err
	s.mu.Unlock()
	if old != nil && old.Error() == err.Error() {
		return
	}
	reason := reasonOf(err)
	kept := len(e.pods)
	s.log.Error(err, "Refusing manifest", "file", path, "reason", reason, "keptPods", kept)
	s.opts.Recorder.Eventf(s.nodeRef, corev1.EventTypeWarning, eventReasonFailedValidation,
		"static pod manifest refused, %d previously accepted pod(s) kept: %v", kept, err)
	s.opts.Metrics.countRefused(podtypes.FileSource, reason)
}

func (s *FileSource) clearError(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.published[path]; ok {
		delete(s.published, path)
		s.log.Info("Manifest accepted again", "file", path)
	}
}

// emit sends the accepted pods as a SET.
func (s *FileSource) emit(ctx context.Context) error {
	s.sent = true
	u := podtypes.PodUpdate{Op: podtypes.SET, Source: podtypes.FileSource, Pods: copyPods(s.state.pods())}
	if err := s.opts.Sink.Merge(ctx, u); err != nil && ctx.Err() == nil {
		s.log.Error(err, "The sink refused an update")
	}
	return ctx.Err()
}
