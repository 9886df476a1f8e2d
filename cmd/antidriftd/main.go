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

	"github.com/antidrift/antidrift/config"
	"github.com/antidrift/antidrift/dbusapi"
	"github.com/antidrift/antidrift/internal/memlimit"
	"github.com/antidrift/antidrift/persist"
)

// exitLaterState is the exit status of a daemon that will not start
// because a later version of antidrift wrote its state directory: nothing
// a restart could fix, so the unit does not restart on it
// (RestartPreventExitStatus=).
const exitLaterState = 3

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	// No collection while idle, and the same cost per focus event however
	// long the session: GOGC off and a memory limit that follows the live
	// heap (see package memlimit and BENCHMARKS.md). GOGC or GOMEMLIMIT
	// in the environment win.
	memlimit.Apply()
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("antidriftd", flag.ContinueOnError)
	stateDir := fs.String("state-dir", "", "keep the state in `DIR` (default $XDG_STATE_HOME/antidrift)")
	configPath := fs.String("config", "", "read the settings from `FILE` (default $XDG_CONFIG_HOME/antidrift/config.toml)")
	checkConfig := fs.Bool("check-config", false, "check the config file, print its problems, exit 1 if it has any")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // -h, --help: the flags are printed, as asked
		}
		return 2
	}
	if *showVersion {
		fmt.Println("antidriftd", version)
		return 0
	}
	if *checkConfig {
		return check(*configPath)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	m := &Main{StateDir: *stateDir, ConfigPath: *configPath, Display: os.Getenv("DISPLAY"), Wayland: os.Getenv("WAYLAND_DISPLAY"), Version: version}
	if err := m.Run(ctx); err != nil {
		switch {
		case errors.Is(err, dbusapi.ErrNameTaken):
			fmt.Fprintln(os.Stderr, "antidriftd:", err, "(stop it first, e.g. systemctl --user stop antidrift)")
		case errors.Is(err, persist.ErrNewerFormat):
			fmt.Fprintln(os.Stderr, "antidriftd:", err)
			return exitLaterState
		default:
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

// check prints the config file's problems, or that it is fine.
func check(path string) int {
	if path == "" {
		var err error
		if path, err = config.DefaultPath(); err != nil {
			fmt.Fprintln(os.Stderr, "antidriftd:", err)
			return 1
		}
	}
	_, problems := config.LoadWithRules(path)
	for _, p := range problems {
		fmt.Println(p.String())
	}
	if len(problems) > 0 {
		return 1
	}
	fmt.Println(path + ": ok")
	return 0
}
