package pgbouncer

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// configFile is the name of the generated pgbouncer.ini.
const configFile = "pgbouncer.ini"

// config is everything the generated pgbouncer.ini says.
type config struct {
	upstream *pgconn.Config
	database string
	poolMode string
	poolSize int
	port     int
	runAs    *account
}

// writeConfig writes pgbouncer.ini into dir.
func writeConfig(dir string, c config) error {
	target := []string{
		"host=" + connValue(c.upstream.Host),
		"port=" + strconv.Itoa(int(c.upstream.Port)),
		"dbname=" + connValue(c.upstream.Database),
		"user=" + connValue(c.upstream.User),
	}
	if c.upstream.Password != "" {
		target = append(target, "password="+connValue(c.upstream.Password))
	}
	var b strings.Builder
	b.WriteString("; Written by the docket test launcher.\n[databases]\n")
	fmt.Fprintf(&b, "%s = %s\n\n[pgbouncer]\n", c.database, strings.Join(target, " "))
	settings := [][2]string{
		{"listen_addr", "127.0.0.1"},
		{"listen_port", strconv.Itoa(c.port)},
		{"unix_socket_dir", ""},
		{"auth_type", "any"},
		{"pool_mode", c.poolMode},
		{"default_pool_size", strconv.Itoa(c.poolSize)},
		{"max_client_conn", "200"},
		{"server_tls_sslmode", "disable"},
		{"logfile", ""},
		{"pidfile", ""},
	}
	if c.runAs != nil {
		settings = append(settings, [2]string{"user", c.runAs.name})
	}
	for _, kv := range settings {
		fmt.Fprintf(&b, "%s = %s\n", kv[0], kv[1])
	}
	if err := os.WriteFile(filepath.Join(dir, configFile), []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("pgbouncer: write %s: %w", configFile, err)
	}
	return nil
}

// connValue quotes a libpq connection-string value for the [databases]
// section.
func connValue(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}
