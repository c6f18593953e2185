package db

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
)

// stepFile is the name of one step file of a source split by step: its
// two-digit number and the step's name.
var stepFile = regexp.MustCompile(`^([0-9]{2})_[a-z0-9_]+\.sql$`)

// ReadFunctionSource returns the function source that an include line names,
// e.g. "docket_tenant_fair_claim_v2.sql", from fsys. The source is either
// that file or a directory of the same name without ".sql", which holds the
// source split by step: step files named NN_step_name.sql, numbered from 01
// without a gap, each ending with a newline. The source of a directory is the
// concatenation of its step files in name order. When there is neither, the
// error wraps fs.ErrNotExist.
func ReadFunctionSource(fsys fs.FS, name string) ([]byte, error) {
	dir, ok := strings.CutSuffix(name, ".sql")
	if !ok {
		return nil, fmt.Errorf("%s does not end in .sql", name)
	}
	steps, err := fs.ReadDir(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fs.ReadFile(fsys, name)
	}
	if err != nil {
		return nil, fmt.Errorf("listing the steps: %w", err)
	}
	switch _, err := fs.Stat(fsys, name); {
	case err == nil:
		return nil, fmt.Errorf("both the file %s and the directory %s exist", name, dir)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("looking for a file beside the directory %s: %w", dir, err)
	}
	if len(steps) == 0 {
		return nil, fmt.Errorf("the directory %s has no step files", dir)
	}
	var source []byte
	for i, step := range steps {
		file := path.Join(dir, step.Name())
		m := stepFile.FindStringSubmatch(step.Name())
		if m == nil || !step.Type().IsRegular() {
			return nil, fmt.Errorf("%s is not a step file NN_step_name.sql", file)
		}
		if want := fmt.Sprintf("%02d", i+1); m[1] != want {
			return nil, fmt.Errorf("%s is numbered %s, want %s", file, m[1], want)
		}
		text, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, fmt.Errorf("reading a step: %w", err)
		}
		if !bytes.HasSuffix(text, []byte("\n")) {
			return nil, fmt.Errorf("%s does not end with a newline", file)
		}
		source = append(source, text...)
	}
	return source, nil
}

// SourceFunctionNames lists the names of the functions FunctionsDir has a
// source for (a NAME_vN.sql file or a NAME_vN directory of steps), whatever
// their versions, sorted and each once.
func SourceFunctionNames() ([]string, error) {
	entries, err := fs.ReadDir(Functions, FunctionsDir)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", FunctionsDir, err)
	}
	var names []string
	for _, e := range entries {
		name := versionSuffix.ReplaceAllString(strings.TrimSuffix(e.Name(), ".sql")+".sql", "")
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}
