package study

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/pgbakeoff/pgbakeoff/internal/cost"
	"github.com/pgbakeoff/pgbakeoff/internal/pricelist"
)

// Prices are read here, for study files and prices files alike, with the same
// node helpers as the rest of the study file, so that both forms accept the
// same keys with the same messages; package cost holds the price model and its
// rules and reads no YAML.

// priceKeys are the keys of a price: ref, its amounts as cost.Price.Fields
// names them, per_hour (what study files first called compute_per_hour), and
// what the amounts are in and where they come from.
var priceKeys = func() []string {
	keys := []string{"ref"}
	for _, f := range new(cost.Price).Fields() {
		keys = append(keys, f.Name)
	}
	return append(keys, "per_hour", "currency", "source", "date")
}()

const (
	// priceLike shows the forms of a target's price in messages.
	priceLike = "{monthly: 1234.5}, {compute_per_hour: 0.68, storage_gb: 512, storage_per_gb_month: 0.115}, {ref: name} or {cloud: aws, instance: db.m6g.large, region: us-east-1}"
	// entryLike shows an entry of a prices file in messages.
	entryLike = `{monthly: 2172.72, source: "...", date: 2024-01}`
)

var priceNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// priceRef is a target's price: {ref: name}, looked up once the whole study
// file, with its prices:, has been read.
type priceRef struct {
	target *Target
	name   string
	pos    Pos
}

// targetPrice reads a target's price: a ref to an entry of the prices file, or
// the price itself.
func (p *parser) targetPrice(kv pair, t *Target, where string) {
	pairs, ok := p.mapping(kv, priceLike)
	if !ok {
		return
	}
	if _, ok := lookup(pairs, "cloud"); ok {
		t.PriceLookup = p.priceLookup(pairs, kv.valPos(), "price of "+where)
		return
	}
	if ref, ok := lookup(pairs, "ref"); ok {
		for _, o := range pairs {
			if o.name() != "ref" {
				p.errorf(posOf(o.key), "price of %s has a ref; give %s in the prices file, not beside the ref", where, o.name())
			}
		}
		if name, ok := p.str(ref); ok {
			p.refs = append(p.refs, priceRef{target: t, name: name, pos: ref.valPos()})
		}
		return
	}
	t.Price = p.price(pairs, kv.valPos(), "price of "+where)
}

// lookupKeys are the keys of a price looked up in each cloud's list, as the
// prices command's flags name them.
var lookupKeys = map[string][]string{
	"azure": {"cloud", "service", "sku", "storage", "ha", "region", "currency"},
	"aws":   {"cloud", "engine", "instance", "storage", "multi_az", "region"},
	"gcp":   {"cloud", "tier", "storage", "ha", "region"},
}

// lookupRequired are the keys a lookup cannot do without.
var lookupRequired = map[string][]string{
	"azure": {"sku", "region"},
	"aws":   {"instance", "region"},
	"gcp":   {"tier", "region"},
}

// priceLookup reads a price to look up in a cloud's price list, such as
// {cloud: aws, instance: db.m6g.4xlarge, storage: "gp3:1000GiB", region:
// us-east-1}. It returns nil when anything is wrong.
func (p *parser) priceLookup(pairs []pair, pos Pos, where string) *pricelist.Query {
	q := &pricelist.Query{}
	cloudKV, _ := lookup(pairs, "cloud")
	cloud, ok := p.enum(cloudKV, pricelist.Clouds)
	if !ok {
		return nil
	}
	q.Cloud = cloud
	given := map[string]bool{}
	for _, kv := range pairs {
		name := kv.name()
		given[name] = true
		var v string
		good := true
		switch {
		case name == "cloud":
			continue
		case !slices.Contains(lookupKeys[cloud], name):
			p.unknown(kv.key, where+" (cloud "+cloud+")", lookupKeys[cloud])
			ok = false
			continue
		case name == "ha" || name == "multi_az":
			q.HA, good = p.boolean(kv)
		default:
			v, good = p.str(kv)
		}
		if !good {
			ok = false
			continue
		}
		switch name {
		case "service":
			if !slices.Contains(pricelist.AzureServices, v) {
				p.errorf(kv.valPos(), "unknown service %q; pgbakeoff prices %s", v, oneOf(pricelist.AzureServices))
				ok = false
			}
			q.Service = v
		case "sku", "tier":
			q.SKU = v
		case "instance":
			q.Instance = v
		case "engine":
			q.Engine = v
			if l := strings.ToLower(v); l != "postgres" && l != "postgresql" {
				p.errorf(kv.valPos(), "engine %q is not PostgreSQL; pgbakeoff prices RDS for PostgreSQL (engine: postgres)", v)
				ok = false
			}
		case "storage":
			q.Storage = v
			if _, err := pricelist.ParseStorage(v); err != nil {
				p.errorf(kv.valPos(), "%v", err)
				ok = false
			}
		case "region":
			q.Region = v
		case "currency":
			q.Currency = v
		}
	}
	for _, k := range lookupRequired[cloud] {
		if !given[k] {
			p.errorf(pos, "%s looks the price up in %s's list and needs %s", where, cloud, k)
			ok = false
		}
	}
	if !ok {
		return nil
	}
	return q
}

// price reads a price's amounts and what they are in, and checks them by
// cost's rules, each problem at the key it is about or else at pos. It
// returns nil when anything is wrong.
func (p *parser) price(pairs []pair, pos Pos, where string) *cost.Price {
	pr := &cost.Price{Currency: cost.DefaultCurrency}
	amounts := map[string]*float64{}
	for _, f := range pr.Fields() {
		amounts[f.Name] = f.Value
	}
	given := map[string]pair{} // by the name cost gives the field
	ok := true
	for _, kv := range pairs {
		name := kv.name()
		if name == "per_hour" {
			name = "compute_per_hour"
		}
		if prev, dup := given[name]; dup {
			p.errorf(posOf(kv.key), "%s and %s are the same; give one", prev.name(), kv.name())
			ok = false
			continue
		}
		given[name] = kv
		var good bool
		switch {
		case amounts[name] != nil:
			*amounts[name], good = p.amount(kv)
		case name == "currency":
			pr.Currency, good = p.str(kv)
		case name == "source":
			pr.Source, good = p.str(kv)
		case name == "date":
			pr.Date, good = p.str(kv)
		case name == "ref":
			p.errorf(posOf(kv.key), "ref is for a study's targets; an entry of a prices file gives the price itself")
		default:
			p.unknown(kv.key, where, priceKeys)
			good = true // the price itself may be fine
		}
		ok = ok && good
	}
	if !ok {
		return nil // cost's rules would only repeat what is wrong
	}
	var errs cost.Errors
	if !errors.As(pr.Validate(), &errs) {
		return pr
	}
	for _, e := range errs {
		at, msg := pos, e.Msg
		if kv, ok := given[e.Field]; ok {
			at = kv.valPos()
		}
		if e.Field == "" {
			msg = where + ": " + msg
		}
		p.errorf(at, "%s", msg)
	}
	return nil
}

// amount reads an amount of a price: a number more than 0. One that is 0 is
// left out instead.
func (p *parser) amount(kv pair) (float64, bool) {
	v := deref(kv.val)
	f, err := strconv.ParseFloat(v.Value, 64)
	switch {
	case v.Kind != yaml.ScalarNode || isNull(v) || err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		p.errorf(kv.valPos(), "%s must be a number, not %s", kv.name(), describe(v))
	case f <= 0:
		p.errorf(kv.valPos(), "%s %s is out of range; want more than 0", kv.name(), v.Value)
	default:
		return f, true
	}
	return 0, false
}

// resolvePrices reads the study's prices file, if it names one, and gives each
// target with a price ref the entry it names.
func (p *parser) resolvePrices(s *Study, prices pair) {
	if prices.key == nil {
		for _, r := range p.refs {
			p.errorf(r.pos, "price ref %q needs a prices file; add prices: with its path, such as ../prices/seed-reports.yaml, at the top of the study", r.name)
		}
		return
	}
	file, ok := p.str(prices)
	if !ok {
		return
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(filepath.Dir(p.file), file)
	}
	s.Prices = file
	data, err := os.ReadFile(file)
	if err != nil {
		p.errorf(prices.valPos(), "cannot read the prices file: %v", err)
		return
	}
	entries, errs := parsePrices(file, data)
	if len(errs) > 0 {
		p.errs = append(p.errs, errs...) // in the prices file, named as such
		return
	}
	names := entries.names()
	for _, r := range p.refs {
		pr, given := entries.Given[r.name]
		q, lookup := entries.Lookups[r.name]
		switch {
		case given:
			r.target.Price, r.target.PriceRef = &pr, r.name
		case lookup:
			r.target.PriceLookup, r.target.PriceRef = &q, r.name
		case Suggest(r.name, names) != "":
			p.errorf(r.pos, "price ref %q is not in %s; did you mean %q?", r.name, file, Suggest(r.name, names))
		default:
			p.errorf(r.pos, "price ref %q is not in %s; it has %s", r.name, file, oneOf(names))
		}
	}
}

// Prices are the named prices of a prices file: given by hand, or looked up
// in a cloud's price list. A name is one or the other.
type Prices struct {
	Given   map[string]cost.Price      // each valid, with its Currency filled in
	Lookups map[string]pricelist.Query // as a target's price: {cloud: ...}
}

// names are the names of all the prices, in order.
func (ps *Prices) names() []string {
	names := append(slices.Collect(maps.Keys(ps.Given)), slices.Collect(maps.Keys(ps.Lookups))...)
	slices.Sort(names)
	return names
}

// LoadPrices reads the prices file at path: named prices that study files
// refer to with price: {ref: name}, as in
//
//	prices:
//	  azure-flexible-d16ads-v5:
//	    source: "seed report 000, Table 2"
//	    date: 2024-01-17
//	    monthly: 2172.72
//	  rds-m6g-4xlarge-multi-az:
//	    {cloud: aws, instance: db.m6g.4xlarge, storage: "gp3:1000GiB", multi_az: true, region: us-east-1}
//
// Each entry takes the keys of a target's price but ref. The error, when not
// nil, is Errors, or says the file cannot be read.
func LoadPrices(path string) (*Prices, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read prices: %w", err)
	}
	return ParsePrices(path, data)
}

// ParsePrices parses and validates a prices file's contents; file names it in
// errors. The error, when not nil, is Errors: every problem found, sorted by
// position.
func ParsePrices(file string, data []byte) (*Prices, error) {
	prices, errs := parsePrices(file, data)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return prices, nil
}

func parsePrices(file string, data []byte) (*Prices, Errors) {
	p := &parser{file: file, reported: map[string]bool{}}
	root := p.document(data, "the prices file is empty; it needs prices: with named prices",
		"a prices file holds one YAML document; remove the second one or the --- before it",
		"a prices file is a mapping with prices:")
	if root == nil {
		return nil, p.errs
	}
	prices := &Prices{Given: map[string]cost.Price{}, Lookups: map[string]pricelist.Query{}}
	found := false
	for _, kv := range p.pairs(root) {
		if kv.name() != "prices" {
			p.unknown(kv.key, "the prices file", []string{"prices"})
			continue
		}
		found = true
		entries, ok := p.mapping(kv, "{name: "+entryLike+"}")
		if ok && len(entries) == 0 {
			p.errorf(kv.valPos(), "prices is empty; give at least one named price")
		}
		for _, e := range entries {
			name := e.name()
			if !priceNamePattern.MatchString(name) {
				p.errorf(posOf(e.key), "invalid price name %q; use up to 64 letters, digits, '_', '.' and '-', starting with a letter or digit", name)
				continue
			}
			where := fmt.Sprintf("price %q", name)
			v := deref(e.val)
			if v.Kind != yaml.MappingNode {
				p.errorf(e.valPos(), "%s must be a mapping like %s, not %s", where, entryLike, describe(v))
				continue
			}
			pairs := p.pairs(v)
			if _, ok := lookup(pairs, "cloud"); ok {
				if q := p.priceLookup(pairs, e.valPos(), where); q != nil {
					prices.Lookups[name] = *q
				}
				continue
			}
			if pr := p.price(pairs, e.valPos(), where); pr != nil {
				prices.Given[name] = *pr
			}
		}
	}
	if !found {
		p.errorf(posOf(root), "the prices file has no prices; add prices: with named prices like %s", entryLike)
	}
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return prices, nil
}
