package exepages

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// mapping is one mapping of /proc/self/smaps.
type mapping struct {
	start, end uintptr
	perms      string
	path       string
	// anonKB is how much of it is private copies: pages written since
	// they were mapped, which a release would reset to the file's bytes.
	anonKB int64
}

// Release unmaps the process's read-only mappings of its own executable
// (their pages stay in the page cache) and returns the resident set size
// before and after, in bytes.
func Release() (before, after int64, err error) {
	return release("/proc/self")
}

func release(proc string) (before, after int64, err error) {
	exe, err := os.Readlink(proc + "/exe")
	if err != nil {
		return 0, 0, fmt.Errorf("finding the executable: %w", err)
	}
	maps, err := os.ReadFile(proc + "/smaps") // #nosec G304 -- procfs
	if err != nil {
		return 0, 0, fmt.Errorf("reading the memory map: %w", err)
	}
	ms, err := parseMaps(maps)
	if err != nil {
		return 0, 0, err
	}
	if before, err = residentBytes(proc); err != nil {
		return 0, 0, err
	}
	released := 0
	for _, m := range ms {
		// A writable mapping holds the program's data; a read-only one
		// with private copies holds what the loader wrote before making it
		// read-only (the relocated data of a position-independent build).
		if m.path != exe || strings.ContainsRune(m.perms, 'w') || m.anonKB > 0 {
			continue
		}
		if err := madviseDontNeed(m.start, m.end-m.start); err != nil {
			return before, before, fmt.Errorf("releasing %s %x-%x: %w", m.path, m.start, m.end, err)
		}
		released++
	}
	if released == 0 {
		return before, before, fmt.Errorf("no read-only mapping of %s found", exe)
	}
	after, err = residentBytes(proc)
	return before, after, err
}

// parseMaps reads a /proc/<pid>/smaps file: a line per mapping, each
// followed by lines of its figures ("Anonymous:     4 kB").
func parseMaps(data []byte) ([]mapping, error) {
	var out []mapping
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if strings.HasSuffix(fields[0], ":") {
			if fields[0] == "Anonymous:" && len(out) > 0 && len(fields) >= 2 {
				kb, err := strconv.ParseInt(fields[1], 10, 64)
				if err != nil {
					return nil, fmt.Errorf("memory map line %q: %w", sc.Text(), err)
				}
				out[len(out)-1].anonKB = kb
			}
			continue
		}
		if len(fields) < 5 {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			return nil, fmt.Errorf("memory map line %q: no address range", sc.Text())
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end < start {
			return nil, fmt.Errorf("memory map line %q: bad address range", sc.Text())
		}
		m := mapping{start: uintptr(start), end: uintptr(end), perms: fields[1]}
		if len(fields) >= 6 {
			m.path = strings.Join(fields[5:], " ")
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// residentBytes is the resident set size, from /proc/<pid>/statm.
func residentBytes(proc string) (int64, error) {
	b, err := os.ReadFile(proc + "/statm") // #nosec G304 -- procfs
	if err != nil {
		return 0, fmt.Errorf("reading the resident set size: %w", err)
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return 0, fmt.Errorf("statm %q: too short", b)
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("statm %q: %w", b, err)
	}
	return pages * int64(os.Getpagesize()), nil
}

func madviseDontNeed(addr, length uintptr) error {
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, addr, length, unix.MADV_DONTNEED); errno != 0 {
		return errno
	}
	return nil
}
