package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"time"
)

type options struct {
	kubectl, namespace, pod     string
	execContainer, logContainer string
	samples                     string
	targets                     targets
	count                       int
	timeout                     time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.kubectl, "kubectl", "kubectl", "the kubectl binary")
	flag.Var(&o.targets, "target", "LABEL,KUBECONFIG,FIFO: a node's cluster, named LABEL in the figures, reached with KUBECONFIG, its pod's FIFO at the host path FIFO (repeat it to measure several nodes in turn; at least one)")
	flag.StringVar(&o.namespace, "namespace", "default", "the pod's namespace")
	flag.StringVar(&o.pod, "pod", "", "the pod (required)")
	flag.StringVar(&o.execContainer, "exec-container", "", "the container `true` runs in (required)")
	flag.StringVar(&o.logContainer, "log-container", "", "the container that echoes each line read from the target's FIFO (required)")
	flag.StringVar(&o.samples, "samples", "", "a file every sample is appended to (label, measure, milliseconds)")
	flag.IntVar(&o.count, "count", 30, "measured iterations of each measure on each target")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Second, "the bound of one iteration")
	flag.Parse()
	if err := o.validate(); err != nil {
		fmt.Fprintf(os.Stderr, "nodeapi bench: %v\n", err)
		os.Exit(2)
	}
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintf(os.Stderr, "nodeapi bench: %v\n", err)
		os.Exit(1)
	}
}

func (o options) validate() error {
	for name, v := range map[string]string{
		"--pod": o.pod, "--exec-container": o.execContainer, "--log-container": o.logContainer,
	} {
		if v == "" {
			return fmt.Errorf("%s: required", name)
		}
	}
	if len(o.targets) == 0 {
		return fmt.Errorf("--target: required")
	}
	if o.count < 1 || o.count > 10000 {
		return fmt.Errorf("--count: %d is not within 1..10000", o.count)
	}
	if o.timeout <= 0 {
		return fmt.Errorf("--timeout: %v is not positive", o.timeout)
	}
	return nil
}

// measure is one kind of round trip, timed once per call.
type measure struct {
	name string
	once func(ctx context.Context, t target, i int) (time.Duration, error)
}

// run takes each measure count times on every target, the targets in turn
// within an iteration and in the opposite order in the next, so that with
// several targets each sees the same load (a drift of the machine's load
// during the run favours none of them).
func run(ctx context.Context, o options) error {
	out := io.Writer(io.Discard)
	if o.samples != "" {
		f, err := os.OpenFile(o.samples, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600) // #nosec G304 -- the operator names the file
		if err != nil {
			return fmt.Errorf("--samples: %w", err)
		}
		defer f.Close()
		out = f
	}
	measures := []measure{
		{"get", o.getOnce},
		{"exec", o.execOnce},
		{"logs-f", o.logsOnce},
	}
	results := map[target]map[string]summary{}
	for _, m := range measures {
		samples := map[target][]time.Duration{}
		for i := 0; i <= o.count; i++ {
			order := slices.Clone(o.targets)
			if i%2 == 1 {
				slices.Reverse(order)
			}
			for _, t := range order {
				d, err := m.once(ctx, t, i)
				if err != nil {
					return fmt.Errorf("%s: %s, iteration %d: %w", t.label, m.name, i, err)
				}
				if i == 0 {
					continue // the warm-up
				}
				samples[t] = append(samples[t], d)
				fmt.Fprintf(out, "%s\t%s\t%.3f\n", t.label, m.name, ms(d))
			}
		}
		for t, ds := range samples {
			if results[t] == nil {
				results[t] = map[string]summary{}
			}
			results[t][m.name] = summarize(ds)
		}
	}
	for _, t := range o.targets {
		for _, m := range measures {
			s := results[t][m.name]
			fmt.Printf("%-10s %-7s median %8.1f ms   p90 %8.1f ms   min %8.1f ms   (n=%d)\n",
				t.label, m.name, ms(s.median), ms(s.p90), ms(s.min), o.count)
		}
	}
	return nil
}

func (o options) kubectlCmd(ctx context.Context, t target, args ...string) *exec.Cmd {
	args = append([]string{"--kubeconfig", t.kubeconfig, "--namespace", o.namespace}, args...)
	cmd := exec.CommandContext(ctx, o.kubectl, args...) // #nosec G204 -- the operator's kubectl, run without a shell
	cmd.Stderr = os.Stderr
	return cmd
}

// getOnce is one `kubectl get pod`, from process start to exit: kubectl's
// own start and one request to the apiserver, the floor under exec.
func (o options) getOnce(ctx context.Context, t target, _ int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	cmd := o.kubectlCmd(ctx, t, "get", "pod", o.pod, "-o", "name")
	cmd.Stdout = io.Discard
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("kubectl get: %w", err)
	}
	return time.Since(start), nil
}

// execOnce is one `kubectl exec -- true`, from process start to exit.
func (o options) execOnce(ctx context.Context, t target, _ int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	cmd := o.kubectlCmd(ctx, t, "exec", o.pod, "-c", o.execContainer, "--", "true")
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("kubectl exec: %w", err)
	}
	return time.Since(start), nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
