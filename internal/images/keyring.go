package images

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// AuthConfig is one set of credentials for a registry, as a docker config
// file holds it and the CRI takes it.
type AuthConfig struct {
	Username string
	Password string
	// Secret is the pod's pull secret the credentials come from; nil for
	// the node's own.
	Secret *SecretRef
}

// SecretRef names a pull secret.
type SecretRef struct {
	Namespace, Name, UID string
}

// Keyring maps registry locations ("host[:port][/path]", the host possibly
// with globs) to credentials. The zero value is empty.
type Keyring struct {
	// keys sorted in reverse: a longer path sorts before its prefix.
	keys  []string
	creds map[string][]AuthConfig
}

// dockerEntry is one location's entry of a docker config file: a
// username and password, or both in auth as base64("user:password").
type dockerEntry struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Auth     string `json:"auth,omitempty"`
}

// KeyringFromSecrets reads the docker configs of secrets of the two pull
// secret types; secrets of other types, or without the type's key, are
// skipped, as the kubelet skips them. A config that does not parse is an
// error naming its secret.
func KeyringFromSecrets(secrets []*corev1.Secret) (*Keyring, error) {
	kr := &Keyring{}
	for _, s := range secrets {
		var entries map[string]dockerEntry
		switch data := s.Data; {
		case s.Type == corev1.SecretTypeDockerConfigJson && len(data[corev1.DockerConfigJsonKey]) > 0:
			var cfg struct {
				Auths map[string]dockerEntry `json:"auths"`
			}
			if err := json.Unmarshal(data[corev1.DockerConfigJsonKey], &cfg); err != nil {
				return nil, fmt.Errorf("secret %s/%s: %s: %w", s.Namespace, s.Name, corev1.DockerConfigJsonKey, err)
			}
			entries = cfg.Auths
		case s.Type == corev1.SecretTypeDockercfg && len(data[corev1.DockerConfigKey]) > 0:
			if err := json.Unmarshal(data[corev1.DockerConfigKey], &entries); err != nil {
				return nil, fmt.Errorf("secret %s/%s: %s: %w", s.Namespace, s.Name, corev1.DockerConfigKey, err)
			}
		default:
			continue
		}
		if err := kr.add(entries, &SecretRef{Namespace: s.Namespace, Name: s.Name, UID: string(s.UID)}); err != nil {
			return nil, fmt.Errorf("secret %s/%s: %w", s.Namespace, s.Name, err)
		}
	}
	return kr, nil
}

// add files each entry under its location: the host and path of the
// entry's key, a scheme and a /v1/ or /v2/ API prefix dropped (a docker
// config may name "https://index.docker.io/v1/"). Within a location,
// credentials keep the order they were added in. from is the pull secret
// they come from; nil for the node's own.
func (k *Keyring) add(entries map[string]dockerEntry, from *SecretRef) error {
	if k.creds == nil {
		k.creds = map[string][]AuthConfig{}
	}
	// Sorted, so that one secret's entries for one location (equal after
	// normalisation) come in a stable order.
	for _, loc := range slices.Sorted(maps.Keys(entries)) {
		e := entries[loc]
		auth, err := e.authConfig()
		if err != nil {
			return fmt.Errorf("entry %q: %w", loc, err)
		}
		auth.Secret = from
		key, ok := locationKey(loc)
		if !ok {
			continue // the kubelet ignores an entry it cannot parse, too
		}
		if _, seen := k.creds[key]; !seen {
			k.keys = append(k.keys, key)
		}
		k.creds[key] = append(k.creds[key], auth)
	}
	slices.Sort(k.keys)
	slices.Reverse(k.keys)
	return nil
}

func (e dockerEntry) authConfig() (AuthConfig, error) {
	if e.Auth == "" {
		return AuthConfig{Username: e.Username, Password: e.Password}, nil
	}
	// Docker writes it padded; some tools do not.
	enc := base64.RawStdEncoding
	if strings.HasSuffix(strings.TrimSpace(e.Auth), "=") {
		enc = base64.StdEncoding
	}
	raw, err := enc.DecodeString(e.Auth)
	if err != nil {
		return AuthConfig{}, fmt.Errorf("auth: %w", err)
	}
	user, password, ok := strings.Cut(string(raw), ":")
	if !ok {
		return AuthConfig{}, fmt.Errorf("auth is not base64(user:password)")
	}
	return AuthConfig{Username: user, Password: password}, nil
}

// locationKey normalises a docker config key to "host[:port][/path]".
func locationKey(loc string) (string, bool) {
	if !strings.HasPrefix(loc, "https://") && !strings.HasPrefix(loc, "http://") {
		loc = "https://" + loc
	}
	u, err := url.Parse(loc)
	if err != nil || u.Host == "" {
		return "", false
	}
	path := u.Path
	if strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/v2/") {
		path = path[3:]
	}
	if path == "" || path == "/" {
		return u.Host, true
	}
	return u.Host + path, true
}

// Docker Hub: where an image without a registry host comes from, and the
// location its credentials are filed under.
const defaultRegistryKey = "index.docker.io"

// Lookup returns the credentials that may pull repo (an image reference
// without tag or digest, as "registry.example.com:5000/team/app"), most
// specific location first; none if no location matches.
func (k *Keyring) Lookup(repo string) []AuthConfig {
	if k == nil {
		return nil
	}
	var out []AuthConfig
	for _, key := range k.keys {
		if matches(key, repo) {
			out = append(out, k.creds[key]...)
		}
	}
	if len(out) == 0 && isDefaultRegistry(repo) {
		out = append(out, k.creds[defaultRegistryKey]...)
	}
	return out
}

// matches reports whether the location key covers repo: the same number
// of host labels, each matching the key's (which may hold globs), the
// same port, and the key's path a prefix of repo's.
func matches(key, repo string) bool {
	kHost, kPath, _ := strings.Cut(key, "/")
	rHost, rPath, _ := strings.Cut(repo, "/")
	kLabels, kPort := splitHost(kHost)
	rLabels, rPort := splitHost(rHost)
	if kPort != rPort || len(kLabels) != len(rLabels) || !strings.HasPrefix("/"+rPath, "/"+kPath) {
		return false
	}
	for i, pattern := range kLabels {
		if ok, err := filepath.Match(pattern, rLabels[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

func splitHost(hostport string) (labels []string, port string) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	return strings.Split(host, "."), port
}

// isDefaultRegistry reports whether repo names an image of Docker Hub: no
// registry host (a first component without a dot or a colon, as the
// kubelet reads names), or docker.io or index.docker.io.
func isDefaultRegistry(repo string) bool {
	first, _, found := strings.Cut(repo, "/")
	if first == "" {
		return false
	}
	if !found || first == "docker.io" || first == defaultRegistryKey {
		return true
	}
	return !strings.ContainsAny(first, ".:")
}
