package pgtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"

	"github.com/docketrun/docket-go/internal/pglocal"
)

// defaultContainerVersion is the image major when DOCKET_TEST_PG_VERSION is
// unset.
const defaultContainerVersion = "17"

// dockerProbeTimeout bounds the check whether a Docker daemon answers.
const dockerProbeTimeout = 1500 * time.Millisecond

// source is where the server came from and how to let go of it.
type source struct {
	adminURL string
	describe string
	local    *pglocal.Server
	stop     func(context.Context) error
	once     sync.Once
}

// release stops a server the harness started; external servers are left
// alone. Safe to call more than once.
func (s *source) release() {
	s.once.Do(func() {
		if s.stop == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.stop(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: stop PostgreSQL: %v\n", err)
		}
	})
}

// acquire finds a server: an external URL, a container, or a local cluster.
func acquire(ctx context.Context) (*source, error) {
	if u := strings.TrimSpace(os.Getenv(EnvDatabaseURL)); u != "" {
		return &source{adminURL: u, describe: EnvDatabaseURL + " (" + redact(u) + ")"}, nil
	}
	version := strings.TrimSpace(os.Getenv(EnvPGVersion))
	var reasons []string
	if dockerAnswers(ctx) {
		src, err := startContainer(ctx, version)
		if err == nil {
			return src, nil
		}
		reasons = append(reasons, fmt.Sprintf("container: %v", err))
		fmt.Fprintf(os.Stderr, "pgtest: Docker answers but the container failed (%v); trying local binaries\n", err)
	}
	srv, err := pglocal.Start(ctx, pglocal.Options{
		Version: version,
		Logf: func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, "pgtest: "+format+"\n", args...)
		},
	})
	if err != nil {
		reasons = append(reasons, fmt.Sprintf("local cluster: %v", err))
		return nil, fmt.Errorf("%w:\n  %s", errNoSource, strings.Join(reasons, "\n  "))
	}
	return &source{
		adminURL: srv.URL("postgres"),
		describe: fmt.Sprintf("a local cluster (%s, port %d)", srv.FullVersion(), srv.Port()),
		local:    srv,
		stop:     srv.Stop,
	}, nil
}

// startContainer runs postgres:<version>-alpine with testcontainers.
func startContainer(ctx context.Context, version string) (*source, error) {
	if version == "" {
		version = defaultContainerVersion
	}
	image := "postgres:" + version + "-alpine"
	ctr, err := tcpostgres.Run(ctx, image,
		tcpostgres.WithDatabase("postgres"),
		tcpostgres.WithUsername("postgres"),
		tcpostgres.WithPassword("postgres"),
		tcpostgres.BasicWaitStrategies(),
		testcontainers.WithCmd("postgres",
			"-c", "fsync=off", "-c", "synchronous_commit=off",
			"-c", "full_page_writes=off", "-c", "max_connections=200"),
	)
	if err != nil {
		if ctr != nil {
			_ = testcontainers.TerminateContainer(ctr)
		}
		return nil, fmt.Errorf("start %s: %w", image, err)
	}
	dsn, err := ctr.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		_ = testcontainers.TerminateContainer(ctr)
		return nil, fmt.Errorf("container connection string: %w", err)
	}
	return &source{
		adminURL: dsn,
		describe: "a container (" + image + ")",
		stop: func(context.Context) error {
			if err := testcontainers.TerminateContainer(ctr); err != nil {
				return fmt.Errorf("terminate container: %w", err)
			}
			return nil
		},
	}, nil
}

// dockerAnswers reports, quickly, whether a Docker daemon responds to a ping
// at DOCKER_HOST or one of the usual sockets. An installed client without a
// daemon answers false at once.
func dockerAnswers(ctx context.Context) bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(EnvDocker))) {
	case "off", "0", "false", "no":
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, dockerProbeTimeout)
	defer cancel()
	for _, ep := range dockerEndpoints() {
		if pingDocker(ctx, ep) {
			return true
		}
	}
	return false
}

type endpoint struct{ network, addr string }

func dockerEndpoints() []endpoint {
	if host := os.Getenv("DOCKER_HOST"); host != "" {
		switch {
		case strings.HasPrefix(host, "unix://"):
			return []endpoint{{"unix", strings.TrimPrefix(host, "unix://")}}
		case strings.HasPrefix(host, "tcp://"):
			return []endpoint{{"tcp", strings.TrimPrefix(host, "tcp://")}}
		}
		return nil
	}
	eps := []endpoint{{"unix", "/var/run/docker.sock"}}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		eps = append(eps, endpoint{"unix", filepath.Join(dir, "docker.sock")})
	}
	if home, err := os.UserHomeDir(); err == nil {
		eps = append(eps, endpoint{"unix", filepath.Join(home, ".docker", "run", "docker.sock")})
	}
	return eps
}

// pingDocker sends GET /_ping. A TLS-protected TCP daemon cannot be pinged in
// plain HTTP; an open port is taken as an answer there.
func pingDocker(ctx context.Context, ep endpoint) bool {
	if ep.network == "unix" {
		if _, err := os.Stat(ep.addr); err != nil {
			return false
		}
	}
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, ep.network, ep.addr)
	}
	if ep.network == "tcp" && os.Getenv("DOCKER_TLS_VERIFY") != "" {
		conn, err := dial(ctx, "", "")
		if err != nil {
			return false
		}
		_ = conn.Close()
		return true
	}
	client := &http.Client{Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/_ping", nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
