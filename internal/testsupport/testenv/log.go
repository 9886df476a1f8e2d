package testenv

import (
	"log/slog"
	"os"
	"testing"
)

// Logger is the logger a test gives the code under test: silent normally,
// everything down to debug on stderr under go test -v, where a failure is
// being looked into.
func Logger() *slog.Logger {
	if !testing.Verbose() {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
