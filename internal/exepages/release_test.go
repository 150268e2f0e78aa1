package exepages

import (
	"runtime"
	"strings"
	"testing"
)

// written is changed at run time: Release must leave the program's data,
// in a writable mapping of the executable, as it is.
var written = []string{"as built"}

func TestReleaseDropsTheExecutablesPagesAndKeepsItsData(t *testing.T) {
	written[0] = "changed at run time"
	before, after, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	if after >= before {
		t.Errorf("resident set %d bytes after Release, not less than the %d before", after, before)
	}
	t.Logf("resident set %.1f MiB -> %.1f MiB", float64(before)/(1<<20), float64(after)/(1<<20))
	if written[0] != "changed at run time" {
		t.Fatalf("a variable reads %q after Release: the program's data was reset", written[0])
	}
	// The code and its tables fault back in: the program runs on.
	var buf [64]uintptr
	if n := runtime.Callers(0, buf[:]); n == 0 {
		t.Fatal("no stack after Release")
	}
	if !strings.HasPrefix(strings.ToUpper("released"), "REL") {
		t.Fatal("strings misbehave after Release")
	}
}

func TestParseMaps(t *testing.T) {
	data := []byte("00400000-01c81000 r-xp 00000000 fd:01 123 /usr/bin/nodeagent\n" +
		"Rss:                8 kB\n" +
		"Anonymous:          0 kB\n" +
		"01c81000-0387f000 r--p 01881000 fd:01 123 /usr/bin/nodeagent\n" +
		"Anonymous:         12 kB\n" +
		"0387f000-038ee000 rw-p 0347f000 fd:01 123 /usr/bin/nodeagent\n" +
		"c000000000-c004000000 rw-p 00000000 00:00 0\n" +
		"7f0000000000-7f0000001000 r--p 00000000 fd:01 7 /opt/a b/with space\n")
	ms, err := parseMaps(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 5 || ms[0].start != 0x400000 || ms[0].end != 0x1c81000 || ms[0].perms != "r-xp" || ms[0].path != "/usr/bin/nodeagent" ||
		ms[0].anonKB != 0 || ms[1].anonKB != 12 || ms[3].path != "" || ms[4].path != "/opt/a b/with space" {
		t.Fatalf("parseMaps = %+v", ms)
	}
	if _, err := parseMaps([]byte("zz-yy r--p 0 0 0 /x\n")); err == nil {
		t.Fatal("a bad address range parsed")
	}
}
