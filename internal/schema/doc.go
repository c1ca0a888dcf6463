// Package schema is the JSON Schema (draft 2020-12) of every JSON document
// pgbakeoff prints: a run's summary (`run --json`), `show`, `runs`, `find-max`,
// `prices`, `compare` and `study status` with --json, and `export --format json`. Each schema is generated from the Go
// types that print the document, with encoding/json's rules (omitempty fields
// are optional, nil slices, maps and pointers print null), so the two cannot
// drift; every object is closed (no property the type lacks), and every
// document carries engine.SchemaVersion, which the schema's $id names too.
//
//	b, err := schema.JSON("run")                  // what `pgbakeoff schema run` prints
//	err = schema.Validate("run", runJSONOutput)    // nil when the output fits
package schema
