package wayland

import (
	"bytes"
	"slices"
	"testing"
)

// The i3-ipc framing sway-ipc(7) describes, written out by hand
// (little-endian): magic, payload length, type, payload.
func TestSwayMessageBytes(t *testing.T) {
	needLittleEndian(t)
	want := slices.Concat([]byte("i3-ipc"), []byte{26, 0, 0, 0}, []byte{0, 0, 0, 0}, []byte("[con_id=7] move scratchpad"))
	if got := swayMessage(swayRunCommand, "[con_id=7] move scratchpad"); !bytes.Equal(got, want) {
		t.Fatalf("RUN_COMMAND:\n got % x\nwant % x", got, want)
	}
	want = slices.Concat([]byte("i3-ipc"), []byte{0, 0, 0, 0}, []byte{4, 0, 0, 0})
	if got := swayMessage(swayGetTree, ""); !bytes.Equal(got, want) {
		t.Fatalf("GET_TREE:\n got % x\nwant % x", got, want)
	}
}

func TestSwayReplies(t *testing.T) {
	needLittleEndian(t)
	reply := slices.Concat([]byte("i3-ipc"), []byte{2, 0, 0, 0}, []byte{4, 0, 0, 0}, []byte("{}"))
	if b, err := readSwayReply(bytes.NewReader(reply), swayGetTree); err != nil || string(b) != "{}" {
		t.Fatalf("reply: %q, %v", b, err)
	}
	for name, r := range map[string][]byte{
		"wrong magic": slices.Concat([]byte("i4-ipc"), []byte{2, 0, 0, 0, 4, 0, 0, 0}, []byte("{}")),
		"wrong type":  slices.Concat([]byte("i3-ipc"), []byte{2, 0, 0, 0, 0, 0, 0, 0}, []byte("{}")),
		"huge":        slices.Concat([]byte("i3-ipc"), []byte{0xff, 0xff, 0xff, 0xff, 4, 0, 0, 0}),
		"cut short":   slices.Concat([]byte("i3-ipc"), []byte{9, 0, 0, 0, 4, 0, 0, 0}, []byte("{}")),
	} {
		if _, err := readSwayReply(bytes.NewReader(r), swayGetTree); err == nil {
			t.Errorf("%s: got no error, want one", name)
		}
	}
}

// A GET_TREE reply, cut down from sway 1.10's: a tiled native window, a
// floating Xwayland one with focus.
const swayTree = `{"id":1,"type":"root","name":"root","focused":false,"nodes":[
 {"id":3,"type":"output","name":"HEADLESS-1","focused":false,"nodes":[
  {"id":4,"type":"workspace","name":"1","focused":false,"nodes":[
   {"id":5,"type":"con","name":"notes.txt","app_id":"Editor","focused":false,"nodes":[],"floating_nodes":[]}],
   "floating_nodes":[
   {"id":6,"type":"floating_con","name":"Mozilla Firefox","app_id":null,"focused":true,
    "window_properties":{"class":"firefox","instance":"Navigator"},"nodes":[],"floating_nodes":[]}]}]}]}`

func TestSwayFocusedWindow(t *testing.T) {
	n, ok, err := focusedWindow([]byte(swayTree))
	if err != nil || !ok || n.ID != 6 || n.Type != "floating_con" {
		t.Fatalf("focused: %+v %v %v", n, ok, err)
	}
	if !n.is("firefox", "Mozilla Firefox") || n.is("Editor", "Mozilla Firefox") || n.is("firefox", "other") {
		t.Error("an Xwayland window matches by class and title only")
	}
	// A focused workspace is no window.
	if _, ok, err := focusedWindow([]byte(`{"id":4,"type":"workspace","focused":true}`)); ok || err != nil {
		t.Errorf("focused workspace: %v %v", ok, err)
	}
	if _, _, err := focusedWindow([]byte(`[`)); err == nil {
		t.Error("not JSON: no error")
	}
}

// Hyprland's requests are plain text; these are what hyprctl sends for
// "hyprctl -j activewindow" and "hyprctl dispatch …".
func TestHyprlandRequests(t *testing.T) {
	w, ok, err := parseHyprActive([]byte(`{"address":"0x55d0c0ffee10","mapped":true,"workspace":{"id":3,"name":"3"},
		"floating":false,"class":"firefox","title":"news","initialClass":"firefox"}`))
	if err != nil || !ok {
		t.Fatalf("activewindow: %v %v", ok, err)
	}
	if got, want := hyprDispatch(hyprHide(w)), "dispatch movetoworkspacesilent special:antidrift,address:0x55d0c0ffee10"; got != want {
		t.Errorf("hide: %q, want %q", got, want)
	}
	if got, want := hyprDispatch(hyprRestore(w)), "dispatch movetoworkspacesilent 3,address:0x55d0c0ffee10"; got != want {
		t.Errorf("restore: %q, want %q", got, want)
	}
	w.Workspace.ID, w.Workspace.Name = -98, "special:scratch"
	if got, want := hyprRestore(w), "movetoworkspacesilent name:special:scratch,address:0x55d0c0ffee10"; got != want {
		t.Errorf("restore to a named workspace: %q, want %q", got, want)
	}
	if hyprActiveRequest != "j/activewindow" {
		t.Errorf("activewindow request: got %q, want %q", hyprActiveRequest, "j/activewindow")
	}
	if _, ok, err := parseHyprActive([]byte(`{}`)); ok || err != nil {
		t.Errorf("no active window: %v %v", ok, err)
	}
	if _, _, err := parseHyprActive([]byte(`Invalid`)); err == nil {
		t.Error("not JSON: no error")
	}
	if got, want := hyprSocket("/run/user/1000", "abc_1_2"), "/run/user/1000/hypr/abc_1_2/.socket.sock"; got != want {
		t.Errorf("socket %q, want %q", got, want)
	}
}
