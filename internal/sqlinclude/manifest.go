package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
)

// entry is one released migration: the SHA-256 of its bytes and the release
// (a CHANGELOG version) that shipped it.
type entry struct {
	hash    string
	release string
}

// manifest is the list of released migrations, one line each:
// "<sha256>  <file name>  <release>". A released migration never changes, so
// its recorded sum must keep matching.
type manifest map[string]entry

// releaseVersion is the form of a release: MAJOR.MINOR.PATCH.
var releaseVersion = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// sum is the manifest's hash of a migration's bytes.
func sum(content []byte) string {
	h := sha256.Sum256(content)
	return hex.EncodeToString(h[:])
}

// readManifest loads path; a missing file is an empty manifest.
func readManifest(path string) (manifest, error) {
	content, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return manifest{}, nil
	}
	if err != nil {
		return nil, err
	}
	m := manifest{}
	scanner := bufio.NewScanner(bytes.NewReader(content))
	line := 0
	for scanner.Scan() {
		line++
		text := strings.TrimSpace(scanner.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, "  ")
		if len(fields) != 3 || len(fields[0]) != sha256.Size*2 || fields[1] == "" || !releaseVersion.MatchString(fields[2]) {
			return nil, fmt.Errorf("%s:%d: want \"<sha256>  <migration file>  <release>\"", path, line)
		}
		if _, dup := m[fields[1]]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", path, line, fields[1])
		}
		m[fields[1]] = entry{hash: fields[0], release: fields[2]}
	}
	return m, scanner.Err()
}

// releases lists the releases the manifest names, in migration order.
func (m manifest) releases() []string {
	var out []string
	for _, name := range m.names() {
		if r := m[name].release; !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// names lists the recorded migrations in file-name (migration) order.
func (m manifest) names() []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// write stores the manifest at path, sorted by file name (migration order).
func (m manifest) write(path string) error {
	var out bytes.Buffer
	out.WriteString("# Released migrations: SHA-256, file, the release (CHANGELOG version) that\n")
	out.WriteString("# shipped it. A released migration never changes: make check-generate fails\n")
	out.WriteString("# when one differs. make release VERSION=x.y.z records the open migration.\n")
	for _, name := range m.names() {
		fmt.Fprintf(&out, "%s  %s  %s\n", m[name].hash, name, m[name].release)
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}

// changelogRelease matches a release section's heading of CHANGELOG.md,
// "## [0.1.0] - 2026-12-07", and captures its version.
var changelogRelease = regexp.MustCompile(`(?m)^## \[([0-9]+\.[0-9]+\.[0-9]+)\] - [0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// changelogReleases lists the versions of CHANGELOG.md's release sections,
// newest first as the file orders them.
func changelogReleases(path string) ([]string, error) {
	content, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range changelogRelease.FindAllSubmatch(content, -1) {
		out = append(out, string(m[1]))
	}
	return out, nil
}
