package cost_test

import (
	"fmt"

	"github.com/pgbakeoff/pgbakeoff/internal/cost"
)

func ExamplePrice_Detail() {
	prices := []cost.Price{
		{Total: 2172.72, Source: "seed report 000, Table 2", Date: "2024-01-17"},
		{ComputePerHour: 0.34, StorageGB: 512, StoragePerGBMonth: 0.115, HA: 2, FeePercent: 10, Currency: "EUR"},
	}
	for _, p := range prices {
		if err := p.Validate(); err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%.2f: %s\n", p.Monthly(), p.Detail())
	}
	// Output:
	// 2172.72: 2172.72 USD/month
	// 675.58: compute 0.34/h x 730 = 248.20, storage 512 GB x 0.115 = 58.88, HA x2 = 614.16, fee 10% of 614.16 = 61.42; total 675.58 EUR/month
}

func ExamplePrice_Validate() {
	p := cost.Price{Total: 1000, ComputePerHour: 0.34, StorageGB: 512, Currency: "usd"}
	fmt.Println(p.Validate())
	// Output:
	// monthly is the whole month; give it or components such as compute_per_hour, not both; storage_gb needs storage_per_gb_month; invalid currency "usd"; want a code of three upper-case letters like USD or EUR
}

func ExamplePerUnit() {
	// Seed report 003's Premium Disk deployment: 2,693.15 a month, 1,963 TPS read/write.
	monthly, tps := 2693.15, 1963.0
	fmt.Printf("%.2f USD/month per TPS\n", cost.PerUnit(monthly, tps))
	fmt.Printf("%.3f TPS per USD/month\n", cost.UnitsPer(monthly, tps))
	fmt.Println(cost.PerUnit(monthly, 0)) // no measurement: no figure
	// Output:
	// 1.37 USD/month per TPS
	// 0.729 TPS per USD/month
	// NaN
}
