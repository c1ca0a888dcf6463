package report

import (
	"encoding/xml"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestLinearTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi   float64
		min, max float64
		labels   string
	}{
		{0, 31250, 0, 40000, "0 10k 20k 30k 40k"},
		{0, 9.7, 0, 10, "0 2 4 6 8 10"},
		{-5, 24, -10, 30, "-10 0 10 20 30"},
		{0, 0.37, 0, 0.4, "0.0 0.1 0.2 0.3 0.4"},
		{5, 5, 4.4, 5.6, "4.4 4.6 4.8 5.0 5.2 5.4 5.6"},
		{0, 0, 0, 1, "0.0 0.2 0.4 0.6 0.8 1.0"},
	} {
		t.Run(fmt.Sprintf("lo=%g/hi=%g", tc.lo, tc.hi), func(t *testing.T) {
			min, max, ts := linearTicks(tc.lo, tc.hi, 6)
			var labels []string
			for _, tk := range ts {
				labels = append(labels, tk.Label)
			}
			if min != tc.min || max != tc.max || strings.Join(labels, " ") != tc.labels {
				t.Errorf("got [%g, %g] %q, want [%g, %g] %q", min, max, strings.Join(labels, " "), tc.min, tc.max, tc.labels)
			}
		})
	}
}

func TestLogTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi   float64
		min, max float64
		labels   string
	}{
		{1.5, 220, 1, 1000, "1 10 100 1000"},
		{2, 30, 1, 100, "1 2 5 10 20 50 100"},
		{0.3, 45, 0.1, 100, "0.1 1 10 100"},
		{20, 150000, 10, 1e6, "10 100 1000 10k 100k 1M"},
	} {
		t.Run(fmt.Sprintf("lo=%g/hi=%g", tc.lo, tc.hi), func(t *testing.T) {
			min, max, ts := logTicks(tc.lo, tc.hi)
			var labels []string
			for _, tk := range ts {
				labels = append(labels, tk.Label)
			}
			if math.Abs(min-tc.min) > 1e-12 || math.Abs(max-tc.max) > 1e-9 || strings.Join(labels, " ") != tc.labels {
				t.Errorf("got [%g, %g] %q, want [%g, %g] %q", min, max, strings.Join(labels, " "), tc.min, tc.max, tc.labels)
			}
		})
	}
}

func TestScaleLog(t *testing.T) {
	s := scale{log: true, lo: 1, hi: 1000, pixLo: 0, pixHi: 300}
	for v, want := range map[float64]float64{1: 0, 10: 100, 100: 200, 1000: 300, 0: 0} {
		if got := s.at(v); math.Abs(got-want) > 1e-9 {
			t.Errorf("at(%g) = %g, want %g", v, got, want)
		}
	}
}

func TestNum(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {41230.4, "41,230"}, {1234567, "1,234,567"}, {-4500, "-4,500"}, {812.4, "812"},
		{12.34, "12.3"}, {1.254, "1.25"}, {0.0123, "0.0123"}, {0.5, "0.500"}, {math.NaN(), "-"},
	} {
		if got := num(tc.v); got != tc.want {
			t.Errorf("num(%g) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestMoney(t *testing.T) {
	for _, tc := range []struct {
		v        float64
		currency string
		want     string
	}{
		{1000, "USD", "$1,000"}, {12.5, "EUR", "€12.50"}, {0.0217, "USD", "$0.0217"}, {1234, "CHF", "CHF 1,234"}, {50, "", "50.00"},
	} {
		if got := money(tc.v, tc.currency); got != tc.want {
			t.Errorf("money(%g, %q) = %q, want %q", tc.v, tc.currency, got, tc.want)
		}
	}
}

func TestEllipsis(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"pg16", 16, "pg16"},
		{"pg17-candidate-build-3-with-a-long-name", 16, "pg17-can…ng-name"},
		{"abcdefghij", 5, "ab…ij"},
	} {
		if got := ellipsis(tc.s, tc.n); got != tc.want || width(got) > tc.n {
			t.Errorf("ellipsis(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestWrap(t *testing.T) {
	text := "run 14 (pg16, repeat 2) left out: server_restarted: the postmaster start time changed " +
		strings.Repeat("x", 50)
	lines := wrap(text, 40, "  x ", "    ")
	for _, l := range lines {
		if width(l) > 40 {
			t.Errorf("line %q is wider than 40", l)
		}
	}
	if !strings.HasPrefix(lines[0], "  x run 14") || !strings.HasPrefix(lines[1], "    ") {
		t.Errorf("indents lost: %q", lines)
	}
	if got := strings.Join(strings.Fields(strings.Join(lines, " ")), " "); !strings.Contains(got, "changed xxxx") {
		t.Errorf("words lost: %q", got)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{"TPC-C 100w": "tpc-c-100w", "tpcb": "tpcb", "  ": "workload", "a/b_c": "a-b-c"} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestChartsAreXML parses the SVG of each chart shape as XML, so a standalone file
// opens in any viewer, and checks its axes, legend and hover values.
func TestChartsAreXML(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name  string
		svg   []byte
		texts []string // text the chart must show
	}{
		{"line-linear", (&lineChart{Name: "l", Title: "Line <&>", X: axis{Label: "seconds"}, Y: axis{Label: "tps", FromZero: true},
			Series: []series{{Name: "a", Color: "#000", Dots: true, Points: []pt{{X: 0, Y: 1, Title: "a at 0"}, {X: 1, Y: 2, Lo: 1.5, Hi: 2.5}}}},
			Marks:  []vmark{{X: 0.5, Color: "#f00", Title: "checkpoint"}},
			Spans:  []vspan{{X0: 0.2, X1: 0.4, Color: "#f00", Title: "outage", Label: "outage"}}}).svg(),
			[]string{"Line <&>", "seconds", "tps", "a", "a at 0", "checkpoint", "outage"}},
		{"line-log-empty", (&lineChart{Name: "e", Title: "Empty", X: axis{Label: "x", Log: true}, Y: axis{Label: "y", Log: true}}).svg(),
			[]string{"Empty", "no data"}},
		{"bars", (&barChart{Name: "b", Title: "Bars", XLabel: "clients", YLabel: "cores", Unit: " cores", Groups: []string{"8", "16"},
			Series: []barSeries{{Name: "a", Color: "#000", Values: []float64{1, 2}}, {Name: "b", Color: "#111", Values: []float64{nan, 3}}}}).svg(),
			[]string{"Bars", "clients", "cores", "16 · b: 3.00 cores"}},
		{"stacked", (&barChart{Name: "s", Title: "Stacked", Stacked: true, Max: 100, Groups: []string{"pg11"},
			Series: []barSeries{{Name: "CPU", Color: "#000", Values: []float64{60}}, {Name: "IO", Color: "#111", Values: []float64{30}}}}).svg(),
			[]string{"Stacked", "CPU", "IO", "100"}},
	} {
		t.Run("chart="+tc.name, func(t *testing.T) {
			var texts []string
			d := xml.NewDecoder(strings.NewReader(string(tc.svg)))
			var root *xml.StartElement
			for {
				tok, err := d.Token()
				if err != nil {
					if err.Error() != "EOF" {
						t.Fatalf("not XML: %v", err)
					}
					break
				}
				switch tok := tok.(type) {
				case xml.StartElement:
					if root == nil {
						root = &tok
					}
				case xml.CharData:
					if s := strings.TrimSpace(string(tok)); s != "" {
						texts = append(texts, s)
					}
				}
			}
			if root == nil || root.Name.Local != "svg" {
				t.Fatalf("the root is not svg")
			}
			for _, want := range tc.texts {
				if !slices.Contains(texts, want) {
					t.Errorf("no text %q among %q", want, texts)
				}
			}
		})
	}
}
