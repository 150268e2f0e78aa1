package host

import "os"

// selinuxEnforce is where a kernel with SELinux enabled shows its mode.
const selinuxEnforce = "/sys/fs/selinux/enforce"

// SELinuxEnabled reports whether the kernel runs SELinux (permissive or
// enforcing): its filesystem is mounted and shows a mode. Then volumes
// shared with containers must be relabelled for them to use them.
func SELinuxEnabled() bool {
	_, err := os.Stat(selinuxEnforce)
	return err == nil
}
