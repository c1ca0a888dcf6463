package keydist_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/pgbakeoff/pgbakeoff/internal/keydist"
)

func Example() {
	spec, err := keydist.Parse("zipfian:1.1")
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := keydist.New(spec, 1, 1_000_000)
	if err != nil {
		fmt.Println(err)
		return
	}
	rng := rand.NewPCG(1, 2) // each client has its own
	hot := 0
	for range 10000 {
		if d.Draw(rng) <= 10 {
			hot++
		}
	}
	fmt.Println(spec)
	fmt.Printf("keys 1 to 10 drawn %.0f%% of the time\n", float64(hot)/100)

	_, err = keydist.Parse("pareto:1.5")
	fmt.Println(err)
	// Output:
	// zipfian:1.1
	// keys 1 to 10 drawn 33% of the time
	// distribution "pareto:1.5": h must be in (0, 1), as pareto:0.2
}
