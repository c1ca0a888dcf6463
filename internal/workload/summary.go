package workload

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
)

// ReadSummary reads a stored summary (`run --json`'s object) with its
// workload's figures, when it has them: a run that ended before its window
// (an interrupted warm-up) has none.
func ReadSummary(b []byte) (*engine.Summary, error) {
	var sum engine.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		return nil, err
	}
	w, ok := Find(sum.Workload)
	if !ok {
		return &sum, nil
	}
	r, ok := w.(FiguresReader)
	if !ok {
		return &sum, nil
	}
	f := r.NewFigures()
	if has, err := hasFields(b, f); err != nil || !has {
		return &sum, err
	}
	if err := json.Unmarshal(b, f); err != nil {
		return nil, err
	}
	sum.Figures = f
	return &sum, nil
}

// hasFields tells whether the JSON object b has any of the fields f writes,
// those it leaves out when empty (omitempty) too.
func hasFields(b []byte, f engine.Figures) (bool, error) {
	var stored map[string]json.RawMessage
	if err := json.Unmarshal(b, &stored); err != nil {
		return false, err
	}
	t := reflect.TypeOf(f)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return false, fmt.Errorf("figures %s are not a struct", t)
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if _, ok := stored[name]; ok {
			return true, nil
		}
	}
	return false, nil
}
