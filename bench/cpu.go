package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// userHZ is the unit of the CPU times in /proc: USER_HZ, which Linux fixes
// at 100 ticks a second for every program it runs.
const userHZ = 100

// cpuMeter reads how much CPU time the throwaway server and the bench
// process have used, and how busy the whole machine was. A scenario that
// reports server CPU per run or per claim samples it before and after its
// timed part; where /proc cannot be read the figures are left out.
type cpuMeter struct {
	// dataDir is the server's data directory, whose postmaster.pid names
	// the process every backend is a child of.
	dataDir string
}

// cpuSample is one reading of a cpuMeter.
type cpuSample struct {
	ok bool
	// server is the CPU time of the postmaster and its children, live and
	// ended; bench is this process's.
	server, bench time.Duration
	// busy and total are the machine's CPU time over all CPUs since boot,
	// working and in all.
	busy, total time.Duration
}

// cpuUse is the CPU spent between two samples.
type cpuUse struct {
	// ServerMs and BenchMs are the server's and the bench's CPU time.
	ServerMs float64 `json:"server_cpu_ms"`
	BenchMs  float64 `json:"bench_cpu_ms"`
	// Busy is the share of the machine's CPU time that was working, from 0
	// to 1: near 1, the CPUs and not the engine's waits bound the rate.
	Busy float64 `json:"machine_busy"`
}

// sample reads the meter now.
func (m cpuMeter) sample() cpuSample {
	var s cpuSample
	pidText, err := os.ReadFile(filepath.Join(m.dataDir, "postmaster.pid"))
	if err != nil {
		return s
	}
	first, _, _ := strings.Cut(string(pidText), "\n")
	postmaster, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return s
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return s
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := procStat(pid)
		if !ok {
			continue
		}
		switch {
		case pid == postmaster:
			s.server += st.own + st.ended
		case st.parent == postmaster:
			s.server += st.own
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return s
	}
	s.bench = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	s.busy, s.total, s.ok = machineCPU()
	return s
}

// since is the CPU spent from before to s, the zero use when either sample
// failed.
func (s cpuSample) since(before cpuSample) cpuUse {
	if !s.ok || !before.ok || s.total <= before.total {
		return cpuUse{}
	}
	return cpuUse{
		ServerMs: ms(s.server - before.server),
		BenchMs:  ms(s.bench - before.bench),
		Busy:     float64(s.busy-before.busy) / float64(s.total-before.total),
	}
}

// processCPU is what /proc/PID/stat says of one process's CPU time.
type processCPU struct {
	parent int
	// own is the process's user and system time, ended that of its
	// children it has waited for.
	own, ended time.Duration
}

// procStat reads /proc/pid/stat; false when the process is gone.
func procStat(pid int) (processCPU, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return processCPU{}, false
	}
	// The command name may hold spaces and parentheses: the fields
	// start after its last ')'. Field 4 of the file (index 1 here) is the
	// parent, fields 14 to 17 utime, stime, cutime and cstime.
	end := strings.LastIndexByte(string(data), ')')
	if end < 0 {
		return processCPU{}, false
	}
	f := strings.Fields(string(data[end+1:]))
	if len(f) < 15 {
		return processCPU{}, false
	}
	n := make([]int64, 4)
	for i := range n {
		v, err := strconv.ParseInt(f[11+i], 10, 64)
		if err != nil {
			return processCPU{}, false
		}
		n[i] = v
	}
	parent, err := strconv.Atoi(f[1])
	if err != nil {
		return processCPU{}, false
	}
	return processCPU{parent: parent, own: ticks(n[0] + n[1]), ended: ticks(n[2] + n[3])}, true
}

// machineCPU reads the working and the total CPU time of all CPUs from
// /proc/stat's first line (user nice system idle iowait irq softirq steal).
func machineCPU() (busy, total time.Duration, ok bool) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, false
	}
	var v [8]int64
	for i := range v {
		if v[i], err = strconv.ParseInt(f[1+i], 10, 64); err != nil {
			return 0, 0, false
		}
	}
	idle := v[3] + v[4]
	work := v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
	return ticks(work), ticks(work + idle), true
}

// ticks converts USER_HZ ticks to a duration.
func ticks(n int64) time.Duration { return time.Duration(n) * time.Second / userHZ }

// perUnit is ms over units, or 0 without a measurement.
func perUnit(ms float64, units int) float64 {
	if ms == 0 || units == 0 {
		return 0
	}
	return ms / float64(units)
}

// cpuFigure formats a CPU time per unit, "-" without a measurement.
func cpuFigure(v float64) string {
	if v == 0 {
		return "-"
	}
	return f2(v)
}

// busyFigure formats the machine's busy share as a percentage, "-" without
// a measurement.
func busyFigure(u cpuUse) string {
	if u.Busy == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*u.Busy)
}
