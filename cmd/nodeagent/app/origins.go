package app

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeagent/nodeagent/staging/config"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// originIndex finds which manifest file a static pod came from. A static
// pod's UID hashes its manifest and its file's path, so parsing each file
// as the file source does gives back the UIDs it defines. Files are
// re-parsed only when their size or modification time changes.
type originIndex struct {
	path, node string

	mu    sync.Mutex
	files map[string]parsedFile
}

type parsedFile struct {
	mod  time.Time
	size int64
	uids []types.UID
}

func newOriginIndex(path, node string) *originIndex {
	return &originIndex{path: filepath.Clean(path), node: node, files: map[string]parsedFile{}}
}

// snapshot maps the UID of every pod the manifests define now to its file.
func (x *originIndex) snapshot() map[types.UID]string {
	x.mu.Lock()
	defer x.mu.Unlock()
	seen := map[string]bool{}
	for _, p := range x.candidates() {
		seen[p] = true
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			delete(x.files, p)
			continue
		}
		if f, ok := x.files[p]; ok && f.mod.Equal(fi.ModTime()) && f.size == fi.Size() {
			continue
		}
		f := parsedFile{mod: fi.ModTime(), size: fi.Size()}
		if data, err := os.ReadFile(p); err == nil { // #nosec G304 -- p is a manifest under the operator's --manifest-dir
			pods, _ := config.ParseManifest(data, config.ParseOptions{NodeName: x.node, Source: podtypes.FileSource, Origin: p})
			for _, pod := range pods {
				f.uids = append(f.uids, pod.UID)
			}
		}
		x.files[p] = f
	}
	out := map[types.UID]string{}
	for p, f := range x.files {
		if !seen[p] {
			delete(x.files, p)
			continue
		}
		for _, uid := range f.uids {
			out[uid] = p
		}
	}
	return out
}

// candidates lists the files that may be manifests: the configured file
// itself, or the visible files of the directory with a manifest extension.
func (x *originIndex) candidates() []string {
	fi, err := os.Stat(x.path)
	if err != nil {
		return nil
	}
	if !fi.IsDir() {
		return []string{x.path}
	}
	entries, err := os.ReadDir(x.path)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		ext := strings.ToLower(filepath.Ext(name))
		if strings.HasPrefix(name, ".") || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			continue
		}
		out = append(out, filepath.Join(x.path, name))
	}
	return out
}
