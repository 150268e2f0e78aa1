// Package configfile reads nodeagent's config file, a YAML map of settings
// keyed by flag name, into a pflag.FlagSet, and holds the defaults that
// more than one binary derives from it. nodeagent and manifestctl both read
// the same file through it, so a setting means the same in both.
package configfile
