package images

import (
	"encoding/base64"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func dockerConfigJSON(name, json string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(json)}}
}

func dockercfg(name, json string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Type: corev1.SecretTypeDockercfg,
		Data: map[string][]byte{corev1.DockerConfigKey: []byte(json)}}
}

func basic(user, password string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
}

func TestKeyringLookup(t *testing.T) {
	secrets := []*corev1.Secret{
		dockerConfigJSON("json", `{"auths": {
			"registry.example.com": {"username": "host", "password": "h"},
			"registry.example.com/team": {"auth": "`+basic("team", "t:colon")+`"},
			"https://registry.example.com/v2/team/app": {"username": "app", "password": "a"},
			"*.mirror.example.com": {"username": "glob", "password": "g"},
			"127.0.0.1:5000": {"username": "local", "password": "l"},
			"https://index.docker.io/v1/": {"username": "hub", "password": "d"}
		}}`),
		// Legacy format: the map of locations itself.
		dockercfg("cfg", `{"registry.example.com": {"username": "second", "password": "s"}}`),
		// Neither pull secret type: ignored, however it looks.
		{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths": {"registry.example.com": {"username": "opaque"}}}`)}},
	}
	kr, err := KeyringFromSecrets(secrets)
	if err != nil {
		t.Fatal(err)
	}
	users := func(auths []AuthConfig) []string {
		var out []string
		for _, a := range auths {
			out = append(out, a.Username+":"+a.Password)
		}
		return out
	}
	for _, tc := range []struct {
		repo string
		want []string
	}{
		// Most specific location first; a host's entries in secret order.
		{"registry.example.com/team/app", []string{"app:a", "team:t:colon", "host:h", "second:s"}},
		{"registry.example.com/team/other", []string{"team:t:colon", "host:h", "second:s"}},
		// The path match is a string prefix, as the kubelet's.
		{"registry.example.com/teammate/x", []string{"team:t:colon", "host:h", "second:s"}},
		{"registry.example.com/other", []string{"host:h", "second:s"}},
		// Ports must be equal; a port-less location does not match a port.
		{"registry.example.com:443/other", nil},
		{"127.0.0.1:5000/private/busybox", []string{"local:l"}},
		{"127.0.0.1:5001/private/busybox", nil},
		// A glob matches one label, never several.
		{"eu.mirror.example.com/x", []string{"glob:g"}},
		{"a.eu.mirror.example.com/x", nil},
		// A subdomain is another host.
		{"sub.registry.example.com/x", nil},
		// Docker Hub's entry serves images without a registry host.
		{"busybox", []string{"hub:d"}},
		{"library/busybox", []string{"hub:d"}},
		{"docker.io/library/busybox", []string{"hub:d"}},
		{"localhost/x", []string{"hub:d"}}, // no dot or colon: a Hub user, as the kubelet reads it
		{"quay.io/x", nil},
	} {
		if diff := cmp.Diff(tc.want, users(kr.Lookup(tc.repo))); diff != "" {
			t.Errorf("Lookup(%q) (-want +got):\n%s", tc.repo, diff)
		}
	}
}

func TestKeyringFromSecretsErrors(t *testing.T) {
	for name, s := range map[string]*corev1.Secret{
		"not JSON":           dockerConfigJSON("bad", `{`),
		"auth not base64":    dockerConfigJSON("bad", `{"auths": {"r.example.com": {"auth": "%%%"}}}`),
		"auth without colon": dockercfg("bad", `{"r.example.com": {"auth": "`+base64.StdEncoding.EncodeToString([]byte("nocolon"))+`"}}`),
	} {
		if _, err := KeyringFromSecrets([]*corev1.Secret{s}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Empty data or a missing key: skipped, as the kubelet skips them.
	kr, err := KeyringFromSecrets([]*corev1.Secret{{Type: corev1.SecretTypeDockerConfigJson}})
	if err != nil || len(kr.Lookup("busybox")) != 0 {
		t.Errorf("empty secret: %v, %v", kr.Lookup("busybox"), err)
	}
	// Unpadded auth, as some tools write it.
	kr, err = KeyringFromSecrets([]*corev1.Secret{dockercfg("raw", `{"r.example.com": {"auth": "`+base64.RawStdEncoding.EncodeToString([]byte("u:p1"))+`"}}`)})
	// The credentials name the secret they come from.
	want := []AuthConfig{{Username: "u", Password: "p1", Secret: &SecretRef{Namespace: "ns", Name: "raw"}}}
	if err != nil || cmp.Diff(want, kr.Lookup("r.example.com/x")) != "" {
		t.Errorf("unpadded auth: %v, %v", kr.Lookup("r.example.com/x"), err)
	}
}
