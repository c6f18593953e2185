package migration

import (
	"regexp"
	"strings"
)

// grantPattern is one GRANT line of the grants script.
var grantPattern = regexp.MustCompile(`(?m)^grant (.+) on (.+) to :"role";$`)

// grantVariant is the grants script without one privilege.
type grantVariant struct {
	without string
	script  string
}

// grantVariants returns, for every privilege the script grants, the
// script without it.
func grantVariants(script string) []grantVariant {
	var out []grantVariant
	for _, m := range grantPattern.FindAllStringSubmatchIndex(script, -1) {
		line := script[m[0]:m[1]]
		privileges := strings.Split(script[m[2]:m[3]], ", ")
		object := script[m[4]:m[5]]
		for i, p := range privileges {
			rest := append(append([]string{}, privileges[:i]...), privileges[i+1:]...)
			replacement := ""
			if len(rest) > 0 {
				replacement = "grant " + strings.Join(rest, ", ") + " on " + object + ` to :"role";`
			}
			out = append(out, grantVariant{
				without: p + " on " + strings.NewReplacer(` :"schema".`, " ", `:"schema".`, "", ` :"schema"`, "").Replace(object),
				script:  strings.Replace(script, line, replacement, 1),
			})
		}
	}
	return out
}
