package cost

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// HoursPerMonth is what an hourly price is multiplied by: 365 × 24 / 12, the
// month of the cloud providers' pricing calculators.
const HoursPerMonth = 730

// DefaultCurrency is the currency of a Price that names none.
const DefaultCurrency = "USD"

// Price is what a target costs to run: one monthly figure, or components that
// add up to a month. A zero amount is one not given. Amounts are in Currency.
type Price struct {
	// Total is the whole month as one figure, for a price published only as a
	// total. A Price with a Total has no components.
	Total float64 `json:"monthly,omitempty"`

	ComputePerHour float64 `json:"compute_per_hour,omitempty"` // times HoursPerMonth
	ComputeMonthly float64 `json:"compute_monthly,omitempty"`  // instead of ComputePerHour

	StorageGB         float64 `json:"storage_gb,omitempty"`
	StoragePerGBMonth float64 `json:"storage_per_gb_month,omitempty"`
	StorageMonthly    float64 `json:"storage_monthly,omitempty"` // instead of StorageGB and StoragePerGBMonth

	IOPS           float64 `json:"iops,omitempty"` // provisioned IOPS
	PerIOPSMonth   float64 `json:"per_iops_month,omitempty"`
	ThroughputMBps float64 `json:"throughput_mbps,omitempty"` // provisioned throughput, MB/s
	PerMBpsMonth   float64 `json:"per_mbps_month,omitempty"`

	BackupGB         float64 `json:"backup_gb,omitempty"`
	BackupPerGBMonth float64 `json:"backup_per_gb_month,omitempty"`
	BackupMonthly    float64 `json:"backup_monthly,omitempty"` // instead of BackupGB and BackupPerGBMonth

	NetworkMonthly float64 `json:"network_monthly,omitempty"` // data transfer, as the source estimates it

	// HA multiplies compute and storage (capacity, IOPS and throughput) for
	// high availability: 2 for one standby. Backup, network and fees are not
	// multiplied. 0 means no standby, as 1 does.
	HA float64 `json:"ha,omitempty"`
	// HAMonthly is what high availability adds a month as a price list
	// prices it (the standby's compute and storage), instead of HA.
	HAMonthly float64 `json:"ha_monthly,omitempty"`

	FeeMonthly float64 `json:"fee_monthly,omitempty"` // a support or management fee
	FeePercent float64 `json:"fee_percent,omitempty"` // a fee of this percent of everything else

	Currency string `json:"currency,omitempty"` // an ISO 4217 code such as USD or EUR; "" is DefaultCurrency
	Source   string `json:"source,omitempty"`   // where the figures come from, for people
	Date     string `json:"date,omitempty"`     // when they were published or looked up: YYYY, YYYY-MM or YYYY-MM-DD
	// Fetched is when a price looked up in a cloud's price list was read from
	// it (RFC 3339); "" for a price given by hand.
	Fetched string `json:"fetched,omitempty"`
}

// Field is one amount of a Price under the name that prices files and study
// files give it.
type Field struct {
	Name  string // "compute_per_hour"
	Value *float64
}

// Fields lists p's amounts by name, in the order Detail shows them, with Total
// first as "monthly".
func (p *Price) Fields() []Field {
	return []Field{
		{"monthly", &p.Total},
		{"compute_per_hour", &p.ComputePerHour},
		{"compute_monthly", &p.ComputeMonthly},
		{"storage_gb", &p.StorageGB},
		{"storage_per_gb_month", &p.StoragePerGBMonth},
		{"storage_monthly", &p.StorageMonthly},
		{"iops", &p.IOPS},
		{"per_iops_month", &p.PerIOPSMonth},
		{"throughput_mbps", &p.ThroughputMBps},
		{"per_mbps_month", &p.PerMBpsMonth},
		{"ha", &p.HA},
		{"ha_monthly", &p.HAMonthly},
		{"backup_gb", &p.BackupGB},
		{"backup_per_gb_month", &p.BackupPerGBMonth},
		{"backup_monthly", &p.BackupMonthly},
		{"network_monthly", &p.NetworkMonthly},
		{"fee_monthly", &p.FeeMonthly},
		{"fee_percent", &p.FeePercent},
	}
}

// FieldError is one problem with a Price.
type FieldError struct {
	Field string // the Fields name it is about, "currency", "date", or "" for the whole price
	Msg   string
}

func (e *FieldError) Error() string { return e.Msg }

// Errors is every problem Validate found, in the order of Fields.
type Errors []*FieldError

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Msg
	}
	return strings.Join(msgs, "; ")
}

var currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)

// Validate checks that p makes sense as a price; the error, when not nil, is
// Errors. Amounts must be finite and not negative; a Total excludes components;
// a quantity needs its unit price and a unit price its quantity; a component
// is given per unit or per month, not both; HA is at least 1 and multiplies
// something; and the price has some amount.
func (p Price) Validate() error {
	var errs Errors
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	for _, f := range p.Fields() {
		switch v := *f.Value; {
		case math.IsNaN(v) || math.IsInf(v, 0):
			bad(f.Name, "%s %v is not a number", f.Name, v)
		case v < 0:
			bad(f.Name, "%s %s is negative", f.Name, number(v))
		}
	}
	if len(errs) > 0 {
		return errs // what follows compares numbers
	}

	// A price that is one monthly figure has no components.
	if p.Total > 0 {
		for _, f := range p.Fields()[1:] {
			if *f.Value > 0 {
				bad("monthly", "monthly is the whole month; give it or components such as %s, not both", f.Name)
				break
			}
		}
	}
	pair := func(quantity, unitPrice string, q, u float64) {
		switch {
		case q > 0 && u == 0:
			bad(quantity, "%s needs %s", quantity, unitPrice)
		case u > 0 && q == 0:
			bad(unitPrice, "%s needs %s", unitPrice, quantity)
		}
	}
	pair("storage_gb", "storage_per_gb_month", p.StorageGB, p.StoragePerGBMonth)
	pair("iops", "per_iops_month", p.IOPS, p.PerIOPSMonth)
	pair("throughput_mbps", "per_mbps_month", p.ThroughputMBps, p.PerMBpsMonth)
	pair("backup_gb", "backup_per_gb_month", p.BackupGB, p.BackupPerGBMonth)
	if p.ComputePerHour > 0 && p.ComputeMonthly > 0 {
		bad("compute_monthly", "give compute_per_hour or compute_monthly, not both")
	}
	if (p.StorageGB > 0 || p.StoragePerGBMonth > 0) && p.StorageMonthly > 0 {
		bad("storage_monthly", "give storage_gb with storage_per_gb_month, or storage_monthly, not both")
	}
	if (p.BackupGB > 0 || p.BackupPerGBMonth > 0) && p.BackupMonthly > 0 {
		bad("backup_monthly", "give backup_gb with backup_per_gb_month, or backup_monthly, not both")
	}

	b := p.breakdown()
	switch {
	case p.HA > 0 && p.HA < 1:
		bad("ha", "ha %s is out of range; want 1 or more, such as 2 for one standby", number(p.HA))
	case p.HA > 0 && p.Total == 0 && b.base == 0:
		bad("ha", "ha multiplies compute and storage; give them too")
	case p.HAMonthly > 0 && p.Total == 0 && b.base == 0:
		bad("ha_monthly", "ha_monthly is what a standby adds to compute and storage; give them too")
	}
	if p.FeePercent > 0 && p.Total == 0 && b.rest == 0 {
		bad("fee_percent", "fee_percent needs other amounts to be a percent of")
	}
	if p.HA > 0 && p.HAMonthly > 0 {
		bad("ha_monthly", "give ha (a multiplier) or ha_monthly (an amount), not both")
	}
	if !p.given() {
		bad("", "the price has no amounts; give monthly, or components such as compute_per_hour")
	}
	if p.Currency != "" && !currencyPattern.MatchString(p.Currency) {
		bad("currency", "invalid currency %q; want a code of three upper-case letters like USD or EUR", p.Currency)
	}
	if p.Date != "" && !validDate(p.Date) {
		bad("date", "invalid date %q; want YYYY, YYYY-MM or YYYY-MM-DD", p.Date)
	}
	if p.Fetched != "" {
		if _, err := time.Parse(time.RFC3339, p.Fetched); err != nil {
			bad("fetched", "invalid fetched time %q; want RFC 3339 such as 2026-11-26T07:00:00Z", p.Fetched)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// given is whether p has any amount.
func (p Price) given() bool {
	for _, f := range p.Fields() {
		if *f.Value != 0 {
			return true
		}
	}
	return false
}

func validDate(s string) bool {
	for _, layout := range []string{"2006", "2006-01", time.DateOnly} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

// Monthly is what p costs a month, in p's currency: Total, or the components
// added up.
func (p Price) Monthly() float64 {
	if p.Total > 0 {
		return p.Total
	}
	return p.breakdown().total
}

// Detail says how Monthly was made up, for people: each component with its
// arithmetic, then the total and the currency, as in
//
//	compute 0.34/h x 730 = 248.20, storage 512 GB x 0.115 = 58.88, HA x2 = 614.16; total 614.16 USD/month
//
// A Total is shown alone: "2172.72 USD/month". Amounts given are shown as
// given; amounts worked out, to the cent.
func (p Price) Detail() string {
	unit := p.Currency
	if unit == "" {
		unit = DefaultCurrency
	}
	if p.Total > 0 {
		return money(p.Total) + " " + unit + "/month"
	}
	b := p.breakdown()
	return strings.Join(b.lines, ", ") + "; total " + cents(b.total) + " " + unit + "/month"
}

// Component is one part of a monthly price, for tables that break prices
// down alike across targets.
type Component struct {
	Name    string  // compute, storage, iops, throughput, ha, backup, network or fee
	Monthly float64 // what it adds a month
	Detail  string  // how, as Detail shows it: "storage 1000 GB x 0.115 = 115.00"
}

// Label is the component's name for people: IOPS and HA in capitals.
func (c Component) Label() string {
	switch c.Name {
	case "iops":
		return "IOPS"
	case "ha":
		return "HA"
	}
	return c.Name
}

// Components is Monthly broken down, in the order Detail shows the parts; a
// Total is one component named "total".
func (p Price) Components() []Component {
	if p.Total > 0 {
		return []Component{{"total", p.Total, money(p.Total)}}
	}
	return p.breakdown().parts
}

// breakdown is a price's components added up.
type breakdown struct {
	base  float64 // compute and storage, before HA
	rest  float64 // everything but the fees
	total float64
	lines []string    // for Detail
	parts []Component // for Components
}

// add counts a component: its line for Detail and its amount.
func (b *breakdown) add(name, line string, amount float64) {
	b.lines = append(b.lines, line)
	b.parts = append(b.parts, Component{name, amount, line})
}

func (p Price) breakdown() breakdown {
	var b breakdown
	switch {
	case p.ComputePerHour > 0:
		m := p.ComputePerHour * HoursPerMonth
		b.add("compute", fmt.Sprintf("compute %s/h x %d = %s", number(p.ComputePerHour), HoursPerMonth, cents(m)), m)
	case p.ComputeMonthly > 0:
		b.add("compute", "compute "+money(p.ComputeMonthly), p.ComputeMonthly)
	}
	switch {
	case p.StorageGB > 0 || p.StoragePerGBMonth > 0:
		m := p.StorageGB * p.StoragePerGBMonth
		b.add("storage", fmt.Sprintf("storage %s GB x %s = %s", number(p.StorageGB), number(p.StoragePerGBMonth), cents(m)), m)
	case p.StorageMonthly > 0:
		b.add("storage", "storage "+money(p.StorageMonthly), p.StorageMonthly)
	}
	if p.IOPS > 0 || p.PerIOPSMonth > 0 {
		m := p.IOPS * p.PerIOPSMonth
		b.add("iops", fmt.Sprintf("IOPS %s x %s = %s", number(p.IOPS), number(p.PerIOPSMonth), cents(m)), m)
	}
	if p.ThroughputMBps > 0 || p.PerMBpsMonth > 0 {
		m := p.ThroughputMBps * p.PerMBpsMonth
		b.add("throughput", fmt.Sprintf("throughput %s MB/s x %s = %s", number(p.ThroughputMBps), number(p.PerMBpsMonth), cents(m)), m)
	}
	for _, c := range b.parts {
		b.base += c.Monthly
	}
	b.rest = b.base
	switch {
	case p.HA > 0 && p.HA != 1:
		b.add("ha", fmt.Sprintf("HA x%s = %s", number(p.HA), cents(b.base*p.HA)), b.base*(p.HA-1))
		b.rest = b.base * p.HA
	case p.HAMonthly > 0:
		b.add("ha", "HA "+money(p.HAMonthly), p.HAMonthly)
		b.rest += p.HAMonthly
	}
	switch {
	case p.BackupGB > 0 || p.BackupPerGBMonth > 0:
		m := p.BackupGB * p.BackupPerGBMonth
		b.add("backup", fmt.Sprintf("backup %s GB x %s = %s", number(p.BackupGB), number(p.BackupPerGBMonth), cents(m)), m)
		b.rest += m
	case p.BackupMonthly > 0:
		b.add("backup", "backup "+money(p.BackupMonthly), p.BackupMonthly)
		b.rest += p.BackupMonthly
	}
	if p.NetworkMonthly > 0 {
		b.add("network", "network "+money(p.NetworkMonthly), p.NetworkMonthly)
		b.rest += p.NetworkMonthly
	}
	b.total = b.rest
	switch percent := p.FeePercent / 100 * b.rest; {
	case p.FeeMonthly > 0 && p.FeePercent > 0:
		b.add("fee", fmt.Sprintf("fee %s + %s%% of %s = %s", money(p.FeeMonthly), number(p.FeePercent), cents(b.rest), cents(p.FeeMonthly+percent)), p.FeeMonthly+percent)
		b.total += p.FeeMonthly + percent
	case p.FeeMonthly > 0:
		b.add("fee", "fee "+money(p.FeeMonthly), p.FeeMonthly)
		b.total += p.FeeMonthly
	case p.FeePercent > 0:
		b.add("fee", fmt.Sprintf("fee %s%% of %s = %s", number(p.FeePercent), cents(b.rest), cents(percent)), percent)
		b.total += percent
	}
	return b
}

// number is a figure as given: 0.115, 512.
func number(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// cents is an amount worked out, to the cent.
func cents(v float64) string {
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// money is an amount as given, to the cent or finer: 541.30, 1788.608.
func money(v float64) string {
	s := cents(v)
	if f, _ := strconv.ParseFloat(s, 64); f == v {
		return s
	}
	return number(v)
}

// PerUnit is what a unit of throughput costs a month: monthly divided by
// throughput, such as USD per month per TPS. It is NaN when either is 0,
// negative, infinite or NaN, so that a missing price or measurement gives no
// figure rather than a misleading one.
func PerUnit(monthly, throughput float64) float64 {
	if !usable(monthly) || !usable(throughput) {
		return math.NaN()
	}
	return monthly / throughput
}

// UnitsPer is how much throughput a unit of currency buys for a month:
// throughput divided by monthly, such as TPS per USD-month. It is NaN when
// either is 0, negative, infinite or NaN.
func UnitsPer(monthly, throughput float64) float64 {
	if !usable(monthly) || !usable(throughput) {
		return math.NaN()
	}
	return throughput / monthly
}

func usable(v float64) bool {
	return v > 0 && !math.IsInf(v, 1) // NaN > 0 is false
}
