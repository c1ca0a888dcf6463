package sampler

import (
	"fmt"
	"syscall"
)

// deviceOf returns the number of the device holding path.
func deviceOf(path string) (device, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return device{}, fmt.Errorf("stat %s: %w", path, err)
	}
	return splitDev(uint64(st.Dev)), nil // Dev is uint32 on some architectures
}

// rdevOf returns the number of the device special file at path.
func rdevOf(path string) (device, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return device{}, fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFBLK {
		return device{}, fmt.Errorf("%s is not a block device", path)
	}
	return splitDev(uint64(st.Rdev)), nil
}

// splitDev splits a Linux dev_t as glibc's gnu_dev_major and gnu_dev_minor do.
func splitDev(dev uint64) device {
	return device{
		major: uint32(dev>>8&0xfff | dev>>32&^0xfff),
		minor: uint32(dev&0xff | dev>>12&^0xff),
	}
}
