package engine

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pgbakeoff/pgbakeoff/internal/sampler"
)

// FaultKind is what a scheduled fault does to the target.
type FaultKind string

// The kinds of faults. Crash, restart, failover and switchover are done to
// servers pgbakeoff runs (an Injector); a command is the user's own, for any
// target (a cloud's forced failover).
const (
	FaultCrash      FaultKind = "crash"      // SIGKILL the primary's postmaster, start it again
	FaultRestart    FaultKind = "restart"    // a fast shutdown and a start
	FaultFailover   FaultKind = "failover"   // SIGKILL the primary, promote the most advanced standby
	FaultSwitchover FaultKind = "switchover" // a clean hand-over to a standby
	FaultCommand    FaultKind = "command"    // run Command with sh -c
)

var faultKinds = []FaultKind{FaultCrash, FaultRestart, FaultFailover, FaultSwitchover, FaultCommand}

// Fault is something done to the target during a run, At after the run began
// (its warm-up included).
type Fault struct {
	At      time.Duration
	Kind    FaultKind
	Command string
}

func (f Fault) String() string {
	s := fmt.Sprintf("%s at %s", f.Kind, f.At)
	if f.Kind == FaultCommand {
		s += fmt.Sprintf(" (%s)", RedactCommand(f.Command))
	}
	return s
}

// Passwords a command may carry: a URI's (postgres://user:secret@host) and a
// key=value DSN's or an option's (password=secret, --password secret).
var (
	uriPassword = regexp.MustCompile(`(://[^:/@\s]*:)[^@\s]*@`)
	kvPassword  = regexp.MustCompile(`(?i)(password[= ]+)('[^']*'|"[^"]*"|\S+)`)
)

// RedactCommand is a fault command as it may be shown or stored: any password
// in it replaced.
func RedactCommand(command string) string {
	command = uriPassword.ReplaceAllString(command, "${1}xxxxx@")
	return kvPassword.ReplaceAllString(command, "${1}xxxxx")
}

// ParseFault reads a fault as --fault writes it: at=60s,kind=failover, or
// at=60s,kind=command,command=... whose command is the rest of the text.
func ParseFault(v string) (Fault, error) {
	var f Fault
	rest := v
	for rest != "" {
		var item string
		if strings.HasPrefix(rest, "command=") {
			item, rest = rest, ""
		} else {
			item, rest, _ = strings.Cut(rest, ",")
		}
		key, val, ok := strings.Cut(item, "=")
		var err error
		switch {
		case !ok:
			err = fmt.Errorf("%q is not key=value", item)
		case key == "at":
			f.At, err = ParseDuration(val)
		case key == "kind":
			f.Kind = FaultKind(val)
		case key == "command":
			f.Command = val
		default:
			err = fmt.Errorf("unknown key %q: use at, kind and command", key)
		}
		if err != nil {
			return f, fmt.Errorf("--fault %q: %v", RedactCommand(v), err)
		}
	}
	return f, nil
}

// Check refuses a fault that cannot be done in a run of the settings: an
// unknown kind, a time outside the run, a command that is not there.
func (f Fault) Check(s *Settings) error {
	switch {
	case !slices.Contains(faultKinds, f.Kind):
		return FieldErrorf("fault", "kind %q is unknown: use one of crash, restart, failover, switchover and command", f.Kind)
	case s.Transactions > 0:
		return FieldErrorf("fault", "%s needs a run of a duration, not of a number of transactions", f)
	case f.At <= 0 || f.At >= s.Warmup+s.Duration:
		return FieldErrorf("fault", "%s is outside the run, which lasts %s (warm-up %s, window %s)", f, s.Warmup+s.Duration, s.Warmup, s.Duration)
	case f.Kind == FaultCommand && strings.TrimSpace(f.Command) == "":
		return FieldErrorf("fault", "kind command needs command=..., the command to run")
	case f.Kind != FaultCommand && f.Command != "":
		return FieldErrorf("fault", "%s takes no command", f.Kind)
	}
	if f.Kind == FaultCommand {
		name := strings.Fields(f.Command)[0]
		if _, err := exec.LookPath(name); err != nil {
			return FieldErrorf("fault", "command %q cannot be run: %v", name, err)
		}
	}
	return nil
}

// Local tells whether the kind is done to a server pgbakeoff runs (an Injector).
func (k FaultKind) Local() bool { return k != FaultCommand }

// Injector does faults to servers pgbakeoff runs itself (localpg).
type Injector interface {
	// Can tells why kind cannot be done to the target, or nil.
	Can(kind FaultKind) error
	// Inject does it, and says what the servers did and when.
	Inject(ctx context.Context, kind FaultKind) (ServerEvents, error)
}

// ServerEvents are what a local server did in a fault, from its log: when it
// stopped, when a standby was promoted, when it accepted writes again. A zero
// time is one not seen.
type ServerEvents struct {
	Stopped  time.Time `json:"stopped,omitzero"`
	Promoted time.Time `json:"promoted,omitzero"`
	Ready    time.Time `json:"ready,omitzero"`
	// Primary is the server that is the primary after a failover or a
	// switchover, another than before: the run's sampler of the local
	// server's processes and disk (Spec.Local) follows it.
	Primary *sampler.Local `json:"-"`
}

// FaultDone is a fault as it was done: when, what the command printed and how
// it ended, what the servers did.
type FaultDone struct {
	Fault
	Start, End time.Time
	Output     string
	ExitCode   int
	Err        string
	Server     ServerEvents
}

// checkFaults refuses, before anything connects, faults the run cannot do.
func checkFaults(spec *Spec, env *Env) error {
	for _, f := range spec.Faults {
		if f.Kind == FaultCommand {
			continue
		}
		if env.Injector == nil {
			return FieldErrorf("fault", "%s needs a server pgbakeoff runs (pgbakeoff server start, or a study's local: target); for another, give kind=command with the command that does it", f)
		}
		if err := env.Injector.Can(f.Kind); err != nil {
			return FieldErrorf("fault", "%s: %v", f, err)
		}
	}
	return nil
}

// faultSchedule does a run's faults at their times once the run has begun.
type faultSchedule struct {
	faults   []Fault
	injector Injector
	log      func(format string, args ...any)
	// moved, when set, is told of the new primary after a fault that made one.
	moved func(sampler.Local)

	mu    sync.Mutex
	done  []FaultDone
	stop  chan struct{}
	ended sync.WaitGroup
}

// begin starts the schedule from the run's start. The faults are done one after
// another, in the order of their times: one still under way (a failover
// cloning the old primary again) delays the next rather than meet it.
func (s *faultSchedule) begin(start time.Time) {
	s.stop = make(chan struct{})
	order := slices.SortedStableFunc(slices.Values(s.faults), func(a, b Fault) int { return cmp.Compare(a.At, b.At) })
	s.ended.Add(1)
	go func() {
		defer s.ended.Done()
		for _, f := range order {
			t := time.NewTimer(time.Until(start.Add(f.At)))
			select {
			case <-s.stop:
				t.Stop()
				return
			case <-t.C:
			}
			d := s.do(f)
			s.mu.Lock()
			s.done = append(s.done, d)
			s.mu.Unlock()
		}
	}()
}

// do does one fault and records how it went.
func (s *faultSchedule) do(f Fault) FaultDone {
	d := FaultDone{Fault: f, Start: time.Now()}
	s.log("fault: %s", f)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var err error
	if f.Kind == FaultCommand {
		d.Output, d.ExitCode, err = runCommand(ctx, f.Command)
	} else {
		d.Server, err = s.injector.Inject(ctx, f.Kind)
	}
	d.End = time.Now()
	if err != nil {
		d.Err = err.Error()
		s.log("warning: fault %s: %v", f, err)
	}
	if p := d.Server.Primary; p != nil && s.moved != nil {
		s.moved(*p)
	}
	return d
}

// end waits for the faults under way and forgets those not begun; it gives
// those done in the order done.
func (s *faultSchedule) end() []FaultDone {
	if s.stop != nil {
		close(s.stop)
		s.ended.Wait()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	slices.SortFunc(s.done, func(a, b FaultDone) int { return a.Start.Compare(b.Start) })
	return s.done
}

// maxOutput is how much of a fault command's output is kept with the run.
const maxOutput = 64 << 10

// runCommand runs command with sh -c and gives its output (the last maxOutput
// bytes) and exit code.
func runCommand(ctx context.Context, command string) (string, int, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// A child that outlives sh, holding its output, does not hold the run.
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	text := out.Bytes()
	if len(text) > maxOutput {
		text = text[len(text)-maxOutput:]
	}
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return string(text), ee.ExitCode(), fmt.Errorf("the command exited with %d", ee.ExitCode())
	}
	return string(text), 0, err
}
