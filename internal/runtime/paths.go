package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The agent makes paths of pod UIDs, names and namespaces: log directories,
// cgroups, pod directories. They come from pod specs, and also from the
// labels of whatever the runtime holds, which anyone who can reach the
// runtime may set: a pod UID label "../../etc" must never become a path
// the agent removes. These are the rules, in one place; a sandbox or
// container whose labels break them is not the agent's (identityOf).

// ErrInvalidIdentity: a pod UID, name or namespace cannot name a
// directory or cgroup of the agent's.
var ErrInvalidIdentity = errors.New("invalid pod identity")

// maxUIDLength bounds a pod UID: a UUID has 36 characters, a static pod's
// hash 32.
const maxUIDLength = 128

// CheckUID accepts a pod UID that can name one directory and one cgroup:
// 1 to 128 letters, digits and dashes, as UUIDs and hex hashes are.
func CheckUID(uid types.UID) error {
	s := string(uid)
	if s == "" || len(s) > maxUIDLength || strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != "" {
		return fmt.Errorf("pod UID %q: want 1 to %d letters, digits and dashes: %w", truncate(s, maxUIDLength), maxUIDLength, ErrInvalidIdentity)
	}
	return nil
}

// checkIdentity checks a pod's UID, and its namespace (a DNS label) and
// name (a DNS subdomain) where they are set.
func checkIdentity(namespace, name string, uid types.UID) error {
	if err := CheckUID(uid); err != nil {
		return err
	}
	if namespace != "" {
		if msgs := validation.IsDNS1123Label(namespace); len(msgs) > 0 {
			return fmt.Errorf("pod namespace %q: %s: %w", truncate(namespace, 64), msgs[0], ErrInvalidIdentity)
		}
	}
	if name != "" {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			return fmt.Errorf("pod name %q: %s: %w", truncate(name, 254), msgs[0], ErrInvalidIdentity)
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// podLogDirName is the name of a pod's log directory in LogRoot, as the
// kubelet lays them out: <namespace>_<name>_<uid>.
func podLogDirName(namespace, name string, uid types.UID) (string, error) {
	if namespace == "" || name == "" {
		return "", fmt.Errorf("pod %s: a log directory needs the pod's namespace and name: %w", uid, ErrInvalidIdentity)
	}
	if err := checkIdentity(namespace, name, uid); err != nil {
		return "", err
	}
	return namespace + "_" + name + "_" + string(uid), nil
}

// RemovePodLogDir removes the pod's log directory. It removes nothing but
// an entry of LogRoot named for a valid identity, and never follows a
// symlink out of LogRoot.
func (r *Runtime) RemovePodLogDir(pod *corev1.Pod) error {
	return r.removeLogDir(pod.Namespace, pod.Name, pod.UID)
}

func (r *Runtime) removeLogDir(namespace, name string, uid types.UID) error {
	base, err := podLogDirName(namespace, name, uid)
	if err != nil {
		return fmt.Errorf("removing the logs of pod %s: %w", uid, err)
	}
	root, err := os.OpenRoot(r.opts.LogRoot)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		defer root.Close()
		err = root.RemoveAll(base)
	}
	if err != nil {
		return fmt.Errorf("removing the logs of pod %s: %w", uid, err)
	}
	return nil
}
