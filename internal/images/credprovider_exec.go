package images

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"
	credentialproviderv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
)

const (
	// DefaultPluginTimeout bounds one plugin run, the kubelet's: room for
	// a plugin that retries its cloud's API, no more.
	DefaultPluginTimeout = time.Minute
	// maxPluginStdout bounds a plugin's answer: a response names a few
	// registries' credentials.
	maxPluginStdout = 1 << 20
	// maxPluginStderr is how much of a plugin's stderr is kept for the log.
	maxPluginStderr = 4 << 10
)

// errPluginOutputTooLarge ends a plugin that writes more than
// maxPluginStdout.
var errPluginOutputTooLarge = fmt.Errorf("answer larger than %d bytes", maxPluginStdout)

// execPlugin runs one provider's plugin for image, the exec protocol of
// credentialprovider.kubelet.k8s.io/v1: the provider's args, its env over
// the agent's, a CredentialProviderRequest on stdin and a
// CredentialProviderResponse on stdout. The run is killed at timeout;
// its stderr, bounded, goes into the error. The run's duration, and its
// failure (not an answer refused), go into m.
func execPlugin(ctx context.Context, bin string, p kubeletconfigv1.CredentialProvider, image string, timeout time.Duration, m *pluginMetrics) (*credentialproviderv1.CredentialProviderResponse, error) {
	req, err := json.Marshal(&credentialproviderv1.CredentialProviderRequest{
		TypeMeta: credentialTypeMeta("CredentialProviderRequest"),
		Image:    image,
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, p.Args...) // #nosec G204 -- the node's configured plugin
	cmd.Env = os.Environ()
	for _, e := range p.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value) // later wins: the provider's over the agent's
	}
	stdout := &boundedBuffer{max: maxPluginStdout, err: errPluginOutputTooLarge}
	stderr := &boundedBuffer{max: maxPluginStderr}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(req), stdout, stderr
	// At the timeout the plugin's process group is killed, its children
	// too; any left holding its pipes do not keep the run going.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	start := time.Now()
	err = cmd.Run()
	m.observeRun(p.Name, time.Since(start), err != nil || ctx.Err() != nil || stdout.overflow)
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("killed after %v: %s", timeout, stderr)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case stdout.overflow:
		return nil, errPluginOutputTooLarge
	case err != nil:
		return nil, fmt.Errorf("%w: %s", err, stderr)
	}
	return decodeResponse(stdout.buf.Bytes())
}

// decodeResponse reads a plugin's answer, strictly. Its content may hold
// credentials: a decoding error says what is wrong, never quotes it.
func decodeResponse(data []byte) (*credentialproviderv1.CredentialProviderResponse, error) {
	// The answer must say what it is: a type taken for granted would
	// accept another version's fields as these.
	want := credentialTypeMeta("CredentialProviderResponse")
	var got metav1.TypeMeta
	if err := json.Unmarshal(data, &got); err != nil {
		return nil, errors.New("answer is not JSON")
	}
	if got != want {
		return nil, fmt.Errorf("answered apiVersion %q kind %q, want %s %s", got.APIVersion, got.Kind, want.APIVersion, want.Kind)
	}
	resp := &credentialproviderv1.CredentialProviderResponse{}
	if _, _, err := codecs.UniversalDeserializer().Decode(data, nil, resp); err != nil {
		return nil, errors.New("answer is not a valid CredentialProviderResponse (an unknown or duplicated field, or a wrong type)")
	}
	switch resp.CacheKeyType {
	case credentialproviderv1.ImagePluginCacheKeyType, credentialproviderv1.RegistryPluginCacheKeyType, credentialproviderv1.GlobalPluginCacheKeyType:
	default:
		return nil, fmt.Errorf("cacheKeyType %q, want Image, Registry or Global", resp.CacheKeyType)
	}
	if resp.CacheDuration != nil && resp.CacheDuration.Duration < 0 {
		return nil, fmt.Errorf("cacheDuration %v is negative", resp.CacheDuration.Duration)
	}
	return resp, nil
}

func credentialTypeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: credentialproviderv1.SchemeGroupVersion.String(), Kind: kind}
}

// boundedBuffer keeps at most max bytes. Past them it fails the write
// with err when set (the process then sees a broken pipe and the run
// fails), else drops the rest silently. (Not an embedded bytes.Buffer:
// its ReadFrom would let io.Copy past the bound.)
type boundedBuffer struct {
	buf      bytes.Buffer
	max      int
	err      error
	overflow bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); len(p) > room {
		b.overflow = true
		b.buf.Write(p[:max(room, 0)])
		if b.err != nil {
			return 0, b.err
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *boundedBuffer) String() string { return b.buf.String() }
