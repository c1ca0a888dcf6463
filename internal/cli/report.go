package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/report"
	"github.com/pgbakeoff/pgbakeoff/internal/stats"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// addSelectionFlags adds the options that choose what report, compare and export cover.
func addSelectionFlags(fl *pflag.FlagSet, sel *report.Selection) {
	fl.StringVar(&sel.Study, "study", "", "the runs of this study (its name:)")
	fl.Int64SliceVar(&sel.Runs, "run", nil, "run ids, instead of a study (repeatable, or comma-separated)")
	fl.StringArrayVar(&sel.Labels, "label", nil, "runs with this label key=value, instead of a study (repeatable: all must match)")
	fl.StringVar(&sel.Baseline, "baseline", "", "the target the others are compared with (default: the first)")
	fl.Float64Var(&sel.Noise, "noise", report.DefaultNoise, "relative difference below which targets are within noise")
}

func checkSelection(sel report.Selection) error {
	if sel.Study != "" && (len(sel.Runs) > 0 || len(sel.Labels) > 0) {
		return fmt.Errorf("--study and --run/--label choose runs in different ways: give one")
	}
	if sel.Noise <= 0 || sel.Noise >= 1 {
		return fmt.Errorf("--noise %g is out of range: give a fraction such as 0.05 for 5%%", sel.Noise)
	}
	return nil
}

func newReportCmd(env *Env) *cobra.Command {
	var sel report.Selection
	var out, format string
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Write a report comparing the targets: HTML (self-contained) or Markdown with SVG charts",
		Args:  cobra.NoArgs,
		Example: `  pgbakeoff report --study pg11-vs-pg16 -o report.html
  pgbakeoff report --study pg11-vs-pg16 --format markdown -o RESULTS.md
  pgbakeoff report --label demo=default --label demo=tuned --format markdown`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkSelection(sel); err != nil {
				return usageError{err}
			}
			if format == "" {
				var err error
				if format, err = reportFormat(out); err != nil {
					return usageError{err}
				}
			}
			if format != "html" && format != "markdown" {
				return usageError{fmt.Errorf("--format %q: choose html or markdown", format)}
			}
			r, err := selectedReport(cmd, env, sel)
			if err != nil {
				return err
			}
			return writeOutput(env, out, func(w io.Writer) error {
				if format == "html" {
					return report.HTML(w, r)
				}
				dir := "report-charts"
				if out != "" {
					dir = strings.TrimSuffix(out, filepath.Ext(out)) + "-charts"
				}
				return report.Markdown(w, r, chartDir{dir: dir, rel: relTo(out, dir)})
			})
		},
	}
	fl := cmd.Flags()
	addSelectionFlags(fl, &sel)
	fl.StringVarP(&out, "output", "o", "", "file to write (default: standard output)")
	fl.StringVar(&format, "format", "", "html or markdown (default: from the file name, .html or .md, else html)")
	return cmd
}

// reportFormats are the formats report writes, by the output file's extension.
var reportFormats = map[string]string{".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown"}

// reportFormat is the format for the output file out: by its extension, HTML
// for standard output or a name without one. Another extension is refused
// rather than given HTML under a name that promises something else.
func reportFormat(out string) (string, error) {
	ext := strings.ToLower(filepath.Ext(out))
	if out == "" || ext == "" {
		return "html", nil
	}
	if f, ok := reportFormats[ext]; ok {
		return f, nil
	}
	return "", fmt.Errorf("-o %s: report cannot write %s files; it writes HTML (.html) or Markdown (.md): "+
		"name the file so, or give --format html or --format markdown", out, ext)
}

func newCompareCmd(env *Env) *cobra.Command {
	var sel report.Selection
	var slower string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compare",
		Short: "Print the targets side by side: aggregates, spread, ratios and whether differences exceed the noise",
		Args:  cobra.NoArgs,
		Example: `  pgbakeoff compare --study pg11-vs-pg16 --baseline pg11
  pgbakeoff compare --run 3,4,7,8 --noise 0.1
  pgbakeoff compare --label build=before --label build=after --baseline before --fail-if-slower 5%
  pgbakeoff compare --study pg11-vs-pg16 --json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkSelection(sel); err != nil {
				return usageError{err}
			}
			var limit float64
			if slower != "" {
				var err error
				if limit, err = percentFlag("--fail-if-slower", slower); err != nil {
					return usageError{err}
				}
			}
			r, err := selectedReport(cmd, env, sel)
			if err != nil {
				return err
			}
			if asJSON {
				return compareJSON(env, r, limit, slower)
			}
			if err := report.Terminal(env.Stdout, r); err != nil || slower == "" {
				return err
			}
			return slowerGate(env.Stdout, report.Verdicts(r), limit, slower)
		},
	}
	addSelectionFlags(cmd.Flags(), &sel)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the comparison as JSON (its schema: pgbakeoff schema compare); the gate's lines go to stderr")
	printsJSON(cmd, "compare")
	cmd.Flags().StringVar(&slower, "fail-if-slower", "", "exit with code 3 when a target is slower than the baseline by more than this (as 5%), and the difference is beyond the noise by the test the tables use")
	return cmd
}

// compareJSON prints the comparison as one JSON object, with the gate's
// judgement when --fail-if-slower is given (text, as typed; limit, parsed),
// whose lines go to stderr so that stdout holds the object alone; a failed
// gate still exits with ExitGate.
func compareJSON(env *Env, r *report.Report, limit float64, text string) error {
	c := report.Compared(r)
	var verdicts []report.Verdict
	if text != "" {
		verdicts = report.Verdicts(r)
		c.Gate = report.Judge(verdicts, limit)
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil || text == "" {
		return err
	}
	return slowerGate(env.Stderr, verdicts, limit, text)
}

// slowerGate says for each target against the baseline whether it is slower by
// more than limit, beyond the noise, and fails with ExitGate when one is.
func slowerGate(w io.Writer, verdicts []report.Verdict, limit float64, text string) error {
	if len(verdicts) == 0 {
		return exitError{fmt.Errorf("--fail-if-slower: there is no comparison to judge: select at least two targets' runs"), ExitGate}
	}
	failed := 0
	for _, v := range verdicts {
		what := fmt.Sprintf("%s against %s, %s at %s", v.Target, v.Baseline, v.Workload, v.Group)
		by := fmt.Sprintf("%.1f%% %s", 100*math.Abs(v.Slower()), map[bool]string{true: "slower", false: "faster"}[v.Slower() > 0])
		switch {
		case v.Fails(limit):
			failed++
			fmt.Fprintf(w, "gate slower<%s: FAILED, %s: %s, beyond the noise\n", text, what, by)
		case v.Outcome == stats.Slower:
			fmt.Fprintf(w, "gate slower<%s: passed, %s: %s, beyond the noise but within the limit\n", text, what, by)
		case v.Outcome == stats.Unknown:
			fmt.Fprintf(w, "gate slower<%s: passed, %s: cannot tell, %s\n", text, what, v.Reason)
		case v.Outcome == stats.Faster:
			fmt.Fprintf(w, "gate slower<%s: passed, %s: %s, beyond the noise\n", text, what, by)
		default:
			fmt.Fprintf(w, "gate slower<%s: passed, %s: %s, within the noise\n", text, what, by)
		}
	}
	if failed > 0 {
		return exitError{fmt.Errorf("%d of %d comparisons slower than the baseline by more than %s", failed, len(verdicts), text), ExitGate}
	}
	return nil
}

func newExportCmd(env *Env) *cobra.Command {
	var sel report.Selection
	var format, out string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export the selected runs: CSV (one row per run) or JSON (everything a report shows)",
		Args:  cobra.NoArgs,
		Example: `  pgbakeoff export --study pg11-vs-pg16 --format csv > runs.csv
  pgbakeoff export --run 12 --format json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkSelection(sel); err != nil {
				return usageError{err}
			}
			if format != "csv" && format != "json" {
				return usageError{fmt.Errorf("--format %q: choose csv or json", format)}
			}
			r, err := selectedReport(cmd, env, sel)
			if err != nil {
				return err
			}
			return writeOutput(env, out, func(w io.Writer) error {
				if format == "csv" {
					return report.CSV(w, r)
				}
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			})
		},
	}
	fl := cmd.Flags()
	addSelectionFlags(fl, &sel)
	fl.StringVar(&format, "format", "csv", "csv or json (its schema: pgbakeoff schema export)")
	printsJSON(cmd, "export")
	fl.StringVarP(&out, "output", "o", "", "file to write (default: standard output)")
	return cmd
}

// writeOutput writes to the file, or to standard output when it is "". A file is
// written whole or not at all.
func writeOutput(env *Env, path string, write func(io.Writer) error) error {
	if path == "" {
		return write(env.Stdout)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Fprintf(env.Stderr, "wrote %s\n", path)
	return nil
}

// chartDir writes a Markdown report's charts as SVG files into a directory, linked
// relative to the report.
type chartDir struct{ dir, rel string }

func (c chartDir) Write(name string, svg []byte) (string, error) {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return "", fmt.Errorf("write chart %s: %w", name, err)
	}
	file := name
	if !strings.HasSuffix(file, ".svg") {
		file += ".svg"
	}
	if err := os.WriteFile(filepath.Join(c.dir, file), svg, 0o644); err != nil {
		return "", fmt.Errorf("write chart %s: %w", name, err)
	}
	return filepath.ToSlash(filepath.Join(c.rel, file)), nil
}

// relTo is dir as a link from the file at out (or from the working directory).
func relTo(out, dir string) string {
	if out == "" {
		return dir
	}
	if rel, err := filepath.Rel(filepath.Dir(out), dir); err == nil {
		return rel
	}
	return dir
}

// selectedReport reads the selected runs from the results store named by --results.
func selectedReport(cmd *cobra.Command, env *Env, sel report.Selection) (*report.Report, error) {
	st, err := openExisting(cmd)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	r, err := report.Assemble(cmd.Context(), st, sel, env.Now())
	if errors.As(err, new(report.SelectionError)) {
		return nil, usageError{err}
	}
	return r, err
}
