package report

import (
	"cmp"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/store"
)

// targetParts are what tell targets apart to people: where the server is and
// which database and user; not the options, and never the password.
type targetParts struct{ host, port, dbname, user string }

// kvParam is one keyword=value of a key/value DSN, the value perhaps quoted.
var kvParam = regexp.MustCompile(`([A-Za-z_]+)\s*=\s*('(?:[^'\\]|\\.)*'|(?:[^\s\\]|\\.)*)`)

// parseTarget reads the parts of a stored target, a DSN in either form. It does
// not fill in defaults from the environment: it shows what the run was given.
func parseTarget(dsn string) targetParts {
	var p targetParts
	set := func(k, v string) {
		switch k {
		case "host":
			p.host = v
		case "port":
			p.port = v
		case "dbname":
			p.dbname = v
		case "user":
			p.user = v
		}
	}
	s := strings.TrimSpace(dsn)
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") {
		u, err := url.Parse(s)
		if err != nil {
			return p
		}
		// libpq takes several hosts, each with its port: h1:5432,h2:5433.
		var hosts, ports []string
		for _, hp := range strings.Split(u.Host, ",") {
			h, port, found := strings.Cut(hp, ":")
			if strings.HasPrefix(hp, "[") { // [::1]:5432
				h, port, found = strings.Cut(strings.TrimPrefix(hp, "["), "]")
				port, found = strings.CutPrefix(port, ":")
			}
			hosts = append(hosts, h)
			if found && !slices.Contains(ports, port) {
				ports = append(ports, port)
			}
		}
		p.host, p.port, p.dbname = strings.Join(hosts, ","), strings.Join(ports, ","), strings.TrimPrefix(u.Path, "/")
		if u.User != nil {
			p.user = u.User.Username()
		}
		for k, vs := range u.Query() {
			set(k, vs[0])
		}
		return p
	}
	for _, m := range kvParam.FindAllStringSubmatch(s, -1) {
		v := m[2]
		if strings.HasPrefix(v, "'") {
			v = strings.TrimSuffix(strings.TrimPrefix(v, "'"), "'")
		}
		set(m[1], strings.ReplaceAll(v, `\`, ""))
	}
	return p
}

// short is host:port/dbname, as much of it as the target gives; "" if none.
func (p targetParts) short() string {
	s := p.host
	if p.port != "" {
		s += ":" + p.port
	}
	if p.dbname != "" {
		s += "/" + p.dbname
	}
	return s
}

// RunNames are the ways to call a run's target in a list, longest first: its
// target or name label, else host:port/dbname, then shorter forms of it for
// narrow columns (a socket directory says less than the database).
func RunNames(r *store.Run) []string {
	if l := cmp.Or(r.Labels["target"], r.Labels["name"]); l != "" {
		return []string{l}
	}
	p := parseTarget(r.Target)
	if p.short() == "" {
		return []string{r.Target} // stored without its password; unusual enough to show whole
	}
	out := []string{p.short()}
	if strings.HasPrefix(p.host, "/") {
		// A socket directory: a local server's is <servers>/<name>/sock, and its
		// name tells it from the others where the database cannot; another
		// directory is told by its last part.
		dir, base := path.Split(p.host)
		if base == "sock" && path.Base(dir) != "/" {
			p.host = path.Base(dir)
		} else {
			p.host = "…/" + base
		}
		for _, n := range []string{p.short(), targetParts{host: p.host, dbname: p.dbname}.short(), p.host, p.dbname} {
			if n != "" && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		return out
	}
	if p.port != "" {
		out = append(out, targetParts{host: p.host, dbname: p.dbname}.short())
	}
	if p.host != "" {
		out = append(out, p.host)
	}
	return out
}

// plainNames names the targets of runs chosen by id or label, which have no
// study to name them: by their target or name label; else by the values of the
// labels that differ between the runs; else by the parts of their DSNs that
// differ (host, port, database, user), with the first run's id added where
// those are alike but the DSNs are not. Runs of one DSN and labels share a name.
func plainNames(details []*store.RunDetail) map[int64]string {
	keys := differingLabels(details)
	tn := newTargetNamer(details)
	names := map[int64]string{}
	for _, d := range details {
		if n := cmp.Or(d.Labels["target"], d.Labels["name"]); n != "" {
			names[d.ID] = n
		} else if words := labelWords(d.Labels, keys); len(words) > 0 {
			names[d.ID] = strings.Join(words, " ")
		} else {
			names[d.ID] = tn.name(d.Target)
		}
	}
	return names
}

// differingLabels are the labels, repeat aside, whose values tell the runs apart,
// sorted.
func differingLabels(details []*store.RunDetail) []string {
	var keys []string
	for _, d := range details {
		for k, v := range d.Labels {
			if k == "repeat" || slices.Contains(keys, k) {
				continue
			}
			if slices.ContainsFunc(details, func(o *store.RunDetail) bool { return o.Labels[k] != v }) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// labelWords name a run by its values of keys: the value alone when there is
// one key, else key=value, and "no key" for a label it lacks.
func labelWords(labels map[string]string, keys []string) []string {
	var words []string
	for _, k := range keys {
		v, ok := labels[k]
		switch {
		case !ok:
			words = append(words, "no "+k)
		case len(keys) == 1:
			words = append(words, cmp.Or(v, k+`=""`))
		default:
			words = append(words, k+"="+v)
		}
	}
	return words
}

// targetNamer names runs' targets by the parts of their DSNs that differ.
type targetNamer struct {
	parts                    map[string]targetParts
	first                    map[string]int64 // each target's first run
	hosts, ports, dbs, users bool             // which parts differ
}

func newTargetNamer(details []*store.RunDetail) targetNamer {
	tn := targetNamer{parts: map[string]targetParts{}, first: map[string]int64{}}
	for _, d := range details {
		tn.parts[d.Target] = parseTarget(d.Target)
		if tn.first[d.Target] == 0 {
			tn.first[d.Target] = d.ID
		}
	}
	differ := func(part func(targetParts) string) bool {
		var seen []string
		for _, p := range tn.parts {
			if !slices.Contains(seen, part(p)) {
				seen = append(seen, part(p))
			}
		}
		return len(seen) > 1
	}
	tn.hosts, tn.ports = differ(func(p targetParts) string { return p.host }), differ(func(p targetParts) string { return p.port })
	tn.dbs, tn.users = differ(func(p targetParts) string { return p.dbname }), differ(func(p targetParts) string { return p.user })
	return tn
}

func (tn targetNamer) name(target string) string {
	p := tn.parts[target]
	var words []string
	switch {
	case p.short() == "":
		words = append(words, target) // stored without its password
	case len(tn.parts) == 1:
		words = append(words, p.short())
	case tn.hosts || tn.ports || tn.dbs || tn.users:
		if tn.hosts {
			words = append(words, cmp.Or(p.host, "default host"))
		}
		if tn.ports {
			words = append(words, "port "+cmp.Or(p.port, "default"))
		}
		if tn.dbs {
			words = append(words, cmp.Or(p.dbname, "default database"))
		}
		if tn.users {
			words = append(words, "user "+cmp.Or(p.user, "default"))
		}
	default:
		words = append(words, fmt.Sprintf("%s #%d", cmp.Or(p.dbname, p.host, "target"), tn.first[target]))
	}
	return strings.Join(words, " ")
}
