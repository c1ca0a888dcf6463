package keydist

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is a family of distributions.
type Kind uint8

const (
	Uniform Kind = iota
	Gaussian
	Special
	Pareto
	Zipfian
	Exponential
	PgbenchGaussian
)

var names = [...]string{
	Uniform:         "uniform",
	Gaussian:        "gaussian",
	Special:         "special",
	Pareto:          "pareto",
	Zipfian:         "zipfian",
	Exponential:     "exponential",
	PgbenchGaussian: "pgbench-gaussian",
}

func (k Kind) String() string {
	if int(k) < len(names) {
		return names[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Spec names a distribution and its parameters. The zero Spec is uniform.
type Spec struct {
	Kind Kind
	// Iter is how many uniform draws Gaussian and Special average
	// (sysbench --rand-spec-iter).
	Iter int
	// Special sends Res percent of the draws to the middle Pct percent of the range
	// (sysbench --rand-spec-pct and --rand-spec-res).
	Pct, Res int
	// Param is Pareto's h, Zipfian's exponent, and the parameter of Exponential and
	// PgbenchGaussian.
	Param float64
}

// Defaults of sysbench 1.0 (sb_rand.c).
const (
	defaultIter    = 12
	defaultPct     = 1
	defaultRes     = 75
	defaultParetoH = 0.2
	defaultZipfExp = 0.8
)

// maxIter bounds the uniform draws a Gaussian or Special key costs.
const maxIter = 1000

const kindList = "uniform, gaussian, special, pareto, zipfian, exponential:P or pgbench-gaussian:P"

// Parse reads a distribution as written on the command line: "zipfian",
// "zipfian:1.1", "special:12:1:75", "exponential:5". Omitted sysbench parameters take
// sysbench's defaults; pgbench's parameter has no default, as in pgbench.
func Parse(text string) (Spec, error) {
	name, rest, hasArgs := strings.Cut(strings.TrimSpace(text), ":")
	var args []string
	if hasArgs {
		args = strings.Split(rest, ":")
	}
	fail := func(format string, a ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("distribution %q: %s", text, fmt.Sprintf(format, a...))
	}
	var s Spec
	switch name {
	case "uniform":
		if len(args) > 0 {
			return fail("uniform takes no parameter")
		}
	case "gaussian":
		s = Spec{Kind: Gaussian, Iter: defaultIter}
		if len(args) > 1 {
			return fail("gaussian takes at most one parameter (iterations), as gaussian:12")
		}
	case "special":
		s = Spec{Kind: Special, Iter: defaultIter, Pct: defaultPct, Res: defaultRes}
		if len(args) > 3 {
			return fail("special takes at most three parameters (iterations, pct, res), as special:12:1:75")
		}
	case "pareto":
		s = Spec{Kind: Pareto, Param: defaultParetoH}
		if len(args) > 1 {
			return fail("pareto takes at most one parameter (h), as pareto:0.2")
		}
	case "zipfian":
		s = Spec{Kind: Zipfian, Param: defaultZipfExp}
		if len(args) > 1 {
			return fail("zipfian takes at most one parameter (exponent), as zipfian:0.8")
		}
	case "exponential", "pgbench-gaussian":
		s.Kind = Exponential
		example := "exponential:5"
		if name == "pgbench-gaussian" {
			s.Kind, example = PgbenchGaussian, "pgbench-gaussian:2.5"
		}
		if len(args) != 1 {
			return fail("%s takes exactly one parameter, as %s", name, example)
		}
	case "":
		return Spec{}, fmt.Errorf("empty distribution: use %s", kindList)
	default:
		return Spec{}, fmt.Errorf("unknown distribution %q: use %s", text, kindList)
	}

	// Parameters come in the order of Spec's fields for each kind.
	for i, a := range args {
		var err error
		switch {
		case s.Kind == Gaussian || s.Kind == Special && i == 0:
			s.Iter, err = parseInt("iterations", a)
		case s.Kind == Special && i == 1:
			s.Pct, err = parseInt("pct", a)
		case s.Kind == Special && i == 2:
			s.Res, err = parseInt("res", a)
		default:
			s.Param, err = parseFloat(paramName[s.Kind], a)
		}
		if err != nil {
			return fail("%v", err)
		}
	}
	if err := s.check(); err != nil {
		return fail("%v", err)
	}
	return s, nil
}

var paramName = [...]string{Pareto: "h", Zipfian: "exponent", Exponential: "parameter", PgbenchGaussian: "parameter"}

func parseInt(what, a string) (int, error) {
	v, err := strconv.Atoi(a)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not an integer", what, a)
	}
	return v, nil
}

func parseFloat(what, a string) (float64, error) {
	v, err := strconv.ParseFloat(a, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a number", what, a)
	}
	return v, nil
}

// check reports a parameter out of its range. The comparisons are written so that NaN
// fails them.
func (s Spec) check() error {
	switch s.Kind {
	case Uniform:
		return nil
	case Gaussian, Special:
		if s.Iter < 1 || s.Iter > maxIter {
			return fmt.Errorf("iterations must be from 1 to %d, as %s:12", maxIter, s.Kind)
		}
		if s.Kind == Gaussian {
			return nil
		}
		if s.Pct < 0 || s.Pct > 100 {
			return errors.New("pct must be from 0 to 100, as special:12:1:75")
		}
		if s.Res < 0 || s.Res > 100 {
			return errors.New("res must be from 0 to 100, as special:12:1:75")
		}
	case Pareto:
		if !(s.Param > 0 && s.Param < 1) {
			return errors.New("h must be in (0, 1), as pareto:0.2")
		}
	case Zipfian:
		if !(s.Param >= 0 && s.Param <= 1000) {
			return errors.New("exponent must be in [0, 1000], as zipfian:0.8")
		}
	case Exponential:
		if !(s.Param > 0) || math.IsInf(s.Param, 1) {
			return errors.New("parameter must be a finite number > 0, as exponential:5")
		}
	case PgbenchGaussian:
		// pgbench's MIN_GAUSSIAN_PARAM: below it the truncated normal is rejected too often.
		if !(s.Param >= 2) || math.IsInf(s.Param, 1) {
			return errors.New("parameter must be a finite number >= 2, as pgbench-gaussian:2.5")
		}
	default:
		return fmt.Errorf("unknown distribution kind %d: use %s", s.Kind, kindList)
	}
	return nil
}

// String writes the spec as Parse reads it, with every parameter.
func (s Spec) String() string {
	switch s.Kind {
	case Uniform:
		return "uniform"
	case Gaussian:
		return "gaussian:" + strconv.Itoa(s.Iter)
	case Special:
		return fmt.Sprintf("special:%d:%d:%d", s.Iter, s.Pct, s.Res)
	}
	return s.Kind.String() + ":" + strconv.FormatFloat(s.Param, 'g', -1, 64)
}
