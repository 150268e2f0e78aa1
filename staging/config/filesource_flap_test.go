package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

// rewrite writes content into path in place as a careless tool does:
// truncate, pause, write. A reader in the pause sees an empty file.
func rewrite(t *testing.T, path, content string, pause time.Duration) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(pause)
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// collect collects the updates the merger sends within d.
func collect(m *Merger, d time.Duration) []podtypes.PodUpdate {
	var out []podtypes.PodUpdate
	deadline := time.After(d)
	for {
		select {
		case u := <-m.Updates():
			out = append(out, u)
		case <-deadline:
			return out
		}
	}
}

// A file rewritten 100 times in 3 s with the same content, truncated and
// written with a pause between, never moves its pod: no removal, no new
// pod.
func TestFileSourceSameContentRewrittenInALoopChangesNothing(t *testing.T) {
	dir := t.TempDir()
	content := podManifest("web", "img:1")
	path := writeFile(t, dir, "web.yaml", content)
	_, m := runFileSource(t, FileOptions{Path: dir})
	expect(t, m, "ADD file [file:web-node1]")

	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			rewrite(t, path, content, 10*time.Millisecond) // longer than the debounce
			time.Sleep(20 * time.Millisecond)
		}
	}()
	got := collect(m, 3500*time.Millisecond)
	<-done
	got = append(got, collect(m, 300*time.Millisecond)...)
	for _, u := range got {
		t.Errorf("update while the file was rewritten with the same content: %s", summarize(u))
	}
}

// A file whose content alternates 100 times in 3 s moves its pod at most
// once per change interval, and ends with the newest content.
func TestFileSourceFlappingContentIsRateLimited(t *testing.T) {
	dir := t.TempDir()
	a, b := podManifest("web", "img:a"), podManifest("web", "img:b")
	path := writeFile(t, dir, "web.yaml", a)
	const interval = 500 * time.Millisecond
	_, m := runFileSource(t, FileOptions{Path: dir, ChangeInterval: interval})
	expect(t, m, "ADD file [file:web-node1]")

	start := time.Now()
	last := a
	for i := range 100 {
		last = a
		if i%2 == 0 {
			last = b
		}
		tmp := filepath.Join(dir, ".web.yaml.tmp")
		must(t, os.WriteFile(tmp, []byte(last), 0o644))
		must(t, os.Rename(tmp, path))
		time.Sleep(30 * time.Millisecond)
	}
	elapsed := time.Since(start)
	got := collect(m, 2*interval)
	adds := 0
	var image string
	for _, u := range got {
		if u.Op == podtypes.ADD {
			adds++
			image = u.Pods[0].Spec.Containers[0].Image
		}
	}
	limit := int(elapsed/interval) + 2
	t.Logf("%d rewrites in %v: %d new pods (limit %d)", 100, elapsed.Round(time.Millisecond), adds, limit)
	if adds == 0 || adds > limit {
		t.Errorf("%d new pods for 100 alternating rewrites in %v, want between 1 and %d (one per %v)", adds, elapsed, limit, interval)
	}
	if want := "img:a"; last == b && image != "img:b" || last == a && image != want {
		t.Errorf("the last pod runs %s, want the newest content", image)
	}
}

// A manifest removed and written again at once (a tool that replaces by
// deleting) keeps its pod; one really removed loses it.
func TestFileSourceRemovedAndRecreatedKeepsThePod(t *testing.T) {
	dir := t.TempDir()
	content := podManifest("web", "img:1")
	path := writeFile(t, dir, "web.yaml", content)
	_, m := runFileSource(t, FileOptions{Path: dir, Debounce: time.Millisecond, SettleDelay: 200 * time.Millisecond})
	expect(t, m, "ADD file [file:web-node1]")

	must(t, os.Remove(path))
	time.Sleep(20 * time.Millisecond) // well past the debounce
	writeFile(t, dir, "web.yaml", content)
	for _, u := range collect(m, 500*time.Millisecond) {
		t.Errorf("update after a remove-and-recreate: %s", summarize(u))
	}
	must(t, os.Remove(path))
	expect(t, m, "REMOVE file [file:web-node1]")
}
