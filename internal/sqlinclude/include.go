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
