package pglocal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Standby makes a streaming standby of s: pg_basebackup copies s (-R
// writes the standby's primary_conninfo and standby.signal), and the copy
// starts on a free loopback port with s's settings and waits until it
// accepts connections. Stop deletes it like any server. Making the standby
// synchronous (synchronous_standby_names on s) is the caller's choice.
func (s *Server) Standby(ctx context.Context) (*Server, error) {
	base, err := os.MkdirTemp(filepath.Dir(s.baseDir), orphanPrefix)
	if err != nil {
		return nil, fmt.Errorf("pglocal: create standby dir: %w", err)
	}
	st := &Server{
		bin:     s.bin,
		acct:    s.acct,
		baseDir: base,
		dataDir: filepath.Join(base, "data"),
		logFile: filepath.Join(base, "server.log"),
		logf:    s.logf,
	}
	if err := os.Chmod(base, 0o700); err != nil {
		st.discard()
		return nil, fmt.Errorf("pglocal: chmod standby dir: %w", err)
	}
	if err := st.chown(base); err != nil {
		st.discard()
		return nil, err
	}
	if err := writeOwner(base); err != nil {
		st.discard()
		return nil, err
	}
	if _, err := st.run(ctx, "pg_basebackup", "-D", st.dataDir, "-R", "-X", "stream", "-c", "fast",
		"-h", "127.0.0.1", "-p", fmt.Sprint(s.port), "-U", Superuser); err != nil {
		st.discard()
		return nil, fmt.Errorf("pglocal: pg_basebackup: %w", err)
	}
	// The copy's docket.conf names s's port and socket directory; the
	// standby writes its own.
	st.port, err = freePort()
	if err == nil {
		err = st.writeConf(defaultSettings())
	}
	if err != nil {
		st.discard()
		return nil, err
	}
	if _, err := st.run(ctx, "pg_ctl", "start", "-D", st.dataDir, "-l", st.logFile, "-w", "-t", "60", "-s"); err != nil {
		st.discard()
		return nil, fmt.Errorf("pglocal: start standby: %w\nserver log:\n%s", err, st.logTail())
	}
	if err := st.waitReady(ctx); err != nil {
		st.discard()
		return nil, err
	}
	return st, nil
}

// Crash stops the server at once (pg_ctl stop -m immediate), as a crash of
// its machine would end the postmaster, keeping its data directory until
// Stop.
func (s *Server) Crash(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.run(ctx, "pg_ctl", "stop", "-D", s.dataDir, "-m", "immediate", "-w", "-t", "60", "-s"); err != nil {
		return fmt.Errorf("pglocal: crash: %w", err)
	}
	return nil
}

// Promote ends a standby's recovery (pg_ctl promote) and waits until it
// accepts writes.
func (s *Server) Promote(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.run(ctx, "pg_ctl", "promote", "-D", s.dataDir, "-w", "-t", "60", "-s"); err != nil {
		return fmt.Errorf("pglocal: promote: %w\nserver log:\n%s", err, s.logTail())
	}
	return nil
}
