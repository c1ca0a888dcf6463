package engine

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
)

// Settings are the run settings every workload shares: how many clients on how
// many loops, for how long, at what rate, and what to do about failures. They
// are typed values: a study decodes them from a workload's run: keys (Field),
// the command line binds them to flags (internal/cli). Both start from
// DefaultSettings, which a workload may change before (workload.Defaulter).
type Settings struct {
	Clients int
	// Jobs is how many event loops the clients share, as pgbench -j's threads;
	// 0 (auto) adds loops while they are busy (driver.Config.Loops).
	Jobs int
	// ThreadPerClient gives each client a thread of its own that waits in the
	// kernel for its answers (driver.Config.ThreadPerClient). Auto gives them
	// one where the workload prefers it and the clients are few (ThreadChooser).
	ThreadPerClient Switch
	Warmup          time.Duration // run before measuring, not counted
	Duration        time.Duration // the measured window, unless Transactions is set
	Transactions    int           // per client, instead of Duration
	MaxTries        int           // tries per transaction on serialization failure or deadlock
	ExitOnAbort     bool          // end the run when a client stops on a script error
	ConnectPerTx    bool          // a new connection for each transaction (pgbench -C)
	// Rate (transactions a second, all clients together) runs open-loop, as
	// pgbench -R; 0 is closed-loop. LatencyLimit counts late transactions and,
	// with a rate, skips those that cannot begin within it (pgbench -L).
	Rate         float64
	LatencyLimit time.Duration
	Seed         Seed
	// Faults: how long the server may stay away, how long a transaction and a
	// connect may take (0: never), and whether to resolve the host once.
	OutageTimeout  time.Duration
	TxTimeout      time.Duration
	ConnectTimeout time.Duration
	ResolveOnce    bool
	// Anonymize leaves the client machine's hostname out of what is stored.
	Anonymize bool
}

// DefaultSettings are one client, on as many event loops as keep up, for 60 s,
// no retries, a server away for 2 minutes ending the run.
func DefaultSettings() Settings {
	return Settings{Clients: 1, Duration: 60 * time.Second, MaxTries: 1,
		OutageTimeout: 2 * time.Minute, TxTimeout: time.Minute, ConnectTimeout: 10 * time.Second}
}

// Field is the setting a study names (max_tries), as a pointer to decode its
// value into: *int, *bool, *float64, or a type that reads text
// (encoding.TextUnmarshaler). false: no such setting.
func (s *Settings) Field(name string) (any, bool) {
	switch name {
	case "clients":
		return &s.Clients, true
	case "jobs":
		return (*Jobs)(&s.Jobs), true
	case "thread_per_client":
		return &s.ThreadPerClient, true
	case "warmup":
		return DurationValue(&s.Warmup), true
	case "duration":
		return DurationValue(&s.Duration), true
	case "transactions":
		return &s.Transactions, true
	case "max_tries":
		return &s.MaxTries, true
	case "exit_on_abort":
		return &s.ExitOnAbort, true
	case "connect":
		return &s.ConnectPerTx, true
	case "rate":
		return &s.Rate, true
	case "latency_limit":
		return DurationValue(&s.LatencyLimit), true
	case "seed":
		return &s.Seed, true
	case "outage_timeout":
		return DurationValue(&s.OutageTimeout), true
	case "tx_timeout":
		return DurationValue(&s.TxTimeout), true
	case "connect_timeout":
		return DurationValue(&s.ConnectTimeout), true
	case "resolve_once":
		return &s.ResolveOnce, true
	case "anonymize":
		return &s.Anonymize, true
	}
	return nil, false
}

// SettingNames are the names Field takes, in the order help lists them.
var SettingNames = []string{"clients", "jobs", "thread_per_client", "warmup", "duration", "transactions",
	"max_tries", "exit_on_abort", "connect", "rate", "latency_limit", "seed", "outage_timeout", "tx_timeout",
	"connect_timeout", "resolve_once", "anonymize"}

// Validate checks the settings alone; its errors are FieldErrors.
func (s *Settings) Validate() error {
	if err := driver.CheckThreads(s.ThreadPerClient == On, s.Clients); err != nil {
		return &FieldError{Field: "thread_per_client", Err: err}
	}
	switch {
	case s.Clients < 1:
		return FieldErrorf("clients", "must be at least 1, got %d", s.Clients)
	case s.Clients > MaxClients:
		return FieldErrorf("clients", "%d is more than pgbakeoff supports (%d)", s.Clients, MaxClients)
	case s.Jobs < 0:
		return FieldErrorf("jobs", "must be auto or at least 1, got %d", s.Jobs)
	case s.Jobs > MaxJobs():
		return FieldErrorf("jobs", "%d is more client threads than this machine's %d cores can use (at most %d)", s.Jobs, runtime.NumCPU(), MaxJobs())
	case s.Transactions < 0:
		return FieldErrorf("transactions", "must be positive, got %d", s.Transactions)
	case s.Transactions == 0 && s.Duration <= 0:
		return FieldErrorf("duration", "must be positive, got %s", s.Duration)
	case s.Warmup < 0:
		return FieldErrorf("warmup", "must not be negative, got %s", s.Warmup)
	case s.OutageTimeout < 0:
		return FieldErrorf("outage_timeout", "must not be negative, got %s", s.OutageTimeout)
	case s.TxTimeout < 0:
		return FieldErrorf("tx_timeout", "must not be negative, got %s", s.TxTimeout)
	case s.ConnectTimeout < 0:
		return FieldErrorf("connect_timeout", "must not be negative, got %s", s.ConnectTimeout)
	case s.MaxTries < 1:
		return FieldErrorf("max_tries", "must be at least 1, got %d", s.MaxTries)
	case s.Rate < 0 || s.Rate > 0 && s.Rate < driver.MinRate || math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0):
		return FieldErrorf("rate", "must be a number of transactions a second from %g (one every %s), got %g", driver.MinRate, time.Duration(float64(time.Second)/driver.MinRate), s.Rate)
	case s.LatencyLimit < 0:
		return FieldErrorf("latency_limit", "must not be negative, got %s", s.LatencyLimit)
	}
	return nil
}

// FieldError is a setting or option that cannot be used as given. Field is its
// name as a study writes it (max_tries); the command line shows it as its flag
// (--max-tries), a study as its key.
type FieldError struct {
	Field string
	Err   error
	// Mismatch: the value is well formed but does not fit the data the run
	// found once connected (a scale other than the loaded one), which is not a
	// mistake in the input as such.
	Mismatch bool
}

func (e *FieldError) Error() string { return e.Named(e.Field) }

// Named is the error's text with the field called name: its flag or its key.
func (e *FieldError) Named(name string) string {
	msg := e.Err.Error()
	if strings.HasPrefix(msg, ":") {
		return name + msg
	}
	return name + " " + msg
}
func (e *FieldError) Unwrap() error { return e.Err }

// FieldErrorf is a FieldError with a formatted message.
func FieldErrorf(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// MismatchErrorf is a FieldError of a value that does not fit the data.
func MismatchErrorf(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...), Mismatch: true}
}

// Switch is a choice pgbakeoff makes unless told: auto, on or off.
type Switch int8

// The switch's positions.
const (
	Auto Switch = iota
	On
	Off
)

func (s Switch) String() string { return [...]string{"auto", "on", "off"}[s] }

// Set reads auto, on or off, or a boolean (true, false) for on and off.
func (s *Switch) Set(v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "auto":
		*s = Auto
	case "on", "true", "1":
		*s = On
	case "off", "false", "0":
		*s = Off
	default:
		return fmt.Errorf("%q: use auto, on or off", v)
	}
	return nil
}

func (s *Switch) Type() string                    { return "auto|on|off" }
func (s *Switch) UnmarshalText(text []byte) error { return s.Set(string(text)) }

// Seed is a run's random seed: chosen from the clock (auto), or a fixed number,
// 0 included (pgbench's --random-seed=0).
type Seed struct {
	Value uint64
	Fixed bool
}

func (s *Seed) String() string {
	if !s.Fixed {
		return "auto"
	}
	return strconv.FormatUint(s.Value, 10)
}

// Set reads auto or a number.
func (s *Seed) Set(v string) error {
	if v == "auto" {
		*s = Seed{}
		return nil
	}
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return fmt.Errorf("%q: use auto or a number from 0", v)
	}
	*s = Seed{n, true}
	return nil
}

func (s *Seed) Type() string                    { return "auto|N" }
func (s *Seed) UnmarshalText(text []byte) error { return s.Set(string(text)) }

// Jobs is a number of event loops, or auto (0).
type Jobs int

func (j *Jobs) String() string {
	if *j == 0 {
		return "auto"
	}
	return strconv.Itoa(int(*j))
}

func (j *Jobs) Set(v string) error {
	if v == "auto" {
		*j = 0
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return fmt.Errorf("use auto or a number of event loops from 1, not %q", v)
	}
	*j = Jobs(n)
	return nil
}

func (j *Jobs) Type() string                    { return "auto|N" }
func (j *Jobs) UnmarshalText(text []byte) error { return j.Set(string(text)) }

// Duration is a time.Duration read by ParseDuration: a plain number of seconds
// as pgbench's -T 60, or a Go duration. DurationValue points one at d.
type Duration struct{ d *time.Duration }

// DurationValue is d to read into, as a flag's value or a study's.
func DurationValue(d *time.Duration) *Duration { return &Duration{d} }

func (v Duration) Set(s string) error {
	d, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

// String is "0" for no time, so that help leaves a zero default out.
func (v Duration) String() string {
	if v.d == nil || *v.d == 0 {
		return "0"
	}
	return v.d.String()
}

func (v Duration) Type() string                    { return "duration" }
func (v Duration) UnmarshalText(text []byte) error { return v.Set(string(text)) }
