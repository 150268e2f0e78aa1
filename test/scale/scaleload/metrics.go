package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
)

// maxMetricsBytes bounds one /metrics response.
const maxMetricsBytes = 64 << 20

// families is one scrape, by metric name.
type families map[string]*dto.MetricFamily

// sum adds the values of every series of the metric name whose labels
// include want (a counter's, gauge's or untyped value, a histogram's sum
// of samples); zero if there is none.
func (f families) sum(name string, want map[string]string) float64 {
	mf := f[name]
	if mf == nil {
		return 0
	}
	var total float64
series:
	for _, m := range mf.GetMetric() {
		for k, v := range want {
			if label(m, k) != v {
				continue series
			}
		}
		switch {
		case m.GetCounter() != nil:
			total += m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			total += m.GetGauge().GetValue()
		case m.GetUntyped() != nil:
			total += m.GetUntyped().GetValue()
		case m.GetHistogram() != nil:
			total += m.GetHistogram().GetSampleSum()
		}
	}
	return total
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func parseMetrics(what string, body []byte) (families, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return mfs, nil
}

// scrapeAPIServer reads the apiserver's /metrics as the client's user.
func scrapeAPIServer(ctx context.Context, cs kubernetes.Interface) (families, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("apiserver /metrics: %w", err)
	}
	return parseMetrics("apiserver /metrics", body)
}

// scrapeURL reads a /metrics over plain HTTP (etcd's, on loopback).
func scrapeURL(ctx context.Context, url string) (families, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("--etcd-url %q: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("--etcd-url %q: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("--etcd-url %q: %s", url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetricsBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--etcd-url %q: %w", url, err)
	}
	if len(body) > maxMetricsBytes {
		// Cut short, the text would parse into wrong figures, or fail
		// with a message that hides why.
		return nil, fmt.Errorf("--etcd-url %q: /metrics larger than %d bytes", url, maxMetricsBytes)
	}
	return parseMetrics(url, body)
}

// procSample is one process's CPU time used so far and its resident memory.
type procSample struct {
	CPU time.Duration
	RSS int64 // bytes
	Err error
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// sampleProc reads /proc/<pid>/stat (utime+stime) and /proc/<pid>/status
// (VmRSS).
func sampleProc(pid int) procSample {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)) // #nosec G304 -- a file of /proc, by number
	if err != nil {
		return procSample{Err: err}
	}
	cpu, err := parseStatCPU(string(stat))
	if err != nil {
		return procSample{Err: fmt.Errorf("/proc/%d/stat: %w", pid, err)}
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)) // #nosec G304 -- a file of /proc, by number
	if err != nil {
		return procSample{Err: err}
	}
	rss, err := parseStatusRSS(string(status))
	if err != nil {
		return procSample{Err: fmt.Errorf("/proc/%d/status: %w", pid, err)}
	}
	return procSample{CPU: cpu, RSS: rss}
}

// parseStatCPU is utime+stime of a /proc/<pid>/stat line. The command name
// (field 2) may hold spaces and parentheses, so fields are counted from the
// last ')'.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no ')' in %q", stat)
	}
	fields := strings.Fields(stat[i+1:])
	// After the name: state is field 3, utime 14, stime 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("%d fields after the name, want at least 13", len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// parseStatusRSS is VmRSS of /proc/<pid>/status, in bytes.
func parseStatusRSS(status string) (int64, error) {
	for line := range strings.Lines(status) {
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		kb, unit, _ := strings.Cut(strings.TrimSpace(rest), " ")
		if unit != "kB" {
			return 0, fmt.Errorf("VmRSS in %q, want kB", unit)
		}
		n, err := strconv.ParseInt(kb, 10, 64)
		return n << 10, err
	}
	return 0, fmt.Errorf("no VmRSS line")
}
