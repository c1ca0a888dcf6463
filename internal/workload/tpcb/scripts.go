package tpcb

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/pgbakeoff/pgbakeoff/internal/driver"
	"github.com/pgbakeoff/pgbakeoff/internal/engine"
	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
)

// Variables of the builtin scripts, as pgbench's \set lines define them:
// aid random(1, 100000*scale), bid random(1, scale), tid random(1, 10*scale),
// delta random(-5000, 5000).
const (
	vAid = iota
	vBid
	vTid
	vDelta
)

// SetDist makes the scripts draw their account from spec instead of uniformly, as
// pgbench scripts written with random_exponential or random_gaussian would.
func SetDist(scripts []*driver.Script, spec keydist.Spec) error {
	if spec.Kind == keydist.Uniform {
		return nil
	}
	for _, s := range scripts {
		for i, v := range s.Vars {
			if v.Name != "aid" {
				continue
			}
			d, err := keydist.New(spec, v.Min, v.Max)
			if err != nil {
				return err
			}
			s.Vars[i].Dist = d
		}
	}
	return nil
}

func vars(scale int) []driver.Var {
	s := int64(scale)
	return []driver.Var{
		{Name: "aid", Min: 1, Max: AccountsPerScale * s},
		{Name: "bid", Min: 1, Max: BranchesPerScale * s},
		{Name: "tid", Min: 1, Max: TellersPerScale * s},
		{Name: "delta", Min: -5000, Max: 5000},
	}
}

// The statements of pgbench's builtin scripts, with pgbench's :variables turned into
// the $n parameters pgbench itself sends in extended and prepared mode.
var (
	cmdBegin         = driver.Command{SQL: "BEGIN;"}
	cmdUpdateAccount = driver.Command{SQL: "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;", Params: []int{vDelta, vAid}}
	cmdSelectBalance = driver.Command{SQL: "SELECT abalance FROM pgbench_accounts WHERE aid = $1;", Params: []int{vAid}}
	cmdUpdateTeller  = driver.Command{SQL: "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2;", Params: []int{vDelta, vTid}}
	cmdUpdateBranch  = driver.Command{SQL: "UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2;", Params: []int{vDelta, vBid}}
	cmdInsertHistory = driver.Command{SQL: "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP);", Params: []int{vTid, vBid, vAid, vDelta}}
	cmdEnd           = driver.Command{SQL: "END;"}
)

// builtin lists pgbench's three builtin scripts (TPC-B clause 1.2's profile and its
// two simplifications).
var builtin = map[string][]driver.Command{
	"tpcb-like":     {cmdBegin, cmdUpdateAccount, cmdSelectBalance, cmdUpdateTeller, cmdUpdateBranch, cmdInsertHistory, cmdEnd},
	"simple-update": {cmdBegin, cmdUpdateAccount, cmdSelectBalance, cmdInsertHistory, cmdEnd},
	"select-only":   {cmdSelectBalance},
}

// ScriptNames are the builtin scripts, sorted.
func ScriptNames() []string {
	var names []string
	for n := range builtin {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ParseScripts reads --script values such as "tpcb-like", "select-only@1" or a unique
// prefix ("select"), as pgbench's -b accepts, and builds them for the given scale.
func ParseScripts(specs []string, scale int) ([]*driver.Script, error) {
	if scale < 1 {
		return nil, fmt.Errorf("the scale must be at least 1, got %d", scale)
	}
	if len(specs) == 0 {
		specs = []string{"tpcb-like"}
	}
	var out []*driver.Script
	seen := map[string]bool{}
	for _, spec := range specs {
		name, weight := spec, 1
		if at := strings.LastIndexByte(spec, '@'); at >= 0 {
			w, err := strconv.Atoi(spec[at+1:])
			if err != nil || w < 0 {
				return nil, engine.FieldErrorf("script", "%q: the weight after @ must be a whole number of 0 or more", spec)
			}
			name, weight = spec[:at], w
		}
		full, err := resolve(name)
		if err != nil {
			return nil, err
		}
		if seen[full] {
			return nil, engine.FieldErrorf("script", "%s is given twice", full)
		}
		seen[full] = true
		if weight == 0 {
			continue
		}
		out = append(out, &driver.Script{Name: full, Weight: weight, Vars: vars(scale), Commands: builtin[full]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("every --script has weight 0; give at least one a positive weight")
	}
	return out, nil
}

func resolve(name string) (string, error) {
	if _, ok := builtin[name]; ok {
		return name, nil
	}
	var matches []string
	for _, n := range ScriptNames() {
		if strings.HasPrefix(n, name) {
			matches = append(matches, n)
		}
	}
	if len(matches) == 1 && name != "" {
		return matches[0], nil
	}
	return "", fmt.Errorf("unknown script %q: choose from %s", name, strings.Join(ScriptNames(), ", "))
}
