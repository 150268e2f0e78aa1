package config

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// defaultExtensions end the names of the files a manifest directory's
// source reads, unless FileOptions.Extensions says otherwise.
var defaultExtensions = []string{".yaml", ".yml", ".json"}

// IsManifestName reports whether a FileSource with the default extensions
// reads a file of this name in its directory: not hidden, not an editor's
// or package manager's artifact, and named *.yaml, *.yml or *.json. Tools
// that write into a manifest directory use it to name their temporary
// files so that the source never reads them.
func IsManifestName(name string) bool {
	return !isEditorArtifact(name) && hasExtension(name, defaultExtensions)
}

// ReadManifestFile reads the manifest at path and parses it as a
// FileSource does, with the same bounds (MaxManifestBytes, no FIFO or
// device, symlinks followed, loops refused). opts.Origin defaults to path.
// Every refusal is a *ManifestError.
func ReadManifestFile(path string, opts ParseOptions) ([]*corev1.Pod, error) {
	data, res, err := readManifestFile(path, MaxManifestBytes)
	switch res {
	case readFailed:
		return nil, err
	case readAbsent:
		return nil, &ManifestError{Origin: path, Reason: ReasonRead, Detail: fmt.Sprintf("no such file (%v)", ErrPathMissing)}
	}
	if opts.Origin == "" {
		opts.Origin = path
	}
	return ParseManifest(data, opts)
}
