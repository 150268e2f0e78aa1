package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// writeReport prints the phases side by side and their requests, as
// Markdown tables.
func writeReport(w io.Writer, nodes int, procs []proc, phases []phase, st *startups) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### %d nodes\n\n", nodes)
	header := []string{"", "unit"}
	for _, p := range phases {
		header = append(header, p.Name)
	}
	rows := [][]string{header}
	row := func(name, unit string, f func(p *phase) string) {
		r := []string{name, unit}
		for i := range phases {
			r = append(r, f(&phases[i]))
		}
		rows = append(rows, r)
	}
	row("length", "s", func(p *phase) string { return fmt.Sprintf("%.1f", p.seconds()) })
	row("requests from the nodes", "/node/s", func(p *phase) string {
		return fmt.Sprintf("%.3f", float64(p.Requests.total(isNodes))/p.seconds()/float64(nodes))
	})
	row("requests from the others", "/s", func(p *phase) string {
		return fmt.Sprintf("%.2f", float64(p.Requests.total(not(isNodes)))/p.seconds())
	})
	row("WATCH requests open, at the end", "", func(p *phase) string {
		return fmt.Sprintf("%.0f", p.To.API.sum("apiserver_longrunning_requests", map[string]string{"verb": "WATCH"}))
	})
	row("watch events sent", "/s", func(p *phase) string { return rate(p, "apiserver_watch_events_total", 1) })
	row("watch event bytes sent", "KiB/s", func(p *phase) string { return rate(p, "apiserver_watch_events_sizes", 1<<10) })
	row("watch cache events dispatched", "/s", func(p *phase) string {
		return rate(p, "apiserver_watch_cache_events_dispatched_total", 1)
	})
	for _, c := range []string{"etcd_mvcc_put_total", "etcd_mvcc_delete_total"} {
		row(strings.TrimSuffix(strings.TrimPrefix(c, "etcd_mvcc_"), "_total")+"s in etcd", "/s", func(p *phase) string {
			return fmt.Sprintf("%.2f", (p.To.Etcd.sum(c, nil)-p.From.Etcd.sum(c, nil))/p.seconds())
		})
	}
	for i, pr := range procs {
		if pr.Role != "control" {
			continue
		}
		row(pr.Name+" CPU", "cores", func(p *phase) string { return fmt.Sprintf("%.3f", cores(p, i)) })
		row(pr.Name+" RSS, at the end", "MiB", func(p *phase) string { return mib(p.To.Procs[i].RSS) })
	}
	for _, role := range []string{"node", "runtime"} {
		idx := indexes(procs, role)
		if len(idx) == 0 {
			continue
		}
		row(fmt.Sprintf("%s CPU, mean / max of %d", role, len(idx)), "cores", func(p *phase) string {
			var sum, top float64
			for _, i := range idx {
				c := cores(p, i)
				sum, top = sum+c, max(top, c)
			}
			return fmt.Sprintf("%.4f / %.4f", sum/float64(len(idx)), top)
		})
		row(fmt.Sprintf("%s RSS at the end, mean / max of %d", role, len(idx)), "MiB", func(p *phase) string {
			var sum, top int64
			for _, i := range idx {
				r := p.To.Procs[i].RSS
				sum, top = sum+r, max(top, r)
			}
			return mib(sum/int64(len(idx))) + " / " + mib(top)
		})
	}
	table(&b, rows)

	b.WriteString("\n")
	rows = [][]string{{"pod start-up, as a watch sees it", "pods", "p50", "p99", "max"}}
	for _, s := range []struct {
		name  string
		stage stage
	}{
		{"created to Running", startUp},
		{"created to bound to a node (the scheduler)", scheduling},
		{"bound to Running (the node)", onTheNode},
	} {
		l := st.latencies(s.stage)
		rows = append(rows, []string{s.name, fmt.Sprint(len(l)), ms(percentile(l, 50)), ms(percentile(l, 99)), ms(percentile(l, 100))})
	}
	table(&b, rows)
	for i := range phases {
		p := &phases[i]
		fmt.Fprintf(&b, "\n#### %s: requests from the nodes, per node per second\n\n", p.Name)
		rows := [][]string{{"verb", "resource", "agent", "count", "/node/s"}}
		for _, kc := range p.Requests.sorted(isNodes) {
			rows = append(rows, []string{kc.key.Verb, kc.key.Resource, kc.key.Agent, fmt.Sprint(kc.n),
				fmt.Sprintf("%.4f", float64(kc.n)/p.seconds()/float64(nodes))})
		}
		table(&b, rows)
		fmt.Fprintf(&b, "\n#### %s: requests from the others\n\n", p.Name)
		rows = [][]string{{"user", "agent", "count", "/s"}}
		for _, kc := range p.Requests.byClient(not(isNodes)) {
			rows = append(rows, []string{kc.key.Client, kc.key.Agent, fmt.Sprint(kc.n), fmt.Sprintf("%.2f", float64(kc.n)/p.seconds())})
		}
		table(&b, rows)
		if p.Requests.Skipped > 0 {
			fmt.Fprintf(&b, "\n(%d audit lines skipped: too long or not JSON)\n", p.Requests.Skipped)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func isNodes(k requestKey) bool { return k.Client == "nodes" }

func not(f func(requestKey) bool) func(requestKey) bool {
	return func(k requestKey) bool { return !f(k) }
}

type keyCount struct {
	key requestKey
	n   int
}

func (c requestCounts) total(match func(requestKey) bool) int {
	n := 0
	for k, v := range c.ByKey {
		if match(k) {
			n += v
		}
	}
	return n
}

// sorted are the matching rows, the most frequent first.
func (c requestCounts) sorted(match func(requestKey) bool) []keyCount {
	var out []keyCount
	for k, v := range c.ByKey {
		if match(k) {
			out = append(out, keyCount{k, v})
		}
	}
	slices.SortFunc(out, func(a, b keyCount) int {
		return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.key.Verb, b.key.Verb),
			cmp.Compare(a.key.Resource, b.key.Resource), cmp.Compare(a.key.Agent, b.key.Agent), cmp.Compare(a.key.Client, b.key.Client))
	})
	return out
}

// byClient adds up the matching rows of each user and agent.
func (c requestCounts) byClient(match func(requestKey) bool) []keyCount {
	sums := requestCounts{ByKey: map[requestKey]int{}}
	for k, v := range c.ByKey {
		if match(k) {
			sums.ByKey[requestKey{Client: k.Client, Agent: k.Agent}] += v
		}
	}
	return sums.sorted(func(requestKey) bool { return true })
}

func indexes(procs []proc, role string) []int {
	var out []int
	for i, p := range procs {
		if p.Role == role {
			out = append(out, i)
		}
	}
	return out
}

// rate is how fast the apiserver's metric name grew in the phase, per
// second, in units of unit.
func rate(p *phase, name string, unit float64) string {
	return fmt.Sprintf("%.2f", (p.To.API.sum(name, nil)-p.From.API.sum(name, nil))/p.seconds()/unit)
}

// cores is the CPU the i-th process used in the phase, in cores.
func cores(p *phase, i int) float64 {
	return (p.To.Procs[i].CPU - p.From.Procs[i].CPU).Seconds() / p.seconds()
}

func mib(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

// table writes rows as a Markdown table, the first row its header.
func table(b *strings.Builder, rows [][]string) {
	for i, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
		if i == 0 {
			b.WriteString(strings.Repeat("|---", len(r)) + "|\n")
		}
	}
}
