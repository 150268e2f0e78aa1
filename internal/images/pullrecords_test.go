package images

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	privateRepo = "registry.example.com/team/app"
	privateRef  = "registry.example.com/team/app:1"
	imageID     = "sha256:0123"
)

func secretAuth(ns, name, uid, password string) *AuthConfig {
	return &AuthConfig{Username: "u", Password: password, Secret: &SecretRef{Namespace: ns, Name: name, UID: uid}}
}

func held(ns, name, uid, password string) SecretCredential {
	a := secretAuth(ns, name, uid, password)
	return SecretCredential{Namespace: ns, Name: name, UID: uid, Hash: HashCredentials(*a)}
}

// holding is a pod that holds secrets.
func holding(secrets ...SecretCredential) func() []SecretCredential {
	return func() []SecretCredential { return secrets }
}

func openRecords(t *testing.T, dir string, policy VerifyPolicy, allowlist ...string) *PullRecords {
	t.Helper()
	p, err := OpenPullRecords(dir, policy, allowlist)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// An image pulled with one pod's secret is another pod's only if it holds
// the same credentials (in any secret) or the same secret; one pulled
// with the node's credentials or none is every pod's; an image the agent
// never pulled is every pod's under the default policy. The records
// outlive the agent.
func TestPullRecordsDecideWhoMayUseAPresentImage(t *testing.T) {
	dir := t.TempDir()
	p := openRecords(t, dir, NeverVerifyPreloadedImages)
	if p.MustPull(privateRef, privateRepo, imageID, holding()) {
		t.Error("a preloaded image (never pulled by the agent) is not every pod's")
	}
	if err := p.Pulled(privateRepo, imageID, secretAuth("a", "regcred", "uid-1", "s3cret")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		secrets []SecretCredential
		want    bool
	}{
		{"no secret", nil, true},
		{"the same secret", []SecretCredential{held("a", "regcred", "uid-1", "s3cret")}, false},
		{"the same credentials in another secret", []SecretCredential{held("b", "other", "uid-2", "s3cret")}, false},
		{"other credentials", []SecretCredential{held("b", "other", "uid-2", "guess")}, true},
	} {
		for _, records := range []*PullRecords{p, openRecords(t, dir, NeverVerifyPreloadedImages)} {
			if got := records.MustPull(privateRef, privateRepo, imageID, holding(tc.secrets...)); got != tc.want {
				t.Errorf("%s: MustPull = %v, want %v", tc.name, got, tc.want)
			}
		}
	}
	if !p.MustPull(privateRef, "registry.example.com/team/other", imageID, holding()) {
		t.Error("the image under another repository: no record, yet usable")
	}
	// Pulled once with the node's credentials: every pod's.
	if err := p.Pulled(privateRepo, imageID, &AuthConfig{Username: "node", Password: "x"}); err != nil {
		t.Fatal(err)
	}
	if p.MustPull(privateRef, privateRepo, imageID, holding()) {
		t.Error("an image the node's credentials pulled is not every pod's")
	}
}

// A pull under way (or cut short by a crash) marks its image as the
// agent's: without a record, a pod must pull it again.
func TestPullIntentMarksAnImageAsTheAgents(t *testing.T) {
	dir := t.TempDir()
	p := openRecords(t, dir, NeverVerifyPreloadedImages)
	p.Pulling(privateRef) // never done: the agent "crashed"
	restarted := openRecords(t, dir, NeverVerifyPreloadedImages)
	if !restarted.MustPull(privateRef, privateRepo, imageID, holding()) {
		t.Error("an image whose pull was cut short is taken for a preloaded one")
	}
	done := restarted.Pulling(privateRef)
	done()
	done()
	if _, err := os.Stat(restarted.intentPath(privateRef)); !os.IsNotExist(err) {
		t.Errorf("the intent is kept after its pull ended: %v", err)
	}
}

func TestVerifyPolicies(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		policy    VerifyPolicy
		allowlist []string
		repo      string
		pulled    bool
		want      bool
	}{
		{NeverVerify, nil, privateRepo, true, false},
		{AlwaysVerify, nil, privateRepo, false, true},
		{NeverVerifyPreloadedImages, nil, privateRepo, false, false},
		{NeverVerifyPreloadedImages, nil, privateRepo, true, true},
		{NeverVerifyAllowlistedImages, []string{"registry.example.com/team/*"}, privateRepo, true, false},
		{NeverVerifyAllowlistedImages, []string{privateRepo}, privateRepo, true, false},
		{NeverVerifyAllowlistedImages, []string{"registry.example.com/other/*"}, privateRepo, false, true},
	} {
		p := openRecords(t, filepath.Join(dir, strings.ReplaceAll(string(tc.policy)+strings.Join(tc.allowlist, ","), "/", "_")), tc.policy, tc.allowlist...)
		if tc.pulled {
			if err := p.Pulled(tc.repo, imageID, secretAuth("a", "s", "u", "p")); err != nil {
				t.Fatal(err)
			}
		}
		if got := p.MustPull(privateRef, tc.repo, imageID, holding()); got != tc.want {
			t.Errorf("%s %v, pulled by the agent %v: MustPull = %v, want %v", tc.policy, tc.allowlist, tc.pulled, got, tc.want)
		}
	}
}

func TestOpenPullRecordsRefusesBadSettings(t *testing.T) {
	for _, tc := range []struct {
		policy    VerifyPolicy
		allowlist []string
		want      string
	}{
		{"Sometimes", nil, `policy "Sometimes": not one of`},
		{NeverVerifyAllowlistedImages, nil, "needs an allowlist"},
		{AlwaysVerify, []string{"registry.example.com/a"}, "only for policy NeverVerifyAllowlistedImages"},
		{NeverVerifyAllowlistedImages, []string{"registry.example.com/a:1"}, `"registry.example.com/a:1" is not a fully qualified repository`},
		{NeverVerifyAllowlistedImages, []string{"busybox"}, `"busybox" is not a fully qualified repository`},
	} {
		_, err := OpenPullRecords(t.TempDir(), tc.policy, tc.allowlist)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %v, want an error containing %q", tc.policy, tc.allowlist, err, tc.want)
		}
	}
}

// A damaged record is dropped, never trusted.
func TestDamagedPullRecordIsDropped(t *testing.T) {
	dir := t.TempDir()
	p := openRecords(t, dir, NeverVerifyPreloadedImages)
	if err := p.Pulled(privateRepo, imageID, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fileKey(imageID)+recordFileNameSuffix)
	if err := os.WriteFile(path, []byte(`{"imageID": "sha256:0123", "repositories": `), 0o600); err != nil {
		t.Fatal(err)
	}
	reopened := openRecords(t, dir, NeverVerifyPreloadedImages)
	if reopened.MustPull(privateRef, privateRepo, imageID, holding()) {
		t.Error("an image with a damaged record (so none) is taken for pulled by the agent")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the damaged record is kept: %v", err)
	}
}
