package manifest

import (
	corev1 "k8s.io/api/core/v1"
)

// defaultExtensions end the names of the files a manifest directory's
// source reads, unless it is configured with others.
var defaultExtensions = []string{".yaml", ".yml", ".json"}

// IsManifestName reports whether a manifest directory's source reads a file
// of this name: not hidden, not an editor's or package manager's artifact,
// and ending in one of extensions (matched without regard to case), by
// default .yaml, .yml or .json. Tools that write into a manifest directory
// use it to name their temporary files so that the source never reads
// them; the file source of staging/config passes its configured
// extensions.
func IsManifestName(name string, extensions ...string) bool {
	if len(extensions) == 0 {
		extensions = defaultExtensions
	}
	return !isEditorArtifact(name) && hasExtension(name, extensions)
}

// ReadManifestFile reads the manifest at path and parses it as a manifest
// directory's source does, with the same bounds (MaxManifestBytes, no FIFO
// or device, symlinks followed, loops refused). opts.Origin defaults to
// path. Every refusal is a *ManifestError.
func ReadManifestFile(path string, opts ParseOptions) ([]*corev1.Pod, error) {
	data, found, err := ReadFile(path, MaxManifestBytes)
	switch {
	case err != nil:
		return nil, err
	case !found:
		// The detail reads as the file source's ErrPathMissing does.
		return nil, &ManifestError{Origin: path, Reason: ReasonRead, Detail: "no such file (manifest path does not exist)"}
	}
	if opts.Origin == "" {
		opts.Origin = path
	}
	return ParseManifest(data, opts)
}
