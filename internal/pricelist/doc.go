// Package pricelist looks up what a managed PostgreSQL deployment costs in
// the clouds' own public price lists, so that price-performance needs no
// hand-typed price sheet:
//
//   - Azure: the Retail Prices API (no credentials), Azure Database for
//     PostgreSQL flexible server: compute, storage, provisioned IOPS and
//     throughput, high availability.
//   - AWS: the Price List bulk files of Amazon RDS (offer index, region
//     index, the region's offer file, streamed): PostgreSQL instances,
//     Single-AZ or Multi-AZ, gp2, gp3, io1 and io2 storage, provisioned IOPS
//     and throughput, OnDemand terms.
//   - Google Cloud SQL, whose list needs an API key: the Cloud Billing
//     Catalog when the user has a key.
//
// A lookup gives a cost.Price broken down into components, dated by the
// list's effective date, with where it came from and when it was fetched.
// What a list gives is cached on disk (the AWS region files only as the
// extract that PostgreSQL needs); Offline uses the cache alone, and a stale
// cache is used only with a warning.
//
//	l := pricelist.New(pricelist.Options{Warn: func(w string) { log.Print(w) }})
//	p, err := l.Price(ctx, pricelist.Query{Cloud: "aws", Engine: "postgres",
//		Instance: "db.m6g.4xlarge", Storage: "gp3:1000GiB:12000iops", HA: true, Region: "us-east-1"})
//	fmt.Println(p.Detail(), p.Source)
package pricelist
