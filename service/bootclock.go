package service

import (
	"os"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// Boot reads CLOCK_BOOTTIME. The core imports nothing of ours and no
// x/sys, so it asks the kernel directly; it cannot fail on Linux ≥ 2.6.39.
// It never blocks, so it is a raw syscall: an ordinary one would wake the
// runtime's sleeping monitor thread on every read of an idle daemon.
func (SystemClock) Boot() time.Duration {
	const clockBoottime = 7
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockBoottime, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// BootID is the kernel's id of this boot; "" where it cannot be read, which
// no saved id matches.
func (SystemClock) BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
