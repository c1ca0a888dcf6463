package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pgbakeoff/pgbakeoff/internal/stats"
)

// num formats a figure for people: about three significant digits, thousands
// grouped: 41,230; 812; 12.3; 1.25; 0.0123.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	av := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case av >= 1000:
		return thousands(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	case av >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case av >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case av >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case av >= 0.001:
		return strconv.FormatFloat(v, 'f', 2-int(math.Floor(math.Log10(av))), 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// thousands inserts thousands separators into an integer's digits.
func thousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// pct formats a fraction as a percentage with one decimal: 0.031 is "3.1%".
func pct(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + "%" }

// percent formats a threshold without float noise: 0.05 is "5%", 0.025 "2.5%".
func percent(fraction float64) string {
	return strconv.FormatFloat(math.Round(fraction*100*1000)/1000, 'f', -1, 64) + "%"
}

// money formats an amount in a currency: "$1,234", "$12.50", "$0.0217",
// "CHF 1,234".
func money(v float64, currency string) string {
	var n string
	switch av := math.Abs(v); {
	case av >= 100:
		n = thousands(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	case av >= 1:
		n = strconv.FormatFloat(v, 'f', 2, 64)
	default:
		n = num(v)
	}
	sym := currencySym(currency)
	if utf8.RuneCountInString(sym) > 1 {
		return sym + " " + n
	}
	return sym + n
}

// hourlyMoney is an amount per hour, to a hundredth of a cent: $2.9435.
func hourlyMoney(v float64, currency string) string {
	n := strconv.FormatFloat(v, 'f', 4, 64)
	if sym := currencySym(currency); utf8.RuneCountInString(sym) > 1 {
		return sym + " " + n
	}
	return currencySym(currency) + n
}

// cellText is the text of target i's value in a row, as the tables show it: the
// aggregate, its spread as ±CV when there are repetitions, and "!" when the runs vary
// by more than the noise threshold.
func (a *analysis) cellText(rw row, i int) string {
	v := rw.vals[i]
	if !v.ok {
		if rw.kind == runCount {
			return "0/0"
		}
		return "-"
	}
	var s string
	switch rw.kind {
	case runCount:
		return v.text
	case monthly, perUnit:
		s = money(v.agg, a.targets[i].Price.Currency)
	case unitsPer:
		s = num(v.agg)
	default:
		s = num(v.agg)
		if v.sum.N >= 2 {
			s += " ±" + pct(v.sum.CV)
		}
	}
	if v.high {
		s += " !"
	}
	return s
}

// ratioText is target i against the baseline in a row: "1.05x", and on the headline
// row the verdict, "1.12x faster" or "0.98x within noise (~4 more runs)". short
// abbreviates the verdict for narrow terminals: "0.98x noise +4 runs".
func (a *analysis) ratioText(rw row, i int, short bool) string {
	if rw.kind == runCount {
		return ""
	}
	r := rw.ratios[i]
	ratio := "-"
	if !math.IsNaN(r) {
		ratio = fmt.Sprintf("%.2fx", r)
	}
	if rw.verdicts == nil || rw.verdicts[i] == nil {
		return ratio
	}
	return verdictText(ratio, *rw.verdicts[i], short)
}

func verdictText(ratio string, v stats.Verdict, short bool) string {
	// For Unknown, MoreRuns only counts up to two runs of each; the reason says so.
	more := ""
	if v.MoreRuns > 0 && v.Outcome == stats.WithinNoise {
		switch {
		case v.MoreRuns >= stats.MaxMoreRuns && short:
			more = " +many runs"
		case v.MoreRuns >= stats.MaxMoreRuns:
			more = fmt.Sprintf(" (%d+ more runs)", stats.MaxMoreRuns)
		case short:
			more = fmt.Sprintf(" +%d %s", v.MoreRuns, plural(v.MoreRuns, "run", "runs"))
		default:
			more = fmt.Sprintf(" (~%d more %s)", v.MoreRuns, plural(v.MoreRuns, "run", "runs"))
		}
	}
	var word string
	switch v.Outcome {
	case stats.WithinNoise:
		word = "within noise"
		if short {
			word = "noise"
		}
	case stats.Unknown:
		word = "not enough runs"
		if short {
			word = "too few runs"
		}
	default:
		word = string(v.Outcome)
	}
	if ratio == "-" {
		return word + more
	}
	return ratio + " " + word + more
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// runsLabel is "run 14 (pg16, repeat 2)".
func runLabel(run Run) string {
	if run.Repeat > 0 {
		return fmt.Sprintf("run %d (%s, repeat %d)", run.ID, run.Target, run.Repeat)
	}
	return fmt.Sprintf("run %d (%s)", run.ID, run.Target)
}

// ellipsis shortens s to n runes, keeping both ends: "pg16-tu…large".
func ellipsis(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 3 {
		return s
	}
	head := n / 2
	tail := n - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// width is the number of columns s takes in a terminal.
func width(s string) int { return utf8.RuneCountInString(s) }

// wrap breaks text into lines of at most w columns, the first starting with first
// and the others with rest (an indent).
func wrap(text string, w int, first, rest string) []string {
	var lines []string
	line := first
	empty := true
	for _, word := range strings.Fields(text) {
		switch {
		case empty:
			line += word
		case width(line)+1+width(word) <= w:
			line += " " + word
		default:
			lines = append(lines, line)
			line = rest + word
		}
		empty = false
		// A single word longer than the line is cut, so no line ever overflows.
		for width(line) > w {
			r := []rune(line)
			lines = append(lines, string(r[:w]))
			line = rest + string(r[w:])
		}
	}
	if !empty {
		lines = append(lines, line)
	}
	return lines
}

// timeText is the report's generation time, in UTC.
func (a *analysis) generated() string {
	if a.r.Generated.IsZero() {
		return ""
	}
	return a.r.Generated.UTC().Format("2006-01-02 15:04 UTC")
}

// hover is the detail of a value for hover text: every run's figure, the range and
// the CV.
func hover(v value, unit string) string {
	if !v.ok || v.sum.N == 0 {
		return ""
	}
	parts := make([]string, len(v.vals))
	for i, x := range v.vals {
		parts[i] = fmt.Sprintf("run %d: %s", v.ids[i], num(x))
	}
	s := strings.Join(parts, ", ")
	if v.sum.N >= 2 {
		s += fmt.Sprintf("; range %s–%s%s, CV %s", num(v.sum.Min), num(v.sum.Max), unit, pct(v.sum.CV))
	} else {
		s += unit
	}
	if v.high {
		s += "; high variance"
	}
	return s
}
