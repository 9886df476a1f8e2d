package persist

import (
	"syscall"
	"testing"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZTiming(t *testing.T) {
	dir := existingStateDir(t)
	writeAuditChain(t, dir, 100000)
	s := openStore(t, dir)
	for range 3 {
		c0, w0 := cpuTime(), time.Now()
		r := s.VerifyAudit()
		t.Logf("verify %+v wall %v cpu %v", r.OK, time.Since(w0), cpuTime()-c0)
	}
	writeRawLog(t, s, "x", 1000000)
	for range 3 {
		c0, w0 := cpuTime(), time.Now()
		ev, _ := s.ReplayEvents("x")
		t.Logf("replay %d wall %v cpu %v", len(ev), time.Since(w0), cpuTime()-c0)
	}
}
