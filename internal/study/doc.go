// Package study reads a study file: a YAML benchmark matrix of targets,
// workloads, client counts and repetitions. It checks the file, reporting
// every problem with its line and column at once, and expands it into an
// ordered plan of runs. It runs nothing, and leaves the workloads' load and
// run options to the command that owns those flags; Study.Errorf lets that
// command report a bad option at its place in the file.
//
// A study file:
//
//	name: pg11-vs-pg16
//	targets:
//	  - name: pg11
//	    local: {version: "11", settings: {shared_buffers: 1GB}}
//	  - name: rds
//	    dsn: "host=db.example user=bench dbname=bench"
//	    password: {env: RDS_PASSWORD}
//	workloads:
//	  - kind: tpcc
//	    load: {warehouses: 4}
//	matrix: {clients: [4, 8], duration: 2m, repeat: 3}
//
// A target may carry a price (see cost.Price): a monthly figure, components,
// a ref to an entry of a prices file (see LoadPrices) that the study names
// relative to itself, or a lookup in its cloud's price list (Target.PriceLookup,
// a pricelist.Query that `study run` looks up and keeps with the study):
//
//	prices: ../prices/seed-reports.yaml
//	targets:
//	  - name: pg16
//	    local: {version: "16"}
//	    price: {ref: azure-flexible-d16ads-v5}
//	  - name: rds
//	    dsn: "host=db.example user=bench dbname=bench"
//	    price: {compute_per_hour: 0.34, storage_gb: 512, storage_per_gb_month: 0.115, ha: 2}
//	  - name: quote
//	    dsn: "host=db2.example user=bench dbname=bench"
//	    price: {monthly: 1234.5, currency: EUR, source: "vendor quote", date: 2025-03}
//	  - name: rds-multi-az
//	    dsn: "host=db3.example user=bench dbname=bench"
//	    price: {cloud: aws, instance: db.m6g.4xlarge, storage: "gp3:1000GiB", multi_az: true, region: us-east-1}
//
// Reading and planning it:
//
//	s, err := study.Load("pg11-vs-pg16.yaml")
//	if err != nil {
//		return err // study.Errors: one "file:line:col: message" per line
//	}
//	var errs study.Errors
//	for _, w := range s.Workloads {
//		for _, o := range w.Run {
//			if flags.Lookup(o.Name) == nil {
//				errs = append(errs, s.Errorf(o.Pos, "%s has no run option %q", w.Kind, o.Key))
//			}
//		}
//	}
//	if err := errs.Err(); err != nil {
//		return err
//	}
//	fmt.Printf("%d runs, about %s\n", len(s.Plan()), s.Estimate())
//	for _, c := range s.Plan() {
//		fmt.Println(c.Seq, c.Key, c.Fingerprint)
//	}
package study
