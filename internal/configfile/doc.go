// Package configfile reads nodeagent's config file into a pflag.FlagSet,
// and holds the defaults that more than one binary derives from it.
// nodeagent and manifestctl both read the same file through it, so a
// setting means the same in both. The file is either a YAML map of
// settings keyed by flag name, or a kubelet's KubeletConfiguration
// (kubelet.config.k8s.io/v1beta1), whose fields map to the flags through
// one table, kubeletFields, which /configz also writes through.
package configfile
