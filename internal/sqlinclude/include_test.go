package main

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpandReplacesBlockBodies(t *testing.T) {
	files := map[string]string{"f_v1.sql": "create function f();\n"}
	read := func(name string) ([]byte, error) {
		body, ok := files[name]
		if !ok {
			return nil, fs.ErrNotExist
		}
		return []byte(body), nil
	}
	in := "before\n-- include f_v1.sql\nold body\n-- end include\nafter\n"
	want := "before\n-- include f_v1.sql\ncreate function f();\n-- end include\nafter\n"
	got, err := expand([]byte(in), read)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Fatalf("expand (-want +got):\n%s", diff)
	}
	again, err := expand(got, read)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(got) {
		t.Fatal("expanding an up-to-date migration changed it")
	}
}

func TestExpandRejectsMissingFileAndOpenBlock(t *testing.T) {
	read := func(string) ([]byte, error) { return nil, fs.ErrNotExist }
	if _, err := expand([]byte("-- include nope.sql\n-- end include\n"), read); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing include: got %v", err)
	}
	ok := func(string) ([]byte, error) { return []byte("x\n"), nil }
	if _, err := expand([]byte("-- include a.sql\n"), ok); err == nil {
		t.Fatal("unterminated include block was accepted")
	}
}
