// Package report reads the runs of a study, or runs chosen by id or label, from
// the results store into a Report (Assemble), and turns a Report into what people
// read: Terminal for `pgbakeoff compare`, Markdown with its charts as SVG files,
// one self-contained HTML page, and CSV. Renderers write to an io.Writer and read
// neither the store nor the clock, so the same Report always gives the same bytes.
//
//	r, err := report.Assemble(ctx, st, report.Selection{Study: "pg11-vs-pg16", Noise: 0.05}, time.Now())
//	if err != nil {
//		return err
//	}
//	if err := report.Terminal(os.Stdout, r); err != nil {
//		return err
//	}
//	err = report.HTML(htmlFile, r)
//
// Every table has one row per metric and one column per target, and each target
// after the baseline has a column with its ratio to the baseline. Only runs that
// completed and are not invalid count: a cell shows the aggregate of those runs
// with their coefficient of variation, "!" when they vary by more than the noise
// threshold, and the headline metric's verdict from stats.Compare. The runs left
// out are listed with their reasons under the table of their cell. Compared is
// the same tables as figures, which `compare --json` prints, and Judge the
// --fail-if-slower gate on Verdicts.
//
// A Report is laid out once as a document (document.go), and Terminal, Markdown
// and HTML only write that document out; the page goes through html/template.
//
// Markdown hands each chart to a ChartWriter, which stores it and says what path
// to link; HTML draws the same charts inline. The charts are plain SVG written by
// this package (see svg.go for why).
package report
