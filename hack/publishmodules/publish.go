package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// maxGoMod bounds the go.mod files read.
const maxGoMod = 1 << 20

// source is one module to publish: its directory, go.mod text and path.
type source struct {
	dir   string
	gomod []byte
	path  string
}

// publish writes every module in dirs into the proxy directory out at
// version, after checking them all: nothing is written if one is refused.
func publish(out, version string, dirs []string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version || semver.Build(version) != "" {
		return fmt.Errorf("-version %q: not a canonical semantic version (vMAJOR.MINOR.PATCH)", version)
	}
	srcs := make([]source, 0, len(dirs))
	for _, dir := range dirs {
		s, err := readSource(dir)
		if err != nil {
			return err
		}
		srcs = append(srcs, s)
	}
	paths := make(map[string]bool, len(srcs))
	for _, s := range srcs {
		paths[s.path] = true
	}
	for _, s := range srcs {
		if err := checkGoMod(s, version, paths); err != nil {
			return err
		}
	}
	for _, s := range srcs {
		if err := write(out, version, s); err != nil {
			return err
		}
	}
	return nil
}

func readSource(dir string) (source, error) {
	name := filepath.Join(dir, "go.mod")
	f, err := os.Open(name) // #nosec G304 -- a module directory the caller names
	if err != nil {
		return source{}, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if n, err := buf.ReadFrom(io.LimitReader(f, maxGoMod+1)); err != nil {
		return source{}, fmt.Errorf("%s: %w", name, err)
	} else if n > maxGoMod {
		return source{}, fmt.Errorf("%s: larger than %d bytes", name, maxGoMod)
	}
	mf, err := modfile.ParseLax(name, buf.Bytes(), nil)
	if err != nil {
		return source{}, err
	}
	if mf.Module == nil {
		return source{}, fmt.Errorf("%s: no module directive", name)
	}
	return source{dir: dir, gomod: buf.Bytes(), path: mf.Module.Mod.Path}, nil
}

// checkGoMod refuses a go.mod an importer could not use as it is.
func checkGoMod(s source, version string, set map[string]bool) error {
	name := filepath.Join(s.dir, "go.mod")
	mf, err := modfile.Parse(name, s.gomod, nil)
	if err != nil {
		return err
	}
	if err := module.Check(s.path, version); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(mf.Replace) > 0 {
		r := mf.Replace[0]
		return fmt.Errorf("%s: replace %s => %s: an importer ignores replace directives, so the module would build differently for it; require the published version instead (go.work serves the tree during development)", name, r.Old.Path, r.New.Path)
	}
	for _, r := range mf.Require {
		if set[r.Mod.Path] && r.Mod.Version != version {
			return fmt.Errorf("%s: requires %s %s, but the modules are published at %s: require %s (staging/VERSION)", name, r.Mod.Path, r.Mod.Version, version, version)
		}
	}
	return nil
}

// write adds s at version to the proxy directory out.
func write(out, version string, s source) error {
	esc, err := module.EscapePath(s.path)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	base := filepath.Join(dir, version)
	if _, err := os.Stat(base + ".zip"); err == nil {
		return fmt.Errorf("%s %s is already in %s: a published version never changes; publish a new version (staging/VERSION)", s.path, version, out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	zf, err := os.OpenFile(base+".zip", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) // #nosec G304 -- under the output directory the caller names
	if err != nil {
		return err
	}
	mv := module.Version{Path: s.path, Version: version}
	if err := modzip.CreateFromDir(zf, mv, s.dir); err != nil {
		// No half-written zip is left to pass for a published version.
		return errors.Join(fmt.Errorf("%s: %w", s.dir, err), zf.Close(), os.Remove(base+".zip"))
	}
	if err := zf.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(base+".mod", s.gomod, 0o600); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".info", info, 0o600); err != nil {
		return err
	}
	return addToList(filepath.Join(dir, "list"), version)
}

// addToList adds version to a proxy's list file, kept in semver order.
func addToList(name, version string) error {
	data, err := os.ReadFile(name) // #nosec G304 -- under the output directory the caller names
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	versions := strings.Fields(string(data))
	if !slices.Contains(versions, version) {
		versions = append(versions, version)
	}
	semver.Sort(versions)
	return os.WriteFile(name, []byte(strings.Join(versions, "\n")+"\n"), 0o600) // #nosec G703 -- under the output directory the caller names
}
