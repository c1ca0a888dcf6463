package driver

// SetNoLoops runs the clients of the runs that follow on goroutines of their own
// through Go's poller, as where event loops cannot be; it returns the function that
// restores it. Not for use while a run is going.
func SetNoLoops() (restore func()) {
	noLoops = true
	return func() { noLoops = false }
}
