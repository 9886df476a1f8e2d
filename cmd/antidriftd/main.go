// Command antidriftd is the antidrift focus daemon: it owns org.antidrift
// on the session bus and serves /org/antidrift/Session1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/antidrift/antidrift/dbusapi"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("antidriftd", flag.ContinueOnError)
	stateDir := fs.String("state-dir", "", "state directory (default $XDG_STATE_HOME/antidrift)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *showVersion {
		fmt.Println("antidriftd", version)
		return 0
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	m := &Main{StateDir: *stateDir, Version: version}
	if err := m.Run(ctx); err != nil {
		if errors.Is(err, dbusapi.ErrNameTaken) {
			fmt.Fprintln(os.Stderr, "antidriftd:", err, "(stop it first, e.g. systemctl --user stop antidrift)")
		} else {
			fmt.Fprintln(os.Stderr, "antidriftd:", err)
		}
		return 1
	}
	code := 0
	select {
	case <-ctx.Done():
	case <-m.Done():
		m.log.Error("lost the session bus; exiting")
		code = 1
	}
	if err := m.Close(); err != nil {
		m.log.Warn("shutdown", "err", err)
	}
	return code
}
