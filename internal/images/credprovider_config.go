package images

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"
	credentialproviderv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
)

// maxProviderConfigBytes bounds the credential provider config, all its
// files together when it is a directory: a few providers fit in a few
// kilobytes.
const maxProviderConfigBytes = 1 << 20

// providerConfigExts are the files of a config directory that are read,
// the kubelet's; others, and subdirectories, are left alone.
var providerConfigExts = []string{".json", ".yaml", ".yml"}

// codecs decode the provider config and the plugins' answers strictly: an
// unknown or duplicated field is an error, not ignored.
var codecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{kubeletconfigv1.AddToScheme, credentialproviderv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err) // only on a programming error: the types are registered once
		}
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict)
}()

// providerConfig is the config read: the providers in order, each one's
// executable, and the hash of the files' content that
// kubelet_credential_provider_config_info shows.
type providerConfig struct {
	providers []kubeletconfigv1.CredentialProvider
	bins      map[string]string // by provider name
	hash      string
}

// readProviderConfig reads and validates the CredentialProviderConfig
// (kubelet.config.k8s.io/v1, JSON or YAML) at path, and resolves each
// provider's executable in binDir. As the kubelet's, path may be a
// directory: its *.json, *.yaml and *.yml files are read in lexical
// order and their providers merged, a provider name in two places
// refused; the merge must name one provider at least, a file may name
// none. Errors name the file, and the provider and field at fault. The
// hash is the kubelet's: sha256 over each file's length and content.
func readProviderConfig(path, binDir string) (*providerConfig, error) {
	files, err := providerConfigFiles(path)
	if err != nil {
		return nil, err
	}
	pc := &providerConfig{bins: map[string]string{}}
	from := map[string]string{} // provider name -> the file that named it first
	budget := int64(maxProviderConfigBytes)
	hash := sha256.New()
	for _, file := range files {
		cfg, data, err := decodeProviderFile(file, budget)
		if err != nil {
			return nil, err
		}
		budget -= int64(len(data))
		_ = binary.Write(hash, binary.BigEndian, uint64(len(data))) // a hash.Hash does not fail
		hash.Write(data)
		if errs := validateProviders(cfg); len(errs) > 0 {
			return nil, fmt.Errorf("%s: %w", file, errs.ToAggregate())
		}
		for i, p := range cfg.Providers {
			if first, dup := from[p.Name]; dup {
				return nil, fmt.Errorf("%s: providers[%d].name: provider %q is also named in %s: provider names must be unique across the config", file, i, p.Name, first)
			}
			from[p.Name] = file
			// LookPath: an executable file, not merely a name that exists.
			bin, err := exec.LookPath(filepath.Join(binDir, p.Name))
			if err != nil {
				return nil, fmt.Errorf("%s: providers[%d] %q: no executable in the bin dir: %w", file, i, p.Name, err)
			}
			pc.bins[p.Name] = bin
			pc.providers = append(pc.providers, p)
		}
	}
	if len(pc.providers) == 0 {
		return nil, fmt.Errorf("%s: %w", path, field.Required(field.NewPath("providers"), "at least one provider"))
	}
	pc.hash = fmt.Sprintf("sha256:%x", hash.Sum(nil))
	return pc, nil
}

// providerConfigFiles are the files the config at path is made of: path
// itself, or a directory's config files in lexical order (none is an
// error).
func providerConfigFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path) // sorted by name
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && slices.Contains(providerConfigExts, filepath.Ext(e.Name())) {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: a directory without config files (%s)", path, strings.Join(providerConfigExts, ", "))
	}
	return files, nil
}

// decodeProviderFile decodes one config file of at most budget bytes,
// strictly, and returns its bytes too.
func decodeProviderFile(path string, budget int64) (*kubeletconfigv1.CredentialProviderConfig, []byte, error) {
	f, err := os.Open(path) // #nosec G304 -- the node's own config, named by a flag
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, budget+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > budget {
		return nil, nil, fmt.Errorf("%s: the credential provider config is larger than %d bytes", path, maxProviderConfigBytes)
	}
	cfg := &kubeletconfigv1.CredentialProviderConfig{}
	obj, gvk, err := codecs.UniversalDeserializer().Decode(data, nil, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if obj != cfg {
		return nil, nil, fmt.Errorf("%s: a %s, want a CredentialProviderConfig of %s", path, gvk, kubeletconfigv1.SchemeGroupVersion)
	}
	return cfg, data, nil
}

// validateProviders applies the kubelet's rules to one file's providers;
// each error carries the field's path (providers[1].matchImages[0]) and
// the provider's name. Whether there is a provider at all, and whether a
// name is used twice, are the merged config's rules (readProviderConfig).
func validateProviders(cfg *kubeletconfigv1.CredentialProviderConfig) field.ErrorList {
	var errs field.ErrorList
	root := field.NewPath("providers")
	for i, p := range cfg.Providers {
		at := root.Index(i)
		named := func(e *field.Error) *field.Error {
			e.Detail = fmt.Sprintf("provider %q: %s", p.Name, e.Detail)
			return e
		}
		switch {
		case p.Name == "":
			errs = append(errs, named(field.Required(at.Child("name"), "the plugin's file name in the bin dir")))
		case p.Name == "." || p.Name == ".." || strings.ContainsAny(p.Name, "/ "):
			errs = append(errs, named(field.Invalid(at.Child("name"), p.Name, "must be a plain file name in the bin dir, without '/' or spaces")))
		}
		if p.APIVersion != credentialproviderv1.SchemeGroupVersion.String() {
			errs = append(errs, named(field.NotSupported(at.Child("apiVersion"), p.APIVersion, []string{credentialproviderv1.SchemeGroupVersion.String()})))
		}
		if len(p.MatchImages) == 0 {
			errs = append(errs, named(field.Required(at.Child("matchImages"), "at least one image pattern")))
		}
		for j, m := range p.MatchImages {
			if err := validImagePattern(m); err != nil {
				errs = append(errs, named(field.Invalid(at.Child("matchImages").Index(j), m, err.Error())))
			}
		}
		switch {
		case p.DefaultCacheDuration == nil:
			errs = append(errs, named(field.Required(at.Child("defaultCacheDuration"), "0 for answers never cached")))
		case p.DefaultCacheDuration.Duration < 0:
			errs = append(errs, named(field.Invalid(at.Child("defaultCacheDuration"), p.DefaultCacheDuration.Duration.String(), "must not be negative")))
		}
		if p.TokenAttributes != nil {
			errs = append(errs, named(field.Forbidden(at.Child("tokenAttributes"), "service account tokens for plugins are not implemented by nodeagent")))
		}
		for j, e := range p.Env {
			if e.Name == "" || strings.Contains(e.Name, "=") {
				errs = append(errs, named(field.Invalid(at.Child("env").Index(j).Child("name"), e.Name, "must be a variable name, not empty and without '='")))
			}
		}
	}
	return errs
}

// validImagePattern checks a matchImages entry as the keyring will read
// it: a location "host[:port][/path]", its host's labels valid globs.
func validImagePattern(pattern string) error {
	key, ok := locationKey(pattern)
	if !ok || pattern == "" {
		return errors.New("not a registry location host[:port][/path]")
	}
	host, _, _ := strings.Cut(key, "/")
	labels, _ := splitHost(host)
	for _, l := range labels {
		if _, err := filepath.Match(l, ""); err != nil {
			return fmt.Errorf("host label %q: %w", l, err)
		}
	}
	return nil
}
