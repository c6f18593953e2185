package docket

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Version is the newest release CHANGELOG.md has a section for, and the
// newest release db/released-migrations.sum records migrations of.
func TestVersionIsTheNewestRelease(t *testing.T) {
	changelog, err := os.ReadFile("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	section := regexp.MustCompile(`(?m)^## \[([0-9]+\.[0-9]+\.[0-9]+)\] - [0-9]{4}-[0-9]{2}-[0-9]{2}$`).FindSubmatch(changelog)
	if section == nil || string(section[1]) != Version {
		t.Fatalf("the newest CHANGELOG.md release section is %q, Version is %q", section, Version)
	}
	manifest, err := os.ReadFile("../db/released-migrations.sum")
	if err != nil {
		t.Fatal(err)
	}
	newest := ""
	for _, line := range strings.Split(strings.TrimSpace(string(manifest)), "\n") {
		if fields := strings.Split(line, "  "); !strings.HasPrefix(line, "#") && len(fields) == 3 {
			newest = fields[2]
		}
	}
	if newest != Version {
		t.Fatalf("the newest release in db/released-migrations.sum is %q, Version is %q", newest, Version)
	}
}
