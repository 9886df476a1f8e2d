package kwin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// The guard minimizes only the active window, and says so truly; it hands
// focus back by activating.
func TestGuardMinimizesOnlyTheActiveWindowAndActivates(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testGuardMinimizesOnlyTheActiveWindowAndActivates)
}

func testGuardMinimizesOnlyTheActiveWindowAndActivates(t *testing.T, rel testenv.Release) {
	p := startPlasma(t, rel)
	editor := p.kwin.Window(t, "org.example.Editor", "main.go - editor")
	distraction := p.kwin.Window(t, "org.example.Distraction", "cat videos")
	p.waitWindow(t, distraction, "cat videos")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()

	if err := p.guard.MinimizeWindow(ctx, editor.ID); !errors.Is(err, service.ErrNotActive) {
		t.Fatalf("minimizing a window without focus: %v, want ErrNotActive", err)
	}
	if p.kwin.Info(t, editor).Minimized {
		t.Fatal("the window without focus was minimized")
	}
	if err := p.guard.MinimizeWindow(ctx, distraction.ID); err != nil {
		t.Fatalf("minimizing the active window: %v", err)
	}
	if info := p.kwin.Info(t, distraction); !info.Minimized || info.Active {
		t.Fatalf("KWin says of the window the guard minimized: got %+v, want Minimized and not Active", info)
	}
	if err := p.guard.ActivateWindow(ctx, distraction.ID); err != nil {
		t.Fatalf("activating: %v", err)
	}
	if info := p.kwin.Info(t, distraction); info.Minimized || !info.Active {
		t.Fatalf("KWin says of the window the guard activated: got %+v, want Active and not Minimized", info)
	}
	p.waitWindow(t, distraction, "cat videos")

	gone := "{00000000-0000-4000-8000-000000000000}"
	if err := p.guard.MinimizeWindow(ctx, gone); !errors.Is(err, service.ErrNotActive) {
		t.Fatalf("minimizing a window KWin does not have: %v, want ErrNotActive", err)
	}
	if err := p.guard.ActivateWindow(ctx, gone); err == nil || !strings.Contains(err.Error(), "no longer exists") {
		t.Fatalf("activating a window KWin does not have: %v", err)
	}
	// The one-shots leave no file behind.
	if got := p.scriptFiles(t); strings.Join(got, " ") != focusFile {
		t.Errorf("the script directory holds %v, want only %s", got, focusFile)
	}
}

// A handle is data: anything but a UUID in braces never reaches KWin.
func TestGuardRefusesHandlesThatAreNotKWinsIDs(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testGuardRefusesHandlesThatAreNotKWinsIDs)
}

func testGuardRefusesHandlesThatAreNotKWinsIDs(t *testing.T, rel testenv.Release) {
	p := startPlasma(t, rel)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for _, h := range []string{"", "0x1a00003", `{x"); workspace.activeWindow.closeWindow(); ("}`, "{00000000-0000-4000-8000-000000000000}\n", "00000000-0000-4000-8000-000000000000"} {
		for name, act := range map[string]func(context.Context, string) error{"minimize": p.guard.MinimizeWindow, "activate": p.guard.ActivateWindow} {
			if err := act(ctx, h); err == nil || !strings.Contains(err.Error(), "not a KWin window handle") {
				t.Errorf("%s %q: %v", name, h, err)
			}
		}
	}
}

// Only the KWin script that was loaded can report an outcome: a forger on
// the bus is refused, whatever token it tries.
func TestGuardOutcomesAreBelievedOnlyFromKWin(t *testing.T) {
	testenv.EachRelease(t, testenv.KWinReleases, testGuardOutcomesAreBelievedOnlyFromKWin)
}

func testGuardOutcomesAreBelievedOnlyFromKWin(t *testing.T, rel testenv.Release) {
	p := startPlasma(t, rel)
	g := p.guard
	token, outcome, err := g.expect(":1.9999")
	if err != nil {
		t.Fatal(err)
	}
	defer g.forget(token)
	for _, tok := range []string{token, "nonsense"} {
		_, err := p.bus.Run(t, "gdbus", "call", "--session", "--dest", "org.antidrift", "--object-path", string(outcomePath),
			"--method", outcomeIface+".Done", tok, outMinimized)
		if err == nil || !strings.Contains(err.Error(), "org.antidrift.Error.AccessDenied") {
			t.Fatalf("a forged Done with token %q: %v", tok, err)
		}
	}
	select {
	case out := <-outcome:
		t.Fatalf("the waiting call after forged outcomes: got %q, want nothing", out)
	default:
	}
}
