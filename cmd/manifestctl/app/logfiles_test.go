package app

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLineReaderJoinsPartsAndWaitsForWholeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	lr := newLineReader(r)
	write := func(s string) {
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	write("2026-01-01T00:00:00.5Z stdout P hel")
	if _, err := lr.next(); err != io.EOF {
		t.Fatalf("a line not yet ended: %v, want io.EOF", err)
	}
	write("lo \n2026-01-01T00:00:01Z stdout F world\n2026-01-01T00:00:02Z stderr F unended")
	line, err := lr.next()
	if err != nil || line.text != "hello world" || line.stream != "stdout" || line.time.Second() != 1 {
		t.Errorf("joined line: %+v, %v", line, err)
	}
	if _, err := lr.next(); err != io.EOF {
		t.Errorf("an unended line was returned")
	}
	write("\n")
	if line, err := lr.next(); err != nil || line.text != "unended" || line.stream != "stderr" {
		t.Errorf("the line once ended: %+v, %v", line, err)
	}
}

func TestTailAndInstances(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "c"), 0o755))
	for _, n := range []string{"10", "2", "1"} {
		must(os.WriteFile(filepath.Join(dir, "c", n+".log"), []byte("2026-01-01T00:00:00Z stdout F a"+n+"\n2026-01-01T00:00:00Z stdout F b"+n+"\n"), 0o644))
	}
	must(os.WriteFile(filepath.Join(dir, "c", "junk.txt"), nil, 0o644))
	files, err := instanceLogs(dir, "c")
	must(err)
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	if !slices.Equal(names, []string{"1.log", "2.log", "10.log"}) {
		t.Errorf("instances %v, want by restart number", names)
	}
	lines, err := tailLines(files[2], 1)
	if err != nil || len(lines) != 1 || lines[0].text != "b10" {
		t.Errorf("tail 1: %+v, %v", lines, err)
	}
	if lines, _ := tailLines(files[2], 0); len(lines) != 0 {
		t.Errorf("tail 0: %+v", lines)
	}
	if got := nextInstance(files[1]); got != files[2] {
		t.Errorf("nextInstance(%s) = %s", files[1], got)
	}
}
