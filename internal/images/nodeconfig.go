package images

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// NodeDockerConfigPaths are the files the node's own registry credentials
// are read from, in the kubelet's order: a config.json (the docker CLI's
// format) in rootDir, the working directory, $HOME/.docker or /.docker;
// failing those, a legacy .dockercfg in rootDir, the working directory,
// $HOME or /.
func NodeDockerConfigPaths(rootDir string) []string {
	cwd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	var paths []string
	for _, dir := range []string{rootDir, cwd, filepath.Join(home, ".docker"), "/.docker"} {
		if dir != "" && dir != ".docker" {
			paths = append(paths, filepath.Join(dir, "config.json"))
		}
	}
	for _, dir := range []string{rootDir, cwd, home, "/"} {
		if dir != "" {
			paths = append(paths, filepath.Join(dir, ".dockercfg"))
		}
	}
	return paths
}

// KeyringFromFiles reads the first of paths that exists: a config.json
// ({"auths": {...}}) or a .dockercfg (the map of locations itself), by
// its name. None: an empty keyring. A file that does not parse is an
// error naming it.
func KeyringFromFiles(paths []string) (*Keyring, error) {
	kr := &Keyring{}
	for _, p := range paths {
		data, err := os.ReadFile(p) // #nosec G304 -- the node's own docker config, at the kubelet's paths
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var entries map[string]dockerEntry
		if filepath.Base(p) == ".dockercfg" {
			err = json.Unmarshal(data, &entries)
		} else {
			var cfg struct {
				Auths map[string]dockerEntry `json:"auths"`
			}
			err = json.Unmarshal(data, &cfg)
			entries = cfg.Auths
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if err := kr.add(entries, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		return kr, nil
	}
	return kr, nil
}
