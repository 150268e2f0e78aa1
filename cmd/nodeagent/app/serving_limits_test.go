package app

import (
	"net"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/component-base/metrics"

	"github.com/nodeagent/nodeagent/internal/httplimits"
	"github.com/nodeagent/nodeagent/internal/httplimits/httplimitstest"
)

// TestServingBoundsItsClients: --serve-address may be reachable from more
// than the node; no client may hold it by opening connections and sending
// nothing, trickling headers, or sending huge ones, and a scrape gets
// through meanwhile.
func TestServingBoundsItsClients(t *testing.T) {
	s, err := newServing("127.0.0.1:0", metrics.NewKubeRegistry(), func() error { return nil }, nil, false, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if s.lim != httplimits.Defaults() {
		t.Fatalf("the serving limits are %+v, want the defaults %+v", s.lim, httplimits.Defaults())
	}
	s.lim = httplimitstest.Short()
	httplimitstest.Run(t, s.Run)
	addr := s.l.Addr().String()
	httplimitstest.Check(t, func() (net.Conn, error) { return net.Dial("tcp", addr) }, "/healthz", s.lim)
}
