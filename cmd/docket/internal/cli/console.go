package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/docketrun/docket-go/console"
)

const consoleUsage = `docket console [--database-url URL] [--schema NAME | --all-domains] [--listen ADDR] [--allow-writes]
  Serve the operator console of one fairness domain: the domain, its
  tenants, the ring and the runs, as HTML pages. With --all-domains it
  serves every domain (queue) of the database instead: "/" lists them and
  every page carries a domain picker. It listens on
  127.0.0.1:8080 unless --listen names another address (":0" picks a free
  port); only loopback is the default, since the console has no login of its
  own. It prints the URL it listens on and stops cleanly on SIGINT or
  SIGTERM. Read-only unless --allow-writes, which enables cap edits and run
  actions (each a CSRF-checked POST).
`

// defaultConsoleListen is the console's address without --listen: loopback.
const defaultConsoleListen = "127.0.0.1:8080"

// consoleShutdownTimeout bounds finishing the requests in flight at a stop.
const consoleShutdownTimeout = 10 * time.Second

// runConsole implements "docket console".
func runConsole(ctx context.Context, args []string, out output) int {
	var conn connectionFlags
	fs := newFlagSet("console", &conn)
	listen := fs.String("listen", defaultConsoleListen, "address to listen on")
	allowWrites := fs.Bool("allow-writes", false, "enable cap edits and run actions")
	allDomains := fs.Bool("all-domains", false, "serve every domain of the database")
	if err := fs.Parse(args); err != nil {
		return out.usageError("console", err, consoleUsage)
	}
	if *allDomains && conn.schema != "" {
		return out.failf(ExitUsage, "console: --schema and --all-domains exclude each other\n\n%s", consoleUsage)
	}
	if fs.NArg() > 0 {
		return out.failf(ExitUsage, "console: unexpected argument %s\n\n%s", quoteArg(fs.Arg(0)), consoleUsage)
	}
	databaseURL, err := conn.url()
	if err != nil {
		return out.failf(ExitUsage, "console: %v", err)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	schema := conn.domainSchema()
	if *allDomains {
		schema = ""
	}
	pool, err := openPool(ctx, databaseURL, schema)
	if err != nil {
		return out.failf(ExitFailure, "console: %v", err)
	}
	defer pool.Close()
	h, err := console.New(ctx, console.Config{Pool: pool, AllowWrites: *allowWrites, AllDomains: *allDomains,
		Logger: slog.New(slog.NewTextHandler(out.stderr, nil))})
	if err != nil {
		return out.failf(ExitFailure, "console: %v", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return out.failf(ExitUsage, "console: listen: %v", err)
	}
	mode := "read-only"
	if *allowWrites {
		mode = "writes enabled"
	}
	fmt.Fprintf(out.stdout, "docket console (%s) listening on http://%s/\n", mode, ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return out.failf(ExitFailure, "console: serve: %v", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), consoleShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return out.failf(ExitFailure, "console: shutdown: %v", err)
	}
	<-served
	fmt.Fprintln(out.stdout, "docket console stopped")
	return ExitOK
}
