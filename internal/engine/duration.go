package engine

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// MaxDuration is the longest warm-up, window, pause, interval or timeout pgbakeoff
// takes: ten years, far beyond any benchmark. A run's deadlines are the clock plus
// a few of them (warm-up, window, grace periods, timeouts) and are kept in
// nanoseconds since 1970, which overflow in 2262: with ten years each, several added
// together still end long before, where 2100000h (240 years) alone went past it.
const MaxDuration = 10 * 365 * 24 * time.Hour

// goDuration is what time.ParseDuration reads; it refuses such text only when the
// duration overflows.
var goDuration = regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

// ParseDuration reads a duration as flags and study files take it: a plain number
// of seconds (60, 1.5), as pgbench's -T and -P do, or a Go duration (90s, 5m). The
// sign is left to the caller; a magnitude over MaxDuration is refused.
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil && goDuration.MatchString(s) {
		return 0, &DurationError{Value: s, TooLong: true}
	}
	if err != nil {
		secs, ferr := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if ferr != nil && !errors.Is(ferr, strconv.ErrRange) || math.IsNaN(secs) {
			return 0, &DurationError{Value: s}
		}
		if math.Abs(secs) > MaxDuration.Seconds() {
			return 0, &DurationError{Value: s, TooLong: true}
		}
		d = time.Duration(math.Round(secs * float64(time.Second)))
	}
	if d > MaxDuration || d < -MaxDuration {
		return 0, &DurationError{Value: s, TooLong: true}
	}
	return d, nil
}

// DurationError is a duration ParseDuration refuses. Its text follows what the
// value is for: "--duration " + err.Error().
type DurationError struct {
	Value   string
	TooLong bool
}

func (e *DurationError) Error() string {
	v := e.Value
	if v == "" || strings.ContainsAny(v, " \t\"") {
		v = strconv.Quote(v)
	}
	if e.TooLong {
		return fmt.Sprintf("%s is too long: at most %s (10 years)", v, strings.TrimSuffix(MaxDuration.String(), "0m0s"))
	}
	return fmt.Sprintf("%s is not a duration: give seconds (60) or a Go duration (90s, 5m, 1h30m)", v)
}
