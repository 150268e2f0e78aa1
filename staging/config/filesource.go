package config

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

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
	// MaxManifestBytes.
	MaxFileBytes int64
	// RetryMax caps the backoff while Path does not exist; default 5s.
	RetryMax time.Duration
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

	// state is owned by the Run goroutine.
	state      *fileState
	sent       bool // a SET was sent since the path (re)appeared
	singleFile string

	// reading holds the files being read in the background; reads counts
	// the reads started. Both are owned by the Run goroutine.
	reading map[string]*readUnderWay
	reads   uint64
	// parse is ParseManifest; a test may slow it down.
	parse func([]byte, ParseOptions) ([]*corev1.Pod, error)

	mu        sync.Mutex
	published map[string]error
}

// NewFileSource returns a FileSource, or an error naming a missing option.
func NewFileSource(opts FileOptions) (*FileSource, error) {
	switch {
	case opts.Path == "":
		return nil, errors.New("config: FileOptions.Path is required")
	case opts.NodeName == "":
		return nil, errors.New("config: FileOptions.NodeName is required")
	case opts.Sink == nil:
		return nil, errors.New("config: FileOptions.Sink is required")
	case opts.MaxFileBytes > MaxManifestBytes:
		return nil, fmt.Errorf("config: FileOptions.MaxFileBytes %d is above MaxManifestBytes (%d), the most a manifest may hold", opts.MaxFileBytes, MaxManifestBytes)
	}
	if len(opts.Extensions) == 0 {
		opts.Extensions = []string{".yaml", ".yml", ".json"}
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 5 * time.Millisecond
	}
	if opts.ResyncInterval <= 0 {
		opts.ResyncInterval = 20 * time.Second
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = MaxManifestBytes
	}
	if opts.RetryMax <= 0 {
		opts.RetryMax = 5 * time.Second
	}
	if opts.Recorder == nil {
		opts.Recorder = nopRecorder{}
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	opts.Path = filepath.Clean(opts.Path)
	return &FileSource{
		opts:      opts,
		log:       opts.Logger.WithName("file-source").WithValues("path", opts.Path),
		nodeRef:   nodeReference(opts.NodeName),
		state:     newFileState(),
		reading:   make(map[string]*readUnderWay),
		parse:     ParseManifest,
		published: make(map[string]error),
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
	return !isEditorArtifact(name) && hasExtension(name, s.opts.Extensions)
}

// refresh re-reads one file in place and reports whether the accepted pods
// changed. A read of the file still under way is older: it is dropped.
func (s *FileSource) refresh(path string) bool {
	delete(s.reading, path)
	return s.apply(s.read(path, s.lastSum(path)))
}

// apply records what a read found and reports whether the accepted pods
// changed.
func (s *FileSource) apply(r fileRead) bool {
	switch r.res {
	case readAbsent:
		return s.forget(r.path)
	case readFailed:
		e := s.state.entry(r.path)
		e.read, e.held = false, nil
		s.setError(r.path, e, r.err)
		return false
	}
	if r.unchanged {
		return false
	}
	e := s.state.entry(r.path)
	e.sum, e.read, e.held = r.sum, true, nil
	if r.err != nil {
		s.setError(r.path, e, r.err)
		return false
	}
	if holder, full := s.state.conflict(r.path, r.pods); holder != "" {
		e.held = r.pods
		s.setError(r.path, e, &ManifestError{Origin: r.path, Reason: ReasonDuplicate,
			Detail: fmt.Sprintf("pod full name %s is already defined by %s", full, holder)})
		return false
	}
	if s.state.accept(r.path, r.pods) {
		s.acceptHeld()
	}
	s.clearError(r.path)
	return true
}

// forget drops a file that is gone and reports whether pods went with it.
func (s *FileSource) forget(path string) bool {
	hadPods := s.state.drop(path)
	s.clearError(path)
	if hadPods {
		s.acceptHeld()
	}
	return hadPods
}

// acceptHeld accepts held pods whose full names are free now, files in
// lexical order.
func (s *FileSource) acceptHeld() {
	for again := true; again; {
		again = false
		for _, path := range s.state.paths() {
			e := s.state.entries[path]
			if e.held == nil {
				continue
			}
			if holder, _ := s.state.conflict(path, e.held); holder != "" {
				continue
			}
			s.log.Info("Accepting a manifest whose pod name was freed", "file", path)
			again = s.state.accept(path, e.held) || again
			s.clearError(path)
		}
	}
}

func (s *FileSource) setError(path string, e *fileEntry, err error) {
	same := e.err != nil && e.err.Error() == err.Error()
	e.err = err
	if same {
		return
	}
	s.mu.Lock()
	s.published[path] = err
	s.mu.Unlock()
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
