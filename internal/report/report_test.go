package report

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (go test -update rewrites it):\n%s", path, firstDiff(string(want), string(got)))
	}
}

// firstDiff shows the first line where two texts differ.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\nwant %q\ngot  %q", i+1, w, g)
		}
	}
	return "(no line differs)"
}

// memCharts keeps the charts a Markdown report writes.
type memCharts struct {
	names []string
	svgs  map[string][]byte
}

func (m *memCharts) Write(name string, svg []byte) (string, error) {
	if m.svgs == nil {
		m.svgs = map[string][]byte{}
	}
	if _, dup := m.svgs[name]; dup {
		return "", fmt.Errorf("chart %s written twice", name)
	}
	m.names = append(m.names, name)
	m.svgs[name] = svg
	return "charts/" + name, nil
}

var reports = []struct {
	name   string
	report func() *Report
	charts int // how many charts Markdown and HTML draw
}{
	// 2 workloads x (2 vs clients + 3 x (2 series + 1 latency + 1 waits) + 3 server + 1 price)
	{"three-targets", testReport, 36},
	{"two-targets", func() *Report { return buildReport(testTargets()[:2]) }, 36},
	{"one-target-no-prices", singleReport, 34},
	// the two targets' with faults: their recovery section
	{"faults", faultReport, 36},
}

func TestGolden(t *testing.T) {
	for _, rc := range reports {
		t.Run("report="+rc.name+"/format=terminal", func(t *testing.T) {
			var b bytes.Buffer
			if err := Terminal(&b, rc.report()); err != nil {
				t.Fatal(err)
			}
			golden(t, rc.name+".txt", b.Bytes())
		})
		t.Run("report="+rc.name+"/format=markdown", func(t *testing.T) {
			var b bytes.Buffer
			var charts memCharts
			if err := Markdown(&b, rc.report(), &charts); err != nil {
				t.Fatal(err)
			}
			golden(t, rc.name+".md", b.Bytes())
			if len(charts.names) != rc.charts {
				t.Errorf("Markdown wrote %d charts, want %d: %v", len(charts.names), rc.charts, charts.names)
			}
			// Every chart written is linked, and every link is to a chart written.
			links := regexp.MustCompile(`\]\(charts/([^)]+)\)`).FindAllStringSubmatch(b.String(), -1)
			var linked []string
			for _, l := range links {
				linked = append(linked, l[1])
			}
			if !slices.Equal(linked, charts.names) {
				t.Errorf("linked charts %v, written %v", linked, charts.names)
			}
			for name, svg := range charts.svgs {
				if !bytes.HasPrefix(svg, []byte(`<svg xmlns="http://www.w3.org/2000/svg" class="chart"`)) {
					t.Errorf("%s is not a standalone SVG: %.80s", name, svg)
				}
			}
		})
		t.Run("report="+rc.name+"/format=html", func(t *testing.T) {
			var b bytes.Buffer
			if err := HTML(&b, rc.report()); err != nil {
				t.Fatal(err)
			}
			golden(t, rc.name+".html", b.Bytes())
		})
		t.Run("report="+rc.name+"/format=csv", func(t *testing.T) {
			var b bytes.Buffer
			r := rc.report()
			if err := CSV(&b, r); err != nil {
				t.Fatal(err)
			}
			golden(t, rc.name+".csv", b.Bytes())
			rows, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
			if err != nil {
				t.Fatalf("the CSV does not parse: %v", err)
			}
			runs := 0
			for _, w := range r.Workloads {
				runs += len(w.Runs)
			}
			if len(rows) != runs+1 {
				t.Errorf("%d rows, want a header and %d runs", len(rows), runs)
			}
		})
	}
}

// TestGoldenChart pins the SVG of one chart of each shape.
func TestGoldenChart(t *testing.T) {
	var charts memCharts
	if err := Markdown(&bytes.Buffer{}, testReport(), &charts); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"throughput-tpcc-10w.svg", "series-tpcc-10w-c16.svg", "latency-tpcb-s100-c8.svg", "waits-tpcc-10w-c32.svg"} {
		t.Run("chart="+name, func(t *testing.T) {
			svg, ok := charts.svgs[name]
			if !ok {
				t.Fatalf("no chart %s among %v", name, charts.names)
			}
			golden(t, filepath.Join("charts", name), svg)
		})
	}
}

func TestTerminalWidth(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8} {
		t.Run(fmt.Sprintf("targets=%d", n), func(t *testing.T) {
			r := manyReport(n)
			var b bytes.Buffer
			if err := Terminal(&b, r); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for i, line := range strings.Split(out, "\n") {
				if w := utf8.RuneCountInString(line); w > termWidth {
					t.Errorf("line %d is %d columns wide: %q", i+1, w, line)
				}
			}
			// Every target has a column in some table of every group.
			for _, tg := range r.Targets {
				if !strings.Contains(out, tg.Name) {
					t.Errorf("target %s is missing", tg.Name)
				}
			}
			headline := strings.Count(out, "\nNOPM ")
			tables := strings.Count(out, "(1 of ")
			if n >= 5 && tables == 0 {
				t.Errorf("%d targets fit in one table of 100 columns; want them split", n)
			}
			if n <= 3 && tables > 0 {
				t.Errorf("%d targets split into several tables; want one", n)
			}
			if headline < 3 {
				t.Errorf("%d tpcc tables, want one per client count at least", headline)
			}
		})
	}
}

func TestTerminalVerdicts(t *testing.T) {
	var b bytes.Buffer
	if err := Terminal(&b, buildReport(testTargets()[:2])); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"1.06x within noise (~5 more runs)", // pg16 on tpcc: overlapping runs, medians 6% apart
		"18,725 ±5.6% !",                    // pg16's two valid tpcc runs at 16 clients vary
		"(pg16, repeat 2) left out: server_restarted",
		"2/3",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	b.Reset()
	if err := Terminal(&b, testReport()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1.25x faster", "10,800 ±20.0% !", "pg16-tuned is within noise of pg11 on tps; about 10 more runs"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the three-target output lacks %q", want)
		}
	}
}

// A target whose price is still to be looked up is in the price table with
// its note where the other rows have what they are made up of.
func TestPriceTableNotLookedUp(t *testing.T) {
	t.Run("none priced", func(t *testing.T) {
		ts := testTargets()[:1]
		ts[0].Price, ts[0].PriceNote = nil, "not looked up yet (azure --sku Standard_D2ds_v5 --region eastus)"
		var md, txt bytes.Buffer
		if err := Markdown(&md, buildReport(ts), &memCharts{}); err != nil {
			t.Fatal(err)
		}
		if err := Terminal(&txt, buildReport(ts)); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(md.String(), "No target has a price.\n\n- pg11: not looked up yet (azure --sku Standard\\_D2ds\\_v5 --region eastus)") {
			t.Errorf("Markdown:\n%s", md.String())
		}
		if !strings.Contains(txt.String(), "Prices\n  pg11: not looked up yet (azure --sku Standard_D2ds_v5 --region eastus)") {
			t.Errorf("terminal:\n%s", txt.String())
		}
	})
	ts := testTargets()
	ts[1].Price = nil
	ts[1].PriceNote = "not looked up yet (aws --instance db.m6g.large --region us-east-1)"
	var b bytes.Buffer
	if err := Markdown(&b, buildReport(ts), &memCharts{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| target | per hour | per month | compute/h | storage/h | IOPS/h | HA/h | made up of (a month) | source | effective | fetched |",
		"| pg16 | - | - |  |  |  |  | not looked up yet (aws --instance db.m6g.large --region us-east-1) |  |  |  |",
		"| pg11 | $1.3699 | $1,000 | - | - | - | - | compute 1.20/h x 730 + storage 500 GB x 0.248 | list prices, Jan 2024 |  |  |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the price table lacks %q:\n%s", want, b.String())
		}
	}
}
