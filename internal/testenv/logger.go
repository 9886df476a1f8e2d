package testenv

import (
	"log/slog"
	"os"
	"testing"
)

// Logger is a logger for code under test: silent, and everything down to
// debug level on stderr under go test -v.
func Logger() *slog.Logger {
	if !testing.Verbose() {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
