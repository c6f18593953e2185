package pgbouncer

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
)

// versionPattern finds the version in the first line of pgbouncer --version.
var versionPattern = regexp.MustCompile(`PgBouncer (\d+)\.(\d+)`)

// Version is a PgBouncer release, e.g. 1.18.
type Version struct {
	Major, Minor int
}

// String returns "major.minor".
func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// TracksPreparedStatements reports whether the release can keep protocol
// prepared statements working in transaction pooling (max_prepared_statements,
// PgBouncer 1.21 and later).
func (v Version) TracksPreparedStatements() bool {
	return v.Major > 1 || (v.Major == 1 && v.Minor >= 21)
}

// InstalledVersion runs pgbouncer --version.
func InstalledVersion(ctx context.Context) (Version, error) {
	bin, err := Binary()
	if err != nil {
		return Version{}, err
	}
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return Version{}, fmt.Errorf("pgbouncer: %s --version: %w", bin, err)
	}
	m := versionPattern.FindSubmatch(out)
	if m == nil {
		return Version{}, fmt.Errorf("pgbouncer: no version in %q", out)
	}
	major, _ := strconv.Atoi(string(m[1]))
	minor, _ := strconv.Atoi(string(m[2]))
	return Version{Major: major, Minor: minor}, nil
}
