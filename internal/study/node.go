package study

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"go.yaml.in/yaml/v3"
)

// The helpers here read YAML nodes into values, reporting at the node's
// position what is wrong and carrying on, so that one pass finds every problem.

// pair is a key and its value in a mapping.
type pair struct {
	key, val *yaml.Node
}

func (kv pair) name() string { return kv.key.Value }

// valPos is where the value is, or where its key is when the value is left
// out (the library places it at the next token).
func (kv pair) valPos() Pos {
	if v := kv.val; v.Line == 0 || v.Kind == yaml.ScalarNode && v.Value == "" && v.Style == 0 && isNull(v) {
		return posOf(kv.key)
	}
	return posOf(kv.val)
}

// deref follows aliases to the node they stand for.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == 0 || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe says what a node is for "must be X, not Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		if isNull(n) {
			return "empty"
		}
		if n.ShortTag() == "!!str" {
			return strconv.Quote(n.Value)
		}
		return n.Value
	}
	return "empty"
}

// pairs lists a mapping's keys and values in file order, with aliases
// followed and merge keys (<<: *anchor) expanded in place; a key given
// explicitly overrides a merged one, and an earlier merge a later one. It
// reports keys that are repeated or are not names.
func (p *parser) pairs(n *yaml.Node) []pair {
	var out []pair
	p.collect(n, &out, map[string]int{}, nil, 0)
	return out
}

// collect appends n's pairs to out; index has the keys already in out, and
// skip those a mapping merging n gives itself.
func (p *parser) collect(n *yaml.Node, out *[]pair, index map[string]int, skip map[string]bool, depth int) {
	n = deref(n)
	if depth > 10 {
		p.errorf(posOf(n), "merge keys (<<) nest too deep")
		return
	}
	merged := skip != nil
	own := map[string]bool{}
	for k := range skip {
		own[k] = true
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := deref(n.Content[i]); k.Kind == yaml.ScalarNode && !isMerge(k) {
			own[k.Value] = true
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		switch {
		case k.Kind != yaml.ScalarNode:
			p.errorf(posOf(k), "a key must be a name, not %s", describe(k))
		case isMerge(k):
			p.merge(v, out, index, own, depth)
		case merged && skip[k.Value]:
			// overridden by the mapping that merges this one
		default:
			if j, ok := index[k.Value]; ok {
				if !merged {
					p.errorf(posOf(k), "%q is given twice (first at line %d)", k.Value, (*out)[j].key.Line)
				}
				continue
			}
			index[k.Value] = len(*out)
			*out = append(*out, pair{k, v})
		}
	}
}

// maxMerges bounds the mappings merge keys bring in over a whole file. An alias
// is expanded wherever it is used, so without a bound a few lines of anchors
// each merging the one before several times would take hours to read.
const maxMerges = 10000

// merge expands the value of a merge key: a mapping or a list of them.
func (p *parser) merge(v *yaml.Node, out *[]pair, index map[string]int, skip map[string]bool, depth int) {
	v = deref(v)
	maps := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		maps = v.Content
	}
	for _, m := range maps {
		if m = deref(m); m.Kind == yaml.MappingNode {
			if p.merges++; p.merges > maxMerges {
				if p.merges == maxMerges+1 {
					p.errorf(posOf(m), "merge keys (<<) bring in more than %d mappings; merge fewer", maxMerges)
				}
				return
			}
			p.collect(m, out, index, skip, depth+1)
		} else {
			p.errorf(posOf(m), "a merge key (<<) takes a mapping or a list of mappings, not %s", describe(m))
		}
	}
}

func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge"
}

// unknown reports a key that is not one of known, suggesting the closest.
func (p *parser) unknown(k *yaml.Node, where string, known []string) {
	if s := Suggest(k.Value, known); s != "" {
		p.errorf(posOf(k), "unknown key %q in %s; did you mean %q?", k.Value, where, s)
		return
	}
	p.errorf(posOf(k), "unknown key %q in %s; want %s", k.Value, where, oneOf(known))
}

// mapping checks that kv's value is a mapping and returns its pairs. An empty
// value is an empty mapping.
func (p *parser) mapping(kv pair, like string) ([]pair, bool) {
	v := deref(kv.val)
	switch {
	case v.Kind == yaml.MappingNode:
		return p.pairs(v), true
	case isNull(v):
		return nil, true
	}
	p.errorf(kv.valPos(), "%s must be a mapping like %s, not %s", kv.name(), like, describe(v))
	return nil, false
}

// list checks that kv's value is a list and returns its items. An empty value
// is an empty list.
func (p *parser) list(kv pair, like string) ([]*yaml.Node, bool) {
	v := deref(kv.val)
	switch {
	case v.Kind == yaml.SequenceNode:
		items := make([]*yaml.Node, len(v.Content))
		for i, e := range v.Content {
			items[i] = deref(e)
		}
		return items, true
	case isNull(v):
		return nil, true
	}
	p.errorf(kv.valPos(), "%s must be a list like %s, not %s", kv.name(), like, describe(v))
	return nil, false
}

// str returns kv's value as text. Any scalar will do: version: 16 is "16".
func (p *parser) str(kv pair) (string, bool) {
	v := deref(kv.val)
	if v.Kind == yaml.ScalarNode && !isNull(v) {
		return v.Value, true
	}
	p.errorf(kv.valPos(), "%s must be a string, not %s", kv.name(), describe(v))
	return "", false
}

// scalar returns a scalar's text for a list item or mapping value named what.
func (p *parser) scalar(n *yaml.Node, pos Pos, what string) (string, bool) {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		return n.Value, true
	}
	p.errorf(pos, "%s must be a string or a number, not %s", what, describe(n))
	return "", false
}

func (p *parser) boolean(kv pair) (bool, bool) {
	v := deref(kv.val)
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool" {
		b, err := strconv.ParseBool(strings.ToLower(v.Value))
		if err == nil {
			return b, true
		}
	}
	p.errorf(kv.valPos(), "%s must be true or false, not %s", kv.name(), describe(v))
	return false, false
}

// intValue reads an integer scalar the way the yaml library does (1_000,
// 0x10), or a quoted decimal one. A number too large for int64 comes back as
// the largest or smallest, to fail any range check.
func intValue(n *yaml.Node) (int64, bool) {
	if n.Kind != yaml.ScalarNode {
		return 0, false
	}
	var i int64
	switch n.ShortTag() {
	case "!!int":
		if err := n.Decode(&i); err != nil {
			if strings.HasPrefix(n.Value, "-") {
				return math.MinInt64, true
			}
			return math.MaxInt64, true
		}
		return i, true
	case "!!str":
		i, err := strconv.ParseInt(strings.TrimSpace(n.Value), 10, 64)
		return i, err == nil || errors.Is(err, strconv.ErrRange)
	}
	return 0, false
}

// integer reads an integer in lo..hi; want says what it must be otherwise.
func (p *parser) integer(n *yaml.Node, pos Pos, what, want string, lo, hi int) (int, bool) {
	n = deref(n)
	i, ok := intValue(n)
	switch {
	case !ok:
		p.errorf(pos, "%s must be %s, not %s", what, want, describe(n))
	case i < int64(lo) || i > int64(hi):
		p.errorf(pos, "%s %s is out of range; want %d to %d", what, n.Value, lo, hi)
	default:
		return int(i), true
	}
	return 0, false
}

// duration reads a Go duration or a number of seconds (ParseDuration).
func (p *parser) duration(kv pair) (time.Duration, bool) {
	v := deref(kv.val)
	if v.Kind != yaml.ScalarNode || isNull(v) {
		p.errorf(kv.valPos(), "%s must be a duration, not %s; %s", kv.name(), describe(v), durationHint)
		return 0, false
	}
	d, err := engine.ParseDuration(v.Value)
	if de, ok := errors.AsType[*engine.DurationError](err); ok && de.TooLong {
		p.errorf(kv.valPos(), "%s %s", kv.name(), de)
		return 0, false
	} else if err != nil {
		p.errorf(kv.valPos(), "invalid %s %q; %s", kv.name(), v.Value, durationHint)
		return 0, false
	}
	return d, true
}

// enum reads one of allowed, suggesting the closest for a typo.
func (p *parser) enum(kv pair, allowed []string) (string, bool) {
	s, ok := p.str(kv)
	if !ok {
		return "", false
	}
	for _, a := range allowed {
		if s == a {
			return s, true
		}
	}
	if sug := Suggest(s, allowed); sug != "" {
		p.errorf(kv.valPos(), "unknown %s %q; did you mean %q?", kv.name(), s, sug)
	} else {
		p.errorf(kv.valPos(), "unknown %s %q; want %s", kv.name(), s, oneOf(allowed))
	}
	return "", false
}

// lookup finds key in pairs.
func lookup(pairs []pair, key string) (pair, bool) {
	for _, kv := range pairs {
		if kv.name() == key {
			return kv, true
		}
	}
	return pair{}, false
}

// label names a list item in messages by the first of keys it has, as in
// `target "pg11"`, or else by its number, as in `target 2`.
func label(pairs []pair, what string, i int, keys ...string) string {
	for _, key := range keys {
		if kv, ok := lookup(pairs, key); ok {
			if v := deref(kv.val); v.Kind == yaml.ScalarNode && !isNull(v) {
				return fmt.Sprintf("%s %q", what, v.Value)
			}
		}
	}
	return fmt.Sprintf("%s %d", what, i+1)
}
