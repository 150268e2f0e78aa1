// Package downward holds the downward API's rules, the one place both the
// environment (internal/runtime) and downwardAPI and projected volumes
// (internal/volumes) take them from: which pod field a fieldRef path
// names and how its value is written, and how a resourceFieldRef turns a
// container's requests or limits into a number.
//
//	v, err := downward.FieldValue(pod, "metadata.labels['app']", downward.IPs{})
//	v, err := downward.ResourceValue(pod, "app", ref, allocatable)
//
// Values follow the kubelet's: whole label and annotation maps are sorted
// key="quoted value" lines; resource values are rounded up to a whole
// number of divisors; a limit the container does not set is the node's
// allocatable.
package downward
