package testenv

import (
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"
)

// SendSignalTo sends the signal name (interface.member) with args from
// conn straight to the connection dest, as any peer on a bus can: no match
// rule is needed for it to arrive, and the bus does not check who may say
// what. Tests forge the bus's and the compositors' signals with it. It
// returns once the message is written.
func SendSignalTo(t testing.TB, from *dbus.Conn, dest string, path dbus.ObjectPath, name string, args ...any) {
	t.Helper()
	i := strings.LastIndex(name, ".")
	msg := &dbus.Message{
		Type: dbus.TypeSignal,
		Headers: map[dbus.HeaderField]dbus.Variant{
			dbus.FieldDestination: dbus.MakeVariant(dest),
			dbus.FieldPath:        dbus.MakeVariant(path),
			dbus.FieldInterface:   dbus.MakeVariant(name[:i]),
			dbus.FieldMember:      dbus.MakeVariant(name[i+1:]),
		},
		Body: args,
	}
	if len(args) > 0 {
		msg.Headers[dbus.FieldSignature] = dbus.MakeVariant(dbus.SignatureOf(args...))
	}
	if call := <-from.Send(msg, make(chan *dbus.Call, 1)).Done; call.Err != nil {
		t.Fatalf("sending %s to %s: %v", name, dest, call.Err)
	}
}
