package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/invopop/jsonschema"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/findmax"
	"github.com/pgbakeoff/pgbakeoff/internal/pricelist"
	"github.com/pgbakeoff/pgbakeoff/internal/report"
	"github.com/pgbakeoff/pgbakeoff/internal/studyrun"
	"github.com/pgbakeoff/pgbakeoff/internal/suggest"
	"github.com/pgbakeoff/pgbakeoff/internal/workload"
	validator "github.com/santhosh-tekuri/jsonschema/v6"
)

// Output is a JSON document pgbakeoff prints.
type Output struct {
	Name  string // as `pgbakeoff schema NAME` takes it
	Title string // the commands that print it, and what it is
	build func(*generator) *jsonschema.Schema
}

// outputs are the schemas, in the order `pgbakeoff schema --list` lists them.
var outputs = []Output{
	{"run", "pgbakeoff run WORKLOAD --json: a run's summary", runSchema},
	{"runs", "pgbakeoff runs --json: the stored runs, newest first", versionedOf(&engine.RunList{})},
	{"show", "pgbakeoff show ID --json: a stored run's summary, or what a run that did not finish left", showSchema},
	{"find-max", "pgbakeoff find-max WORKLOAD --json: the highest rate within an objective, and the runs that found it", versionedOf(&findmax.Summary{})},
	{"export", "pgbakeoff export --format json: everything a report shows", versionedOf(&report.Report{})},
	{"prices", "pgbakeoff prices CLOUD --json: a deployment's price in its cloud's list", versionedOf(&pricelist.Quote{})},
	{"compare", "pgbakeoff compare --json: the targets' figures side by side, their ratios and verdicts, and --fail-if-slower's gate", versionedOf(&report.Comparison{})},
	{"study-status", "pgbakeoff study status FILE --json: a study's plan and the state of each of its runs", versionedOf(&studyrun.Status{})},
}

// BundleName is the name of the document holding every schema (Bundle).
const BundleName = "pgbakeoff"

// Outputs are the documents that have a schema.
func Outputs() []Output { return append([]Output(nil), outputs...) }

// Names are the outputs' names.
func Names() []string {
	names := make([]string, len(outputs))
	for i, o := range outputs {
		names[i] = o.Name
	}
	return names
}

// ID is the $id of the named schema at the current engine.SchemaVersion.
func ID(name string) string {
	return fmt.Sprintf("https://github.com/pgbakeoff/pgbakeoff/schema/v%d/%s.json", engine.SchemaVersion, name)
}

// find is the output of the given name, or an error naming those there are.
func find(name string) (Output, error) {
	for _, o := range outputs {
		if o.Name == name {
			return o, nil
		}
	}
	if s := suggest.One(name, Names()); s != "" {
		return Output{}, fmt.Errorf("no schema %q (did you mean %s?): choose one of %s", name, s, strings.Join(Names(), ", "))
	}
	return Output{}, fmt.Errorf("no schema %q: choose one of %s", name, strings.Join(Names(), ", "))
}

// Check tells whether name is an output's: nil when it is, else an error naming
// those there are.
func Check(name string) error {
	_, err := find(name)
	return err
}

// JSON is the named output's schema, as `pgbakeoff schema NAME` prints it.
func JSON(name string) ([]byte, error) {
	o, err := find(name)
	if err != nil {
		return nil, err
	}
	s, err := o.schema()
	if err != nil {
		return nil, err
	}
	return encode(s)
}

// Bundle is every schema in one document, as `pgbakeoff schema` prints it: each
// is a resource of its own under $defs, with its $id, and a document fits the
// bundle when it fits one of them.
func Bundle() ([]byte, error) {
	b := &jsonschema.Schema{Version: jsonschema.Version, ID: jsonschema.ID(ID(BundleName)),
		Title: "pgbakeoff's JSON outputs", Definitions: jsonschema.Definitions{}}
	for _, o := range outputs {
		s, err := o.schema()
		if err != nil {
			return nil, err
		}
		s.Version = ""
		b.Definitions[o.Name] = s
		b.AnyOf = append(b.AnyOf, &jsonschema.Schema{Ref: ID(o.Name)})
	}
	return encode(b)
}

// schema is the output's schema, a document of its own.
func (o Output) schema() (*jsonschema.Schema, error) {
	g := newGenerator()
	s := o.build(g)
	if g.err != nil {
		return nil, fmt.Errorf("schema %s: %w", o.Name, g.err)
	}
	s.Version = jsonschema.Version
	s.ID = jsonschema.ID(ID(o.Name))
	s.Title = o.Title
	return s, nil
}

func encode(s *jsonschema.Schema) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// runSchema is engine.Summary's, with each workload's figures at its top level
// (Summary.MarshalJSON) in its own runs alone.
func runSchema(g *generator) *jsonschema.Schema {
	s := g.reflect(&engine.Summary{})
	g.versioned(s)
	if p, ok := s.Properties.Get("workload"); ok {
		for _, name := range workload.Names() {
			p.Enum = append(p.Enum, name)
		}
	}
	// The figures' properties are evaluated in allOf, so the summary is closed by
	// unevaluatedProperties, which sees them, not by additionalProperties.
	s.AdditionalProperties = nil
	s.Extras = map[string]any{"unevaluatedProperties": false}
	if s.Definitions == nil {
		s.Definitions = jsonschema.Definitions{}
	}
	for _, w := range workload.All() {
		r, ok := w.(workload.FiguresReader)
		if !ok {
			continue
		}
		f := g.reflect(r.NewFigures())
		g.merge(s.Definitions, f.Definitions)
		kind := jsonschema.NewProperties()
		kind.Set("workload", &jsonschema.Schema{Const: w.Name()})
		// A run that ended before its window has no figures: none is required.
		s.AllOf = append(s.AllOf, &jsonschema.Schema{
			If:   &jsonschema.Schema{Properties: kind, Required: []string{"workload"}},
			Then: &jsonschema.Schema{Properties: f.Properties},
		})
	}
	return s
}

// showSchema is a run's summary, or engine.Unfinished for a run without one.
func showSchema(g *generator) *jsonschema.Schema {
	run := runSchema(g)
	unfinished := g.reflect(&engine.Unfinished{})
	g.versioned(unfinished)
	defs := run.Definitions
	g.merge(defs, unfinished.Definitions)
	run.Version, run.Definitions = "", nil
	unfinished.Version, unfinished.Definitions = "", nil
	g.define(defs, "run", run)
	g.define(defs, "unfinished", unfinished)
	return &jsonschema.Schema{Definitions: defs, OneOf: []*jsonschema.Schema{{Ref: "#/$defs/run"}, {Ref: "#/$defs/unfinished"}}}
}

// compiled are the schemas ready to validate with, by name.
var compiled = sync.OnceValues(func() (map[string]*validator.Schema, error) {
	c := validator.NewCompiler()
	c.DefaultDraft(validator.Draft2020)
	c.AssertFormat()
	for _, name := range Names() {
		b, err := JSON(name)
		if err != nil {
			return nil, err
		}
		doc, err := validator.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		if err := c.AddResource(ID(name), doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
	}
	schemas := map[string]*validator.Schema{}
	for _, name := range Names() {
		s, err := c.Compile(ID(name))
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		schemas[name] = s
	}
	return schemas, nil
})

// Validate tells whether doc, one JSON document, fits the named output's schema:
// nil when it does, else an error saying where and why not.
func Validate(name string, doc []byte) error {
	if _, err := find(name); err != nil {
		return err
	}
	schemas, err := compiled()
	if err != nil {
		return err
	}
	v, err := validator.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not one JSON document: %w", err)
	}
	return schemas[name].Validate(v)
}

// versionedOf is the schema of one Go type's document, with its schema_version.
func versionedOf(v any) func(g *generator) *jsonschema.Schema {
	return func(g *generator) *jsonschema.Schema {
		s := g.reflect(v)
		g.versioned(s)
		return s
	}
}
