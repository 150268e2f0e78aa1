package integration

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The binary benchmarks compare two builds of the agent in one run when
// NODEAGENT_BASELINE_BIN names a second nodeagent binary (an earlier
// commit's, built as hack/build.sh builds; hack/bench-ab.sh builds it and
// runs them). A figure measured on another day, or on another of these
// shared machines, says little: their speed differs by up to 3x and moves
// with the neighbours' load. So each sub-benchmark runs its rounds for this
// tree's agent ("new") and the baseline ("base") in turn, new-base then
// base-new (a drift in the machine's load weighs on both alike), and
// reports each figure's median for both, the ratio of the medians, and the
// lowest and highest ratio of one round's pair. An A-vs-A run (the baseline
// is this tree's own build) gives the spread that noise alone makes.
// NODEAGENT_BENCH_BIN, if set too, is measured as "new" instead of this
// tree's agent: two earlier builds compared (a change in the middle of a
// series, alone). Unset, the benchmarks run this tree's agent alone, as
// they always did.
//
// Issue 26 (the restructure) against the build before it, 2026-11-29, on
// the shared 2-core machine under a load average of 20 to 70 (absolute
// figures 2 to 15 times the quiet ones; only the ratios mean anything):
// main 79ea1c0 against ea351af, 2d9a165 (before the restructure) with
// image GC, the oldest build after 486338f that takes the flags the
// benchmarks pass (486338f has no --image-gc-high-threshold); and A-vs-A,
// this tree's build against itself, for the spread noise alone makes:
//
//	hack/bench-ab.sh ea351af -bench 'BenchmarkBinaryAgent/^(one-at-a-time|burst-50|idle-110)$/^(host-network|new|base|ab)|BenchmarkBinaryRemoval/grace-0'
//	hack/bench-ab.sh HEAD -bench 'BenchmarkBinaryAgent/^(one-at-a-time|burst-50)$/^(host-network|new|base|ab)|BenchmarkBinaryRemoval/grace-0'
//
//	figure (median of rounds)   rounds  new/base (pairs)      A-vs-A (pairs)
//	one-at-a-time start-p50       3     0.888 (0.61..0.94)    0.921 (0.92..0.98)
//	one-at-a-time edit-p50        3     1.053 (0.84..1.10)    1.046 (0.97..1.07)
//	one-at-a-time remove-p50      3     1.118 (0.60..1.49)    1.080 (0.99..1.14)
//	burst-50 all-running          5     0.854 (0.77..1.34)    0.974 (0.77..1.24)
//	removal grace-0 remove-p50    3     1.004 (0.98..1.23)    0.967 (0.88..0.97)
//	idle-110 cpu-%                2     1.028 (0.94..1.12)
//	idle-110 rss-anon-MiB         2     1.027 (1.01..1.03)
//	idle-110 rss-file-MiB         2     1.246 (1.16..1.26)
//
// No slowdown is shown: each ratio's pairs overlap the A-vs-A pairs, but
// removal grace-0's (175 ms both; 1.004 just over A-vs-A's 0.97, itself off
// 1 by that much). The anonymous RSS is 0.5 MiB more with the live heap the
// same (heap profiles of both idle with 110 pods on test/scale's hollowcri
// differ by -0.1 of 6.7 MB). The file-backed RSS is the binary's own
// pages, 2 MB more text since the restructure (zap, websocket, spdystream
// came after it); that run predates the warming of the page cache below,
// and the baseline, built 20 minutes before, may have partly left it.

// baselineEnv names the baseline agent binary.
const baselineEnv = "NODEAGENT_BASELINE_BIN"

// newEnv names the agent binary measured against the baseline ("new"),
// this tree's if unset.
const newEnv = "NODEAGENT_BENCH_BIN"

// abRoundsEnv overrides each sub-benchmark's number of rounds per build.
const abRoundsEnv = "NODEAGENT_AB_ROUNDS"

// baselineBinary is the baseline agent to compare with, or "" for none.
func baselineBinary() string { return os.Getenv(baselineEnv) }

// figure is one measured value, named by its unit as b.ReportMetric takes it.
type figure struct {
	name  string
	value float64
}

type figures []figure

func (fs figures) report(b *testing.B) {
	for _, f := range fs {
		b.ReportMetric(f.value, f.name)
	}
}

// measure runs one sub-benchmark: with no baseline, measure of this tree's
// agent once, reporting its figures; with one, rounds of each build in
// turn (NODEAGENT_AB_ROUNDS overrides rounds), compared. measure starts its
// agent with newBenchAgent(b, bin, ...).
func measure(b *testing.B, name string, rounds int, measure func(b *testing.B, bin string) figures) {
	b.Run(name, func(b *testing.B) {
		base := baselineBinary()
		if base == "" {
			measure(b, "").report(b)
			return
		}
		if s := os.Getenv(abRoundsEnv); s != "" {
			if _, err := fmt.Sscan(s, &rounds); err != nil || rounds < 1 {
				b.Fatalf("%s=%q: want a number of rounds of at least 1", abRoundsEnv, s)
			}
		}
		compareBuilds(b, base, rounds, measure)
	})
}

// compareBuilds alternates rounds of measure on this tree's agent and on
// base, and reports the comparison in a sub-benchmark "ab".
func compareBuilds(b *testing.B, base string, rounds int, measure func(b *testing.B, bin string) figures) {
	// The flags every agent gets, checked before the first round; a
	// sub-benchmark's own are checked as its agent starts.
	newBin := os.Getenv(newEnv)
	for _, bin := range []string{base, newBin} {
		if bin != "" {
			requireFlags(b, bin, (&agentHarness{binary: bin, baseline: true}).args())
		}
	}
	newRounds, baseRounds := make([]figures, 0, rounds), make([]figures, 0, rounds)
	runNew := func(r int) {
		b.Run(fmt.Sprintf("new-%d", r), func(b *testing.B) {
			fs := measure(b, newBin)
			fs.report(b)
			newRounds = append(newRounds, fs)
		})
	}
	runBase := func(r int) {
		b.Run(fmt.Sprintf("base-%d", r), func(b *testing.B) {
			fs := measure(b, base)
			fs.report(b)
			baseRounds = append(baseRounds, fs)
		})
	}
	for r := range rounds {
		if r%2 == 0 {
			runNew(r)
			runBase(r)
		} else {
			runBase(r)
			runNew(r)
		}
	}
	b.Run("ab", func(b *testing.B) {
		if len(newRounds) < rounds || len(baseRounds) < rounds {
			b.Fatalf("%d new and %d base rounds finished, want %d each", len(newRounds), len(baseRounds), rounds)
		}
		rows := abTable(newRounds, baseRounds)
		b.Logf("new %s, baseline %s, %d rounds each\n%s", cmp.Or(newBin, "(this tree)"), base, rounds, rows)
		for _, row := range rows {
			b.ReportMetric(row.ratio, row.name+"-new/base")
		}
	})
}

// abRow compares one figure across the rounds of the two builds.
type abRow struct {
	name                  string
	newMedian, baseMedian float64
	// ratio is newMedian/baseMedian; lo and hi the lowest and highest
	// ratio of one round's pair.
	ratio, lo, hi float64
}

type abRows []abRow

// abTable pairs the rounds' figures by name, in the order the first new
// round reported them.
func abTable(newRounds, baseRounds []figures) abRows {
	var rows abRows
	for _, f := range newRounds[0] {
		var n, bs, pair []float64
		for i := range newRounds {
			nv, ok1 := newRounds[i].get(f.name)
			bv, ok2 := baseRounds[i].get(f.name)
			if !ok1 || !ok2 {
				continue
			}
			n, bs = append(n, nv), append(bs, bv)
			if bv != 0 {
				pair = append(pair, nv/bv)
			}
		}
		if len(n) == 0 {
			continue
		}
		row := abRow{name: f.name, newMedian: medianOf(n), baseMedian: medianOf(bs)}
		if row.baseMedian != 0 {
			row.ratio = row.newMedian / row.baseMedian
		}
		if len(pair) > 0 {
			row.lo, row.hi = slices.Min(pair), slices.Max(pair)
		}
		rows = append(rows, row)
	}
	return rows
}

func (rows abRows) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "%-26s %10s %10s %10s  %s\n", "figure", "new", "base", "new/base", "round pairs lo..hi")
	for _, r := range rows {
		fmt.Fprintf(&s, "%-26s %10s %10s %10.3f  %.3f..%.3f\n", r.name, num(r.newMedian), num(r.baseMedian), r.ratio, r.lo, r.hi)
	}
	return s.String()
}

// num prints a figure to 3 significant digits, or whole if larger.
func num(v float64) string {
	if v >= 100 || v <= -100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func (fs figures) get(name string) (float64, bool) {
	for _, f := range fs {
		if f.name == name {
			return f.value, true
		}
	}
	return 0, false
}

// medianOf is the middle value (the upper of the two middle ones).
func medianOf(v []float64) float64 {
	return slices.Sorted(slices.Values(v))[len(v)/2]
}

// newBenchAgent is newAgent running bin (empty: this tree's agent), a
// baseline given the very flags this tree's agent gets.
func newBenchAgent(b *testing.B, bin string, extraArgs ...string) *agentHarness {
	b.Helper()
	if baselineBinary() != "" {
		warmPageCache(b, cmp.Or(bin, nodeagentBinary(b)))
	}
	if bin == "" {
		return newAgent(b, extraArgs...)
	}
	h := newHarness(b, agentNodeName(), bin, extraArgs...)
	h.baseline = true
	requireFlags(b, bin, h.args())
	h.start()
	return h
}

// warmPageCache reads bin whole. The kernel maps the cached pages around
// each page a process faults in (fault-around), and counts them in its
// RSS: a binary just built, all in the page cache, shows megabytes more
// file-backed RSS than one built an hour ago and partly evicted since.
// Both builds start from a cached binary, so rss-file compares the code
// each touches, not the page cache.
func warmPageCache(b *testing.B, bin string) {
	f, err := os.Open(bin)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(io.Discard, f); err != nil {
		b.Fatalf("reading %s: %v", bin, err)
	}
}

// helpOf caches each baseline binary's --help.
var helpOf sync.Map // binary -> string

// requireFlags fails b, naming the flag, if bin does not accept one of the
// long flags in args: a comparison with a build that runs with other flags
// would compare other things.
func requireFlags(b *testing.B, bin string, args []string) {
	b.Helper()
	help, ok := helpOf.Load(bin)
	if !ok {
		out, _ := exec.Command(bin, "--help").CombinedOutput() // exit status varies; the text is what counts
		help, _ = helpOf.LoadOrStore(bin, string(out))
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !regexp.MustCompile(`(?m)--` + regexp.QuoteMeta(name) + `(\s|$)`).MatchString(help.(string)) {
			b.Fatalf("the agent %s (%s or %s) has no flag --%s, which the benchmark passes: compare a build that has it", bin, baselineEnv, newEnv, name)
		}
	}
}

// abProfileDir is where a sub-benchmark's profiles go under dir: dir
// itself, or with a baseline a directory per round (new-0, base-0, ...).
func abProfileDir(b *testing.B, dir string) string {
	if baselineBinary() == "" {
		return dir
	}
	dir = path.Join(dir, path.Base(b.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	return dir
}
