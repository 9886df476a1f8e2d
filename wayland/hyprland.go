package wayland

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/antidrift/antidrift/service"
)

// Hyprland has no minimized state either; it has special workspaces, hidden
// unless toggled, which its request socket (hyprctl's) can move a window to.
// Hyprland cannot run in antidrift's tests (it needs a GPU even headless):
// what is tested is the requests this sends and how it reads the replies.

// hyprMaxReply bounds a reply to one request.
const hyprMaxReply = 1 << 20

// hyprSpecial is the special workspace drifting windows are hidden on.
const hyprSpecial = "special:antidrift"

// hyprIPC talks to Hyprland's request socket, one connection a request.
type hyprIPC struct{ path string }

func (hyprIPC) name() string { return "Hyprland's IPC" }

// hyprSocket is where the Hyprland instance sig listens: under
// $XDG_RUNTIME_DIR/hypr since Hyprland 0.40, under /tmp/hypr before.
func hyprSocket(runtimeDir, sig string) string {
	p := filepath.Join(runtimeDir, "hypr", sig, ".socket.sock")
	if _, err := os.Stat(p); err != nil {
		if old := filepath.Join("/tmp/hypr", sig, ".socket.sock"); exists(old) {
			return old
		}
	}
	return p
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// request sends one request and reads the whole reply (Hyprland closes the
// connection after it).
func (c hyprIPC) request(ctx context.Context, req string) ([]byte, error) {
	conn, err := dialIPC(ctx, c.path)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, req); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(conn, hyprMaxReply))
}

// dispatch runs a dispatcher; Hyprland answers "ok" or why not.
func (c hyprIPC) dispatch(ctx context.Context, args string) error {
	b, err := c.request(ctx, hyprDispatch(args))
	if err != nil {
		return err
	}
	if r := strings.TrimSpace(string(b)); r != "ok" {
		return fmt.Errorf("Hyprland refused %q: %s", args, r)
	}
	return nil
}

func hyprDispatch(args string) string { return "dispatch " + args }

// hyprActiveRequest asks for the active window as JSON.
const hyprActiveRequest = "j/activewindow"

// hyprWindow is the part of Hyprland's window JSON antidrift reads.
type hyprWindow struct {
	Address   string `json:"address"`
	Class     string `json:"class"`
	Title     string `json:"title"`
	Workspace struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"workspace"`
}

// parseHyprActive reads the reply to hyprActiveRequest; ok is false when
// no window is active (Hyprland answers "{}").
func parseHyprActive(b []byte) (w hyprWindow, ok bool, err error) {
	if err := json.Unmarshal(b, &w); err != nil {
		return w, false, fmt.Errorf("Hyprland's IPC: a reply that is not JSON: %w", err)
	}
	return w, strings.HasPrefix(w.Address, "0x"), nil
}

// workspaceArg names w's workspace for a dispatcher.
func (w hyprWindow) workspaceArg() string {
	if w.Workspace.ID > 0 {
		return strconv.FormatInt(w.Workspace.ID, 10)
	}
	return "name:" + w.Workspace.Name
}

// hideFocused moves the active window to the special workspace if it is the
// window described, and returns how to bring it back to its workspace. It
// returns service.ErrNotActive, and does nothing, when another window is
// active.
func (c hyprIPC) hideFocused(ctx context.Context, appID, title string) (restore, error) {
	b, err := c.request(ctx, hyprActiveRequest)
	if err != nil {
		return nil, err
	}
	w, ok, err := parseHyprActive(b)
	if err != nil {
		return nil, err
	}
	if !ok || w.Class != appID || w.Title != title {
		return nil, service.ErrNotActive
	}
	if err := c.dispatch(ctx, hyprHide(w)); err != nil {
		return nil, err
	}
	return func(ctx context.Context, activate func(context.Context) error) error {
		// Back on its own workspace first: activating a window on a
		// hidden special workspace would show the whole special
		// workspace over the current one.
		if err := c.dispatch(ctx, hyprRestore(w)); err != nil {
			return err
		}
		return activate(ctx)
	}, nil
}

func hyprHide(w hyprWindow) string {
	return "movetoworkspacesilent " + hyprSpecial + ",address:" + w.Address
}

func hyprRestore(w hyprWindow) string {
	return "movetoworkspacesilent " + w.workspaceArg() + ",address:" + w.Address
}
