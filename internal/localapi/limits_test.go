package localapi

import (
	"net"
	"testing"

	"github.com/nodeagent/nodeagent/internal/httplimits"
	"github.com/nodeagent/nodeagent/internal/httplimits/httplimitstest"
)

// TestServerBoundsItsClients: whoever reaches the socket cannot hold the
// local API by opening connections and sending nothing, trickling
// headers, or sending huge ones; a normal request gets through meanwhile.
func TestServerBoundsItsClients(t *testing.T) {
	path := socketPath(t)
	s, err := New(Options{SocketPath: path, Provider: &fakeProvider{}})
	if err != nil {
		t.Fatal(err)
	}
	if s.lim != httplimits.Defaults() {
		t.Fatalf("the local API's limits are %+v, want the defaults %+v", s.lim, httplimits.Defaults())
	}
	s.lim = httplimitstest.Short()
	httplimitstest.Run(t, s.Run)
	dial := func() (net.Conn, error) { return net.Dial("unix", path) }
	httplimitstest.Check(t, dial, "/v1/healthz", s.lim)
}
