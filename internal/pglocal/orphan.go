package pglocal

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// orphanPrefix starts the name of every cluster directory.
const orphanPrefix = "docket-pg-"

// ownerFile records which process launched a cluster, so that a later
// launcher can reap clusters whose launcher died without stopping them (a
// test binary killed by its timeout, say).
const ownerFile = "launcher.json"

type owner struct {
	PID int `json:"pid"`
}

func writeOwner(base string) error {
	data, err := json.Marshal(owner{PID: os.Getpid()})
	if err != nil {
		return fmt.Errorf("pglocal: encode owner: %w", err)
	}
	if err := os.WriteFile(filepath.Join(base, ownerFile), data, 0o644); err != nil {
		return fmt.Errorf("pglocal: write owner: %w", err)
	}
	return nil
}

// reapOrphans stops and deletes clusters under parent whose launching
// process is gone. It is best effort: anything unexpected leaves the
// directory alone.
func reapOrphans(logf func(string, ...any), parent string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, orphanPrefix+"*"))
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		var o owner
		if json.Unmarshal(data, &o) != nil || o.PID == 0 || processAlive(o.PID) {
			continue
		}
		if pid := postmasterPID(dir); pid > 0 {
			if !isPostgres(pid) {
				continue
			}
			_ = signalQuit(pid)
			for i := 0; i < 50 && processAlive(pid); i++ {
				time.Sleep(100 * time.Millisecond)
			}
			if processAlive(pid) {
				continue
			}
		}
		if os.RemoveAll(dir) == nil {
			logf("removed orphaned cluster %s (its launcher, pid %d, is gone)", dir, o.PID)
		}
	}
}

// postmasterPID reads the first line of the cluster's postmaster.pid; 0 when
// the cluster is not running.
func postmasterPID(dir string) int {
	data, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(data), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || !processAlive(pid) {
		return 0
	}
	return pid
}

// isPostgres checks, where /proc exists, that pid runs a postgres binary, so
// a recycled pid is never signalled.
func isPostgres(pid int) bool {
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return false
	}
	return strings.Contains(string(cmdline), "postgres")
}
