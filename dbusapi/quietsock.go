package dbusapi

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// quietSocket reads and writes the bus socket with raw system calls, in
// the runtime's poller. A plain net.Conn call enters the runtime's
// blocking-syscall path, which wakes the runtime's monitor thread every
// time an idle daemon gets a message: two more context switches on every
// call, and a futex wake in the way of the reply. The socket is
// non-blocking, so a raw read or write never blocks; "not ready" waits in
// the poller as net.Conn would.
type quietSocket struct {
	*net.UnixConn
	raw syscall.RawConn
}

func newQuietSocket(c *net.UnixConn) (*quietSocket, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &quietSocket{UnixConn: c, raw: raw}, nil
}

func (s *quietSocket) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n uintptr
	var errno syscall.Errno
	err := s.raw.Read(func(fd uintptr) bool {
		for {
			n, _, errno = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			if errno != syscall.EINTR {
				return errno != syscall.EAGAIN
			}
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, errno
	case n == 0:
		return 0, io.EOF
	}
	return int(n), nil
}

func (s *quietSocket) Write(p []byte) (int, error) {
	written := 0
	var errno syscall.Errno
	err := s.raw.Write(func(fd uintptr) bool {
		for written < len(p) {
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[written])), uintptr(len(p)-written))
			switch e {
			case 0:
				written += int(n)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	if err == nil && errno != 0 {
		err = errno
	}
	return written, err
}
