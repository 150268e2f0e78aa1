package app

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeagent/nodeagent/staging/manifest"
	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// manifestFile is one file of the manifest directory as the agent reads it.
type manifestFile struct {
	Path string
	Pods []*corev1.Pod // nil when refused
	Err  error
}

// parseOptions are the agent's: a pod's UID, and so its config hash,
// hashes the node name and the file's path as well as the manifest.
func parseOptions(node, origin string) manifest.ParseOptions {
	return manifest.ParseOptions{NodeName: node, Source: podtypes.FileSource, Origin: origin}
}

// scanDir reads every manifest of dir, in name order, as the agent does.
// It does not check names across files; the agent refuses the second
// file to define a full name, and apply refuses to write one.
func scanDir(dir, node string) ([]manifestFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("manifest directory: %w", err)
	}
	var out []manifestFile
	for _, e := range entries {
		if e.IsDir() || !manifest.IsManifestName(e.Name()) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		pods, err := manifest.ReadManifestFile(path, parseOptions(node, path))
		out = append(out, manifestFile{Path: path, Pods: pods, Err: err})
	}
	return out, nil
}

// nameMatches tells whether a pod (named <name>-<node>) is the one the
// operator names, as NAME, NAME-NODE or NAMESPACE/NAME.
func nameMatches(pod *corev1.Pod, name, node string) bool {
	if ns, n, ok := strings.Cut(name, "/"); ok {
		if ns != pod.Namespace {
			return false
		}
		name = n
	}
	return pod.Name == name || pod.Name == name+"-"+node
}

// lookup finds, in the manifest directory, the manifest that defines the
// pod name or is named so.
func (c *cli) lookup(name string) (manifestFile, error) {
	dir, err := c.settings.manifestDir()
	if err != nil {
		return manifestFile{}, err
	}
	ms, err := scanDir(dir, c.settings.NodeName)
	if err != nil {
		return manifestFile{}, err
	}
	return findManifest(ms, dir, name, c.settings.NodeName)
}

// findManifest returns the manifest of dir that defines the pod name, or
// the one named so (a path, or a file name in dir).
func findManifest(ms []manifestFile, dir, name, node string) (manifestFile, error) {
	var found []manifestFile
	for _, m := range ms {
		if m.Path == name || filepath.Base(m.Path) == name || (filepath.IsAbs(name) && filepath.Clean(name) == m.Path) {
			return m, nil
		}
		if slices.ContainsFunc(m.Pods, func(p *corev1.Pod) bool { return nameMatches(p, name, node) }) {
			found = append(found, m)
		}
	}
	switch len(found) {
	case 0:
		return manifestFile{}, fmt.Errorf("no manifest in %s defines a pod %q (nor is a file of that name)", dir, name)
	case 1:
		return found[0], nil
	}
	paths := make([]string, len(found))
	for i, m := range found {
		paths[i] = m.Path
	}
	return manifestFile{}, fmt.Errorf("pod %q is defined by %d files (the agent runs the first): %s", name, len(found), strings.Join(paths, ", "))
}

// fullNames lists the full names (name_namespace) of pods.
func fullNames(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = podtypes.PodFullName(p)
	}
	return out
}

func sharesName(a, b []*corev1.Pod) string {
	names := fullNames(b)
	for _, n := range fullNames(a) {
		if slices.Contains(names, n) {
			return n
		}
	}
	return ""
}
