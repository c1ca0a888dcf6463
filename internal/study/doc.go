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
