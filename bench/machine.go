package main

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// machine describes where the figures were measured.
type machine struct {
	GOOS      string            `json:"goos"`
	GOARCH    string            `json:"goarch"`
	CPUs      int               `json:"cpus"`
	CPUModel  string            `json:"cpu_model,omitempty"`
	MemoryGiB float64           `json:"memory_gib,omitempty"`
	Go        string            `json:"go"`
	Postgres  string            `json:"postgres"`
	Settings  map[string]string `json:"postgres_settings"`
	// LoadStart and LoadEnd are the 1, 5 and 15 minute load averages when
	// the run began and ended: other work on the machine skews the figures.
	LoadStart string `json:"load_average_start,omitempty"`
	LoadEnd   string `json:"load_average_end,omitempty"`
}

// loadAverage returns the 1, 5 and 15 minute load averages, or "".
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	fields := strings.Fields(string(data))
	if len(fields) < 3 {
		return ""
	}
	return strings.Join(fields[:3], " ")
}

// reportedSettings are the server settings the guide explains.
var reportedSettings = []string{
	"fsync", "synchronous_commit", "full_page_writes", "shared_buffers", "max_wal_size",
	"checkpoint_timeout", "max_connections", "autovacuum", "work_mem", "jit",
}

// describeMachine collects the machine and server description.
func describeMachine(ctx context.Context, c *cluster) (machine, error) {
	m := machine{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), Go: runtime.Version(),
		Postgres: c.srv.FullVersion(), Settings: map[string]string{}, LoadStart: loadAverage()}
	m.CPUModel = procField("/proc/cpuinfo", "model name")
	if kb, err := strconv.ParseFloat(strings.TrimSuffix(procField("/proc/meminfo", "MemTotal"), " kB"), 64); err == nil {
		m.MemoryGiB = kb / (1 << 20)
	}
	pool, err := c.openPool(ctx, "postgres", 1)
	if err != nil {
		return m, err
	}
	defer pool.Close()
	rows, err := pool.Query(ctx, `select name, setting || coalesce(unit, '') from pg_settings where name = any($1)`, reportedSettings)
	if err != nil {
		return m, err
	}
	defer rows.Close()
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return m, err
		}
		m.Settings[name] = value
	}
	return m, rows.Err()
}

// procField returns the first value of key in a "key: value" proc file, or
// "" where there is none.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
