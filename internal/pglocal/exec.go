package pglocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// runUser is the dedicated system user that runs clusters when the process
// runs as root; fallbackUser is used when it cannot be created.
const (
	runUser      = "docketpg"
	fallbackUser = "nobody"
)

// account is the unprivileged OS user that runs PostgreSQL commands.
type account struct {
	name     string
	uid, gid uint32
}

// runAccount returns the account to run PostgreSQL as, or nil when the
// process is not root and can run it directly.
func runAccount(ctx context.Context, logf func(string, ...any)) (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	if a, err := lookupAccount(runUser); err == nil {
		return a, nil
	}
	cmd := exec.CommandContext(ctx, "useradd", "--system", "--no-create-home",
		"--shell", "/usr/sbin/nologin", runUser)
	out, uerr := cmd.CombinedOutput()
	// A concurrent launcher may have created the user first; look again.
	if a, err := lookupAccount(runUser); err == nil {
		if uerr == nil {
			logf("created system user %s to run PostgreSQL (this process runs as root)", runUser)
		}
		return a, nil
	}
	a, err := lookupAccount(fallbackUser)
	if err != nil {
		return nil, fmt.Errorf("pglocal: running as root needs an unprivileged user: useradd %s failed (%v: %s) and %w",
			runUser, uerr, strings.TrimSpace(string(out)), err)
	}
	logf("could not create user %s (%v); running PostgreSQL as %s", runUser, uerr, fallbackUser)
	return a, nil
}

func lookupAccount(name string) (*account, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("look up user %s: %w", name, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: gid %q: %w", name, u.Gid, err)
	}
	return &account{name: name, uid: uint32(uid), gid: uint32(gid)}, nil
}

// command builds an exec.Cmd for one of the PostgreSQL binaries in bin, run
// as acct (when not nil) with dir as working and home directory.
func command(ctx context.Context, bin binaries, acct *account, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(bin.dir, name), args...)
	cmd.Dir = dir
	cmd.Env = childEnv(bin, acct, dir)
	cmd.SysProcAttr = sysProcAttr(acct)
	// pg_ctl start leaves a server running; it must not hold our pipes, but
	// should it ever, do not wait for it forever.
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// childEnv is the environment for PostgreSQL commands: the caller's, without
// PG* variables that could redirect the tools, with the library dir of
// npm-fetched binaries and a plain C locale.
func childEnv(bin binaries, acct *account, home string) []string {
	var env []string
	ldPath := ""
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "PG"), k == "LC_ALL", k == "LANG", k == "LANGUAGE":
			continue
		case k == "LD_LIBRARY_PATH":
			ldPath = v
			continue
		case acct != nil && (k == "HOME" || k == "USER" || k == "LOGNAME"):
			continue
		}
		env = append(env, kv)
	}
	if bin.libDir != "" {
		if ldPath != "" {
			ldPath = bin.libDir + string(os.PathListSeparator) + ldPath
		} else {
			ldPath = bin.libDir
		}
	}
	if ldPath != "" {
		env = append(env, "LD_LIBRARY_PATH="+ldPath)
	}
	if acct != nil {
		env = append(env, "HOME="+home, "USER="+acct.name, "LOGNAME="+acct.name)
	}
	return append(env, "LC_ALL=C", "LANG=C")
}

// run runs one of the PostgreSQL binaries as the server user and returns its
// combined output; the error carries the output's tail.
func (s *Server) run(ctx context.Context, name string, args ...string) (string, error) {
	out, err := command(ctx, s.bin, s.acct, s.baseDir, name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail(string(out), 20))
	}
	return string(out), nil
}

// chown hands path to the server user when running as root.
func (s *Server) chown(path string) error {
	if s.acct == nil {
		return nil
	}
	if err := os.Lchown(path, int(s.acct.uid), int(s.acct.gid)); err != nil {
		return fmt.Errorf("pglocal: chown %s to %s: %w", filepath.Base(path), s.acct.name, err)
	}
	return nil
}

// checkTraversable fails when some directory on the way to path denies other
// users search permission, which would lock the unprivileged server user out.
func checkTraversable(path string) error {
	p, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("absolute path of %s: %w", path, err)
	}
	for {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("stat %s: %w", p, err)
		}
		if fi.IsDir() && fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("directory %s is not searchable by other users (mode %v)", p, fi.Mode().Perm())
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}

// errNotExecutable reports a binaries directory lacking a needed program.
var errNotExecutable = errors.New("missing or not executable")
