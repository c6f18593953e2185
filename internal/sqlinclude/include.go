package main

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/docketrun/docket-go/db"
)

// expand rewrites every "-- include NAME" ... "-- end include" block of a
// migration with the current text of NAME, as returned by read. Text outside
// the blocks is kept byte for byte, so expanding an up-to-date migration is the
// identity.
func expand(migration []byte, read func(name string) ([]byte, error)) ([]byte, error) {
	var out bytes.Buffer
	scanner := bufio.NewScanner(bytes.NewReader(migration))
	scanner.Buffer(make([]byte, 0, 64*1024), 1<<24)
	open := ""
	line := 0
	for scanner.Scan() {
		line++
		text := scanner.Text()
		switch {
		case open == "" && strings.HasPrefix(text, db.IncludePrefix):
			open = strings.TrimSpace(strings.TrimPrefix(text, db.IncludePrefix))
			body, err := read(open)
			if err != nil {
				return nil, fmt.Errorf("line %d: include %s: %w", line, open, err)
			}
			out.WriteString(text + "\n")
			out.Write(bytes.TrimRight(body, "\n"))
			out.WriteString("\n")
		case open != "" && text == db.IncludeEnd:
			open = ""
			out.WriteString(text + "\n")
		case open != "":
			// old body of the open block: replaced by the file's text
		default:
			out.WriteString(text + "\n")
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	if open != "" {
		return nil, fmt.Errorf("include %s: missing %q", open, db.IncludeEnd)
	}
	return out.Bytes(), nil
}

// includedBodies returns, for each function source a migration includes,
// the body its include block holds, from the first migration (in name
// order) that includes it: how a source that db/functions no longer keeps
// (an older version, which only released migrations include) is still
// available to the down section of the next migration.
func includedBodies(migrations map[string][]byte, order []string) (map[string][]byte, error) {
	bodies := map[string][]byte{}
	for _, name := range order {
		scanner := bufio.NewScanner(bytes.NewReader(migrations[name]))
		scanner.Buffer(make([]byte, 0, 64*1024), 1<<24)
		open := ""
		var body bytes.Buffer
		for scanner.Scan() {
			text := scanner.Text()
			switch {
			case open == "" && strings.HasPrefix(text, db.IncludePrefix):
				open = strings.TrimSpace(strings.TrimPrefix(text, db.IncludePrefix))
				body.Reset()
			case open != "" && text == db.IncludeEnd:
				if _, seen := bodies[open]; !seen {
					bodies[open] = bytes.Clone(body.Bytes())
				}
				open = ""
			case open != "":
				body.WriteString(text + "\n")
			}
		}
		if err := scanner.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return bodies, nil
}
