package pricelist

import (
	"cmp"

	"github.com/pgbakeoff/pgbakeoff/internal/cost"
)

// Quote is a price looked up, as `prices --json` prints it: the query, by the
// keys a study file's price: gives it, and the price by component, by the hour
// and by the month, with where it comes from.
type Quote struct {
	SchemaVersion int               `json:"schema_version"` // the command line's (engine.SchemaVersion)
	Query         map[string]string `json:"query"`
	Currency      string            `json:"currency"`
	Components    []QuoteComponent  `json:"components"`
	PerHour       float64           `json:"per_hour"`
	Monthly       float64           `json:"monthly"`
	HoursPerMonth int               `json:"hours_per_month"`
	Source        string            `json:"source"`
	Effective     string            `json:"effective"`
	Fetched       string            `json:"fetched,omitempty"` // RFC 3339
}

// QuoteComponent is one part of a quote: compute, storage, iops, throughput,
// ha, backup, network or fee.
type QuoteComponent struct {
	Name    string  `json:"name"`
	PerHour float64 `json:"per_hour"`
	Monthly float64 `json:"monthly"`
	Detail  string  `json:"detail"` // how it is made up, by the month
}

// NewQuote is the price p of query q as a Quote, without its SchemaVersion.
func NewQuote(q Query, p cost.Price) Quote {
	qt := Quote{Query: map[string]string{"cloud": q.Cloud}, Currency: cmp.Or(p.Currency, cost.DefaultCurrency),
		PerHour: p.Monthly() / cost.HoursPerMonth, Monthly: p.Monthly(), HoursPerMonth: cost.HoursPerMonth,
		Source: p.Source, Effective: p.Date, Fetched: p.Fetched}
	for _, f := range q.Fields() {
		qt.Query[f.Key] = f.Value
	}
	for _, c := range p.Components() {
		qt.Components = append(qt.Components, QuoteComponent{Name: c.Name, PerHour: c.Monthly / cost.HoursPerMonth, Monthly: c.Monthly, Detail: c.Detail})
	}
	return qt
}
