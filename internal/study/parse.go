package study

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/findmax"
	"github.com/pgbakeoff/pgbakeoff/internal/localpg"
	"github.com/pgbakeoff/pgbakeoff/internal/workload"
	"go.yaml.in/yaml/v3"
)

// The keys each mapping of a study file may hold, for spotting typos.
var (
	studyKeys    = []string{"name", "description", "targets", "workloads", "matrix", "prices", "objective"}
	targetKeys   = []string{"name", "local", "dsn", "password", "node_exporter", "labels", "price"}
	localKeys    = []string{"version", "settings", "initdb", "standbys", "synchronous"}
	passwordKeys = []string{"env", "command"}
	workloadKeys = []string{"name", "kind", "load", "run", "dataset", "vacuum", "checkpoint", "database", "clients", "rates", "find_max", "fault"}
	// reservedLabels are the labels a study puts on each of its runs.
	reservedLabels = []string{"study", "cell", "target", "workload", "repeat", "rate", "find_max", "find_max_rate"}
	matrixKeys     = []string{"clients", "rates", "find_max", "warmup", "duration", "repeat", "aggregate", "order", "pause", "fault"}
	faultKeys      = []string{"at", "kind", "command"}
	rampKeys       = []string{"from", "to", "steps"}
	objectiveKeys  = []string{"slo", "errors"}
	findMaxKeys    = []string{"confirm", "resolution", "budget", "ceiling"}
)

// The values each enumeration may take.
var (
	kinds      = workload.Names()
	datasets   = []string{string(DatasetKeep), string(DatasetClone), string(DatasetReload)}
	vacuums    = []string{string(VacuumNone), string(VacuumAnalyze), string(VacuumPlain), string(VacuumFreeze)}
	aggregates = []string{string(AggregateMedian), string(AggregateMean), string(AggregateBest)}
	orders     = []string{string(OrderInterleaved), string(OrderSequential)}
)

var (
	studyNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	namePattern      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,40}$`)
	versionPattern   = regexp.MustCompile(`^([0-9]{1,3})(?:\.[0-9]{1,4})?$`)
	settingPattern   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)
	optionPattern    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
	envPattern       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	yamlLinePattern  = regexp.MustCompile(`^yaml: line ([0-9]+): (.*)$`)
	yamlAnchorError  = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)
)

const maxRepeat = 1000

const durationHint = "use Go durations like 2m or 90s"

// Parse parses and validates a study file's contents; file names it in errors
// and gives the study its default name. It reads the prices file the study
// names, from file's directory, to look up the targets' price refs. The error,
// when not nil, is Errors: every problem found, sorted by position.
func Parse(file string, data []byte) (*Study, error) {
	s, errs := ParseAll(file, data)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseAll is Parse for callers that go on to find more problems before reporting
// them all: it returns what it could read of the study with the errors, and a nil
// study only when the file is not a YAML mapping at all. Parts with errors are
// left out or at their defaults.
func ParseAll(file string, data []byte) (*Study, Errors) {
	p := &parser{file: file, reported: map[string]bool{}}
	s := p.parse(data)
	return s, p.errs.sorted()
}

// LoadAll is ParseAll of the file at path.
func LoadAll(path string) (*Study, Errors, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read study: %w", err)
	}
	s, errs := ParseAll(path, data)
	return s, errs, nil
}

type parser struct {
	file     string
	errs     Errors
	reported map[string]bool // an aliased node is walked once per alias; say its problems once
	refs     []priceRef      // targets' price refs, resolved once the whole file is read
	merges   int             // mappings merge keys have brought in, see maxMerges
	// hasObjective: the file has an objective: key, well formed or not.
	hasObjective bool
}

// lineBreaks escapes what would split an error over lines: each error is one
// line starting with the file's name, even when it shows a value written over
// several.
var lineBreaks = strings.NewReplacer("\n", `\n`, "\r", `\r`)

func (p *parser) errorf(pos Pos, format string, args ...any) {
	e := &Error{File: p.file, Pos: pos, Msg: lineBreaks.Replace(fmt.Sprintf(format, args...))}
	if id := e.Error(); !p.reported[id] {
		p.reported[id] = true
		p.errs = append(p.errs, e)
	}
}

func posOf(n *yaml.Node) Pos {
	return Pos{Line: n.Line, Col: n.Column}
}

func (p *parser) parse(data []byte) *Study {
	root := p.document(data, "the study file is empty; it needs targets and workloads",
		"a study file holds one YAML document; remove the second one or the --- before it",
		"a study file is a mapping with targets, workloads and matrix")
	if root == nil {
		return nil
	}
	return p.study(root)
}

// document decodes the file's single YAML document and returns its mapping, or nil
// after reporting why there is none. The messages say what the file is.
func (p *parser) document(data []byte, empty, twoDocs, isMapping string) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.errorf(Pos{1, 1}, "%s", empty)
		} else {
			p.yamlError(err, data)
		}
		return nil
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		p.errorf(posOf(&next), "%s", twoDocs)
	} else if !errors.Is(err, io.EOF) {
		p.yamlError(err, data)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	root = deref(root)
	if root.Kind != yaml.MappingNode {
		if isNull(root) {
			p.errorf(Pos{1, 1}, "%s", empty)
		} else {
			p.errorf(posOf(root), "%s, not %s", isMapping, describe(root))
		}
		return nil
	}
	return root
}

// yamlError reports a syntax error at the line the yaml library names. Its
// messages say "line N" counting from 1 for the scanner's problems and from 0
// for the parser's, and leave the line out when it is the first; its reader's
// problems (bad UTF-8) have no place, and an unknown anchor is reported where
// it is first used. See (*parser).fail in go.yaml.in/yaml/v3's decode.go.
func (p *parser) yamlError(err error, data []byte) {
	problem := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if m := yamlLinePattern.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		problem = m[2]
		if parserProblems[problem] {
			line++
		}
	}
	if m := yamlAnchorError.FindStringSubmatch(err.Error()); m != nil {
		if i := bytes.Index(data, []byte("*"+m[1])); i >= 0 {
			before := data[:i]
			line := bytes.Count(before, []byte("\n")) + 1
			col := len([]rune(string(before[bytes.LastIndexByte(before, '\n')+1:]))) + 1
			p.errorf(Pos{line, col}, "invalid YAML: alias *%s names no anchor; define it with &%s first", m[1], m[1])
			return
		}
		line = 0
	}
	if readerProblems[problem] || strings.HasPrefix(problem, "input error: ") {
		line = 0
	}
	p.errorf(Pos{Line: line}, "invalid YAML: %s", problem)
}

// The problems the yaml library's parser and reader report, from its
// parserc.go and readerc.go.
var (
	parserProblems = map[string]bool{
		"did not find expected ',' or ']'":       true,
		"did not find expected ',' or '}'":       true,
		"did not find expected '-' indicator":    true,
		"did not find expected <document start>": true,
		"did not find expected <stream-start>":   true,
		"did not find expected key":              true,
		"did not find expected node content":     true,
		"found duplicate %TAG directive":         true,
		"found duplicate %YAML directive":        true,
		"found incompatible YAML document":       true,
		"found undefined tag handle":             true,
	}
	readerProblems = map[string]bool{
		"control characters are not allowed": true,
		"expected low surrogate area":        true,
		"incomplete UTF-16 character":        true,
		"incomplete UTF-16 surrogate pair":   true,
		"incomplete UTF-8 octet sequence":    true,
		"invalid Unicode character":          true,
		"invalid leading UTF-8 octet":        true,
		"invalid length of a UTF-8 sequence": true,
		"invalid trailing UTF-8 octet":       true,
		"unexpected low surrogate area":      true,
	}
)

func (p *parser) study(root *yaml.Node) *Study {
	s := &Study{File: p.file, Pos: posOf(root)}
	pairs := p.pairs(root)
	var hasTargets, hasWorkloads, hasName bool
	var prices pair
	for _, kv := range pairs {
		switch kv.name() {
		case "name":
			hasName = true
			if name, ok := p.str(kv); ok {
				if studyNamePattern.MatchString(name) {
					s.Name = name
				} else {
					p.errorf(kv.valPos(), "invalid study name %q; use letters, digits, '_', '.' and '-'", name)
				}
			}
		case "description":
			if !isNull(deref(kv.val)) {
				s.Description, _ = p.str(kv)
			}
		case "targets":
			hasTargets = true
			s.Targets = p.targets(kv)
		case "workloads":
			hasWorkloads = true
			s.Workloads = p.workloads(kv)
		case "matrix":
			s.Matrix = p.matrix(kv)
		case "prices":
			prices = kv
		case "objective":
			p.hasObjective = true // a bad one has its own error
			s.Objective = p.objective(kv)
		default:
			p.unknown(kv.key, "the study", studyKeys)
		}
	}
	p.resolvePrices(s, prices)
	if !hasName {
		base := filepath.Base(p.file)
		s.Name = strings.TrimSuffix(base, filepath.Ext(base))
		if !studyNamePattern.MatchString(s.Name) {
			p.errorf(s.Pos, "the study name %q from the file name is invalid; add name: with letters, digits, '_', '.' and '-'", s.Name)
		}
	}
	if !hasTargets {
		p.errorf(s.Pos, "the study has no targets; add targets: with at least one dsn or local target")
	}
	if !hasWorkloads {
		p.errorf(s.Pos, "the study has no workloads; add workloads: with at least one kind: %s", oneOf(kinds))
	}
	s.Matrix = defaultMatrix(s.Matrix)
	p.checkFindMax(s)
	return s
}

// checkFindMax refuses rates and find_max side by side, and a search without the
// objective it searches within.
func (p *parser) checkFindMax(s *Study) {
	check := func(rates []int, f *FindMax, where string) {
		if f == nil || f.Off {
			return
		}
		if len(rates) > 0 {
			p.errorf(f.Pos, "%s has both rates and find_max: give fixed rates or a search for the highest, not both", where)
		}
		if !p.hasObjective {
			p.errorf(f.Pos, "find_max searches for the highest rate within the study's objective: add objective: {slo: \"p99<10ms\"}")
		}
	}
	if f := s.Matrix.FindMax; f != nil && f.Off {
		s.Matrix.FindMax = nil // find_max: false in the matrix is none
	}
	check(s.Matrix.Rates, s.Matrix.FindMax, "the matrix")
	for _, w := range s.Workloads {
		check(w.Rates, w.FindMax, "workload "+w.Name)
	}
}

// defaultMatrix fills in what m leaves out.
func defaultMatrix(m Matrix) Matrix {
	if len(m.Clients) == 0 {
		m.Clients = []int{1}
	}
	if m.Duration == 0 {
		m.Duration = DefaultDuration
	}
	if m.Repeat == 0 {
		m.Repeat = DefaultRepeat
	}
	if m.Aggregate == "" {
		m.Aggregate = AggregateMedian
	}
	if m.Order == "" {
		m.Order = OrderInterleaved
	}
	return m
}

func (p *parser) targets(kv pair) []*Target {
	items, ok := p.list(kv, "[{name: pg16, local: {version: \"16\"}}]")
	if !ok {
		return nil
	}
	if len(items) == 0 {
		p.errorf(kv.valPos(), "targets is empty; give at least one")
		return nil
	}
	var targets []*Target
	first := map[string]Pos{}
	for i, n := range items {
		t := p.target(n, i)
		if t == nil || t.Name == "" {
			continue
		}
		if at, ok := first[t.Name]; ok {
			p.errorf(t.Pos, "duplicate target name %q (first at line %d)", t.Name, at.Line)
			continue
		}
		first[t.Name] = t.Pos
		targets = append(targets, t)
	}
	return targets
}

func (p *parser) target(n *yaml.Node, i int) *Target {
	if n.Kind != yaml.MappingNode {
		p.errorf(posOf(n), "a target must be a mapping like {name: pg16, local: {version: \"16\"}}, not %s", describe(n))
		return nil
	}
	t := &Target{Pos: posOf(n)}
	pairs := p.pairs(n)
	where := label(pairs, "target", i, "name")
	var dsn, local, password pair
	for _, kv := range pairs {
		switch kv.name() {
		case "name":
			if name, ok := p.str(kv); ok {
				if namePattern.MatchString(name) {
					t.Name = name
				} else {
					p.errorf(kv.valPos(), "invalid target name %q; use up to 41 letters, digits, '_', '.' and '-', starting with a letter or digit", name)
				}
			}
		case "dsn":
			dsn = kv
			if s, ok := p.str(kv); ok {
				if msg := checkDSN(s); msg != "" {
					p.errorf(kv.valPos(), "%s", msg)
				} else {
					t.DSN = s
				}
			}
		case "local":
			local = kv
			t.Local = p.local(kv, where)
		case "password":
			password = kv
			t.Password = p.password(kv, where)
		case "node_exporter":
			if s, ok := p.str(kv); ok {
				if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					p.errorf(kv.valPos(), "node_exporter must be an http or https URL like http://10.0.0.5:9100/metrics, not %q", s)
				} else if u.User != nil {
					// Never echo it: the user information may hold a password.
					p.errorf(kv.valPos(), "node_exporter must not hold credentials; put node_exporter behind a network it can be reached on without them")
				} else {
					t.NodeExporter = s
				}
			}
		case "labels":
			t.Labels = p.labels(kv)
		case "price":
			p.targetPrice(kv, t, where)
		default:
			p.unknown(kv.key, where, targetKeys)
		}
	}
	if _, ok := lookup(pairs, "name"); !ok {
		p.errorf(t.Pos, "%s has no name; add name:", where)
	}
	switch {
	case dsn.key != nil && local.key != nil:
		p.errorf(posOf(local.key), "%s has both dsn and local; give one: dsn for a running server, local for one pgbakeoff starts", where)
	case dsn.key == nil && local.key == nil:
		p.errorf(t.Pos, "%s needs dsn (a running server) or local (a server pgbakeoff starts)", where)
	}
	if password.key != nil && local.key != nil {
		p.errorf(posOf(password.key), "password is only for dsn targets; a local server needs none")
	}
	return t
}

func (p *parser) local(kv pair, where string) *Local {
	l := &Local{Pos: kv.valPos()}
	pairs, ok := p.mapping(kv, `{version: "16"}`)
	if !ok {
		return nil
	}
	hasVersion := false
	var shape pair // the last of standbys and synchronous, where their errors go
	standbysOK := true
	for _, kv := range pairs {
		switch kv.name() {
		case "version":
			hasVersion = true
			if v, ok := p.str(kv); ok {
				if m := versionPattern.FindStringSubmatch(v); m == nil {
					p.errorf(kv.valPos(), "invalid PostgreSQL version %q; want a major version like \"16\" or an exact one like \"16.10\"", v)
				} else if major, _ := strconv.Atoi(m[1]); major < 10 {
					p.errorf(kv.valPos(), "PostgreSQL %s is not supported; want version 10 or later", v)
				} else {
					l.Version = v
				}
			}
		case "settings":
			l.Settings = p.settings(kv)
		case "standbys":
			shape = kv
			l.Standbys, standbysOK = p.integer(kv.val, kv.valPos(), "standbys", "a number of standbys", 0, localpg.MaxStandbys)
		case "synchronous":
			if v, ok := p.str(kv); ok {
				l.Synchronous = v
				shape = kv
			}
		case "initdb":
			items, ok := p.list(kv, "[--data-checksums]")
			if !ok {
				continue
			}
			for _, n := range items {
				if s, ok := p.scalar(n, posOf(n), "an initdb argument"); ok {
					l.Initdb = append(l.Initdb, s)
				}
			}
		default:
			p.unknown(kv.key, "local of "+where, localKeys)
		}
	}
	if !hasVersion {
		p.errorf(l.Pos, "local of %s has no version; add version: \"16\" or another major version", where)
	}
	if shape.key != nil && standbysOK {
		if err := localpg.CheckCluster(l.Version, l.Standbys, l.Synchronous); err != nil {
			p.errorf(shape.valPos(), "local of %s: %v", where, err)
		}
	}
	return l
}

func (p *parser) settings(kv pair) []Setting {
	pairs, _ := p.mapping(kv, "{shared_buffers: 1GB}")
	var settings []Setting
	first := map[string]int{}
	for _, s := range pairs {
		name := s.name()
		if !settingPattern.MatchString(name) {
			p.errorf(posOf(s.key), "invalid setting name %q", name)
			continue
		}
		// PostgreSQL's setting names ignore case: Shared_Buffers is shared_buffers.
		if line, ok := first[strings.ToLower(name)]; ok {
			p.errorf(posOf(s.key), "setting %q is given twice (first at line %d)", name, line)
			continue
		}
		first[strings.ToLower(name)] = s.key.Line
		if v, ok := p.scalar(s.val, s.valPos(), fmt.Sprintf("setting %q", name)); ok {
			// What the server's start would refuse, refused now, before anything starts.
			if err := (localpg.Setting{Name: name, Value: v}).Validate(); err != nil {
				p.errorf(posOf(s.key), "%v", err)
				continue
			}
			settings = append(settings, Setting{Name: name, Value: v, Pos: posOf(s.key)})
		}
	}
	return settings
}

func (p *parser) labels(kv pair) map[string]string {
	pairs, _ := p.mapping(kv, "{storage: nvme}")
	if len(pairs) == 0 {
		return nil
	}
	labels := make(map[string]string, len(pairs))
	for _, l := range pairs {
		if slices.Contains(reservedLabels, l.name()) {
			p.errorf(posOf(l.key), "label %q is set by the study on every run; name it otherwise", l.name())
			continue
		}
		if v, ok := p.scalar(l.val, l.valPos(), fmt.Sprintf("label %q", l.name())); ok {
			labels[l.name()] = v
		}
	}
	return labels
}

func (p *parser) password(kv pair, where string) *Password {
	v := deref(kv.val)
	if v.Kind != yaml.MappingNode {
		// Never echo a scalar here: it may be the password itself.
		p.errorf(kv.valPos(), "password must be {env: NAME} or {command: \"...\"}; never write the password itself in a study file")
		return nil
	}
	pw := &Password{Pos: kv.valPos()}
	pairs := p.pairs(v)
	for _, kv := range pairs {
		switch kv.name() {
		case "env":
			if s, ok := p.str(kv); ok {
				if envPattern.MatchString(s) {
					pw.Env = s
				} else {
					p.errorf(kv.valPos(), "invalid environment variable name %q", s)
				}
			}
		case "command":
			if s, ok := p.str(kv); ok {
				pw.Command = s
			}
		default:
			p.unknown(kv.key, "password of "+where, passwordKeys)
		}
	}
	_, env := lookup(pairs, "env")
	_, command := lookup(pairs, "command")
	if env == command {
		p.errorf(pw.Pos, "password needs exactly one of env: NAME or command: \"...\"")
		return nil
	}
	return pw
}

func (p *parser) workloads(kv pair) []*Workload {
	items, ok := p.list(kv, "[{kind: "+kinds[0]+"}]")
	if !ok {
		return nil
	}
	if len(items) == 0 {
		p.errorf(kv.valPos(), "workloads is empty; give at least one")
		return nil
	}
	var workloads []*Workload
	first := map[string]Pos{}
	for i, n := range items {
		w := p.workload(n, i)
		if w == nil || w.Name == "" {
			continue
		}
		if at, ok := first[w.Name]; ok {
			p.errorf(w.Pos, "duplicate workload name %q (first at line %d); give each workload of the same kind a name", w.Name, at.Line)
			continue
		}
		first[w.Name] = w.Pos
		workloads = append(workloads, w)
	}
	p.dataOf(workloads)
	return workloads
}

func (p *parser) workload(n *yaml.Node, i int) *Workload {
	if n.Kind != yaml.MappingNode {
		p.errorf(posOf(n), "a workload must be a mapping like {kind: %s}, not %s", kinds[0], describe(n))
		return nil
	}
	w := &Workload{Pos: posOf(n), Dataset: DatasetClone, Vacuum: VacuumNone, Checkpoint: true}
	pairs := p.pairs(n)
	where := label(pairs, "workload", i, "name", "kind") // the kind is the default name
	var named, database, dataset pair
	for _, kv := range pairs {
		switch kv.name() {
		case "name":
			named = kv
			if name, ok := p.str(kv); ok {
				if namePattern.MatchString(name) {
					w.Name = name
				} else {
					p.errorf(kv.valPos(), "invalid workload name %q; use up to 41 letters, digits, '_', '.' and '-', starting with a letter or digit", name)
				}
			}
		case "kind":
			w.Kind, _ = p.enum(kv, kinds)
		case "load":
			w.Load = p.options(kv)
		case "run":
			w.Run = p.options(kv)
		case "dataset":
			dataset = kv
			if s, ok := p.str(kv); ok && slices.Contains(datasets, s) {
				w.Dataset = Dataset(s)
			}
		case "vacuum":
			if s, ok := p.enum(kv, vacuums); ok {
				w.Vacuum = Vacuum(s)
			}
		case "checkpoint":
			if b, ok := p.boolean(kv); ok {
				w.Checkpoint = b
			}
		case "database":
			database = kv
			w.Database, _ = p.str(kv)
		case "clients":
			w.Clients = p.clients(kv)
			w.ClientsPos = kv.valPos()
		case "rates":
			w.Rates = p.rates(kv)
		case "find_max":
			w.FindMax = p.findMax(kv)
		case "fault":
			w.Faults, w.FaultsPos = p.faults(kv), kv.valPos()
		default:
			p.unknown(kv.key, where, workloadKeys)
		}
	}
	if _, ok := lookup(pairs, "kind"); !ok {
		p.errorf(w.Pos, "%s has no kind; add kind: %s", where, oneOf(kinds))
	}
	if named.key == nil {
		w.Name = w.Kind
	}
	if database.key != nil && len(w.Load) > 0 {
		p.errorf(w.Load[0].Pos, "load: has no effect with database: the study runs on the data already in %q and loads nothing; remove load:", w.Database)
	}
	if dataset.key != nil && !slices.Contains(datasets, deref(dataset.val).Value) && deref(dataset.val).Kind == yaml.ScalarNode {
		v := deref(dataset.val)
		// The name of another workload, found once all are read (dataOf).
		w.dataOf = dataset
		switch {
		case database.key != nil:
			p.errorf(posOf(database.key), "database: has no effect with dataset: %s, which runs on that workload's data; remove one", v.Value)
		case len(w.Load) > 0:
			p.errorf(w.Load[0].Pos, "load: has no effect with dataset: %s, which runs on that workload's data; remove load:", v.Value)
		}
		return w
	}
	if database.key != nil && w.Dataset != DatasetKeep {
		p.errorf(posOf(database.key), "database needs dataset: keep; with dataset: %s every run gets its own copy of the data", w.Dataset)
	}
	return w
}

// dataOf resolves the workloads whose dataset: names another workload: that one
// must load data of its own, and w takes its dataset policy.
func (p *parser) dataOf(workloads []*Workload) {
	byName := map[string]*Workload{}
	var names []string
	for _, w := range workloads {
		byName[w.Name] = w
		names = append(names, w.Name)
	}
	for _, w := range workloads {
		if w.dataOf.key == nil {
			continue
		}
		name := w.dataOf.val.Value
		src := byName[name]
		switch {
		case src == nil:
			choices := append(slices.Clone(datasets), slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == w.Name })...)
			if sug := Suggest(name, choices); sug != "" {
				p.errorf(w.dataOf.valPos(), "unknown dataset %q; did you mean %q?", name, sug)
			} else {
				p.errorf(w.dataOf.valPos(), "unknown dataset %q; want %s, or the name of another workload whose data this one runs on", name, oneOf(datasets))
			}
		case src == w:
			p.errorf(w.dataOf.valPos(), "dataset: %s names this workload itself; name another workload, whose data this one runs on", name)
		case src.dataOf.key != nil:
			p.errorf(w.dataOf.valPos(), "dataset: %s names a workload that runs on another's data itself; name the workload that loads it", name)
		default:
			w.DataOf, w.Dataset, w.Database = src, src.Dataset, src.Database
		}
	}
}

// options reads load or run options: each key takes a scalar or a list of
// scalars. snake_case keys are spelled as flags: table_size is table-size.
func (p *parser) options(kv pair) []Option {
	what := kv.name()
	pairs, _ := p.mapping(kv, "{warehouses: 4}")
	var opts []Option
	first := map[string]*yaml.Node{}
	for _, o := range pairs {
		key := o.name()
		if !optionPattern.MatchString(key) {
			if trimmed := strings.TrimLeft(key, "-"); trimmed != key && optionPattern.MatchString(trimmed) {
				p.errorf(posOf(o.key), "write the %s option %q without dashes: %s", what, key, trimmed)
			} else {
				p.errorf(posOf(o.key), "invalid %s option name %q", what, key)
			}
			continue
		}
		name := strings.ReplaceAll(key, "_", "-")
		if k, ok := first[name]; ok {
			p.errorf(posOf(o.key), "%s option %q is given twice (as %q at line %d)", what, key, k.Value, k.Line)
			continue
		}
		first[name] = o.key
		v := deref(o.val)
		opt := Option{Name: name, Key: key, Pos: posOf(o.key), value: v}
		switch {
		case v.Kind == yaml.SequenceNode:
			if len(v.Content) == 0 {
				p.errorf(o.valPos(), "%s option %q has an empty list", what, key)
				continue
			}
			for _, e := range v.Content {
				if s, ok := p.scalar(e, posOf(e), fmt.Sprintf("each value of %s option %q", what, key)); ok {
					opt.Values = append(opt.Values, s)
				}
			}
		case v.Kind == yaml.ScalarNode && !isNull(v):
			opt.Values = []string{v.Value}
		default:
			p.errorf(o.valPos(), "%s option %q must be a value or a list of values, not %s", what, key, describe(v))
			continue
		}
		opts = append(opts, opt)
	}
	return opts
}

// clients reads one client count or a list of them.
func (p *parser) clients(kv pair) []int {
	return p.ints(kv, "client count", "client count", "a positive integer or a list of them", engine.MaxClients)
}

// ints reads one positive integer up to hi or a list of them, each once: item
// names one in messages (long where a list is empty), want what the key takes.
func (p *parser) ints(kv pair, item, long, want string, hi int) []int {
	v := deref(kv.val)
	items := []*yaml.Node{v}
	switch {
	case v.Kind == yaml.SequenceNode:
		items = v.Content
		if len(items) == 0 {
			p.errorf(kv.valPos(), "%s is an empty list; give at least one %s", kv.name(), long)
			return nil
		}
	case v.Kind != yaml.ScalarNode || isNull(v):
		p.errorf(kv.valPos(), "%s must be %s, not %s", kv.name(), want, describe(v))
		return nil
	}
	var out []int
	for _, e := range items {
		n, ok := p.integer(e, posOf(deref(e)), kv.name(), want, 1, hi)
		if !ok {
			continue
		}
		if slices.Contains(out, n) {
			p.errorf(posOf(e), "%s %d is given twice", item, n)
			continue
		}
		out = append(out, n)
	}
	return out
}

// maxRate is the highest rate a study may ask for, in transactions a second.
const maxRate = 10_000_000

// rates reads open-loop rates in transactions a second: one, a list (steps), or
// a ramp {from, to, steps} of evenly spaced rates from one to the other.
func (p *parser) rates(kv pair) []int {
	v := deref(kv.val)
	if v.Kind == yaml.MappingNode {
		pairs, _ := p.mapping(kv, "{from: 1000, to: 8000, steps: 8}")
		var from, to, steps int
		for _, e := range pairs {
			switch e.name() {
			case "from":
				from, _ = p.integer(e.val, e.valPos(), "from", "a rate in transactions a second", 1, maxRate)
			case "to":
				to, _ = p.integer(e.val, e.valPos(), "to", "a rate in transactions a second", 1, maxRate)
			case "steps":
				steps, _ = p.integer(e.val, e.valPos(), "steps", "a number of rates from 2 to 100", 2, 100)
			default:
				p.unknown(e.key, "rates", rampKeys)
			}
		}
		if from == 0 || to == 0 || steps == 0 {
			p.errorf(kv.valPos(), "a ramp of rates needs from, to and steps, as {from: 1000, to: 8000, steps: 8}")
			return nil
		}
		if to <= from {
			p.errorf(kv.valPos(), "a ramp of rates goes up: to (%d) must be above from (%d)", to, from)
			return nil
		}
		var out []int
		for i := range steps {
			out = append(out, from+(to-from)*i/(steps-1))
		}
		return slices.Compact(out)
	}
	return p.ints(kv, "rate", "rate in transactions a second", "a rate in transactions a second, a list of them or a ramp {from, to, steps}", maxRate)
}

// nonNegative reads a duration that may be 0 but not less.
func (p *parser) nonNegative(kv pair) (time.Duration, bool) {
	d, ok := p.duration(kv)
	if ok && d < 0 {
		p.errorf(kv.valPos(), "%s %s is negative", kv.name(), d)
		return 0, false
	}
	return d, ok
}

// findMax reads a search for the highest rate within the objective: true for
// find-max's defaults, or {confirm, resolution, budget, ceiling} as its flags.
func (p *parser) findMax(kv pair) *FindMax {
	f := &FindMax{Pos: kv.valPos(), Confirm: DefaultFindMaxConfirm, Resolution: DefaultFindMaxResolution, Budget: DefaultFindMaxBudget}
	if v := deref(kv.val); v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool" {
		if on, _ := p.boolean(kv); !on {
			return &FindMax{Pos: kv.valPos(), Off: true}
		}
		return f
	}
	pairs, ok := p.mapping(kv, `{confirm: 2, resolution: 5%, budget: 20m}`)
	if !ok {
		return nil
	}
	for _, e := range pairs {
		switch e.name() {
		case "confirm":
			f.Confirm, _ = p.integer(e.val, e.valPos(), "confirm", "a number of runs from 0 to 10", 0, 10)
		case "resolution":
			if s, ok := p.str(e); ok {
				r, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
				x, err := strconv.ParseFloat(r, 64)
				if pct {
					x /= 100
				}
				if err != nil || x < 0.001 || x >= 1 {
					p.errorf(e.valPos(), "resolution %q: give a share from 0.1%% to below 100%%, as 5%%", s)
				} else {
					f.Resolution = x
				}
			}
		case "budget":
			if d, ok := p.nonNegative(e); ok {
				f.Budget = d
			}
		case "ceiling":
			f.Ceiling, _ = p.integer(e.val, e.valPos(), "ceiling", "a rate in transactions a second", 1, maxRate)
		default:
			p.unknown(e.key, "find_max", findMaxKeys)
		}
	}
	return f
}

// objective reads the latency objective runs are judged by: {slo: "p99<10ms",
// errors: "<0.1%"}, as find-max's --slo and --errors.
func (p *parser) objective(kv pair) *Objective {
	pairs, _ := p.mapping(kv, `{slo: "p99<10ms", errors: "<0.1%"}`)
	o := &Objective{Pos: kv.valPos()}
	for _, e := range pairs {
		switch e.name() {
		case "slo":
			o.SLO, _ = p.str(e)
		case "errors":
			o.Errors, _ = p.str(e)
		default:
			p.unknown(e.key, "objective", objectiveKeys)
		}
	}
	if _, err := findmax.ParseObjective(o.SLO, o.Errors); err != nil {
		p.errorf(kv.valPos(), "objective: %s", strings.NewReplacer("--slo", "slo", "--errors", "errors").Replace(err.Error()))
		return nil
	}
	return o
}

// faults reads fault: one {at: 60s, kind: failover} or a list of them; a
// command fault also has command: "...". What the run can do is checked at plan.
func (p *parser) faults(kv pair) []Fault {
	v := deref(kv.val)
	nodes := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		nodes = v.Content
	}
	var out []Fault
	for _, n := range nodes {
		n = deref(n)
		if n.Kind != yaml.MappingNode {
			p.errorf(posOf(n), "a fault must be a mapping like {at: 60s, kind: failover}, not %s", describe(n))
			continue
		}
		f := Fault{Pos: posOf(n)}
		for _, fk := range p.pairs(n) {
			switch fk.name() {
			case "at":
				if d, ok := p.duration(fk); ok {
					f.At = d
				}
			case "kind":
				f.Kind, _ = p.str(fk)
			case "command":
				f.Command, _ = p.str(fk)
			default:
				p.unknown(fk.key, "fault", faultKeys)
			}
		}
		if f.Kind == "" {
			p.errorf(f.Pos, "a fault needs kind: crash, restart, failover, switchover or command")
		}
		out = append(out, f)
	}
	return out
}

func (p *parser) matrix(kv pair) Matrix {
	m := Matrix{Pos: kv.valPos()}
	pairs, _ := p.mapping(kv, "{clients: [4, 8], duration: 2m}")
	for _, kv := range pairs {
		switch kv.name() {
		case "clients":
			m.Clients = p.clients(kv)
			m.ClientsPos = kv.valPos()
		case "rates":
			m.Rates = p.rates(kv)
		case "find_max":
			m.FindMax = p.findMax(kv)
		case "warmup":
			if d, ok := p.nonNegative(kv); ok {
				m.Warmup = d
			}
		case "duration":
			if d, ok := p.duration(kv); ok {
				if d <= 0 {
					p.errorf(kv.valPos(), "duration must be more than 0, not %s", deref(kv.val).Value)
				}
				m.Duration = d
			}
		case "repeat":
			m.Repeat, _ = p.integer(kv.val, kv.valPos(), "repeat", "an integer", 1, maxRepeat)
		case "aggregate":
			s, _ := p.enum(kv, aggregates)
			m.Aggregate = Aggregate(s)
		case "order":
			s, _ := p.enum(kv, orders)
			m.Order = Order(s)
		case "pause":
			if d, ok := p.nonNegative(kv); ok {
				m.Pause = d
			}
		case "fault":
			m.Faults = p.faults(kv)
		default:
			p.unknown(kv.key, "matrix", matrixKeys)
		}
	}
	return m
}
