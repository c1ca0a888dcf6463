package report

import (
	"fmt"
	"slices"

	"github.com/pgbakeoff/pgbakeoff/internal/findmax"
	"github.com/pgbakeoff/pgbakeoff/internal/stats"
)

// Versus words target b's figures against the baseline a's, in the words study
// status, compare and report share: the ratio of their aggregates and the
// verdict, "1.12x faster", "0.98x within noise (~4 more runs)", "not enough runs".
func Versus(a, b []float64, aggregate string, noise float64) string {
	text, _ := versus(a, b, aggregate, noise)
	return text
}

func versus(a, b []float64, aggregate string, noise float64) (string, stats.Outcome) {
	v := stats.Compare(a, b, true, noise)
	ratio := "-"
	if len(a) > 0 && len(b) > 0 {
		if base := stats.Aggregate(aggregate, a, true); base != 0 {
			ratio = fmt.Sprintf("%.2fx", stats.Aggregate(aggregate, b, true)/base)
		}
	}
	return verdictText(ratio, v, false), v.Outcome
}

// SearchVersus words target b's find-max searches against the baseline a's, in
// the words study status, compare and report share. A search that found no rate
// is no rate of 0: it stays out of the ratio and the verdict, which are Versus
// over the rates found, and a side whose every search found none is not
// compared (its own cell says o's NoRate). An answer that is a lower bound makes
// the ratio one: "≥1.20x", and "≤0.83x" when the baseline's is.
func SearchVersus(a, b []findmax.Found, aggregate string, noise float64) string {
	text, _ := searchVersus(a, b, aggregate, noise)
	return text
}

func searchVersus(a, b []findmax.Found, aggregate string, noise float64) (string, stats.Outcome) {
	ra, rb := foundRates(a), foundRates(b)
	switch {
	case len(a) == 0 || len(b) == 0:
		return "-", stats.Unknown
	case len(rb) == 0 && len(ra) == 0:
		return "not compared: neither found a rate", stats.Unknown
	case len(rb) == 0:
		return "not compared: no rate found", stats.Unknown
	case len(ra) == 0:
		return "not compared: the baseline found no rate", stats.Unknown
	}
	text, outcome := versus(ra, rb, aggregate, noise)
	ratio := stats.Aggregate(aggregate, rb, true) / stats.Aggregate(aggregate, ra, true)
	// A lower bound keeps only the verdict it cannot overturn.
	switch ba, bb := bounded(a), bounded(b); {
	case ba && bb:
		return "both lower bounds", stats.Unknown
	case bb && outcome == stats.Faster:
		return fmt.Sprintf("≥%.2fx faster", ratio), outcome
	case bb:
		return fmt.Sprintf("≥%.2fx", ratio), stats.Unknown
	case ba && outcome == stats.Slower:
		return fmt.Sprintf("≤%.2fx slower", ratio), outcome
	case ba:
		return fmt.Sprintf("≤%.2fx", ratio), stats.Unknown
	}
	return text, outcome
}

// foundRates are the rates the searches that found one found, in their order.
func foundRates(fs []findmax.Found) []float64 {
	var out []float64
	for _, f := range fs {
		if f.OK {
			out = append(out, f.Rate)
		}
	}
	return out
}

// bounded says whether any search's answer is a lower bound, which makes their
// aggregate one too: the aggregate of values each at most its true value is at
// most the true aggregate.
func bounded(fs []findmax.Found) bool {
	return slices.ContainsFunc(fs, func(f findmax.Found) bool { return f.OK && f.Bound })
}

// noneFound counts the searches that found no rate.
func noneFound(fs []findmax.Found) int {
	n := 0
	for _, f := range fs {
		if !f.OK {
			n++
		}
	}
	return n
}
