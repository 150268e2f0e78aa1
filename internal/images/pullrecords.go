package images

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// VerifyPolicy says which present images a pod must show its right to
// before it may use them, as the kubelet's
// imagePullCredentialsVerificationPolicy (KubeletEnsureSecretPulledImages).
type VerifyPolicy string

// The kubelet's policies.
const (
	// NeverVerify: a present image is every pod's.
	NeverVerify VerifyPolicy = "NeverVerify"
	// NeverVerifyPreloadedImages: images the agent did not pull (put on
	// the node otherwise) are every pod's; those it pulled are checked.
	NeverVerifyPreloadedImages VerifyPolicy = "NeverVerifyPreloadedImages"
	// NeverVerifyAllowlistedImages: the images of the allowlist are every
	// pod's; all others are checked.
	NeverVerifyAllowlistedImages VerifyPolicy = "NeverVerifyAllowlistedImages"
	// AlwaysVerify: every present image is checked.
	AlwaysVerify VerifyPolicy = "AlwaysVerify"
)

// VerifyPolicies are the policies, the default first.
var VerifyPolicies = []VerifyPolicy{NeverVerifyPreloadedImages, NeverVerify, NeverVerifyAllowlistedImages, AlwaysVerify}

// Bounds of the records: a record file read back, and the secrets kept
// for one repository of one image (the oldest go first).
const (
	maxRecordFile        = 1 << 20
	maxSecretsPerImage   = 100
	recordFileMode       = 0o600
	recordDirMode        = 0o700
	intentsSubdirectory  = "intents"
	recordFileNameSuffix = ".json"
)

// SecretCredential is a pod's pull secret as a record holds it: where it
// is, and a hash of the credentials it gave for the pull, so that the same
// credentials in another secret count too.
type SecretCredential struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	Hash      string `json:"hash"`
}

// repoCredentials are the credentials that pulled an image for one
// repository: node credentials or none (every pod's), or pod secrets.
type repoCredentials struct {
	NodeAccessible bool               `json:"nodeAccessible,omitempty"`
	Secrets        []SecretCredential `json:"secrets,omitempty"`
}

// pullRecord is one image's record, by the runtime's image ID.
type pullRecord struct {
	ImageID      string                      `json:"imageID"`
	Repositories map[string]*repoCredentials `json:"repositories"`
	// gen is when the record was last written (PullRecords.gen); a record
	// read from disk is older than any written since.
	gen uint64
}

// PullRecords remembers which credentials pulled each image the agent
// pulled, on disk so that a restart keeps them, and decides, as the
// kubelet's image pull manager does, whether a pod may use a present
// image or must pull it again with its own credentials (the registry then
// decides). An image being pulled is marked (an intent) until its record
// is written, so that a pull cut short by a crash never leaves an image
// taken for one preloaded. Safe for concurrent use.
type PullRecords struct {
	dir       string
	policy    VerifyPolicy
	allowlist []string

	mu      sync.Mutex
	records map[string]*pullRecord
	// gen counts the pulls recorded (Pulled), so that Prune keeps a
	// record written after it listed the runtime's images.
	gen     uint64
	intents map[string]int
	// leftover are the intents an earlier agent left (pulls it did not
	// finish), by file name.
	leftover map[string]bool
}

// OpenPullRecords loads the records kept in dir (made if missing). A record
// that cannot be read is removed: its image is then one the agent has no
// record of pulling, and with an intent left it is checked. allowlist is
// for NeverVerifyAllowlistedImages: repositories ("registry/path/name") or
// prefixes ("registry/path/*").
func OpenPullRecords(dir string, policy VerifyPolicy, allowlist []string) (*PullRecords, error) {
	if err := ValidateVerifyPolicy(policy, allowlist); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, intentsSubdirectory), recordDirMode); err != nil {
		return nil, fmt.Errorf("image pull records: %w", err)
	}
	p := &PullRecords{dir: dir, policy: policy, allowlist: allowlist, records: map[string]*pullRecord{}, intents: map[string]int{}, leftover: map[string]bool{}}
	intents, err := os.ReadDir(filepath.Join(dir, intentsSubdirectory))
	if err != nil {
		return nil, fmt.Errorf("image pull records: %w", err)
	}
	for _, e := range intents {
		p.leftover[e.Name()] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("image pull records: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), recordFileNameSuffix) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		rec, err := readRecord(path)
		if err != nil {
			// A record half written or damaged says nothing trustworthy.
			_ = os.Remove(path)
			continue
		}
		p.records[rec.ImageID] = rec
	}
	return p, nil
}

// ValidateVerifyPolicy checks a verification policy and its allowlist,
// as the kubelet checks its configuration: the allowlist is for
// NeverVerifyAllowlistedImages, which needs one; each entry is a fully
// qualified repository without a tag or digest, or a prefix of them
// ending in "/*".
func ValidateVerifyPolicy(policy VerifyPolicy, allowlist []string) error {
	var errs []error
	if !slices.Contains(VerifyPolicies, policy) {
		errs = append(errs, fmt.Errorf("image pull credentials verification policy %q: not one of %v", policy, VerifyPolicies))
	}
	if policy == NeverVerifyAllowlistedImages && len(allowlist) == 0 {
		errs = append(errs, fmt.Errorf("image pull credentials verification policy %s needs an allowlist of images", policy))
	}
	if policy != NeverVerifyAllowlistedImages && len(allowlist) > 0 {
		errs = append(errs, fmt.Errorf("an allowlist of preloaded images is only for policy %s, not %s", NeverVerifyAllowlistedImages, policy))
	}
	for _, e := range allowlist {
		name := strings.TrimSuffix(e, "/*")
		if ref, err := ParseReference(name); err != nil || ref.Repository != name {
			errs = append(errs, fmt.Errorf("preloaded images verification allowlist: %q is not a fully qualified repository (registry/path/name, no tag or digest) or a prefix of them ending in /*", e))
		}
	}
	return errors.Join(errs...)
}

func readRecord(path string) (*pullRecord, error) {
	f, err := os.Open(path) // #nosec G304 -- a file of the agent's own records directory
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRecordFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxRecordFile {
		return nil, fmt.Errorf("%s: over %d bytes", path, maxRecordFile)
	}
	var rec pullRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, err
	}
	if rec.ImageID == "" || rec.Repositories == nil {
		return nil, fmt.Errorf("%s: not a record", path)
	}
	return &rec, nil
}

// HashCredentials is what a record keeps of credentials: enough to tell
// the same ones again, not to use them.
func HashCredentials(a AuthConfig) string {
	h := sha256.Sum256([]byte(a.Username + "\x00" + a.Password))
	return hex.EncodeToString(h[:])
}

// Pulling marks image (as the pod named it) as being pulled, until the
// returned function is called once the pull ended.
func (p *PullRecords) Pulling(image string) (done func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.intents[image]++
	if p.intents[image] == 1 {
		_ = os.WriteFile(p.intentPath(image), []byte(image), recordFileMode)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.intents[image]--; p.intents[image] == 0 {
				delete(p.intents, image)
				delete(p.leftover, fileKey(image))
				_ = os.Remove(p.intentPath(image))
			}
		})
	}
}

// Pulled records that imageID was pulled for repository with auth (nil:
// anonymously). Node credentials and none make the image every pod's for
// that repository; a pod secret's make it the pods' that hold them.
func (p *PullRecords) Pulled(repository, imageID string, auth *AuthConfig) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	rec := p.records[imageID]
	if rec == nil {
		rec = &pullRecord{ImageID: imageID, Repositories: map[string]*repoCredentials{}}
	}
	// Even a pull that changes nothing is new: its image is present again
	// and Prune must not take a list from before it for the truth.
	p.gen++
	rec.gen = p.gen
	creds := rec.Repositories[repository]
	if creds == nil {
		creds = &repoCredentials{}
		rec.Repositories[repository] = creds
	}
	switch {
	case auth == nil || auth.Secret == nil:
		if creds.NodeAccessible {
			return nil
		}
		creds.NodeAccessible = true
	default:
		sc := SecretCredential{Namespace: auth.Secret.Namespace, Name: auth.Secret.Name, UID: auth.Secret.UID, Hash: HashCredentials(*auth)}
		if slices.Contains(creds.Secrets, sc) {
			return nil
		}
		creds.Secrets = append(creds.Secrets, sc)
		if n := len(creds.Secrets); n > maxSecretsPerImage {
			creds.Secrets = creds.Secrets[n-maxSecretsPerImage:]
		}
	}
	p.records[imageID] = rec
	return p.write(rec)
}

// MustPull reports whether a pod must pull image again, present as
// imageID, to show the registry its right to it. image is the reference
// the pod names; held gives the credentials its pull secrets hold for
// repository, asked for only when the record's credentials are a pod
// secret's.
func (p *PullRecords) MustPull(image, repository, imageID string, held func() []SecretCredential) bool {
	p.mu.Lock()
	rec := p.records[imageID]
	pulledByAgent := rec != nil || p.intents[image] > 0 || p.leftover[fileKey(image)]
	var known []SecretCredential
	var nodeAccessible bool
	if rec != nil {
		if creds := rec.Repositories[repository]; creds != nil {
			known, nodeAccessible = slices.Clone(creds.Secrets), creds.NodeAccessible
		}
	}
	p.mu.Unlock()
	switch {
	case !p.mustVerify(repository, pulledByAgent):
		return false
	case nodeAccessible:
		return false
	case len(known) == 0:
		return true
	}
	// The pod's secrets are read without the lock: that may take a read
	// of the apiserver's objects.
	for _, h := range held() {
		for _, known := range known {
			if h.Hash == known.Hash || (h.Namespace == known.Namespace && h.Name == known.Name && h.UID == known.UID) {
				return false
			}
		}
	}
	return true
}

// mustVerify applies the policy to an image of repository.
func (p *PullRecords) mustVerify(repository string, pulledByAgent bool) bool {
	switch p.policy {
	case NeverVerify:
		return false
	case NeverVerifyPreloadedImages:
		return pulledByAgent
	case NeverVerifyAllowlistedImages:
		for _, e := range p.allowlist {
			if prefix, ok := strings.CutSuffix(e, "/*"); (ok && strings.HasPrefix(repository, prefix+"/")) || e == repository {
				return false
			}
		}
	}
	return true
}

// write replaces the record's file whole: written aside, then renamed.
func (p *PullRecords) write(rec *pullRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	path := p.recordPath(rec.ImageID)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, recordFileMode); err != nil {
		return fmt.Errorf("image pull record of %s: %w", rec.ImageID, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("image pull record of %s: %w", rec.ImageID, err)
	}
	return nil
}

func (p *PullRecords) recordPath(imageID string) string {
	return filepath.Join(p.dir, fileKey(imageID)+recordFileNameSuffix)
}

func (p *PullRecords) intentPath(image string) string {
	return filepath.Join(p.dir, intentsSubdirectory, fileKey(image))
}

// fileKey names a file for a key that may hold any character.
func fileKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}
