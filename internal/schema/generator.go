package schema

import (
	"fmt"
	"path"
	"reflect"
	"strings"
	"time"

	"github.com/invopop/jsonschema"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
)

// generator reflects the Go types of one schema document. Types are named in
// $defs by their Go name, with their package's before it when two types of the
// document share one.
type generator struct {
	r     jsonschema.Reflector
	names map[string]reflect.Type
	err   error // the first problem met: a name given twice, a field missing
}

func newGenerator() *generator {
	g := &generator{names: map[string]reflect.Type{}}
	g.r = jsonschema.Reflector{Anonymous: true, ExpandedStruct: true, Namer: g.name}
	return g
}

// name is t's name in $defs.
func (g *generator) name(t reflect.Type) string {
	n := t.Name()
	if n == "" {
		return ""
	}
	if u, ok := g.names[n]; ok && u != t {
		n = path.Base(t.PkgPath()) + "." + n
	}
	g.names[n] = t
	return n
}

// reflect is the schema of v's type, expanded at its root, with the types it
// holds under $defs. The library requires every field without omitempty; it
// does not know that encoding/json prints a nil slice, map or pointer as null,
// which nullable adds.
func (g *generator) reflect(v any) *jsonschema.Schema {
	s := g.r.Reflect(v)
	g.nullable(s, s, reflect.TypeOf(v), map[reflect.Type]bool{})
	return s
}

// nullable lets every field of struct type t (schema s, in the document root)
// that encoding/json may print as null be null, in t and in the struct types
// its fields hold.
func (g *generator) nullable(root, s *jsonschema.Schema, t reflect.Type, seen map[reflect.Type]bool) {
	t = deref(t)
	if t.Kind() != reflect.Struct || t == reflect.TypeFor[time.Time]() || seen[t] || s == nil || s.Properties == nil {
		return
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" && opts == "":
			continue
		case f.Anonymous && name == "" && deref(f.Type).Kind() == reflect.Struct:
			g.nullable(root, s, f.Type, seen) // its fields are t's
			continue
		case !f.IsExported():
			continue
		case name == "":
			name = f.Name
		}
		omitted := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		if p, ok := s.Properties.Get(name); ok && !omitted && printsNull(f.Type) {
			s.Properties.Set(name, &jsonschema.Schema{AnyOf: []*jsonschema.Schema{p, {Type: "null"}}})
		}
		for _, e := range structsIn(f.Type) {
			g.nullable(root, root.Definitions[g.name(e)], e, seen)
		}
	}
}

// printsNull tells whether a value of type t may print as null.
func printsNull(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return true
	}
	return false
}

// structsIn are the struct types a value of type t holds directly: itself, or
// its elements.
func structsIn(t reflect.Type) []reflect.Type {
	t = deref(t)
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return structsIn(t.Elem())
	case reflect.Struct:
		return []reflect.Type{t}
	}
	return nil
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// versioned pins the document's schema_version to engine.SchemaVersion; a
// document without the field is an error.
func (g *generator) versioned(s *jsonschema.Schema) {
	if _, ok := s.Properties.Get("schema_version"); !ok {
		g.fail(fmt.Errorf("the document has no schema_version field"))
		return
	}
	s.Properties.Set("schema_version", &jsonschema.Schema{Type: "integer", Const: engine.SchemaVersion})
}

// merge adds the definitions from to those of to: the same name is the same
// Go type (name), reflected again.
func (g *generator) merge(to, from jsonschema.Definitions) {
	for name, d := range from {
		if _, ok := to[name]; !ok {
			to[name] = d
		}
	}
}

// define adds s to defs under a name no Go type of the document has.
func (g *generator) define(defs jsonschema.Definitions, name string, s *jsonschema.Schema) {
	_, typed := g.names[name]
	if _, ok := defs[name]; ok || typed {
		g.fail(fmt.Errorf("two definitions named %s", name))
		return
	}
	defs[name] = s
}

func (g *generator) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}
