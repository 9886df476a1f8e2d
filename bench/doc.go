// Package bench holds antidrift's benchmarks (issue #6): the figures in
// BENCHMARKS.md, each measured with Go's benchmark harness against the real
// daemon process, a private D-Bus daemon and Xvfb + openbox, side by side
// with a peer where one exists (xprop -spy, a 1 Hz poller, a minimal Go
// service). It has no tests: `go test ./...` compiles it and runs nothing;
// the benchmarks run only with -bench. `make bench` runs them all through
// ./bench/cmd/benchreport, which rewrites BENCHMARKS.md.
package bench
