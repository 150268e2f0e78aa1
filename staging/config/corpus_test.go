package config

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/record"

	"github.com/nodeagent/nodeagent/staging/manifest"
)

// refusal is the precise error expected for one corpus file.
type wantRefusal struct {
	reason manifest.Reason
	field  string // the first offending field; "" when the file fails as a whole
	detail string // a substring of the message
}

// corpusRefusals lists every bad manifest of testdata/corpus, plus those
// that cannot be kept in git and are made by copyCorpus.
var corpusRefusals = map[string]wantRefusal{
	"empty.yaml":                {manifest.ReasonEmpty, "", "no content"},
	"blank.yaml":                {manifest.ReasonEmpty, "", "no content"},
	"comments-only.yaml":        {manifest.ReasonEmpty, "", "only comments or blank"},
	"malformed-tab.yaml":        {manifest.ReasonSyntax, "", "yaml: line 4: found character that cannot start any token"},
	"malformed-unclosed.yaml":   {manifest.ReasonSyntax, "", "yaml: line"},
	"malformed-truncated.json":  {manifest.ReasonSyntax, "", "unexpected end of JSON input"},
	"trailing-garbage.json":     {manifest.ReasonSyntax, "", "invalid character '}' after top-level value"},
	"binary-junk.yaml":          {manifest.ReasonEncoding, "", "invalid UTF-8 at byte offset 128 (line 2, byte 0x80)"},
	"binary-junk.json":          {manifest.ReasonEncoding, "", "invalid UTF-8 at byte offset 62 (line 1, byte 0x81)"},
	"alias-bomb.yaml":           {manifest.ReasonTooLarge, "", "excessive aliasing"},
	"top-level-list.yaml":       {manifest.ReasonSyntax, "", "the document is not an object"},
	"wrong-type.yaml":           {manifest.ReasonSyntax, "spec.containers", "want []v1.Container, got string"},
	"wrong-kind.yaml":           {manifest.ReasonKind, "kind", `Unsupported value: "Deployment"`},
	"wrong-apiversion.yaml":     {manifest.ReasonKind, "apiVersion", `Unsupported value: "apps/v1"`},
	"missing-kind.json":         {manifest.ReasonKind, "kind", "Required value"},
	"kind-list.yaml":            {manifest.ReasonKind, "kind", `Unsupported value: "List"`},
	"two-documents.yaml":        {manifest.ReasonKind, "", "holds 2 YAML documents"},
	"unknown-field.yaml":        {manifest.ReasonStrict, "spec.containers[0].imagee", "unknown field"},
	"unknown-top-field.json":    {manifest.ReasonStrict, "specs", "unknown field"},
	"wrong-case-field.json":     {manifest.ReasonStrict, "spec.Containers", "unknown field"},
	"duplicate-key.yaml":        {manifest.ReasonStrict, "", `key "name" already set in map`},
	"missing-name.yaml":         {manifest.ReasonInvalid, "metadata.name", "a static pod needs a name"},
	"bad-name.yaml":             {manifest.ReasonInvalid, "metadata.name", "RFC 1123 subdomain"},
	"name-too-long.yaml":        {manifest.ReasonInvalid, "metadata.name", "must be no more than 253 characters"},
	"bad-namespace.yaml":        {manifest.ReasonInvalid, "metadata.namespace", "RFC 1123 label"},
	"no-containers.yaml":        {manifest.ReasonInvalid, "spec.containers", "a pod needs at least one container"},
	"duplicate-containers.yaml": {manifest.ReasonInvalid, "spec.containers[1].name", `Duplicate value: "main"`},
	"empty-image.yaml":          {manifest.ReasonInvalid, "spec.containers[0].image", "a container needs an image"},
	"bad-port.yaml":             {manifest.ReasonInvalid, "spec.containers[0].ports[0].containerPort", "must be between 1 and 65535"},
	"bad-protocol.yaml":         {manifest.ReasonInvalid, "spec.containers[0].ports[0].protocol", `Unsupported value: "HTTP"`},
	"duplicate-volumes.yaml":    {manifest.ReasonInvalid, "spec.volumes[1].name", `Duplicate value: "data"`},
	"mount-unknown-volume.yaml": {manifest.ReasonInvalid, "spec.containers[0].volumeMounts[0].name", `Not found: "nope"`},
	"bad-restart-policy.yaml":   {manifest.ReasonInvalid, "spec.restartPolicy", `Unsupported value: "Sometimes"`},
	"negative-grace.yaml":       {manifest.ReasonInvalid, "spec.terminationGracePeriodSeconds", "must be >= 0"},
	"secret-volume.yaml":        {manifest.ReasonInvalid, "spec.volumes[0].secret", "static pods may not reference secrets"},
	"mirror-annotation.yaml":    {manifest.ReasonInvalid, "metadata.annotations[kubernetes.io/config.mirror]", "may not declare itself a mirror pod"},
	"podlist-one-invalid.json":  {manifest.ReasonInvalid, "items[1].spec.containers[0].image", "a container needs an image"},
	"dup-of-good.yaml":          {manifest.ReasonDuplicate, "", "pod full name good-node1_default is already defined by "},
	// Made at test time.
	"oversize.yaml":  {manifest.ReasonTooLarge, "", "the limit is 524288"},
	"loop.yaml":      {manifest.ReasonRead, "", "symlink loop"},
	"dangling.yaml":  {manifest.ReasonRead, "", "broken symlink"},
	"fifo.yaml":      {manifest.ReasonRead, "", "not a regular file"},
	"chain-a.yaml":   {manifest.ReasonRead, "", "symlink loop"},
	"chain-b.yaml":   {manifest.ReasonRead, "", "symlink loop"},
	"huge-line.yaml": {manifest.ReasonTooLarge, "", "the limit is 524288"},
}

// corpusIgnored are left alone by design: no pod, no error.
var corpusIgnored = []string{
	".00-good.yaml.swp", "00-good.yaml~", "#00-good.yaml#", ".#00-good.yaml", "4913", "00-good.yaml.bak",
	"00-good.yaml.orig", "00-good.yaml.dpkg-old", "00-good.yaml.tmp", ".hidden.yaml", "notes.txt", "README.md",
	"subdir.yaml", "link-to-dir.yaml",
}

// copyCorpus copies testdata/corpus into a fresh directory and adds what
// git cannot hold: an oversize file, symlink loops, a broken symlink, a
// FIFO, a directory with a manifest's name and a symlink to a directory.
func copyCorpus(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ents, err := os.ReadDir("testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join("testdata/corpus", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, e.Name(), string(data))
	}
	// A valid manifest padded with a comment to just over MaxManifestBytes.
	padding := strings.Repeat("# padding padding padding padding padding padding padding padding\n", manifest.MaxManifestBytes/66+1)
	writeFile(t, dir, "oversize.yaml", podManifest("oversize", "busybox:1.36")+padding)
	writeFile(t, dir, "huge-line.yaml", "# "+strings.Repeat("x", manifest.MaxManifestBytes)+"\n")
	must(t, os.Symlink("loop.yaml", filepath.Join(dir, "loop.yaml")))
	must(t, os.Symlink("chain-b.yaml", filepath.Join(dir, "chain-a.yaml")))
	must(t, os.Symlink("chain-a.yaml", filepath.Join(dir, "chain-b.yaml")))
	must(t, os.Symlink("does-not-exist.yaml", filepath.Join(dir, "dangling.yaml")))
	must(t, syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "subdir.yaml"), 0o755))
	writeFile(t, filepath.Join(dir, "subdir.yaml"), "inner.yaml", podManifest("inner", "busybox:1.36"))
	must(t, os.Symlink("subdir.yaml", filepath.Join(dir, "link-to-dir.yaml")))
	return dir
}

func TestCorpusHasEveryFileClassified(t *testing.T) {
	dir := copyCorpus(t)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	good := []string{"00-good.yaml", "zz-good.json", "clash.yaml"}
	for _, e := range ents {
		_, refused := corpusRefusals[e.Name()]
		if !refused && !slices.Contains(corpusIgnored, e.Name()) && !slices.Contains(good, e.Name()) {
			t.Errorf("corpus file %s is neither expected to be refused nor ignored", e.Name())
		}
	}
	// A file a global gitignore kept out of a commit would weaken the test
	// silently: every listed file must be there.
	for _, name := range append(slices.Collect(maps.Keys(corpusRefusals)), append(good, corpusIgnored...)...) {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			t.Errorf("corpus file %s is missing: %v", name, err)
		}
	}
	if n := len(corpusRefusals); n < 30 {
		t.Errorf("the corpus has %d bad manifests, want at least 30", n)
	}
}

// TestCorpus runs the file source over every bad manifest at once: each is
// refused with its precise error or ignored, and the good pods beside them
// run undisturbed, before and after the bad files change.
func TestCorpus(t *testing.T) {
	dir := copyCorpus(t)
	rec := record.NewFakeRecorder(1000)
	m := NewMerger(MergerOptions{Buffer: 100, Recorder: rec})
	// The apiserver already binds a pod whose full name clash.yaml claims.
	mustMerge(t, m, set(api, testPod("clash-"+testNode, "api-clash")))
	drain(m.Updates())
	fsrc, err := NewFileSource(FileOptions{Path: dir, NodeName: testNode, Sink: m, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fsrc.Run(ctx) }()
	defer func() { cancel(); <-done }()

	expect(t, m, "ADD file [file:good-node1 file:zz-good-node1]")
	checkRefusals(t, dir, fsrc.Errors())
	wantMerger := []Refusal{{Source: file, FullName: "clash-node1_default", Reason: manifest.ReasonDuplicate}}
	gotMerger := m.Refused()
	for i := range gotMerger {
		gotMerger[i].UID, gotMerger[i].Message = "", ""
	}
	if diff := cmp.Diff(wantMerger, gotMerger); diff != "" {
		t.Errorf("merger refusals (-want +got):\n%s", diff)
	}
	if got, want := len(rec.Events), len(corpusRefusals)+1; got != want {
		t.Errorf("%d events recorded, want one per refusal: %d", got, want)
	}

	// Rewriting every bad file as another bad file, and breaking the
	// ignored ones, changes no pod.
	for name := range corpusRefusals {
		if fi, err := os.Lstat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() && fi.Size() < 1<<20 {
			writeFile(t, dir, name, "kind: Broken\n")
		}
	}
	for _, name := range corpusIgnored {
		if fi, err := os.Lstat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
			writeFile(t, dir, name, "\x00garbage")
		}
	}
	writeFile(t, dir, "sentinel.yaml", podManifest("sentinel", "busybox:1.36"))
	expect(t, m, "ADD file [file:sentinel-node1]")
	// File pods, then the apiserver's clash-node1, which kept its name.
	if diff := cmp.Diff([]string{"good-node1", "sentinel-node1", "zz-good-node1", "clash-node1"}, mergedNames(m)); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
	for name, err := range fsrc.Errors() {
		if !errors.Is(err, manifest.ErrManifest) {
			t.Errorf("%s: %v is not a manifest refusal", name, err)
		}
	}
}

func checkRefusals(t *testing.T, dir string, errs map[string]error) {
	t.Helper()
	for name, want := range corpusRefusals {
		path := filepath.Join(dir, name)
		err := errs[path]
		var me *manifest.ManifestError
		if !errors.As(err, &me) {
			t.Errorf("%s: error %v, want a *ManifestError", name, err)
			continue
		}
		if me.Origin != path || me.Reason != want.reason || me.Field() != want.field ||
			!strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), want.detail) {
			t.Errorf("%s: got %q (reason %s, field %q)\nwant reason %s, field %q, containing %q",
				name, err, me.Reason, me.Field(), want.reason, want.field, want.detail)
		}
	}
	for path := range errs {
		if _, ok := corpusRefusals[filepath.Base(path)]; !ok {
			t.Errorf("unexpected refusal of %s: %v", path, errs[path])
		}
	}
}

// The corpus also seeds the decoder's fuzz test.
func corpusSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	err := filepath.WalkDir("testdata/corpus", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		seeds = append(seeds, data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return seeds
}
