// Package fuzzy handles names that agents send, for error messages: the
// closest known name to a misspelt one ("did you mean"), and clipping a long
// one before it is echoed back.
package fuzzy

import "strings"

// Closest returns the candidate nearest to name by case-insensitive edit
// distance (ties go to the alphabetically first), or "" when none is close
// enough to be a plausible typo.
func Closest(name string, candidates []string) string {
	best, bestD := "", 1<<30
	lname := strings.ToLower(name)
	for _, c := range candidates {
		d := Distance(lname, strings.ToLower(c))
		if d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(2, len(name)/3) {
		return ""
	}
	return best
}

// Clip shortens a name an agent sent to 64 characters before it is echoed in
// a message, so that a huge name is not repeated back in full.
func Clip(s string) string {
	const limit = 64
	if r := []rune(s); len(r) > limit {
		return string(r[:limit]) + "…"
	}
	return s
}

// Distance is the Levenshtein edit distance between a and b, in bytes.
func Distance(a, b string) int {
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
