package localapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"
)

// ErrNotFound is returned by Client.Pod for a pod the agent does not know.
var ErrNotFound = errors.New("not found")

// Client calls the local API of an agent.
type Client struct {
	socket string
	http   *http.Client
}

// Dial returns a Client for the agent serving on socketPath. It checks
// that the socket exists, so that a wrong path fails here with a clear
// error; it keeps no connection open.
func Dial(socketPath string) (*Client, error) {
	fi, err := os.Stat(socketPath)
	if err != nil {
		return nil, fmt.Errorf("local API socket: %w (is nodeagent running?)", err)
	}
	if fi.Mode().Type() != os.ModeSocket {
		return nil, fmt.Errorf("local API socket %s: not a socket", socketPath)
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", socketPath)
		},
		MaxIdleConns:    2,
		IdleConnTimeout: 30 * time.Second,
	}
	return &Client{socket: socketPath, http: &http.Client{Transport: tr, Timeout: 30 * time.Second}}, nil
}

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Pods lists every pod the agent knows.
func (c *Client) Pods(ctx context.Context) ([]Pod, error) {
	var out PodList
	err := c.get(ctx, "/v1/pods", &out)
	return out.Pods, err
}

// Pod returns one pod and its timeline; the error matches ErrNotFound when
// the agent has no such pod.
func (c *Client) Pod(ctx context.Context, namespace, name string) (PodDetail, error) {
	var out PodDetail
	err := c.get(ctx, "/v1/pods/"+url.PathEscape(namespace)+"/"+url.PathEscape(name), &out)
	return out, err
}

// ManifestErrors returns why manifests are refused.
func (c *Client) ManifestErrors(ctx context.Context) (ManifestErrors, error) {
	var out ManifestErrors
	err := c.get(ctx, "/v1/manifests/errors", &out)
	return out, err
}

// Health returns whether the agent serves and is ready.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var out Health
	err := c.get(ctx, "/v1/healthz", &out)
	return out, err
}

func (c *Client) get(ctx context.Context, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://nodeagent"+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("local API %s: GET %s: %w", c.socket, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("local API %s: GET %s: %w", c.socket, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e errorBody
		msg := string(body)
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		if resp.StatusCode == http.StatusNotFound {
			return fmt.Errorf("local API %s: GET %s: %w: %s", c.socket, path, ErrNotFound, msg)
		}
		return fmt.Errorf("local API %s: GET %s: %s: %s", c.socket, path, resp.Status, msg)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("local API %s: GET %s: decoding the answer: %w", c.socket, path, err)
	}
	return nil
}
