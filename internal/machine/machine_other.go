//go:build !linux

package machine

// Elsewhere the CPU model, memory, distribution and kernel release are not read:
// reading them needs a system call or tool of each system, and runs still say
// the OS, the architecture and the logical CPUs.

func cpuModel() string      { return "" }
func distribution() string  { return "" }
func kernelRelease() string { return "" }

// Memory is the machine's memory in bytes, 0 where it is not read.
func Memory() int64 { return 0 }
