// Package sqlschema scopes Docket's SQL to a schema by markers.
//
// Every reference to one of Docket's relations in db/queries is written with
// Marker in front of it (from /*schema*/docket_runs). The marker is a
// comment, so sqlc parses the queries as they are and a connection whose
// search_path resolves Docket's schema runs them unchanged; Qualify turns
// each marker into a schema qualification for an app whose search_path
// does not. Unmarked reports the references a query left without a marker,
// against the set of relations Created finds in the migrations, so a new
// table cannot be forgotten.
package sqlschema

import (
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Marker stands right before each Docket relation named in a query.
const Marker = "/*schema*/"

// Qualify returns sql with every marker replaced by schema's quoted name and
// a dot.
func Qualify(sql, schema string) string {
	return strings.ReplaceAll(sql, Marker, pgx.Identifier{schema}.Sanitize()+".")
}

// created matches the statements that create an object a query names like
// a relation: tables, views, sequences, composite types and functions.
var created = regexp.MustCompile(`(?i)\bcreate\s+(?:or\s+replace\s+)?(?:table|view|materialized\s+view|sequence|type|function)\s+(?:if\s+not\s+exists\s+)?([a-z_][a-z0-9_]*)\b`)

// Created returns the names, sorted and without repeats, of the relations,
// types and functions that sql creates.
func Created(sql string) []string {
	var names []string
	for _, m := range created.FindAllStringSubmatch(sql, -1) {
		names = append(names, strings.ToLower(m[1]))
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// identifier is one unquoted SQL identifier.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*`)

// Unmarked returns, in order of appearance, each reference in sql to one of
// names that has no marker in front of it. Comments, string literals and
// quoted identifiers are not references, nor is a name qualified by another
// (after a dot: a relation of another schema) or qualifying another (before
// a dot: a table's column, which resolves through the FROM clause).
func Unmarked(sql string, names []string) []string {
	var missing []string
	for i := 0; i < len(sql); {
		switch rest := sql[i:]; {
		case strings.HasPrefix(rest, "--"):
			i += lengthUntil(rest, "\n", 0)
		case strings.HasPrefix(rest, "/*"):
			i += lengthUntil(rest, "*/", 2)
		case rest[0] == '\'' || rest[0] == '"':
			i += quotedLength(rest)
		default:
			word := identifier.FindString(rest)
			if word == "" {
				i++
				continue
			}
			qualified := strings.HasSuffix(sql[:i], Marker) || strings.HasSuffix(sql[:i], ".")
			qualifier := strings.HasPrefix(rest[len(word):], ".")
			if slices.Contains(names, strings.ToLower(word)) && !qualified && !qualifier {
				missing = append(missing, word)
			}
			i += len(word)
		}
	}
	return missing
}

// lengthUntil is the length of s through the first end after its opening
// (all of s when end does not occur).
func lengthUntil(s, end string, opening int) int {
	if j := strings.Index(s[opening:], end); j >= 0 {
		return opening + j + len(end)
	}
	return len(s)
}

// quotedLength is the length of the quoted literal or identifier s starts
// with, a doubled quote being part of it.
func quotedLength(s string) int {
	quote := s[0]
	for j := 1; j < len(s); j++ {
		if s[j] != quote {
			continue
		}
		if j+1 < len(s) && s[j+1] == quote {
			j++
			continue
		}
		return j + 1
	}
	return len(s)
}
