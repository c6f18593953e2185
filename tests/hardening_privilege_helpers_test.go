package tests

import (
	"regexp"
	"strings"
)

// hardGrantPattern is one GRANT line of the grants script.
var hardGrantPattern = regexp.MustCompile(`(?m)^grant (.+) on (.+) to :"role";$`)

// hardGrantVariant is the grants script without one privilege.
type hardGrantVariant struct {
	without string
	script  string
}

// hardGrantVariants returns, for every privilege the script grants, the
// script without it.
func hardGrantVariants(script string) []hardGrantVariant {
	var out []hardGrantVariant
	for _, m := range hardGrantPattern.FindAllStringSubmatchIndex(script, -1) {
		line := script[m[0]:m[1]]
		privileges := strings.Split(script[m[2]:m[3]], ", ")
		object := script[m[4]:m[5]]
		for i, p := range privileges {
			rest := append(append([]string{}, privileges[:i]...), privileges[i+1:]...)
			replacement := ""
			if len(rest) > 0 {
				replacement = "grant " + strings.Join(rest, ", ") + " on " + object + ` to :"role";`
			}
			out = append(out, hardGrantVariant{
				without: p + " on " + strings.NewReplacer(` :"schema".`, " ", `:"schema".`, "", ` :"schema"`, "").Replace(object),
				script:  strings.Replace(script, line, replacement, 1),
			})
		}
	}
	return out
}
