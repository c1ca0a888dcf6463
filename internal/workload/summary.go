package workload

import (
	"encoding/json"

	"github.com/pgbakeoff/pgbakeoff/internal/engine"
)

// ReadSummary reads a stored summary (`run --json`'s object) with its
// workload's figures.
func ReadSummary(b []byte) (*engine.Summary, error) {
	var sum engine.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		return nil, err
	}
	if w, ok := Find(sum.Workload); ok {
		if r, ok := w.(FiguresReader); ok {
			f := r.NewFigures()
			if err := json.Unmarshal(b, f); err != nil {
				return nil, err
			}
			sum.Figures = f
		}
	}
	return &sum, nil
}
