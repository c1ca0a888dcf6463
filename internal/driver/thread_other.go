//go:build !linux

package driver

// voluntarySwitches is 0: elsewhere than Linux no client waits in the kernel, so
// there is nothing to choose between (see waitChooser).
func voluntarySwitches() int64 { return 0 }
