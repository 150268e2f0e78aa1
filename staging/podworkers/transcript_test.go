package podworkers

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/*.txt with what the tests print")

// TestTranscripts replays each testdata/*.txt story against real pod
// workers. A story is a list of blocks:
//
//	# why this step matters
//	command key=value flag
//	----
//	expected output, one line each, up to a blank line
//
// See commands_test.go for the commands. With -rewrite the expected
// output is replaced by the actual output; review the diff before keeping
// it.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			runTranscript(t, file)
		})
	}
}

type block struct {
	pre  []string // comments and blank lines before the command
	cmd  string
	want []string
	line int
}

func runTranscript(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	blocks, tail, err := parseTranscript(string(data))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	e := newEnv(t)
	for i := range blocks {
		b := &blocks[i]
		got := e.do(b.cmd)
		if len(got) == 0 {
			got = []string{"ok"}
		}
		if *rewrite {
			b.want = got
			continue
		}
		if diff := cmp.Diff(b.want, got); diff != "" {
			t.Errorf("%s:%d: %s: output differs (-want +got):\n%s", file, b.line, b.cmd, diff)
		}
	}
	if *rewrite {
		var sb strings.Builder
		for _, b := range blocks {
			for _, l := range b.pre {
				sb.WriteString(l + "\n")
			}
			sb.WriteString(b.cmd + "\n----\n" + strings.Join(b.want, "\n") + "\n")
		}
		sb.WriteString(strings.Join(tail, "\n"))
		if err := os.WriteFile(file, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func parseTranscript(s string) (blocks []block, tail []string, err error) {
	lines := strings.Split(s, "\n")
	var pre []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			pre = append(pre, l)
			continue
		}
		b := block{pre: pre, cmd: l, line: i + 1}
		pre = nil
		if i+1 >= len(lines) || lines[i+1] != "----" {
			return nil, nil, fmt.Errorf("line %d: command %q has no ---- line", i+1, l)
		}
		for i += 2; i < len(lines) && lines[i] != ""; i++ {
			b.want = append(b.want, lines[i])
		}
		i-- // the blank line that ended the block belongs to the next one
		blocks = append(blocks, b)
	}
	return blocks, pre, nil
}
