package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browser finds a Chromium or Chrome binary, or skips the test: a machine without
// one still passes, CI installs one.
func browser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skip("no chromium, chromium-browser or google-chrome on PATH: the HTML report is not opened in a browser")
	return ""
}

// chartBox is what the browser reports of one svg.chart.
type chartBox struct {
	Name   string  `json:"name"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	Drawn  int     `json:"drawn"`
}

// overflow is an element that reaches past the page's right edge, or a scroll
// box whose content is wider than the box and so is cut off.
type overflow struct {
	What  string  `json:"what"` // tag, class and the start of its text
	Right float64 `json:"right"`
}

// visit is what headless Chromium saw of a page.
type visit struct {
	problems []string // console errors and warnings, exceptions, browser log errors
	requests []string // every URL the page asked for, its own included
	charts   []chartBox
	over     []overflow // at the window's width
	width    float64    // the page's width, as the layout sees it
	png      []byte     // full-page screenshot
}

// laptop is the window of a laptop's screen, as the report is mostly read.
const laptop = 1366

// open loads the HTML file at path in headless Chromium in a window width
// pixels wide, waits until it has loaded, measures the charts, looks for what
// overflows the page and takes a screenshot.
func open(t *testing.T, bin, path string, width int) visit {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox, // tests run as root in CI, where Chromium's sandbox refuses to start
		chromedp.DisableGPU,
		chromedp.WindowSize(width, 900),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(ctx)
	defer cancelTab()

	var mu sync.Mutex
	var v visit
	err := chromedp.Listen(ctx, func(ev any) {
		// This runs in the tab's read loop: record, and return at once.
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			switch ev.Type {
			case runtime.ConsoleAPICalledTypeError, runtime.ConsoleAPICalledTypeWarning, runtime.ConsoleAPICalledTypeAssert:
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				v.problems = append(v.problems, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			text := d.Text
			if d.Exception != nil {
				text += " " + d.Exception.Description
			}
			v.problems = append(v.problems, fmt.Sprintf("exception at line %d: %s", d.LineNumber+1, text))
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				v.problems = append(v.problems, fmt.Sprintf("log %s (%s): %s %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		case *network.EventRequestWillBeSent:
			v.requests = append(v.requests, ev.Request.URL)
		}
	})
	if err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}

	url := "file://" + filepath.ToSlash(path)
	// The window has a least width of its own (500 pixels); the viewport is
	// emulated to be as narrow as a phone's. Navigate waits for the load event:
	// the page and all it loads are in.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), 900), chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatalf("open %s in %s: %v", url, bin, err)
	}
	state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState`))
	if err != nil || state != "complete" {
		t.Fatalf("document.readyState is %q (%v), want complete", state, err)
	}
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]chartBox](`Array.from(document.querySelectorAll("svg.chart")).map(s => {
		const r = s.getBoundingClientRect();
		return {name: s.dataset.chartName, width: r.width, height: r.height,
			drawn: s.querySelectorAll("path.line, rect.bar, circle").length};
	})`))
	if err != nil {
		t.Fatalf("measure the charts: %v", err)
	}
	// A cell past the page's right edge, or cut off inside a box that scrolls
	// sideways, is one a reader of a narrow screen does not see.
	over, err := chromedp.Run(ctx, chromedp.Evaluate[[]overflow](`(() => {
		const w = document.documentElement.clientWidth, out = [];
		const name = e => e.tagName.toLowerCase() + (e.className ? "." + e.className : "") + " " + JSON.stringify(e.textContent.trim().slice(0, 40));
		for (const e of document.querySelectorAll("main td, main th, main p, main li, main figure, main h2, main h3")) {
			const r = e.getBoundingClientRect();
			if (r.width > 0 && r.right > w + 0.5) out.push({what: name(e), right: r.right});
		}
		for (const e of document.querySelectorAll(".scroll")) {
			if (e.scrollWidth > e.clientWidth + 0.5) out.push({what: "scroll box of " + name(e.querySelector("th") || e), right: e.scrollWidth});
		}
		return out;
	})()`))
	if err != nil {
		t.Fatalf("look for overflows: %v", err)
	}
	page, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.documentElement.clientWidth`))
	if err != nil {
		t.Fatalf("measure the page: %v", err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100 is PNG
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	v.charts, v.over, v.width, v.png = charts, over, page, png
	return v
}

// TestHTMLInChromium opens the HTML report in headless Chromium: the page must load
// without console errors, exceptions or requests for anything but itself, and every
// chart must take space on the page and draw something. The full-page screenshot is
// kept in the test's temporary directory, and at $PGBAKEOFF_REPORT_SCREENSHOT when set.
func TestHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("long: runs in the full suite (go test without -short)")
	}
	bin := browser(t)
	r := testReport()
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	v := open(t, bin, path, laptop)
	for _, p := range v.problems {
		t.Errorf("the browser reported %s", p)
	}
	for _, u := range v.requests {
		if u != "file://"+filepath.ToSlash(path) {
			t.Errorf("the page requested %s; it must be self-contained", u)
		}
	}
	var names []string
	for _, c := range v.charts {
		names = append(names, c.Name)
		if c.Width < 200 || c.Height < 100 {
			t.Errorf("chart %s is %.0fx%.0f pixels on the page", c.Name, c.Width, c.Height)
		}
		if c.Drawn == 0 {
			t.Errorf("chart %s draws no line, bar or point", c.Name)
		}
	}
	want := chartNames(r)
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("the browser found the charts %v\nwant %v", names, want)
	}

	shot := filepath.Join(dir, "report.png")
	if err := os.WriteFile(shot, v.png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(v.png))
	// Kept only on request: a full-page screenshot is megabytes.
	if keep := os.Getenv("PGBAKEOFF_REPORT_SCREENSHOT"); keep != "" {
		if err := os.WriteFile(keep, v.png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHTMLNarrow opens the report in a window 400 pixels wide, a phone's: no
// table's cell, verdicts included, may reach past the page or be cut off in a box
// that scrolls sideways; the tables' rows wrap their cells under one another.
func TestHTMLNarrow(t *testing.T) {
	if testing.Short() {
		t.Skip("long: runs in the full suite (go test without -short)")
	}
	bin := browser(t)
	path := filepath.Join(t.TempDir(), "report.html")
	for _, r := range []*Report{testReport(), searchReport()} {
		var b bytes.Buffer
		if err := HTML(&b, r); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		v := open(t, bin, path, 400)
		if v.width > 400 || v.width < 300 {
			t.Errorf("%s: the page is %.0f pixels wide in a window of 400", r.Title, v.width)
		}
		for _, o := range v.over {
			t.Errorf("%s: %s reaches %.0f pixels, past the page's %.0f", r.Title, o.What, o.Right, v.width)
		}
		if t.Failed() {
			shot := filepath.Join(t.TempDir(), "narrow.png")
			_ = os.WriteFile(shot, v.png, 0o644)
			t.Logf("screenshot: %s", shot)
		}
	}
}

// TestChromiumSeesProblems makes sure the browser test would notice a broken page:
// a script error, a console error, a request for another resource and an empty
// chart.
func TestChromiumSeesProblems(t *testing.T) {
	if testing.Short() {
		t.Skip("long: runs in the full suite (go test without -short)")
	}
	bin := browser(t)
	page := `<!DOCTYPE html><html><head><meta charset="utf-8"><title>broken</title></head><body>
<svg class="chart" data-chart-name="empty" width="0" height="0"></svg>
<main><table><tr><td style="white-space: nowrap">a verdict far too wide for the window, so that it reaches past the page's right edge</td></tr></table></main>
<img src="http://127.0.0.1:9/missing.png" alt="">
<script>console.error("on purpose"); undefinedFunction();</script>
</body></html>`
	path := filepath.Join(t.TempDir(), "broken.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	v := open(t, bin, path, laptop)
	joined := strings.Join(v.problems, "\n")
	for _, want := range []string{"on purpose", "undefinedFunction"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the browser did not report %q; it reported:\n%s", want, joined)
		}
	}
	if !slices.Contains(v.requests, "http://127.0.0.1:9/missing.png") {
		t.Errorf("the image request went unseen; requests %v", v.requests)
	}
	if len(v.charts) != 1 || v.charts[0].Width != 0 || v.charts[0].Drawn != 0 {
		t.Errorf("the empty chart measured %+v", v.charts)
	}
	if narrow := open(t, bin, path, 400); len(narrow.over) == 0 {
		t.Errorf("the cell wider than a window of 400 pixels went unseen")
	}
}
