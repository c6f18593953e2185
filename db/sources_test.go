package db

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"testing"
	"testing/fstest"
)

// maxSourceLines is the most lines a file of db/functions may have; a longer
// source is split by step into a directory.
const maxSourceLines = 200

// Every file under db/functions, a source or a step of one, is at most
// maxSourceLines lines long.
func TestFunctionSourceFilesAreShort(t *testing.T) {
	files := 0
	err := fs.WalkDir(os.DirFS(FunctionsDir), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		text, err := fs.ReadFile(os.DirFS(FunctionsDir), name)
		if err != nil {
			return err
		}
		files++
		lines := bytes.Count(text, []byte("\n"))
		if len(text) > 0 && !bytes.HasSuffix(text, []byte("\n")) {
			lines++
		}
		if lines > maxSourceLines {
			t.Errorf("%s has %d lines, want at most %d: split it by step", name, lines, maxSourceLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("db/functions holds no file")
	}
}

// stepDirs lists the sources of db/functions split by step, the directories,
// as on disk.
func stepDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(FunctionsDir)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	return dirs
}

// The engines are split by step, and the source of each, embedded or on
// disk, is its step files concatenated in name order.
func TestDirectorySourcesAreTheirStepsInOrder(t *testing.T) {
	dirs := stepDirs(t)
	var functions []string
	for _, dir := range dirs {
		functions = append(functions, versionSuffix.ReplaceAllString(dir+".sql", ""))
		steps, err := os.ReadDir(path.Join(FunctionsDir, dir))
		if err != nil {
			t.Fatal(err)
		}
		var want []byte
		for _, step := range steps {
			text, err := os.ReadFile(path.Join(FunctionsDir, dir, step.Name()))
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, text...)
		}
		for _, source := range []struct {
			where string
			fsys  fs.FS
			name  string
		}{
			{"embedded", Functions, path.Join(FunctionsDir, dir+".sql")},
			{"on disk", os.DirFS(FunctionsDir), dir + ".sql"},
		} {
			got, err := ReadFunctionSource(source.fsys, source.name)
			if err != nil {
				t.Fatalf("%s, %s: %v", dir, source.where, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s, %s: the source is not its steps in order", dir, source.where)
			}
		}
	}
	want := []string{"docket_legacy_claim", "docket_tenant_fair_claim_combined", "docket_tenant_fair_claim"}
	if !slices.Equal(functions, want) {
		t.Fatalf("the sources split by step are those of %q, want %q", functions, want)
	}
}

// The step files of a directory are numbered 01, 02, ... without a gap, each
// followed by the step's name.
func TestStepFilesAreNumberedFrom01(t *testing.T) {
	for _, dir := range stepDirs(t) {
		steps, err := os.ReadDir(path.Join(FunctionsDir, dir))
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) == 0 {
			t.Errorf("%s has no step files", dir)
		}
		for i, step := range steps {
			want := regexp.MustCompile(fmt.Sprintf(`^%02d_[a-z0-9_]+\.sql$`, i+1))
			if !step.Type().IsRegular() || !want.MatchString(step.Name()) {
				t.Errorf("step %d of %s is %s, want a file matching %s", i+1, dir, step.Name(), want)
			}
		}
	}
}

// A source is its file, or its directory's steps spliced in order; a
// directory that is not such a sequence of steps is refused, and a source
// that is neither is fs.ErrNotExist.
func TestReadFunctionSource(t *testing.T) {
	fsys := fstest.MapFS{
		"f_v1.sql":             {Data: []byte("create function f();\n")},
		"g_v1/01_head.sql":     {Data: []byte("create function g()\n")},
		"g_v1/02_body.sql":     {Data: []byte("as $$ select 1 $$;\n")},
		"gap_v1/01_a.sql":      {Data: []byte("a\n")},
		"gap_v1/03_c.sql":      {Data: []byte("c\n")},
		"late_v1/02_b.sql":     {Data: []byte("b\n")},
		"name_v1/01_a.sql":     {Data: []byte("a\n")},
		"name_v1/2_b.sql":      {Data: []byte("b\n")},
		"nested_v1/01_a.sql":   {Data: []byte("a\n")},
		"nested_v1/02_b.sql/x": {Data: []byte("x\n")},
		"both_v1.sql":          {Data: []byte("a\n")},
		"both_v1/01_a.sql":     {Data: []byte("a\n")},
		"line_v1/01_a.sql":     {Data: []byte("a")},
		"empty_v1":             {Mode: fs.ModeDir},
		"text_v1.txt":          {Data: []byte("a\n")},
	}
	for name, want := range map[string]string{
		"f_v1.sql": "create function f();\n",
		"g_v1.sql": "create function g()\nas $$ select 1 $$;\n",
	} {
		got, err := ReadFunctionSource(fsys, name)
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := ReadFunctionSource(fsys, "none_v1.sql"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("none_v1.sql: %v, want fs.ErrNotExist", err)
	}
	for name, want := range map[string]string{
		"gap_v1.sql":    "gap_v1/03_c.sql is numbered 03, want 02",
		"late_v1.sql":   "late_v1/02_b.sql is numbered 02, want 01",
		"name_v1.sql":   "name_v1/2_b.sql is not a step file NN_step_name.sql",
		"nested_v1.sql": "nested_v1/02_b.sql is not a step file NN_step_name.sql",
		"both_v1.sql":   "both the file both_v1.sql and the directory both_v1 exist",
		"line_v1.sql":   "line_v1/01_a.sql does not end with a newline",
		"empty_v1.sql":  "the directory empty_v1 has no step files",
		"text_v1.txt":   "text_v1.txt does not end in .sql",
	} {
		got, err := ReadFunctionSource(fsys, name)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %q, %v; want the error %q", name, got, err, want)
		}
	}
}
