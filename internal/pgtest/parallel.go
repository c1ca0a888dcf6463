package pgtest

import (
	"flag"
	"strconv"
)

// Parallel lets n parallel tests run at once instead of go test's default of
// one a core, unless the command line gives -parallel. It is for packages whose
// parallel tests spend their time waiting on servers (starting, failing over,
// throttled by a lock) rather than on this process's CPU. Call it from TestMain
// before Run:
//
//	func TestMain(m *testing.M) { pgtest.Parallel(4); os.Exit(pgtest.Run(m)) }
func Parallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		// The flag is testing's own; setting it cannot fail once it is registered.
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
