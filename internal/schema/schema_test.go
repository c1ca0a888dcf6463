package schema_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/findmax"
	"github.com/pgbakeoff/pgbakeoff/internal/pricelist"
	"github.com/pgbakeoff/pgbakeoff/internal/report"
	"github.com/pgbakeoff/pgbakeoff/internal/schema"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/studyrun"
	"github.com/pgbakeoff/pgbakeoff/internal/workload"
	validator "github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite docs/schema from the Go types")

// docs is where the schemas' copies for readers are kept.
var docs = filepath.Join("..", "..", "docs", "schema")

// TestDocs pins the copies in docs/schema to what `pgbakeoff schema` prints. Any
// change to a JSON output changes them, and -update rewrites them only at a new
// engine.SchemaVersion: a document's version names exactly one schema.
func TestDocs(t *testing.T) {
	files := map[string][]byte{}
	for _, name := range schema.Names() {
		b, err := schema.JSON(name)
		if err != nil {
			t.Fatal(err)
		}
		files[name+".json"] = b
	}
	b, err := schema.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	files[schema.BundleName+".json"] = b
	for file, want := range files {
		path := filepath.Join(docs, file)
		got, err := os.ReadFile(path)
		if bytes.Equal(got, want) {
			continue
		}
		if !*update {
			t.Errorf("%s is not what `pgbakeoff schema` prints (%v): run go test ./internal/schema -run TestDocs -update, and read the diff", path, err)
			continue
		}
		if err == nil && idOf(t, got) == idOf(t, want) {
			t.Errorf("%s changed at schema_version %d: bump engine.SchemaVersion (docs/design.md, \"The result schema\") and run -update again", path, engine.SchemaVersion)
			continue
		}
		if err := os.MkdirAll(docs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if files[e.Name()] == nil {
			t.Errorf("%s: no schema of that name; remove it", filepath.Join(docs, e.Name()))
		}
	}
}

// idOf is a schema document's $id.
func idOf(t *testing.T, doc []byte) string {
	var s struct {
		ID string `json:"$id"`
	}
	if err := json.Unmarshal(doc, &s); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// full is v with every field set, recursively: each string "x", number 1, slice
// and map one element, pointer allocated. A field the schema does not know, or
// knows by another name or type, fails its validation.
func full[T any]() *T {
	v := new(T)
	fill(reflect.ValueOf(v).Elem())
	return v
}

func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		v.SetMapIndex(k, e)
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Bool:
		v.SetBool(true)
	}
}

// fullSummaries are a run's summary with every field set: one without figures,
// and one for each workload with figures of its own, with all of theirs set.
func fullSummaries(t *testing.T) map[string][]byte {
	docs := map[string][]byte{}
	for _, w := range workload.All() {
		sum := full[engine.Summary]()
		sum.Workload = w.Name()
		if r, ok := w.(workload.FiguresReader); ok {
			f := r.NewFigures()
			fill(reflect.ValueOf(f).Elem())
			sum.Figures = f
		}
		docs[w.Name()] = marshal(t, sum)
	}
	return docs
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEveryFieldFits validates documents with every field of their Go types
// set, which is where a schema that missed a field, or a MarshalJSON that
// prints what the type does not say, would show.
func TestEveryFieldFits(t *testing.T) {
	fm := full[findmax.Summary]()
	fm.SchemaVersion = engine.SchemaVersion
	rep := full[report.Report]()
	rep.SchemaVersion = engine.SchemaVersion
	unfinished := full[engine.Unfinished]()
	unfinished.SchemaVersion = engine.SchemaVersion
	list := full[engine.RunList]()
	list.SchemaVersion = engine.SchemaVersion
	quote := full[pricelist.Quote]()
	quote.SchemaVersion = engine.SchemaVersion
	cmp := full[report.Comparison]()
	cmp.SchemaVersion = engine.SchemaVersion
	status := full[studyrun.Status]()
	status.SchemaVersion = engine.SchemaVersion
	cases := map[string][]byte{
		"find-max":     marshal(t, fm),
		"export":       marshal(t, rep),
		"show":         marshal(t, unfinished),
		"prices":       marshal(t, quote),
		"runs":         marshal(t, list),
		"compare":      marshal(t, cmp),
		"study-status": marshal(t, status),
	}
	for kind, doc := range fullSummaries(t) {
		cases["run/workload="+kind] = doc
		cases["show/workload="+kind] = doc
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := schema.Validate(strings.Split(name, "/")[0], doc); err != nil {
				t.Errorf("%v\n%s", err, doc)
			}
		})
	}
}

// edit is doc, a JSON object, changed by change.
func edit(t *testing.T, doc []byte, change func(map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	change(m)
	return marshal(t, m)
}

// TestValidateRejects: what the outputs never print does not fit, and what they
// may print (null for a nil slice or pointer) does.
func TestValidateRejects(t *testing.T) {
	sums := fullSummaries(t)
	tpcb, tpcc := sums["tpcb"], sums["tpcc"]
	fm := full[findmax.Summary]()
	fm.SchemaVersion = engine.SchemaVersion
	findMax := marshal(t, fm)
	cmp := full[report.Comparison]()
	cmp.SchemaVersion = engine.SchemaVersion
	comparison := marshal(t, cmp)
	st := full[studyrun.Status]()
	st.SchemaVersion = engine.SchemaVersion
	status := marshal(t, st)
	cases := []struct {
		name, schema string
		doc          []byte
		fits         bool
	}{
		{"run/as-printed", "run", tpcb, true},
		{"run/unknown-field", "run", edit(t, tpcb, func(m map[string]any) { m["tps_per_core"] = 1.0 }), false},
		{"run/another-workload's-figures", "run", edit(t, tpcb, func(m map[string]any) { m["nopm"] = 1.0 }), false},
		{"run/its-workload's-figures-left-out", "run", edit(t, tpcc, func(m map[string]any) { delete(m, "nopm") }), true},
		{"run/field-missing", "run", edit(t, tpcb, func(m map[string]any) { delete(m, "tps") }), false},
		{"run/wrong-type", "run", edit(t, tpcb, func(m map[string]any) { m["tps"] = "fast" }), false},
		{"run/other-version", "run", edit(t, tpcb, func(m map[string]any) { m["schema_version"] = engine.SchemaVersion + 1 }), false},
		{"run/unknown-workload", "run", edit(t, tpcb, func(m map[string]any) { m["workload"] = "tpch" }), false},
		{"run/not-a-date", "run", edit(t, tpcb, func(m map[string]any) { m["started"] = "yesterday" }), false},
		{"run/nested-unknown-field", "run", edit(t, tpcb, func(m map[string]any) { m["server"].(map[string]any)["uptime"] = 1 }), false},
		{"run/nil-slice", "run", edit(t, tpcb, func(m map[string]any) { m["scripts"] = nil }), true},
		{"run/null-struct", "run", edit(t, tpcb, func(m map[string]any) { m["latency_ms"] = nil }), false},
		{"show/unfinished-in-run's-schema", "run", marshal(t, engine.NewUnfinished(full[store.RunDetail]())), false},
		{"show/unfinished", "show", marshal(t, engine.NewUnfinished(full[store.RunDetail]())), true},
		{"find-max/no-rate", "find-max", edit(t, findMax, func(m map[string]any) { m["max_rate"] = nil }), true},
		{"find-max/a-run's-summary", "find-max", tpcb, false},
		{"compare/no-gate", "compare", edit(t, comparison, func(m map[string]any) { delete(m, "gate") }), true},
		{"compare/gate-without-passed", "compare", edit(t, comparison, func(m map[string]any) { delete(m["gate"].(map[string]any), "passed") }), false},
		{"compare/ratio-as-text", "compare", edit(t, comparison, func(m map[string]any) {
			m["gate"].(map[string]any)["verdicts"].([]any)[0].(map[string]any)["ratio"] = "NaN"
		}), false},
		{"study-status/not-started", "study-status", edit(t, status, func(m map[string]any) { m["last_run"] = nil }), true},
		{"study-status/count-as-text", "study-status", edit(t, status, func(m map[string]any) { m["made"] = "2" }), false},
		{"study-status/a-run's-summary", "study-status", tpcb, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := schema.Validate(c.schema, c.doc)
			if c.fits && err != nil {
				t.Errorf("does not fit: %v\n%s", err, c.doc)
			}
			if !c.fits && err == nil {
				t.Errorf("fits, and should not:\n%s", c.doc)
			}
		})
	}
}

// TestBundle: the bundle is one valid schema that holds every output's, and a
// document fits it when it fits one of them.
func TestBundle(t *testing.T) {
	b, err := schema.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := validator.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := validator.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schema.ID(schema.BundleName), doc); err != nil {
		t.Fatal(err)
	}
	bundle, err := c.Compile(schema.ID(schema.BundleName))
	if err != nil {
		t.Fatal(err)
	}
	tpcb := fullSummaries(t)["tpcb"]
	for _, c := range []struct {
		doc  []byte
		fits bool
	}{
		{tpcb, true},
		{edit(t, tpcb, func(m map[string]any) { m["tps"] = "fast" }), false},
	} {
		v, err := validator.UnmarshalJSON(bytes.NewReader(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		if err := bundle.Validate(v); (err == nil) != c.fits {
			t.Errorf("fits the bundle: %v, want %v (%v)", err == nil, c.fits, err)
		}
	}
}

// TestUnknownName: a name that is no schema's is an error naming those there are.
func TestUnknownName(t *testing.T) {
	for _, name := range []string{"rn", "summary", ""} {
		err := schema.Check(name)
		if err == nil {
			t.Fatalf("Check(%q) = nil", name)
		}
		if !strings.Contains(err.Error(), strings.Join(schema.Names(), ", ")) {
			t.Errorf("Check(%q) = %v: does not name the schemas", name, err)
		}
		if err := schema.Validate(name, []byte("{}")); err == nil {
			t.Errorf("Validate(%q) = nil", name)
		}
	}
	if err := schema.Check("rn"); !strings.Contains(err.Error(), "did you mean run?") {
		t.Errorf("Check(rn) = %v: no suggestion", err)
	}
}
