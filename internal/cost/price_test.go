package cost

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestMonthlyDetail(t *testing.T) {
	tests := []struct {
		name    string
		price   Price
		monthly float64
		detail  string
	}{
		{"total", Price{Total: 2172.72, Currency: "USD"}, 2172.72, "2172.72 USD/month"},
		{"total finer than cents, default currency", Price{Total: 1788.608}, 1788.608, "1788.608 USD/month"},
		{"compute per hour", Price{ComputePerHour: 0.68}, 496.4,
			"compute 0.68/h x 730 = 496.40; total 496.40 USD/month"},
		{"compute and storage with HA", Price{ComputePerHour: 0.34, StorageGB: 512, StoragePerGBMonth: 0.115, HA: 2}, 614.16,
			"compute 0.34/h x 730 = 248.20, storage 512 GB x 0.115 = 58.88, HA x2 = 614.16; total 614.16 USD/month"},
		{"every component, HA and both fees", Price{
			ComputePerHour: 0.34,
			StorageGB:      512, StoragePerGBMonth: 0.115,
			IOPS: 3000, PerIOPSMonth: 0.005,
			ThroughputMBps: 125, PerMBpsMonth: 0.04,
			HA:       2,
			BackupGB: 100, BackupPerGBMonth: 0.095,
			NetworkMonthly: 20,
			FeeMonthly:     50, FeePercent: 10,
			Currency: "EUR",
		}, 802.026,
			"compute 0.34/h x 730 = 248.20, storage 512 GB x 0.115 = 58.88, IOPS 3000 x 0.005 = 15.00, " +
				"throughput 125 MB/s x 0.04 = 5.00, HA x2 = 654.16, backup 100 GB x 0.095 = 9.50, network 20.00, " +
				"fee 50.00 + 10% of 683.66 = 118.37; total 802.03 EUR/month"},
		{"monthly components", Price{ComputeMonthly: 541.3, StorageMonthly: 259.05, BackupMonthly: 52.8, NetworkMonthly: 340, FeeMonthly: 1500}, 2693.15,
			"compute 541.30, storage 259.05, backup 52.80, network 340.00, fee 1500.00; total 2693.15 USD/month"},
		{"percent fee", Price{ComputePerHour: 1, FeePercent: 20}, 876,
			"compute 1/h x 730 = 730.00, fee 20% of 730.00 = 146.00; total 876.00 USD/month"},
		{"fractional HA on a monthly compute", Price{ComputeMonthly: 100, HA: 1.5}, 150,
			"compute 100.00, HA x1.5 = 150.00; total 150.00 USD/month"},
		{"HA 1 shows no line", Price{ComputeMonthly: 100, HA: 1}, 100, "compute 100.00; total 100.00 USD/month"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.price.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			if got := tt.price.Monthly(); math.Abs(got-tt.monthly) > 1e-9*tt.monthly {
				t.Errorf("Monthly = %v, want %v", got, tt.monthly)
			}
			if got := tt.price.Detail(); got != tt.detail {
				t.Errorf("Detail:\n got %s\nwant %s", got, tt.detail)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	type problem struct{ field, msg string }
	tests := []struct {
		name  string
		price Price
		want  []problem // nil: valid
	}{
		{"dated total", Price{Total: 10, Currency: "EUR", Date: "2024-01-17", Source: "x"}, nil},
		{"year only", Price{Total: 10, Date: "2019"}, nil},
		{"year and month", Price{Total: 10, Date: "2024-01"}, nil},
		{"fee alone", Price{FeeMonthly: 1500}, nil},

		{"negative", Price{StorageGB: -5, StoragePerGBMonth: 0.1},
			[]problem{{"storage_gb", "storage_gb -5 is negative"}}},
		{"NaN", Price{ComputePerHour: math.NaN()},
			[]problem{{"compute_per_hour", "compute_per_hour NaN is not a number"}}},
		{"infinite", Price{Total: math.Inf(1)},
			[]problem{{"monthly", "monthly +Inf is not a number"}}},
		{"total with components", Price{Total: 100, StorageMonthly: 5},
			[]problem{{"monthly", "monthly is the whole month; give it or components such as storage_monthly, not both"}}},
		{"total with HA", Price{Total: 100, HA: 2},
			[]problem{{"monthly", "monthly is the whole month; give it or components such as ha, not both"}}},
		{"quantity without unit price", Price{StorageGB: 512},
			[]problem{{"storage_gb", "storage_gb needs storage_per_gb_month"}}},
		{"unit price without quantity", Price{ComputePerHour: 1, PerIOPSMonth: 0.05},
			[]problem{{"per_iops_month", "per_iops_month needs iops"}}},
		{"throughput without unit price", Price{ComputePerHour: 1, ThroughputMBps: 768},
			[]problem{{"throughput_mbps", "throughput_mbps needs per_mbps_month"}}},
		{"backup unit price without quantity", Price{ComputePerHour: 1, BackupPerGBMonth: 0.095},
			[]problem{{"backup_per_gb_month", "backup_per_gb_month needs backup_gb"}}},
		{"compute twice", Price{ComputePerHour: 1, ComputeMonthly: 730},
			[]problem{{"compute_monthly", "give compute_per_hour or compute_monthly, not both"}}},
		{"storage twice", Price{StorageGB: 1, StoragePerGBMonth: 1, StorageMonthly: 1},
			[]problem{{"storage_monthly", "give storage_gb with storage_per_gb_month, or storage_monthly, not both"}}},
		{"backup twice", Price{BackupGB: 1, BackupPerGBMonth: 1, BackupMonthly: 1},
			[]problem{{"backup_monthly", "give backup_gb with backup_per_gb_month, or backup_monthly, not both"}}},
		{"HA below 1", Price{ComputePerHour: 1, HA: 0.5},
			[]problem{{"ha", "ha 0.5 is out of range; want 1 or more, such as 2 for one standby"}}},
		{"HA of nothing", Price{BackupMonthly: 10, HA: 2},
			[]problem{{"ha", "ha multiplies compute and storage; give them too"}}},
		{"percent of nothing", Price{FeePercent: 10},
			[]problem{{"fee_percent", "fee_percent needs other amounts to be a percent of"}}},
		{"only zeros worked out", Price{HA: 2, StorageGB: 512}, []problem{
			{"storage_gb", "storage_gb needs storage_per_gb_month"},
			{"ha", "ha multiplies compute and storage; give them too"},
		}},
		{"empty", Price{Currency: "USD", Source: "x"},
			[]problem{{"", "the price has no amounts; give monthly, or components such as compute_per_hour"}}},
		{"currency", Price{Total: 1, Currency: "usd"},
			[]problem{{"currency", `invalid currency "usd"; want a code of three upper-case letters like USD or EUR`}}},
		{"currency symbol", Price{Total: 1, Currency: "$"},
			[]problem{{"currency", `invalid currency "$"; want a code of three upper-case letters like USD or EUR`}}},
		{"date words", Price{Total: 1, Date: "January 2024"},
			[]problem{{"date", `invalid date "January 2024"; want YYYY, YYYY-MM or YYYY-MM-DD`}}},
		{"date month 13", Price{Total: 1, Date: "2024-13"},
			[]problem{{"date", `invalid date "2024-13"; want YYYY, YYYY-MM or YYYY-MM-DD`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.price.Validate()
			if tt.want == nil {
				if err != nil {
					t.Errorf("Validate = %v, want nil", err)
				}
				return
			}
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Validate = %v, want Errors", err)
			}
			var got []problem
			var msgs []string
			for _, e := range errs {
				got = append(got, problem{e.Field, e.Msg})
				msgs = append(msgs, e.Msg)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n got %q\nwant %q", got, tt.want)
			}
			if err.Error() != strings.Join(msgs, "; ") {
				t.Errorf("Error() = %q, want the messages joined by \"; \"", err)
			}
		})
	}
}

// TestFields checks that every amount of a Price is listed once, and that
// Validate's fields are names Fields gives (or currency, date, "").
func TestFields(t *testing.T) {
	var p Price
	fields := p.Fields()
	seen := map[string]bool{}
	for i, f := range fields {
		if seen[f.Name] {
			t.Errorf("field %q twice", f.Name)
		}
		seen[f.Name] = true
		*f.Value = float64(i + 1)
	}
	// Every float64 of Price is set through Fields exactly once.
	v := reflect.ValueOf(p)
	for i := range v.NumField() {
		if fv := v.Field(i); fv.Kind() == reflect.Float64 && fv.Float() == 0 {
			t.Errorf("Price.%s is not in Fields", v.Type().Field(i).Name)
		}
	}
	// Stored prices (JSON) name each amount as prices files do.
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var stored map[string]any
	json.Unmarshal(data, &stored)
	for _, f := range fields {
		if stored[f.Name] != *f.Value {
			t.Errorf("JSON %s = %v, want %v", f.Name, stored[f.Name], *f.Value)
		}
	}
	if n := len(fields); n != 18 {
		t.Errorf("%d fields, want 18", n)
	}
}

// A standby priced as an amount, as price lists price it, is a component of
// its own, and the components add up to Monthly whichever way HA is given.
func TestComponents(t *testing.T) {
	listed := Price{ComputePerHour: 1.232, StorageGB: 1000, StoragePerGBMonth: 0.115, IOPS: 3000, PerIOPSMonth: 0.02, HAMonthly: 1074.36}
	if err := listed.Validate(); err != nil {
		t.Fatal(err)
	}
	want := []Component{{"compute", 1.232 * 730, "compute 1.232/h x 730 = 899.36"}, {"storage", 115, "storage 1000 GB x 0.115 = 115.00"},
		{"iops", 60, "IOPS 3000 x 0.02 = 60.00"}, {"ha", 1074.36, "HA 1074.36"}}
	got := listed.Components()
	if len(got) != len(want) {
		t.Fatalf("components %v, want %v", got, want)
	}
	sum := 0.0
	for i := range want {
		if got[i].Name != want[i].Name || got[i].Detail != want[i].Detail || math.Abs(got[i].Monthly-want[i].Monthly) > 1e-9 {
			t.Errorf("component %d = %v, want %v", i, got[i], want[i])
		}
		sum += got[i].Monthly
	}
	if math.Abs(sum-listed.Monthly()) > 1e-9 || math.Abs(listed.Monthly()-2148.72) > 1e-9 {
		t.Errorf("components add up to %v, Monthly %v, want 2148.72", sum, listed.Monthly())
	}
	if d := listed.Detail(); !strings.Contains(d, "HA 1074.36; total 2148.72 USD/month") {
		t.Errorf("Detail = %q", d)
	}

	multiplied := Price{ComputeMonthly: 100, StorageMonthly: 20, HA: 2, FeeMonthly: 5}
	sum = 0
	for _, c := range multiplied.Components() {
		sum += c.Monthly
	}
	if sum != 245 || multiplied.Monthly() != 245 {
		t.Errorf("HA x2 components add up to %v, Monthly %v, want 245", sum, multiplied.Monthly())
	}
	if c := (Price{Total: 99}).Components(); len(c) != 1 || c[0] != (Component{"total", 99, "99.00"}) {
		t.Errorf("a total's components = %v", c)
	}

	both := Price{ComputePerHour: 1, HA: 2, HAMonthly: 730}
	if err := both.Validate(); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("ha with ha_monthly: %v", err)
	}
	alone := Price{HAMonthly: 730}
	if err := alone.Validate(); err == nil || !strings.Contains(err.Error(), "give them too") {
		t.Errorf("ha_monthly alone: %v", err)
	}
	if err := (Price{Total: 1, Fetched: "yesterday"}).Validate(); err == nil || !strings.Contains(err.Error(), "RFC 3339") {
		t.Errorf("a bad fetched time: %v", err)
	}
}

func TestPerUnitUnitsPer(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name                string
		monthly, throughput float64
		perUnit, unitsPer   float64 // NaN: want NaN
	}{
		{"TPS", 2693.15, 1963, 2693.15 / 1963, 1963 / 2693.15},
		{"round", 1000, 500, 2, 0.5},
		{"no price", 0, 500, nan, nan},
		{"no throughput", 1000, 0, nan, nan},
		{"NaN price", nan, 500, nan, nan},
		{"NaN throughput", 1000, nan, nan, nan},
		{"negative", -1000, 500, nan, nan},
		{"infinite", math.Inf(1), 500, nan, nan},
	}
	same := func(got, want float64) bool {
		if math.IsNaN(want) {
			return math.IsNaN(got)
		}
		return math.Abs(got-want) <= 1e-12*want
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PerUnit(tt.monthly, tt.throughput); !same(got, tt.perUnit) {
				t.Errorf("PerUnit(%v, %v) = %v, want %v", tt.monthly, tt.throughput, got, tt.perUnit)
			}
			if got := UnitsPer(tt.monthly, tt.throughput); !same(got, tt.unitsPer) {
				t.Errorf("UnitsPer(%v, %v) = %v, want %v", tt.monthly, tt.throughput, got, tt.unitsPer)
			}
		})
	}
}
