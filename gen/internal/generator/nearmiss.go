package generator

import (
	"regexp"
	"sort"
)

// Near misses: a word that is almost a directive key or name, and a comment
// that is almost a directive. Both are reported with the form meant, since a
// typo here otherwise reads as a different mistake (a missing key) or as an
// ordinary comment, which generates nothing and says nothing.

// closest returns the candidate within two edits of word (and not made of
// fewer letters than the edits), the first in sorted order on a tie, or "".
func closest(word string, candidates []string) string {
	best, bestDist := "", 3
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	for _, c := range sorted {
		if d := editDistance(word, c); d < bestDist && d < len(c) {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// spacedDirectiveRE matches a line comment that would be a directive without
// the space(s) after its slashes: "// laser:agent id=...".
var spacedDirectiveRE = regexp.MustCompile(`^//[ \t]+laser:(agent|handle|event)(?:[ \t]|$)`)

// spacedDirective returns the directive name a comment almost is, or "".
func spacedDirective(text string) string {
	if m := spacedDirectiveRE.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}
