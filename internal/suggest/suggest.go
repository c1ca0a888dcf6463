// Package suggest finds the known words nearest to a misspelt one, for
// messages such as `unknown key "clinets"; did you mean "clients"?` and
// `no SKU Standard_D16ds_v6 in eastus; nearest: Standard_D16ds_v5, ...`.
package suggest

import (
	"cmp"
	"slices"
	"strings"
)

// One returns the known word closest to word when it is close enough to be a
// likely typo and no other is as close, or "". Case is ignored.
func One(word string, known []string) string {
	w := strings.ToLower(word)
	best, bestDist, tie := "", max(1, len([]rune(w))/3)+1, false // allow a third of the word to be wrong
	for _, k := range known {
		switch d := Distance(w, strings.ToLower(k)); {
		case d < bestDist:
			best, bestDist, tie = k, d, false
		case d == bestDist && best != "":
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

// Nearest returns up to n known words nearest to word, nearest first, ties in
// the order of known; case is ignored. Unlike One it always answers when
// known has words, for lists such as the SKUs a region has.
func Nearest(word string, known []string, n int) []string {
	type scored struct {
		word string
		dist int
	}
	w := strings.ToLower(word)
	all := make([]scored, 0, len(known))
	seen := map[string]bool{}
	for _, k := range known {
		if seen[k] {
			continue
		}
		seen[k] = true
		all = append(all, scored{k, Distance(w, strings.ToLower(k))})
	}
	slices.SortStableFunc(all, func(a, b scored) int { return cmp.Compare(a.dist, b.dist) })
	out := make([]string, 0, min(n, len(all)))
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.word)
	}
	return out
}

// Distance is the optimal string alignment distance: insertions, deletions,
// substitutions and transpositions of neighbours each cost one.
func Distance(a, b string) int {
	s, t := []rune(a), []rune(b)
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}
