package db

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Function is one plpgsql function as the newest migration installs it.
type Function struct {
	// Name is the function's SQL name.
	Name string
	// File is the versioned source in FunctionsDir that include lines name,
	// e.g. "docket_tenant_fair_claim_v2.sql": that file, or a directory of
	// step files (see ReadFunctionSource).
	File string
	// BodyMD5 is the hex MD5 of the body between the dollar quotes, which is
	// what PostgreSQL stores in pg_proc.prosrc, so md5(prosrc) must equal it.
	BodyMD5 string
}

// The markers of a migration: an include block names a source of
// FunctionsDir and holds its copy, which the generator (make generate) writes;
// the up section ends where the down section starts.
const (
	IncludePrefix = "-- include "
	IncludeEnd    = "-- end include"
	MigrateDown   = "-- migrate:down"
)

// versionSuffix is the "_vN.sql" ending of a function source's file name.
var versionSuffix = regexp.MustCompile(`_v[0-9]+\.sql$`)

// functionName finds the name a source file creates.
var functionName = regexp.MustCompile(`(?m)^create (?:or replace )?function ([a-z_][a-z0-9_]*)\(`)

// InstalledFunctions lists the functions a database migrated to the newest
// embedded migration holds: for each function, the source that the last up
// section including it names, unless an up section dropped it after that
// include. Sorted by name.
func InstalledFunctions() ([]Function, error) {
	entries, err := fs.ReadDir(Migrations, MigrationsDir)
	if err != nil {
		return nil, fmt.Errorf("reading embedded migrations: %w", err)
	}
	// The newest up section that includes a function names its current
	// source, the only version db/functions keeps; older versions live in
	// the released migrations that include them.
	byName := map[string]string{}
	for _, e := range entries {
		migration, err := fs.ReadFile(Migrations, path.Join(MigrationsDir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading embedded migration %s: %w", e.Name(), err)
		}
		for _, step := range upFunctionSteps(migration) {
			if step.dropped != "" {
				delete(byName, step.dropped)
				continue
			}
			byName[versionSuffix.ReplaceAllString(step.included, "")] = step.included
		}
	}
	out := make([]Function, 0, len(byName))
	for _, file := range byName {
		fn, err := readFunction(file)
		if err != nil {
			return nil, err
		}
		out = append(out, fn)
	}
	slices.SortFunc(out, func(a, b Function) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// droppedFunction matches an up section's statement that drops a function
// and captures its name.
var droppedFunction = regexp.MustCompile(`^drop function (?:if exists )?([a-z_][a-z0-9_]*)\(`)

// functionStep is one line of an up section that installs or removes a
// function: either included (a source file) or dropped (a function name).
type functionStep struct {
	included string
	dropped  string
}

// upFunctionSteps lists, in order, the function files the up section of a
// migration includes and the functions it drops, so that a drop followed by
// a new version (a changed signature) keeps the function.
func upFunctionSteps(migration []byte) []functionStep {
	var steps []functionStep
	scanner := bufio.NewScanner(bytes.NewReader(migration))
	scanner.Buffer(make([]byte, 0, 64*1024), 1<<24)
	for scanner.Scan() {
		line := scanner.Text()
		if strings.HasPrefix(line, MigrateDown) {
			break
		}
		if name, ok := strings.CutPrefix(line, IncludePrefix); ok {
			steps = append(steps, functionStep{included: strings.TrimSpace(name)})
		} else if m := droppedFunction.FindStringSubmatch(line); m != nil {
			steps = append(steps, functionStep{dropped: m[1]})
		}
	}
	return steps
}

// readFunction parses one embedded source: its function name and body.
func readFunction(file string) (Function, error) {
	text, err := ReadFunctionSource(Functions, path.Join(FunctionsDir, file))
	if err != nil {
		return Function{}, fmt.Errorf("reading function source %s: %w", file, err)
	}
	m := functionName.FindSubmatch(text)
	if m == nil {
		return Function{}, fmt.Errorf("function source %s creates no function", file)
	}
	body, err := dollarQuotedBody(text)
	if err != nil {
		return Function{}, fmt.Errorf("function source %s: %w", file, err)
	}
	sum := md5.Sum(body)
	return Function{Name: string(m[1]), File: file, BodyMD5: hex.EncodeToString(sum[:])}, nil
}

// dollarQuotedBody returns the text between the only pair of $$ quotes of a
// source: every source quotes its body with $$ and uses $$ nowhere else.
func dollarQuotedBody(text []byte) ([]byte, error) {
	if n := bytes.Count(text, []byte("$$")); n != 2 {
		return nil, fmt.Errorf("want exactly one $$-quoted body, found %d $$ markers", n)
	}
	start := bytes.Index(text, []byte("$$")) + 2
	end := start + bytes.Index(text[start:], []byte("$$"))
	return text[start:end], nil
}
