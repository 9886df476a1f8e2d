package wayland

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/antidrift/antidrift/service"
)

// sway ignores zwlr_foreign_toplevel_handle_v1.set_minimized: it has no
// minimized state. What it has is the scratchpad, a hidden place windows
// can be moved to and shown from, which its i3-compatible IPC reaches.

// i3-ipc message types sway understands (sway-ipc(7)).
const (
	swayRunCommand = 0
	swayGetTree    = 4
)

// swayMagic starts every i3-ipc message, both ways.
const swayMagic = "i3-ipc"

// swayMaxReply bounds a reply; a tree of hundreds of windows is well under.
const swayMaxReply = 16 << 20

// ipcTimeout bounds an IPC exchange when the caller's context has none.
const ipcTimeout = 5 * time.Second

// swayIPC talks to sway's IPC socket ($SWAYSOCK), one connection a call.
type swayIPC struct{ path string }

func (swayIPC) name() string { return "sway's IPC" }

// swayMessage frames an i3-ipc request: magic, payload length (u32), type
// (u32), payload; host byte order.
func swayMessage(typ uint32, payload string) []byte {
	b := make([]byte, 0, len(swayMagic)+8+len(payload))
	b = append(b, swayMagic...)
	b = binary.NativeEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.NativeEndian.AppendUint32(b, typ)
	return append(b, payload...)
}

// SwayRequest frames an i3-ipc request of type typ (0 RUN_COMMAND, 2
// SUBSCRIBE, 4 GET_TREE), and ReadSwayReply reads one reply or event of
// type typ: for a client that keeps its own connection to $SWAYSOCK, as the
// benchmarks do to time a command from the moment it is sent.
func SwayRequest(typ uint32, payload string) []byte { return swayMessage(typ, payload) }

// ReadSwayReply: see SwayRequest.
func ReadSwayReply(r io.Reader, typ uint32) ([]byte, error) { return readSwayReply(r, typ) }

// call sends one request and reads its reply's payload.
func (c swayIPC) call(ctx context.Context, typ uint32, payload string) ([]byte, error) {
	conn, err := dialIPC(ctx, c.path)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.Write(swayMessage(typ, payload)); err != nil {
		return nil, err
	}
	return readSwayReply(conn, typ)
}

// readSwayReply reads one i3-ipc reply of type typ.
func readSwayReply(r io.Reader, typ uint32) ([]byte, error) {
	var h [len(swayMagic) + 8]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n := binary.NativeEndian.Uint32(h[len(swayMagic):])
	got := binary.NativeEndian.Uint32(h[len(swayMagic)+4:])
	if string(h[:len(swayMagic)]) != swayMagic || got != typ || n > swayMaxReply {
		return nil, fmt.Errorf("sway's IPC: a malformed reply (type %d, %d bytes)", got, n)
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

// dialIPC connects to a compositor's IPC socket with ctx's deadline (or
// ipcTimeout) on the whole exchange.
func dialIPC(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(ipcTimeout)
	}
	conn.SetDeadline(deadline)
	return conn, nil
}

// command runs sway commands and fails with sway's words if any fails.
func (c swayIPC) command(ctx context.Context, cmd string) error {
	b, err := c.call(ctx, swayRunCommand, cmd)
	if err != nil {
		return err
	}
	var results []struct {
		Success bool   `json:"success"`
		Error   string `json:"error"`
	}
	if err := json.Unmarshal(b, &results); err != nil {
		return fmt.Errorf("sway's IPC: a reply that is not JSON: %w", err)
	}
	for _, r := range results {
		if !r.Success {
			return fmt.Errorf("sway refused %q: %s", cmd, r.Error)
		}
	}
	return nil
}

// swayNode is the part of a GET_TREE node antidrift reads.
type swayNode struct {
	ID         int64   `json:"id"`
	Type       string  `json:"type"` // root, output, workspace, con, floating_con
	Name       *string `json:"name"`
	AppID      *string `json:"app_id"`
	Focused    bool    `json:"focused"`
	Properties *struct {
		Class string `json:"class"`
	} `json:"window_properties"` // Xwayland windows only
	Nodes         []swayNode `json:"nodes"`
	FloatingNodes []swayNode `json:"floating_nodes"`
}

// focusedWindow is the focused window in a GET_TREE reply, if a window
// (rather than a workspace, or nothing) has focus.
func focusedWindow(tree []byte) (swayNode, bool, error) {
	var root swayNode
	if err := json.Unmarshal(tree, &root); err != nil {
		return swayNode{}, false, fmt.Errorf("sway's IPC: a tree that is not JSON: %w", err)
	}
	stack := []*swayNode{&root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Focused {
			return *n, n.Type == "con" || n.Type == "floating_con", nil
		}
		for i := range n.Nodes {
			stack = append(stack, &n.Nodes[i])
		}
		for i := range n.FloatingNodes {
			stack = append(stack, &n.FloatingNodes[i])
		}
	}
	return swayNode{}, false, nil
}

// is says whether n is the window the foreign-toplevel handle describes:
// sway gives a native window's app_id, or an Xwayland window's class, as
// the handle's app_id, and its title as the node's name.
func (n swayNode) is(appID, title string) bool {
	id := ""
	switch {
	case n.AppID != nil:
		id = *n.AppID
	case n.Properties != nil:
		id = n.Properties.Class
	}
	return id == appID && n.Name != nil && *n.Name == title
}

// hideFocused moves the focused container to the scratchpad if it is the
// window described, and returns how to bring it back as it was. It returns
// service.ErrNotActive, and does nothing, when another window has focus.
func (c swayIPC) hideFocused(ctx context.Context, appID, title string) (restore, error) {
	tree, err := c.call(ctx, swayGetTree, "")
	if err != nil {
		return nil, err
	}
	n, ok, err := focusedWindow(tree)
	if err != nil {
		return nil, err
	}
	if !ok || !n.is(appID, title) {
		return nil, service.ErrNotActive
	}
	if err := c.command(ctx, fmt.Sprintf("[con_id=%d] move scratchpad", n.ID)); err != nil {
		return nil, err
	}
	tiled := n.Type == "con"
	return func(ctx context.Context, activate func(context.Context) error) error {
		// Activating a window in the scratchpad shows it, floating (the
		// scratchpad makes windows floating); a window that was tiled
		// goes back into the layout.
		if err := activate(ctx); err != nil {
			return err
		}
		if !tiled {
			return nil
		}
		return c.command(ctx, fmt.Sprintf("[con_id=%d] floating disable", n.ID))
	}, nil
}
