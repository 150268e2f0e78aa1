package podworkers

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// args are a command's key=value words and bare flags.
type args map[string]string

func parseArgs(words []string) args {
	a := args{}
	for _, w := range words {
		k, v, _ := strings.Cut(w, "=")
		a[k] = v
	}
	return a
}

func (a args) has(k string) bool { _, ok := a[k]; return ok }

func (a args) get(k, def string) string {
	if v, ok := a[k]; ok {
		return v
	}
	return def
}

func (a args) int(k string) (int64, bool) {
	v, ok := a[k]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// uids returns the bare words that are not flags a command knows.
func (a args) uids() []types.UID {
	var out []types.UID
	for k, v := range a {
		if v == "" {
			out = append(out, types.UID(k))
		}
	}
	slices.Sort(out)
	return out
}

// do runs one transcript command and returns what it printed followed by
// what the Syncer saw until the workers settled.
func (e *env) do(line string) []string {
	words := strings.Fields(line)
	cmd, a := words[0], parseArgs(words[1:])
	uid := types.UID(a.get("uid", ""))
	var out []string
	printf := func(format string, v ...any) { out = append(out, fmt.Sprintf(format, v...)) }
	update := func(o UpdatePodOptions) {
		if err := e.pw.UpdatePod(o); err != nil {
			printf("error: %v", err)
		}
	}

	switch cmd {
	case "update":
		typ := Update
		if e.pods[uid] == nil {
			typ = Create
		}
		if t := a.get("type", ""); t != "" {
			typ = parseType(t)
		}
		pod, err := e.pod(a)
		if err != nil {
			printf("error: %v", err)
			break
		}
		var kill *KillPodOptions
		if typ == Kill {
			kill = e.killOptions(a)
		}
		update(UpdatePodOptions{Type: typ, Pod: pod, Kill: kill})
	case "kill":
		if e.pods[uid] == nil {
			printf("error: no pod %q", uid)
			break
		}
		update(UpdatePodOptions{Type: Kill, Pod: e.pods[uid], Kill: e.killOptions(a)})
	case "runtime-kill":
		rp := &RuntimePod{UID: uid, Name: a.get("name", "pod-"+string(uid)), Namespace: a.get("ns", "default")}
		typ := parseType(a.get("type", "kill"))
		var kill *KillPodOptions
		if typ == Kill {
			kill = e.killOptions(a)
		}
		update(UpdatePodOptions{Type: typ, RuntimePod: rp, Kill: kill})
	case "release":
		if !e.syncer.release(uid, result(a)) {
			printf("error: no call of %q is held", uid)
		}
	case "fail-next", "terminal-next":
		e.script[uid] = append(e.script[uid], result(a))
	case "run":
		return e.run()
	case "advance":
		d, err := time.ParseDuration(string(a.uids()[0]))
		if err != nil {
			printf("error: %v", err)
			break
		}
		e.clock.Step(d)
		printf("now %s", e.since(e.clock.Now()))
	case "jitter":
		r, _ := strconv.ParseFloat(string(a.uids()[0]), 64)
		e.jitterMu.Lock()
		e.jitterR = r
		e.jitterMu.Unlock()
	case "queue":
		out = e.queueLines()
	case "due":
		printf("due: %s", uidList(e.pw.DuePods()))
	case "resync":
		// What the agent does with due pods: sync each with its newest spec.
		due := e.pw.DuePods()
		printf("due: %s", uidList(due))
		for _, uid := range due {
			if pod := e.pods[uid]; pod != nil {
				update(UpdatePodOptions{Type: Sync, Pod: pod})
			}
		}
	case "sync-known":
		known := e.pw.SyncKnownPods(a.uids())
		for _, uid := range slices.Sorted(maps.Keys(known)) {
			printf("known %s: %s", uid, knownString(known[uid]))
		}
		if len(known) == 0 {
			printf("known: none")
		}
	case "state":
		out = e.stateLines(a.uids())
	case "closed":
		for _, name := range a.uids() {
			printf("%s: %s", name, chanState(e.chans[string(name)]))
		}
	case "metrics":
		out = e.metricLines()
	default:
		printf("error: unknown command %q", cmd)
	}
	e.settle()
	return append(out, e.syncer.take()...)
}

// run releases every held call with its scripted result (ok by default),
// lets the workers settle, and repeats until no call is held. Each round's
// lines follow the previous round's, so causes precede their effects.
func (e *env) run() []string {
	e.settle()
	out := e.syncer.take()
	for round := 0; ; round++ {
		held := e.syncer.liveUIDs()
		if len(held) == 0 {
			return out
		}
		if round == 100 {
			return append(out, "error: still running after 100 rounds")
		}
		for _, uid := range held {
			e.syncer.release(uid, e.nextResult(uid))
		}
		e.settle()
		out = append(out, e.syncer.take()...)
	}
}

func parseType(s string) UpdateType {
	for t := Create; t <= Kill; t++ {
		if t.String() == s {
			return t
		}
	}
	return 0
}

func uidList(uids []types.UID) string {
	if len(uids) == 0 {
		return "none"
	}
	s := make([]string, len(uids))
	for i, u := range uids {
		s[i] = string(u)
	}
	return strings.Join(s, " ")
}

func knownString(k KnownPod) string {
	s := "phase=" + k.Phase.String()
	for _, f := range []struct {
		on   bool
		name string
	}{{k.Orphan, "orphan"}, {k.HasConfig, "config"}, {k.Static, "static"}} {
		if f.on {
			s += " " + f.name
		}
	}
	return s
}

func chanState(ch chan struct{}) string {
	if ch == nil {
		return "unknown"
	}
	select {
	case <-ch:
		return "closed"
	default:
		return "open"
	}
}
