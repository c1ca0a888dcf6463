// Package cost is what a target costs to run, reduced to a month, and what its
// throughput costs: price-performance in either direction.
//
// A Price is either one monthly figure (Total) or components: compute by the
// hour or the month, storage by the GB-month or the month, provisioned IOPS
// and throughput, backup, network, a high-availability multiplier, and a fee.
// Monthly adds them up and Detail says how, for people:
//
//	p := cost.Price{ComputePerHour: 0.34, StorageGB: 512, StoragePerGBMonth: 0.115, HA: 2}
//	if err := p.Validate(); err != nil {
//		return err // cost.Errors: each problem with the field it is about
//	}
//	fmt.Println(p.Detail())
//	// compute 0.34/h x 730 = 248.20, storage 512 GB x 0.115 = 58.88, HA x2 = 614.16; total 614.16 USD/month
//	fmt.Printf("%.2f USD/month per TPS\n", cost.PerUnit(p.Monthly(), tps))
//
// The package reads no files. Prices files and the price: of a study's targets
// are read by package study, which names each amount as Fields does.
package cost
