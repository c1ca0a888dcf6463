package studyrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pgbakeoff/pgbakeoff/internal/pricelist"
	"github.com/pgbakeoff/pgbakeoff/internal/report"
	"github.com/pgbakeoff/pgbakeoff/internal/store"
	"github.com/pgbakeoff/pgbakeoff/internal/study"
)

// lookUpPrices looks up, in their clouds' lists, the prices of the targets
// that give a lookup and have none stored for it (all of them with refresh),
// and returns them to be stored. A lookup the list has no answer for (an
// unknown SKU or region) is the study file's mistake and stops the study
// before anything runs; a list that cannot be read leaves that target
// unpriced, with a warning, for `study prices` to look up later.
func (sr *Runner) lookUpPrices(ctx context.Context, s *study.Study, stored map[string]store.StudyPrice, refresh bool) ([]store.StudyPrice, error) {
	var out []store.StudyPrice
	for _, t := range s.Targets {
		q := t.PriceLookup
		if q == nil {
			continue
		}
		if old, ok := stored[t.Name]; ok && old.Query == q.Key() && !refresh {
			continue
		}
		if sr.Prices == nil {
			fmt.Fprintf(sr.Log, "pgbakeoff: warning: target %s: its price is not looked up here\n", t.Name)
			continue
		}
		p, err := sr.Prices.Price(ctx, *q)
		var nf *pricelist.NotFoundError
		switch {
		case errors.As(err, &nf):
			where := "its price: in " + s.File
			if t.PriceRef != "" {
				where = fmt.Sprintf("the entry %s in %s", t.PriceRef, s.Prices)
			}
			return nil, fmt.Errorf("target %s: price: %w; fix %s", t.Name, err, where)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			fmt.Fprintf(sr.Log, "pgbakeoff: warning: target %s: no price: %v; reports show it unpriced until `pgbakeoff study prices %s` looks it up\n", t.Name, err, s.File)
			continue
		}
		data, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		out = append(out, store.StudyPrice{Target: t.Name, Query: q.Key(), Price: string(data), LookedUp: sr.Now()})
	}
	return out, nil
}

// savePrices stores prices looked up for the study whose record is studyID.
func savePrices(ctx context.Context, st *store.Store, studyID int64, prices []store.StudyPrice) error {
	for _, p := range prices {
		if err := st.SetStudyPrice(ctx, studyID, p); err != nil {
			return err
		}
	}
	return nil
}

// PricesOf looks up the prices of the study's targets that give a lookup, all
// of them anew with refresh, stores them with the study when it has run, and
// prints each.
func (sr *Runner) PricesOf(ctx context.Context, file string, refresh bool) error {
	s, _, err := loadValidStudy(file)
	if err != nil {
		return err
	}
	st, err := sr.OpenStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	state, err := st.FindStudy(ctx, s.Name)
	stored := map[string]store.StudyPrice{}
	switch {
	case errors.Is(err, store.ErrNotFound):
		state = nil
	case err != nil:
		return err
	default:
		if stored, err = st.StudyPrices(ctx, state.ID); err != nil {
			return err
		}
	}
	found, err := sr.lookUpPrices(ctx, s, stored, refresh)
	if err != nil {
		return err
	}
	if state != nil {
		if err := savePrices(ctx, st, state.ID, found); err != nil {
			return err
		}
	}
	for _, p := range found {
		stored[p.Target] = p
	}
	for _, t := range s.Targets {
		switch p, err := report.StoredPrice(t, stored); {
		case err != nil:
			return err
		case t.PriceLookup == nil && t.Price == nil:
			fmt.Fprintf(sr.Out, "%s: no price\n", t.Name)
		case t.PriceLookup == nil:
			fmt.Fprintf(sr.Out, "%s: %s (given in the study file)\n", t.Name, t.Price.Detail())
		case p == nil:
			fmt.Fprintf(sr.Out, "%s: not looked up (%s)\n", t.Name, t.PriceLookup)
		default:
			fmt.Fprintf(sr.Out, "%s: %s\n  %s\n  %s, effective %s, fetched %s\n", t.Name, t.PriceLookup, p.Detail(), p.Source, p.Date, p.Fetched)
		}
	}
	if state == nil && len(found) > 0 {
		fmt.Fprintf(sr.Out, "study %s has not run yet: `study run` stores these prices with it\n", s.Name)
	}
	return nil
}
