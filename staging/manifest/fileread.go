package manifest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// editorExtensions end the names of files that editors, package managers
// and downloaders leave beside the file they work on.
var editorExtensions = map[string]bool{
	".swp": true, ".swo": true, ".swn": true, ".swx": true, ".kate-swp": true,
	".tmp": true, ".temp": true, ".bak": true, ".orig": true, ".rej": true, ".old": true,
	".dpkg-old": true, ".dpkg-new": true, ".dpkg-dist": true, ".dpkg-tmp": true,
	".rpmnew": true, ".rpmsave": true, ".part": true, ".crdownload": true,
}

// isEditorArtifact reports whether name is a hidden file (which covers vim
// swap files, emacs lock links and the ..data links of atomic writers), a
// backup (name~), an emacs auto-save file (#name#), a JetBrains safe-write
// file, or carries one of the editorExtensions.
func isEditorArtifact(name string) bool {
	switch {
	case strings.HasPrefix(name, "."),
		strings.HasSuffix(name, "~"),
		strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"),
		strings.Contains(name, "___jb_"):
		return true
	}
	return editorExtensions[strings.ToLower(filepath.Ext(name))]
}

// hasExtension reports whether name ends in one of exts, ignoring case.
func hasExtension(name string, exts []string) bool {
	lower := strings.ToLower(name)
	for _, e := range exts {
		if strings.HasSuffix(lower, strings.ToLower(e)) && len(lower) > len(e) {
			return true
		}
	}
	return false
}

// ReadFile reads the manifest file at path as a manifest directory's
// source and ReadManifestFile do, without parsing it: following symlinks,
// refusing what is not a regular file or is larger than limit (a source
// may be configured below MaxManifestBytes). It never opens a FIFO or a
// device (which could block or never end), and a symlink loop is an
// error, not a hang. found is false, with no error, when there is no
// manifest at path: nothing is there, or a directory is. Every refusal is
// a *ManifestError.
func ReadFile(path string, limit int64) (data []byte, found bool, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		found, err := classifyStatError(path, err)
		return nil, found, err
	}
	if fi.IsDir() {
		return nil, false, nil
	}
	if !fi.Mode().IsRegular() {
		return nil, true, &ManifestError{Origin: path, Reason: ReasonRead, Detail: fmt.Sprintf("not a regular file (%s)", fi.Mode().Type())}
	}
	if fi.Size() > limit {
		return nil, true, tooLarge(path, fi.Size(), limit)
	}
	f, err := os.Open(path) // #nosec G304 -- a manifest under the operator's --manifest-dir
	if err != nil {
		found, err := classifyStatError(path, err)
		return nil, found, err
	}
	defer f.Close()
	// The file may grow between stat and read: read one byte past the limit
	// to notice.
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, true, &ManifestError{Origin: path, Reason: ReasonRead, Detail: err.Error()}
	}
	if int64(len(data)) > limit {
		return nil, true, tooLarge(path, int64(len(data)), limit)
	}
	return data, true, nil
}

// classifyStatError tells a missing file (not found, no error) from one
// that is there but cannot be read.
func classifyStatError(path string, err error) (found bool, _ error) {
	switch {
	case errors.Is(err, syscall.ELOOP):
		return true, &ManifestError{Origin: path, Reason: ReasonRead, Detail: "symlink loop (too many levels of symbolic links)"}
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(path); lerr == nil {
			return true, &ManifestError{Origin: path, Reason: ReasonRead, Detail: "broken symlink: its target does not exist"}
		}
		return false, nil
	}
	return true, &ManifestError{Origin: path, Reason: ReasonRead, Detail: err.Error()}
}

func tooLarge(path string, size, limit int64) error {
	return &ManifestError{Origin: path, Reason: ReasonTooLarge, Detail: fmt.Sprintf("%d bytes or more, the limit is %d", size, limit)}
}
