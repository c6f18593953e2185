//go:build linux

package pglocal

import (
	"os"
	"syscall"
)

// shmMinFree is the free space a memory file system needs before clusters
// are put there; container runtimes often mount a tiny /dev/shm.
const shmMinFree = 1 << 30

// memoryTempDir returns /dev/shm when it is a usable, roomy directory, else
// "". Creating files there is several times faster than on disk, which makes
// CREATE DATABASE (one file per relation) much cheaper.
func memoryTempDir() string {
	const dir = "/dev/shm"
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o003 != 0o003 {
		return ""
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return ""
	}
	if st.Bavail*uint64(st.Bsize) < shmMinFree {
		return ""
	}
	return dir
}
