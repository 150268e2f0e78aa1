package framework

import (
	"archive/tar"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Registry is the tests' image registry (hack/registry-up.sh): TLS from a
// CA that containerd trusts, basic auth, repositories under private/
// readable only with User and Password.
type Registry struct {
	// Host is its host:port, on 127.0.0.1.
	Host           string
	User, Password string
	CAFile         string
	// Log has one line per request: "METHOD PATH STATUS user=...".
	Log string

	busybox   v1.Image
	layoutDir string // busybox's layout, removed when Run ends
}

// PrivateBusybox is the repository the framework pushes the busybox image
// to, under the tag "1".
const PrivateBusybox = "private/busybox"

// Image is the full reference of repo:tag in the registry.
func (r *Registry) Image(repoAndTag string) string { return r.Host + "/" + repoAndTag }

// PushBusybox pushes the locally built busybox image as repoAndTag, with
// env added to its config: each distinct env gives a distinct image
// digest, which it returns.
//
// The config always differs from the local image's (a marker variable),
// so that the pushed image has an ID of its own in containerd: the CRI
// removes an image with every tag of its ID, and a test removing a pulled
// image must not take the local busybox along.
func (r *Registry) PushBusybox(repoAndTag string, env ...string) (string, error) {
	cf, err := r.busybox.ConfigFile()
	if err != nil {
		return "", err
	}
	cfg := *cf.Config.DeepCopy()
	cfg.Env = append(append(cfg.Env, "NODEAGENT_TEST_REGISTRY=1"), env...)
	img, err := mutate.Config(r.busybox, cfg)
	if err != nil {
		return "", err
	}
	return r.push(repoAndTag, img)
}

// PushBusyboxWithLayer is PushBusybox with one more layer on top, of
// layerBytes random bytes: each image takes that much more room of its own
// on a node (the random data does not compress).
func (r *Registry) PushBusyboxWithLayer(repoAndTag string, layerBytes int64) (string, error) {
	cf, err := r.busybox.ConfigFile()
	if err != nil {
		return "", err
	}
	cfg := *cf.Config.DeepCopy()
	cfg.Env = append(cfg.Env, "NODEAGENT_TEST_REGISTRY=1")
	img, err := mutate.Config(r.busybox, cfg)
	if err != nil {
		return "", err
	}
	layer, err := random.Layer(layerBytes, types.DockerLayer)
	if err != nil {
		return "", err
	}
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return "", err
	}
	return r.push(repoAndTag, img)
}

func (r *Registry) push(repoAndTag string, img v1.Image) (string, error) {
	ref, err := name.ParseReference(r.Image(repoAndTag), name.StrictValidation)
	if err != nil {
		return "", err
	}
	tr, err := r.transport()
	if err != nil {
		return "", err
	}
	if err := remote.Write(ref, img, remote.WithAuth(&authn.Basic{Username: r.User, Password: r.Password}), remote.WithTransport(tr)); err != nil {
		return "", fmt.Errorf("pushing %s: %w", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return d.String(), nil
}

// Requests counts the requests the registry logged whose line contains
// every one of substrings.
func (r *Registry) Requests(substrings ...string) (int, error) {
	data, err := os.ReadFile(r.Log)
	if err != nil {
		return 0, err
	}
	n := 0
next:
	for _, line := range strings.Split(string(data), "\n") {
		for _, s := range substrings {
			if !strings.Contains(line, s) {
				continue next
			}
		}
		if line != "" {
			n++
		}
	}
	return n, nil
}

func (r *Registry) transport() (http.RoundTripper, error) {
	pem, err := os.ReadFile(r.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no certificate", r.CAFile)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return tr, nil
}

// startRegistry runs hack/registry-up.sh, reads what it wrote and pushes
// the busybox image from its OCI layout tarball as PrivateBusybox:1.
func (e *Env) startRegistry(root, busyboxTar string) error {
	if err := script(root, "registry-up.sh"); err != nil {
		return err
	}
	path := filepath.Join(stateDir(), "registry", "env")
	vars, err := readEnvFile(path)
	if err != nil {
		return err
	}
	if err := need(path, vars, "REGISTRY_HOST", "REGISTRY_PID", "REGISTRY_CA_FILE", "REGISTRY_USER", "REGISTRY_PASSWORD", "REGISTRY_LOG"); err != nil {
		return err
	}
	if pid, err := strconv.Atoi(vars["REGISTRY_PID"]); err == nil {
		e.pids["registry"] = processOf(pid)
	}
	r := &Registry{Host: vars["REGISTRY_HOST"], User: vars["REGISTRY_USER"], Password: vars["REGISTRY_PASSWORD"],
		CAFile: vars["REGISTRY_CA_FILE"], Log: vars["REGISTRY_LOG"]}
	if r.busybox, r.layoutDir, err = imageFromLayoutTar(busyboxTar); err != nil {
		return fmt.Errorf("busybox image %s: %w", busyboxTar, err)
	}
	if _, err := r.PushBusybox(PrivateBusybox + ":1"); err != nil {
		return err
	}
	e.Registry = r
	return nil
}

// imageFromLayoutTar reads the one image of a tarred OCI image layout (as
// hack/images/build.sh makes them), unpacked into a directory it returns.
func imageFromLayoutTar(path string) (v1.Image, string, error) {
	dir, err := os.MkdirTemp("", "nodeagent-layout")
	if err != nil {
		return nil, "", err
	}
	img, err := func() (v1.Image, error) {
		if err := untar(path, dir); err != nil {
			return nil, err
		}
		p, err := layout.FromPath(dir)
		if err != nil {
			return nil, err
		}
		idx, err := p.ImageIndex()
		if err != nil {
			return nil, err
		}
		m, err := idx.IndexManifest()
		if err != nil {
			return nil, err
		}
		if len(m.Manifests) != 1 {
			return nil, fmt.Errorf("want one image in the layout, found %d", len(m.Manifests))
		}
		return p.Image(m.Manifests[0].Digest)
	}()
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	// The layout stays on disk until Run ends: layers are read lazily,
	// at each push.
	return img, dir, nil
}

func untar(path, dir string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err := os.Create(target)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr) // #nosec G110 -- our own build's tarball
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}
