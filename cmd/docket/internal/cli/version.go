package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/docketrun/docket-go/docket"
)

const versionUsage = `docket version
  Print the release (docket.Version), the module version when it is another
  one, the VCS revision the binary was built from and the newest schema
  migration it installs.
`

// runVersion prints what the binary is, from its build information.
func runVersion(_ context.Context, args []string, out output) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return out.usageError("version", err, versionUsage)
	}
	if fs.NArg() > 0 {
		return out.failf(ExitUsage, "version: unexpected argument %s\n\n%s", quoteArg(fs.Arg(0)), versionUsage)
	}
	schema, err := docket.SchemaVersion()
	if err != nil {
		return out.failf(ExitFailure, "version: %v", err)
	}
	fmt.Fprintf(out.stdout, "docket %s\n", docket.Version)
	info, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintf(out.stdout, "schema %s\n", schema)
		return ExitOK
	}
	// A build from a module download or a tagged checkout carries a module
	// version; one that is not the release's tag (a pseudo-version of later
	// work) is printed too.
	if m := docketModule(info); m != nil && m.Version != "" && m.Version != "(devel)" && m.Version != "v"+docket.Version {
		fmt.Fprintf(out.stdout, "module %s\n", m.Version)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		modified := ""
		if settings["vcs.modified"] == "true" {
			modified = " (modified)"
		}
		fmt.Fprintf(out.stdout, "revision %s%s %s\n", rev, modified, settings["vcs.time"])
	}
	fmt.Fprintf(out.stdout, "schema %s\n", schema)
	fmt.Fprintf(out.stdout, "go %s\n", info.GoVersion)
	return ExitOK
}

// docketModule finds Docket's module in the build: the main module when
// the docket command itself is built, else the dependency an app links.
func docketModule(info *debug.BuildInfo) *debug.Module {
	const path = "github.com/docketrun/docket-go"
	if info.Main.Path == path {
		return &info.Main
	}
	for _, dep := range info.Deps {
		if dep.Path == path {
			if dep.Replace != nil {
				return dep.Replace
			}
			return dep
		}
	}
	return nil
}
