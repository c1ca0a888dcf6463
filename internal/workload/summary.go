package workload

import (
	"encoding/json"

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

// hasFields tells whether the JSON object b has any of the fields f writes.
func hasFields(b []byte, f engine.Figures) (bool, error) {
	var stored, own map[string]json.RawMessage
	if err := json.Unmarshal(b, &stored); err != nil {
		return false, err
	}
	empty, err := json.Marshal(f)
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(empty, &own); err != nil {
		return false, err
	}
	for k := range own {
		if _, ok := stored[k]; ok {
			return true, nil
		}
	}
	return false, nil
}
