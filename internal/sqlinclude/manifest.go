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
	"slices"
	"strings"
)

// manifest is the list of released migrations and the SHA-256 of each, in
// the format of sha256sum: "<hex>  <file name>" per line. A released
// migration never changes, so its recorded sum must keep matching.
type manifest map[string]string

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
		hash, name, ok := strings.Cut(text, "  ")
		if !ok || len(hash) != sha256.Size*2 || name == "" {
			return nil, fmt.Errorf("%s:%d: want \"<sha256>  <migration file>\"", path, line)
		}
		if _, dup := m[name]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", path, line, name)
		}
		m[name] = hash
	}
	return m, scanner.Err()
}

// write stores the manifest at path, sorted by file name (migration order).
func (m manifest) write(path string) error {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	var out bytes.Buffer
	out.WriteString("# Released migrations and their SHA-256. A released migration never changes:\n")
	out.WriteString("# make check-generate fails when one differs. Record a new one with make release-migration.\n")
	for _, name := range names {
		fmt.Fprintf(&out, "%s  %s\n", m[name], name)
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}
