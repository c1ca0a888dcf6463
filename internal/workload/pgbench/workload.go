// Package pgbench runs pgbench's custom scripts (pgbench -f file@weight) with the
// meaning pgbench gives them, beside its builtin scripts: files are parsed by
// internal/pgbscript, and each runs as driver Steps that keep every client's
// variables and random state from one transaction to the next.
package pgbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/pgbscript"
	"github.com/pgbakeoff/pgbakeoff/internal/workload/tpcb"
	"github.com/spf13/pflag"
)

// Workload is pgbench's scripts: files and builtins, mixed by weight.
type Workload struct{}

func (Workload) Name() string { return "pgbench" }

func (Workload) RunHelp() (short, example string) {
	return "Run pgbench script files (-f file@weight) and builtin scripts (-b name@weight) as pgbench runs them",
		`  pgbakeoff run pgbench -f hot-rows.sql@3 -f report-query.sql@1 -c 32 -T 5m -D sf=100 --dsn "$DSN"
  pgbakeoff run pgbench -b select-only@9 -f my-write.sql@1 -c 8 -T 60s --dsn "$DSN"`
}

func (Workload) NewRun() engine.Workload { return &Run{LogPrefix: "pgbench_log"} }

// Run is a pgbench run's own options.
type Run struct {
	Files    []string // file[@weight]
	Builtins []string // builtin name[@weight]
	Defines  []string // name=value, as pgbench -D
	Scale    int      // :scale for scripts that are all files (pgbench -s); 0 is 1
	Protocol driver.Protocol
	// in is standard input, which a script file named - is read from (nil:
	// there is none, as in a study).
	in io.Reader
	// PerCommand reports each command's latency and failures (pgbench -r).
	PerCommand bool
	// The transaction log in pgbench's format (pgbench -l and its options).
	Log               bool
	LogPrefix         string
	SamplingRate      float64
	AggregateInterval int // seconds; 0 for a line a transaction
	FailuresDetailed  bool
	// ContinueOnError fails a transaction whose SQL fails for another reason than
	// a serialization failure or a deadlock, and lets its client go on with the
	// next, instead of aborting the client (pgbench's --continue-on-error).
	ContinueOnError bool
	// Progress, when set, prints pgbench's progress lines (pgbench -P) every
	// Progress on the run's log, with the time of day when ProgressTimestamp is set
	// (pgbench --progress-timestamp): for `pgbakeoff pgbench`, whose progress is
	// pgbench's rather than the engine's.
	Progress          time.Duration
	ProgressTimestamp bool

	parsed  []parsedFile
	outcome Outcome
	stdin   []byte // the script read from standard input (-f -)
	vars    *pgbscript.Vars
	// order is -f and -b as they were given, which is how pgbench numbers the
	// scripts; a Run built without flags takes its builtins first.
	order []scriptRef
}

// scriptRef is one -f (the next of Files) or -b (its builtin).
type scriptRef struct {
	file    bool
	builtin string
}

// scriptFlag is -f or -b: it adds a script (AddScript).
type scriptFlag struct {
	r    *Run
	file bool
}

func (f scriptFlag) String() string {
	if f.file {
		return strings.Join(f.r.Files, ",")
	}
	return strings.Join(f.r.Builtins, ",")
}
func (f scriptFlag) Type() string { return "stringArray" }
func (f scriptFlag) Set(v string) error {
	f.r.AddScript(f.file, v)
	return nil
}

// AddScript adds a script file[@weight] or a builtin name[@weight] after those
// given before, as -f and -b do.
func (r *Run) AddScript(file bool, v string) {
	if file {
		r.Files = append(r.Files, v)
	} else {
		r.Builtins = append(r.Builtins, v)
	}
	r.order = append(r.order, scriptRef{file: file, builtin: v})
}

type parsedFile struct {
	script *pgbscript.Script
	weight int
}

func (r *Run) Name() string { return "pgbench" }

func (r *Run) Flags(fs *pflag.FlagSet) {
	fs.VarP(scriptFlag{r, true}, "file", "f", "pgbench script file[@weight] (repeatable)")
	fs.VarP(scriptFlag{r, false}, "builtin", "b", "builtin script[@weight]: tpcb-like, simple-update, select-only (repeatable; default tpcb-like when no -f)")
	fs.StringArrayVarP(&r.Defines, "define", "D", r.Defines, "variable name=value for the scripts (repeatable)")
	fs.IntVarP(&r.Scale, "scale", "s", r.Scale, "the :scale variable of script files (default 1; with builtin scripts, the data's scale)")
	fs.VarP(&r.Protocol, "protocol", "M", "query protocol: simple, extended or prepared")
	fs.BoolVarP(&r.PerCommand, "report-per-command", "r", r.PerCommand, "report each command's latency and failures")
	fs.BoolVarP(&r.Log, "log", "l", r.Log, "write each transaction to a log file in pgbench's format (PREFIX.PID)")
	fs.StringVar(&r.LogPrefix, "log-prefix", r.LogPrefix, "the log file's name before .PID")
	fs.Float64Var(&r.SamplingRate, "sampling-rate", 0, "log this share of the transactions (0 < rate <= 1)")
	fs.IntVar(&r.AggregateInterval, "aggregate-interval", 0, "log one line per this many seconds instead of one per transaction")
	fs.BoolVar(&r.FailuresDetailed, "failures-detailed", false, "log serialization failures and deadlocks apart from other failures")
	fs.BoolVar(&r.ContinueOnError, "continue-on-error", false, "a SQL error other than a serialization failure or a deadlock fails the transaction, and the client goes on (it aborts the client otherwise)")
}

// SetStdin gives the run standard input, for a script file named -.
func (r *Run) SetStdin(in io.Reader) { r.in = in }

// NewFigures is an empty Figures to read a stored summary's into.
func (Workload) NewFigures() engine.Figures { return &Figures{} }

// Check reads and parses the script files, so that a script that does not parse
// stops the run before anything connects.
func (r *Run) Check(spec *engine.Spec) error {
	if r.Scale < 0 {
		return engine.FieldErrorf("scale", "must not be negative, got %d", r.Scale)
	}
	if err := r.checkLog(spec); err != nil {
		return err
	}
	for _, d := range r.Defines {
		name, value, ok := strings.Cut(d, "=")
		if !ok || name == "" || value == "" {
			return fmt.Errorf("invalid variable definition: %q: write -D name=value", d)
		}
		if !pgbscript.ValidName(name) {
			return fmt.Errorf("-D %s: invalid variable name %q: use letters, digits and _, not starting with a digit", d, name)
		}
	}
	r.vars = pgbscript.NewVars()
	r.parsed = r.parsed[:0]
	total := 0
	for _, f := range r.Files {
		path, weight, err := splitWeight(f)
		if err != nil {
			return err
		}
		src, err := r.read(path, r.in)
		if err != nil {
			return err
		}
		s, err := pgbscript.Parse(path, string(src), r.vars)
		if err != nil {
			return err
		}
		r.parsed = append(r.parsed, parsedFile{s, weight})
		total += weight
	}
	for _, b := range r.Builtins {
		name, weight, err := splitWeight(b)
		if err != nil {
			return err
		}
		if _, err := tpcb.ParseScripts([]string{name}, 1); err != nil {
			return err // an unknown or ambiguous name, before anything connects
		}
		total += weight
	}
	if len(r.Files)+len(r.Builtins) > 0 && total == 0 {
		return fmt.Errorf("total script weight must not be zero: give a script a weight above 0")
	}
	return nil
}

// read reads a script file, or standard input for -, as pgbench does. Standard
// input is read once: a run checked again (a study's repeats) parses it again.
func (r *Run) read(path string, in io.Reader) ([]byte, error) {
	if path != "-" {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("could not open file %q: %w", path, errors.Unwrap(err))
		}
		return src, nil
	}
	if r.stdin == nil {
		if in == nil {
			return nil, errors.New("script file - (standard input): there is no standard input here; name a file")
		}
		src, err := io.ReadAll(in)
		if err != nil {
			return nil, fmt.Errorf("could not read the script from standard input: %w", err)
		}
		r.stdin = src
	}
	return r.stdin, nil
}

// checkLog checks the log's options as pgbench checks them.
func (r *Run) checkLog(spec *engine.Spec) error {
	switch {
	case r.SamplingRate != 0 && (r.SamplingRate < 0 || r.SamplingRate > 1):
		return fmt.Errorf("invalid sampling rate: %g: give a share above 0 and at most 1", r.SamplingRate)
	case r.SamplingRate != 0 && !r.Log:
		return errors.New("log sampling (--sampling-rate) is allowed only when logging transactions (-l)")
	case r.SamplingRate != 0 && r.AggregateInterval != 0:
		return errors.New("log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time")
	case r.AggregateInterval < 0:
		return engine.FieldErrorf("aggregate_interval", "must be positive, got %d", r.AggregateInterval)
	case r.AggregateInterval > 0 && !r.Log:
		return errors.New("log aggregation (--aggregate-interval) is allowed only when logging transactions (-l)")
	}
	if d := int(spec.Duration / time.Second); r.AggregateInterval > 0 && spec.Transactions == 0 {
		if r.AggregateInterval > d {
			return fmt.Errorf("number of seconds for aggregation (%d) must not be higher than test duration (%d)", r.AggregateInterval, d)
		}
		if spec.Duration%time.Second != 0 || d%r.AggregateInterval != 0 {
			return fmt.Errorf("duration (%s) must be a multiple of aggregation interval (%d)", spec.Duration, r.AggregateInterval)
		}
	}
	return nil
}

// ResolvePaths makes relative script paths relative to dir (a study file's).
func (r *Run) ResolvePaths(dir string) {
	for i, f := range r.Files {
		if !filepath.IsAbs(f) && f != "-" && !strings.HasPrefix(f, "-@") {
			r.Files[i] = filepath.Join(dir, f)
		}
	}
}

// splitWeight splits file@weight at its last @; the weight is 1 when none is given.
func splitWeight(spec string) (string, int, error) {
	at := strings.LastIndexByte(spec, '@')
	if at < 0 {
		return spec, 1, nil
	}
	w, err := strconv.ParseInt(strings.TrimLeft(spec[at+1:], " \t"), 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("invalid weight specification: %s: write file@N with a whole number N", spec[at:])
	}
	if w < 0 || w > 2147483647 {
		return "", 0, fmt.Errorf("weight specification out of range (0 .. 2147483647): %d", w)
	}
	return spec[:at], int(w), nil
}

func (r *Run) Setup(ctx context.Context, spec *engine.Spec, env *engine.Env, ctl *pgconn.PgConn) (*engine.Setup, error) {
	builtins := r.Builtins
	if len(r.Files) == 0 && len(builtins) == 0 {
		builtins = []string{"tpcb-like"}
	}
	r.outcome = Outcome{}
	scale := max(r.Scale, 1)
	if len(builtins) > 0 {
		// As pgbench, builtin scripts take the scale from the data, and so does :scale.
		detected, err := tpcb.DetectScale(ctx, ctl)
		if errors.Is(err, tpcb.ErrNotLoaded) {
			return nil, fmt.Errorf("%s has no pgbench tables for the builtin scripts: run `pgbakeoff init tpcb --scale N` (or pgbench -i) first", spec.Target)
		}
		if err != nil {
			return nil, err
		}
		if r.Scale > 0 {
			fmt.Fprintf(orDiscard(env.Log), "warning: scale option ignored, using count from pgbench_branches table (%d)\n", detected)
		}
		scale = detected
		if r.outcome.PartitionMethod, r.outcome.Partitions, err = partitions(ctx, ctl); err != nil {
			return nil, err
		}
	}
	cl, err := r.clients(spec, env, scale)
	if err != nil {
		return nil, err
	}
	scripts, progs, names, err := r.scripts(cl, spec, builtins, scale)
	if err != nil {
		return nil, err
	}
	size := fmt.Sprintf("scale %d", scale)
	params := map[string]any{"scale": scale, "files": names, "builtins": builtins, "defines": r.Defines}
	setup := &engine.Setup{Scripts: scripts, Protocol: r.Protocol, Scale: scale, Size: size, Params: params}
	var log *txLog
	if r.Log {
		log, err = openLog(r.LogPrefix, spec.Clients, logOptions{maxTries: spec.MaxTries, detailed: r.FailuresDetailed, rate: spec.Rate > 0,
			sample: r.SamplingRate, every: time.Duration(r.AggregateInterval) * time.Second, seeds: cl.sampleSeeds})
		if err != nil {
			return nil, err
		}
	}
	var prog *progress
	if r.Progress > 0 {
		prog = newProgress(orDiscard(env.Log), r.Progress, r.ProgressTimestamp, spec.Rate > 0, spec.LatencyLimit > 0, spec.MaxTries != 1)
	}
	skipped := make([]atomic.Int64, len(scripts))
	setup.OnTransaction = onTransaction(ctx, spec, log, prog, skipped)
	setup.Finish = func(sum *engine.Summary, res *driver.Result) {
		if prog != nil {
			prog.close()
		}
		if r.PerCommand {
			sum.Figures = &Figures{Statements: statements(progs)}
		}
		r.outcome.add(res, scripts, skipped)
		if log != nil {
			if err := log.close(res.End); err != nil {
				fmt.Fprintf(orDiscard(env.Log), "warning: the transaction log: %v\n", err)
			}
		}
	}
	return setup, nil
}

// onTransaction is what sees each transaction end, nil for nothing: the log,
// the progress lines, and under a rate and a latency limit the count of each
// script's skipped transactions.
func onTransaction(ctx context.Context, spec *engine.Spec, log *txLog, prog *progress, skipped []atomic.Int64) func(driver.TxEvent) {
	var watch []func(driver.TxEvent)
	if log != nil {
		watch = append(watch, log.add)
	}
	if prog != nil {
		watch = append(watch, func(ev driver.TxEvent) { prog.add(ctx, ev) })
	}
	if spec.Rate > 0 && spec.LatencyLimit > 0 {
		watch = append(watch, func(ev driver.TxEvent) {
			if ev.Skipped && ev.Script < len(skipped) {
				skipped[ev.Script].Add(1)
			}
		})
	}
	switch len(watch) {
	case 0:
		return nil
	case 1:
		return watch[0]
	}
	return func(ev driver.TxEvent) {
		for _, f := range watch {
			f(ev)
		}
	}
}

// scripts builds the run's scripts in the order given, as pgbench numbers them; a
// script of weight 0 is left out, as pgbench never chooses it. Files run as
// programs of steps; so do builtins with -r, whose commands are then timed, and
// otherwise as internal/workload/tpcb runs them.
func (r *Run) scripts(cl *clients, spec *engine.Spec, builtins []string, scale int) ([]*driver.Script, []*program, []string, error) {
	order := r.order
	if len(order) != len(r.Files)+len(builtins) {
		order = nil
		for _, b := range builtins {
			order = append(order, scriptRef{builtin: b})
		}
		for range r.Files {
			order = append(order, scriptRef{file: true})
		}
	}
	opt := programOptions{protocol: r.Protocol, timed: r.PerCommand, maxTries: spec.MaxTries, continueOnError: r.ContinueOnError}
	var scripts []*driver.Script
	var names []string
	var progs []*program
	add := func(s *pgbscript.Script, weight int) error {
		p, statements, err := newProgram(cl, s, len(scripts), opt)
		if err != nil {
			return err
		}
		progs = append(progs, p)
		scripts = append(scripts, &driver.Script{Name: s.Name, Weight: weight, Statements: statements, Steps: p})
		return nil
	}
	file := 0
	for _, ref := range order {
		if !ref.file {
			name, w, _ := splitWeight(ref.builtin)
			if w == 0 {
				continue
			}
			if !r.PerCommand {
				bs, err := tpcb.ParseScripts([]string{ref.builtin}, scale)
				if err != nil {
					return nil, nil, nil, err
				}
				scripts = append(scripts, bs...)
				continue
			}
			b, err := findBuiltin(name)
			if err != nil {
				return nil, nil, nil, err
			}
			s, err := pgbscript.Parse(b.name, b.src, cl.vars)
			if err != nil {
				return nil, nil, nil, err // the builtins parse
			}
			if err := add(s, w); err != nil {
				return nil, nil, nil, err
			}
			continue
		}
		f := r.parsed[file]
		file++
		if f.weight == 0 {
			continue
		}
		if err := add(f.script, f.weight); err != nil {
			return nil, nil, nil, err
		}
		names = append(names, fmt.Sprintf("%s@%d", f.script.Name, f.weight))
	}
	return scripts, progs, names, nil
}

// partitions tells how pgbench_accounts is partitioned, as pgbench's report
// shows it: "range" or "hash" and the number of partitions; "" and 0 for a
// table that is not.
func partitions(ctx context.Context, conn *pgconn.PgConn) (string, int, error) {
	res, err := conn.Exec(ctx, `select case p.partstrat when 'r' then 'range' when 'h' then 'hash' else 'list' end,
		(select count(*) from pg_catalog.pg_inherits i where i.inhparent = p.partrelid)
		from pg_catalog.pg_partitioned_table p where p.partrelid = to_regclass('pgbench_accounts')`).ReadAll()
	if err != nil {
		return "", 0, fmt.Errorf("read the partitions of pgbench_accounts: %w", err)
	}
	if len(res) == 0 || len(res[0].Rows) == 0 {
		return "", 0, nil
	}
	row := res[0].Rows[0]
	n, _ := strconv.Atoi(string(row[1]))
	return string(row[0]), n, nil
}

// clients makes every client's variables: -D values, :scale, :client_id,
// :random_seed and :default_seed (unless -D gives them), and random states derived
// from the seed in pgbench's order, so that the same --seed draws what pgbench's
// --random-seed draws.
func (r *Run) clients(spec *engine.Spec, env *engine.Env, scale int) (*clients, error) {
	seed := spec.Seed.Value
	if !spec.Seed.Fixed {
		seed = uint64(time.Now().UnixNano())
	}
	vs := r.vars
	if vs == nil {
		vs = pgbscript.NewVars()
	}
	cl := &clients{vars: vs, out: orDiscard(env.Out), log: orDiscard(env.Log), state: make([]client, spec.Clients)}
	defined := map[string]bool{}
	for _, d := range r.Defines {
		name, _, _ := strings.Cut(d, "=")
		defined[name] = true
	}
	seeds := pgbscript.NewSeeder(seed)
	for i := range cl.state {
		env := pgbscript.NewEnv(vs)
		env.Rand = seeds.Next()
		cl.state[i].env = env
	}
	defaultSeed := int64(0)
	if !defined["default_seed"] {
		defaultSeed = int64(seeds.Uint64())
	}
	// Then, as pgbench's threads (no more than the clients), each in turn: the
	// states that choose scripts, pace --rate and sample the log; one for --jobs
	// auto, which starts with one loop.
	for range max(1, min(spec.Jobs, spec.Clients)) {
		seeds.Uint64()
		seeds.Uint64()
		cl.sampleSeeds = append(cl.sampleSeeds, seeds.Uint64())
	}
	for i := range cl.state {
		env := cl.state[i].env
		for _, d := range r.Defines {
			name, value, _ := strings.Cut(d, "=")
			env.SetText(vs.Slot(name), value)
		}
		set := func(name string, v int64) {
			if !defined[name] {
				env.Set(vs.Slot(name), pgbscript.IntValue(v))
			}
		}
		set("scale", int64(scale))
		set("client_id", int64(i))
		set("random_seed", int64(seed))
		set("default_seed", defaultSeed)
		st := &cl.state[i]
		env.Debug = func(line string) {
			cl.mu.Lock()
			fmt.Fprintf(cl.log, "debug(script=%d,command=%d): %s\n", st.script, st.command+1, line)
			cl.mu.Unlock()
		}
	}
	return cl, nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
