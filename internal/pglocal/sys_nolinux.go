//go:build !linux

package pglocal

// memoryTempDir finds no memory file system outside Linux.
func memoryTempDir() string { return "" }
