// Package studyrun carries studies out. A study file (internal/study parses it)
// declares targets, workloads and a matrix of client counts and repetitions; a
// Runner turns it into runs:
//
//	sr := &studyrun.Runner{Results: "results.db", OpenStore: open, OpenReading: read, Out: os.Stdout, Log: os.Stderr, Now: time.Now}
//	err := sr.Run(ctx, "pg15-vs-pg16.yaml")
//
// Run checks the whole file first (every workload's load: and run: options
// against the workload's own, through the same flags as `init` and `run`), then
// preflights every target (reachability, privileges, connection slots, disk),
// starts the local servers, loads each dataset once per target, and makes each
// run of the plan not made before, one engine.Run each, preparing its data as
// the workload's dataset policy says (keep, clone, reload). Every run and
// dataset is recorded in the results store with a fingerprint of what it
// measured, so an interrupted study continues where it stopped and an edited
// one refuses to mix results. Plan and Status show what a study would do and
// what it has made; ReadStatus is that progress as a value (`study status --json`).
package studyrun
