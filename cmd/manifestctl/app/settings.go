package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/nodeagent/nodeagent/internal/configfile"
)

// defaultConfigFile is read when it exists and --config is not given.
const defaultConfigFile = "/etc/nodeagent/config.yaml"

// settings are the agent's settings manifestctl needs; each flag is named
// as nodeagent's, so its config file sets them too.
type settings struct {
	ConfigFile     string
	ManifestDir    string
	RootDir        string
	LocalAPISocket string
	NodeName       string
	PodLogDir      string
	// RelistInterval is how often the agent looks at the runtime: the
	// time it may take to notice that a container exited.
	RelistInterval time.Duration
	// BackupDir is manifestctl's own: where apply, rm and rollback keep
	// the version they replace. Outside the manifest directory, so that
	// the agent never reads a backup.
	BackupDir string
}

func (s *settings) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&s.ConfigFile, "config", "", "nodeagent's config file, whose settings are the defaults of the flags below (default "+defaultConfigFile+" if it exists)")
	fs.StringVar(&s.ManifestDir, "manifest-dir", "", "the directory of static pod manifests (nodeagent's --manifest-dir)")
	fs.StringVar(&s.RootDir, "root-dir", configfile.DefaultRootDir, "nodeagent's state directory")
	fs.StringVar(&s.LocalAPISocket, "local-api-socket", "", "nodeagent's local API socket (default: <root-dir>/nodeagent.sock)")
	fs.StringVar(&s.NodeName, "node-name", "", "the node's name, the suffix of static pod names (default: the hostname, lowercased)")
	fs.StringVar(&s.PodLogDir, "pod-log-dir", configfile.DefaultPodLogDir, "the directory of the pods' container logs")
	fs.DurationVar(&s.RelistInterval, "relist-interval", configfile.DefaultRelistInterval, "the agent's --relist-interval, which sets apply --wait's default --settle")
	fs.StringVar(&s.BackupDir, "backup-dir", "", "where apply, rm and rollback keep the version they replace (default: <root-dir>/manifest-backups)")
}

// load completes the flags with the config file and derives the rest.
func (s *settings) load(flags *pflag.FlagSet) error {
	path := s.ConfigFile
	if path == "" {
		if _, err := os.Stat(defaultConfigFile); err == nil {
			path = defaultConfigFile
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("config file %s: %w", defaultConfigFile, err)
		}
	}
	if path != "" {
		if err := configfile.ApplyKnown(flags, path); err != nil {
			return err
		}
		klog.V(4).InfoS("Read nodeagent's config file", "path", path)
	}
	if s.LocalAPISocket == "" {
		s.LocalAPISocket = configfile.LocalAPISocket(s.RootDir)
	}
	s.NodeName = configfile.NodeName(s.NodeName)
	if s.BackupDir == "" && s.RootDir != "" {
		s.BackupDir = filepath.Join(s.RootDir, "manifest-backups")
	}
	if s.ManifestDir != "" {
		s.ManifestDir = filepath.Clean(s.ManifestDir)
	}
	klog.V(4).InfoS("Settings", "manifestDir", s.ManifestDir, "localAPISocket", s.LocalAPISocket, "nodeName", s.NodeName, "backupDir", s.BackupDir)
	return nil
}

// manifestDir returns the manifest directory, or why there is none.
func (s *settings) manifestDir() (string, error) {
	if s.ManifestDir == "" {
		return "", errors.New("no manifest directory: set --manifest-dir, or manifest-dir in nodeagent's config file (--config)")
	}
	fi, err := os.Stat(s.ManifestDir)
	if err != nil {
		return "", fmt.Errorf("manifest directory: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("manifest directory %s is a single file (nodeagent's one-manifest mode): edit it directly", s.ManifestDir)
	}
	return s.ManifestDir, nil
}
