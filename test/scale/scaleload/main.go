package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// maxNodes is the most nodes a run takes: Kubernetes' largest supported
// cluster.
const maxNodes = 5000

type options struct {
	kubeconfig  string
	namespace   string
	nodes       int
	podsPerNode int
	image       string
	settle      time.Duration
	steady      time.Duration
	timeout     time.Duration
	auditLog    string
	etcdURL     string
	pidsFile    string
	qps         float64
}

func main() {
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of a cluster admin (required)")
	flag.StringVar(&o.namespace, "namespace", "scaleload", "namespace of the load's Deployment (created if absent)")
	flag.IntVar(&o.nodes, "nodes", 0, "the hollow nodes in the cluster (required); the Deployment has --pods-per-node times as many replicas")
	flag.IntVar(&o.podsPerNode, "pods-per-node", 30, "pods per node")
	flag.StringVar(&o.image, "image", "registry.k8s.io/pause:3.10", "image of the pods' one container (a hollow node's runtime pulls anything at once)")
	flag.DurationVar(&o.settle, "settle", 30*time.Second, "wait before the quiet period, for what the nodes do once after they join (their first Lease, status and image list) to pass")
	flag.DurationVar(&o.steady, "steady", time.Minute, "length of each quiet period measured: before the pods are created (idle), and once they all run (running)")
	flag.DurationVar(&o.timeout, "timeout", 15*time.Minute, "bound on waiting for the pods to run, and again for them to go")
	flag.StringVar(&o.auditLog, "audit-log", "", "the apiserver's audit log, JSON lines at Metadata level (required)")
	flag.StringVar(&o.etcdURL, "etcd-url", "", "etcd's metrics URL, e.g. http://127.0.0.1:2379/metrics (required)")
	flag.StringVar(&o.pidsFile, "pids", "", "file of 'ROLE NAME PID' lines naming the processes to measure; ROLE is control (shown one by one), node or runtime (shown together)")
	flag.Float64Var(&o.qps, "qps", 50, "the client's own request rate limit")
	flag.Parse()
	if err := o.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "scaleload:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, &o); err != nil {
		fmt.Fprintln(os.Stderr, "scaleload:", err)
		os.Exit(1)
	}
}

func (o *options) validate() error {
	var errs []error
	if o.kubeconfig == "" {
		errs = append(errs, errors.New("--kubeconfig is required"))
	}
	if o.nodes <= 0 || o.nodes > maxNodes {
		errs = append(errs, fmt.Errorf("--nodes %d must be in 1..%d", o.nodes, maxNodes))
	}
	if o.podsPerNode <= 0 || o.podsPerNode > 110 {
		errs = append(errs, fmt.Errorf("--pods-per-node %d must be in 1..110 (a node's default pod capacity)", o.podsPerNode))
	}
	if o.auditLog == "" {
		errs = append(errs, errors.New("--audit-log is required"))
	}
	if o.etcdURL == "" {
		errs = append(errs, errors.New("--etcd-url is required"))
	}
	if o.steady <= 0 || o.timeout <= 0 || o.qps <= 0 || o.settle < 0 {
		errs = append(errs, errors.New("--steady, --timeout and --qps must be positive, --settle not negative"))
	}
	return errors.Join(errs...)
}

func run(ctx context.Context, o *options) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig %q: %w", o.kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = float32(o.qps), int(o.qps)*2
	cfg.UserAgent = "scaleload"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("--kubeconfig %q: %w", o.kubeconfig, err)
	}
	procs, err := readPids(o.pidsFile)
	if err != nil {
		return err
	}
	m := &meter{cs: cs, etcdURL: o.etcdURL, procs: procs}
	l := &load{cs: cs, o: o, startups: newStartups(time.Now)}
	if err := l.prepare(ctx); err != nil {
		return err
	}

	fmt.Fprintf(os.Stderr, "scaleload: settling for %s, then steady state for %s\n", o.settle, o.steady)
	if err := sleep(ctx, o.settle); err != nil {
		return err
	}
	s0, err := m.snapshot(ctx)
	if err != nil {
		return err
	}
	if err := sleep(ctx, o.steady); err != nil {
		return err
	}
	s1, err := m.snapshot(ctx)
	if err != nil {
		return err
	}
	stopWatch, err := l.watch(ctx)
	if err != nil {
		return err
	}
	defer stopWatch()
	fmt.Fprintf(os.Stderr, "scaleload: creating %d pods\n", o.nodes*o.podsPerNode)
	if err := l.create(ctx); err != nil {
		return err
	}
	s2, err := m.snapshot(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "scaleload: all Running; steady state for %s\n", o.steady)
	if err := sleep(ctx, o.steady); err != nil {
		return err
	}
	s3, err := m.snapshot(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "scaleload: deleting them\n")
	if err := l.remove(ctx); err != nil {
		return err
	}
	s4, err := m.snapshot(ctx)
	if err != nil {
		return err
	}

	phases := []phase{
		{Name: "idle", From: s0, To: s1}, {Name: "start-up", From: s1, To: s2},
		{Name: "running", From: s2, To: s3}, {Name: "deletion", From: s3, To: s4},
	}
	for i := range phases {
		if phases[i].Requests, err = countRequests(o.auditLog, phases[i].From.At, phases[i].To.At); err != nil {
			return err
		}
	}
	return writeReport(os.Stdout, o.nodes, m.procs, phases, l.startups)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
