package gnomeshell

import (
	"context"
	"log/slog"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/busname"
)

// callTimeout bounds every bus call this package makes.
const callTimeout = busname.CallTimeout

// follower follows one well-known name of GNOME Shell's on a connection:
// who owns it, and the signals its owner sends that match the follower's
// rules. One goroutine, the user's, reads them in order from Signals.
type follower struct {
	*busname.Follower
	conn  *dbus.Conn
	owner *busname.Owner
}

// follow starts following name and the signals matching rules (each a set
// of match options; the sender is always name).
func follow(ctx context.Context, conn *dbus.Conn, log *slog.Logger, name string, rules ...[]dbus.MatchOption) (*follower, error) {
	f := &follower{Follower: busname.New(conn, log), conn: conn}
	var err error
	if f.owner, err = f.Follow(ctx, name); err != nil {
		f.Close()
		return nil, err
	}
	for _, rule := range rules {
		if err := f.Subscribe(ctx, append([]dbus.MatchOption{dbus.WithMatchSender(name)}, rule...)...); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// ownerChange reads sig as news of name's owner. It says whether sig was
// such news (true even when it was stale), and whether the owner changed.
func (f *follower) ownerChange(sig *dbus.Signal) (news, changed bool) {
	o, news := f.OwnerChange(sig)
	return news, o != nil
}

// fromOwner says whether sig was sent by name's current owner on path with
// member iface.member.
func (f *follower) fromOwner(sig *dbus.Signal, path dbus.ObjectPath, member string) bool {
	return sig.Name == member && sig.Path == path && f.owner.Sent(sig)
}

// call calls method on name's current owner, bounded by callTimeout.
func (f *follower) call(ctx context.Context, path dbus.ObjectPath, method string, args ...any) *dbus.Call {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return f.conn.Object(f.owner.Unique, path).CallWithContext(ctx, method, dbus.FlagNoAutoStart, args...)
}
