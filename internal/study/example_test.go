package study_test

import (
	"fmt"

	"github.com/pgbakeoff/pgbakeoff/internal/study"
)

func ExampleStudy_Plan() {
	s, err := study.Parse("example.yaml", []byte(`
targets:
  - name: pg11
    local: {version: "11"}
  - name: pg16
    local: {version: "16"}
workloads:
  - kind: tpcb
    load: {scale: 10}
matrix: {clients: [8, 4], warmup: 10s, duration: 1m, repeat: 3, pause: 5s}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range s.Plan() {
		fmt.Println(c.Seq, c.Key)
	}
	fmt.Println("estimate:", s.Estimate())
	// Output:
	// 1 pg11/tpcb/c4/r1
	// 2 pg16/tpcb/c4/r1
	// 3 pg16/tpcb/c4/r2
	// 4 pg11/tpcb/c4/r2
	// 5 pg11/tpcb/c4/r3
	// 6 pg16/tpcb/c4/r3
	// 7 pg11/tpcb/c8/r1
	// 8 pg16/tpcb/c8/r1
	// 9 pg16/tpcb/c8/r2
	// 10 pg11/tpcb/c8/r2
	// 11 pg11/tpcb/c8/r3
	// 12 pg16/tpcb/c8/r3
	// estimate: 14m55s
}

func ExampleParse_errors() {
	_, err := study.Parse("example.yaml", []byte(`
targets:
  - name: rds
    dsn: "postgres://bench:hunter2@db.example/bench"
workloads:
  - kind: tpcc
    dataset: cloned
matrix:
  warmpu: 30s
  duration: 2 minutes
`))
	fmt.Println(err)
	// Output:
	// example.yaml:4:10: dsn holds a password (or sslpassword); remove it and use password: {env: NAME}, password: {command: "..."} or ~/.pgpass
	// example.yaml:7:14: unknown dataset "cloned"; did you mean "clone"?
	// example.yaml:9:3: unknown key "warmpu" in matrix; did you mean "warmup"?
	// example.yaml:10:13: invalid duration "2 minutes"; use Go durations like 2m or 90s
}

func ExampleStudy_Errorf() {
	s, err := study.Parse("example.yaml", []byte(`
targets: [{name: a, dsn: "host=db"}]
workloads:
  - kind: tpcc
    run: {warehouses: 4, mode: server}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	// The caller knows which options each command takes.
	runFlags := map[string]bool{"mode": true, "duration": true}
	var errs study.Errors
	for _, w := range s.Workloads {
		for _, o := range w.Run {
			if !runFlags[o.Name] {
				errs = append(errs, s.Errorf(o.Pos, "pgbakeoff run %s has no option %q; it is an option of init", w.Kind, o.Key))
			}
		}
	}
	fmt.Println(errs.Err())
	// Output:
	// example.yaml:5:11: pgbakeoff run tpcc has no option "warehouses"; it is an option of init
}
