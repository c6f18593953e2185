package pgbouncer

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
)

// account is the unprivileged user PgBouncer switches to when started as root.
type account struct {
	name     string
	uid, gid int
}

// runAccount returns the account to switch to, or nil when the process is
// not root and PgBouncer can keep its identity.
func runAccount(name string) (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	if name == "" {
		name = "nobody"
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("pgbouncer: refuses to run as root and user %s is unusable: %w", name, err)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return nil, fmt.Errorf("pgbouncer: user %s: uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return nil, fmt.Errorf("pgbouncer: user %s: gid %q: %w", name, u.Gid, err)
	}
	return &account{name: name, uid: uid, gid: gid}, nil
}

// own hands dir and the files in it to the account, so the bouncer can read
// its configuration after dropping root; a nil account does nothing.
func (a *account) own(dir string) error {
	if a == nil {
		return nil
	}
	return filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(path, a.uid, a.gid); err != nil {
			return fmt.Errorf("pgbouncer: chown %s to %s: %w", filepath.Base(path), a.name, err)
		}
		return nil
	})
}
