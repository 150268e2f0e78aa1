package eviction

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// The signals a threshold may watch, as the kubelet's --eviction-hard
// names them. A memory.available threshold also bounds
// SignalAllocatableMemoryAvailable.
const (
	SignalMemoryAvailable   = "memory.available"
	SignalNodeFSAvailable   = "nodefs.available"
	SignalNodeFSInodesFree  = "nodefs.inodesFree"
	SignalImageFSAvailable  = "imagefs.available"
	SignalImageFSInodesFree = "imagefs.inodesFree"
	SignalPIDAvailable      = "pid.available"
	// SignalAllocatableMemoryAvailable is what the pods' cgroup may still
	// take of the memory allocatable to pods. It is given no threshold of
	// its own: memory.available's bounds it, as under the kubelet.
	SignalAllocatableMemoryAvailable = "allocatableMemory.available"
	thresholdOperator                = "<"
	defaultPIDThresholdValue         = "5%"
)

// DefaultThresholds are the kubelet's hard eviction defaults, plus
// pid.available<5%: without a threshold there is no honest PIDPressure
// condition to report, and the kubelet has none by default.
const DefaultThresholds = "memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%,imagefs.inodesFree<5%,pid.available<" + defaultPIDThresholdValue

// Threshold is one "signal<value" bound: the resource is under pressure
// while what is available is below either an absolute quantity or a
// percentage of the capacity.
type Threshold struct {
	Signal   string
	Quantity *resource.Quantity
	Percent  float64
}

// Thresholds are the bounds by signal.
type Thresholds map[string]Threshold

// ParseThresholds reads "signal<value" pairs separated by commas, as the
// kubelet's --eviction-hard and --eviction-soft. A signal it does not
// know, a quantity it cannot read or a percentage outside (0, 100] is an
// error naming it.
func ParseThresholds(s string) (Thresholds, error) {
	return parsePairs(s, thresholdOperator, "memory.available<100Mi or nodefs.available<10%")
}

// ParseMinimumReclaim reads "signal=value" pairs, as the kubelet's
// --eviction-minimum-reclaim: once a threshold is met, how much more than
// its bound must be available again before it counts as resolved.
func ParseMinimumReclaim(s string) (Thresholds, error) {
	return parsePairs(s, "=", "memory.available=0Mi or nodefs.available=500Mi")
}

// ParseGracePeriods reads "signal=duration" pairs, as the kubelet's
// --eviction-soft-grace-period.
func ParseGracePeriods(s string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for _, item := range splitItems(s) {
		signal, value, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("grace period %q: want signal=duration, as memory.available=1m30s", item)
		}
		if !slices.Contains(knownSignals, signal) {
			return nil, fmt.Errorf("grace period %q: unknown signal %q (known: %s)", item, signal, strings.Join(knownSignals, ", "))
		}
		if _, dup := out[signal]; dup {
			return nil, fmt.Errorf("grace period %q: %s is given twice", item, signal)
		}
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("grace period %q: %q is not a non-negative duration", item, value)
		}
		out[signal] = d
	}
	return out, nil
}

func splitItems(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// parsePairs reads "signal<op>value" pairs separated by commas.
func parsePairs(s, op, example string) (Thresholds, error) {
	out := Thresholds{}
	for _, item := range splitItems(s) {
		signal, value, ok := strings.Cut(item, op)
		if !ok {
			return nil, fmt.Errorf("threshold %q: want signal%svalue, as %s", item, op, example)
		}
		if !slices.Contains(knownSignals, signal) {
			return nil, fmt.Errorf("threshold %q: unknown signal %q (known: %s)", item, signal, strings.Join(knownSignals, ", "))
		}
		if _, dup := out[signal]; dup {
			return nil, fmt.Errorf("threshold %q: %s is given twice", item, signal)
		}
		t := Threshold{Signal: signal}
		if pct, isPct := strings.CutSuffix(value, "%"); isPct {
			p, err := strconv.ParseFloat(pct, 64)
			if err != nil || p <= 0 || p > 100 {
				return nil, fmt.Errorf("threshold %q: percentage %q must be in (0, 100]", item, value)
			}
			t.Percent = p
		} else {
			q, err := resource.ParseQuantity(value)
			if err != nil || q.Sign() < 0 {
				return nil, fmt.Errorf("threshold %q: %q is not a non-negative quantity", item, value)
			}
			if signal != SignalMemoryAvailable && signal != SignalNodeFSAvailable && signal != SignalImageFSAvailable && !isWhole(q) {
				return nil, fmt.Errorf("threshold %q: a count of inodes or processes must be whole", item)
			}
			t.Quantity = &q
		}
		out[signal] = t
	}
	return out, nil
}

func isWhole(q resource.Quantity) bool { return q.MilliValue()%1000 == 0 }

var knownSignals = []string{SignalMemoryAvailable, SignalNodeFSAvailable, SignalNodeFSInodesFree, SignalImageFSAvailable, SignalImageFSInodesFree, SignalPIDAvailable}

// String spells the thresholds as ParseThresholds reads them, in a stable order.
func (ts Thresholds) String() string {
	var parts []string
	for _, signal := range slices.Sorted(maps.Keys(ts)) {
		t := ts[signal]
		v := fmt.Sprintf("%g%%", t.Percent)
		if t.Quantity != nil {
			v = t.Quantity.String()
		}
		parts = append(parts, signal+thresholdOperator+v)
	}
	return strings.Join(parts, ",")
}

// Bound is the threshold in the signal's unit for a given capacity: what
// must stay available. A signal without a threshold has bound 0.
func (ts Thresholds) Bound(signal string, capacity int64) int64 {
	t, ok := ts[thresholdOf(signal)]
	if !ok {
		return 0
	}
	return t.of(capacity)
}

// of is the threshold's value for a given capacity.
func (t Threshold) of(capacity int64) int64 {
	if t.Quantity != nil {
		return t.Quantity.Value()
	}
	return int64(float64(capacity) * t.Percent / 100)
}

// Crossed tells whether the reading is below the signal's threshold.
func (ts Thresholds) Crossed(signal string, r Reading) bool {
	_, ok := ts[thresholdOf(signal)]
	return ok && r.Available < ts.Bound(signal, r.Capacity)
}

// thresholdOf is the signal whose threshold bounds signal.
func thresholdOf(signal string) string {
	if signal == SignalAllocatableMemoryAvailable {
		return SignalMemoryAvailable
	}
	return signal
}
