package gnomeshell

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/godbus/dbus/v5"
)

const (
	// callTimeout bounds every bus call this package makes.
	callTimeout = 2 * time.Second
	// signalBuffer is the size of a follower's signal channel. godbus never
	// blocks on a full one (it hands the signal to a goroutine of its own,
	// out of order); what a follower keeps carries the sequence number it
	// was learnt from, so late old news cannot undo newer.
	signalBuffer = 64

	busName = "org.freedesktop.DBus"
	busPath = dbus.ObjectPath("/org/freedesktop/DBus")
)

// follower follows one well-known name of GNOME Shell's on a connection:
// who owns it (NameOwnerChanged, only as the bus itself sends it) and the
// signals its owner sends that match the follower's rules. One goroutine,
// the user's, reads them in order from signals.
type follower struct {
	conn    *dbus.Conn
	log     *slog.Logger
	name    string
	owner   string        // unique name; "" while nobody owns name
	seq     dbus.Sequence // of the message owner was learnt from
	signals chan *dbus.Signal
	matches [][]dbus.MatchOption
}

// follow starts following name and the signals matching rules (each a set
// of match options; the sender is always name). It asks who owns name now.
func follow(ctx context.Context, conn *dbus.Conn, log *slog.Logger, name string, rules ...[]dbus.MatchOption) (*follower, error) {
	f := &follower{conn: conn, log: log, name: name, signals: make(chan *dbus.Signal, signalBuffer)}
	// Registered before any rule is added, so nothing sent once a rule is
	// in place is missed.
	conn.Signal(f.signals)
	all := append([][]dbus.MatchOption{{
		dbus.WithMatchSender(busName), dbus.WithMatchObjectPath(busPath), dbus.WithMatchInterface(busName),
		dbus.WithMatchMember("NameOwnerChanged"), dbus.WithMatchArg(0, name),
	}}, rules...)
	for i, rule := range all {
		if i > 0 {
			rule = append([]dbus.MatchOption{dbus.WithMatchSender(name)}, rule...)
		}
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		err := conn.AddMatchSignalContext(cctx, rule...)
		cancel()
		if err != nil {
			f.close()
			return nil, fmt.Errorf("following %s: %w", name, err)
		}
		f.matches = append(f.matches, rule)
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var owner string
	call := conn.BusObject().CallWithContext(cctx, busName+".GetNameOwner", 0, name)
	err := call.Store(&owner)
	var e dbus.Error
	if errors.As(err, &e) && e.Name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
		owner, err = "", nil
	}
	if err != nil {
		f.close()
		return nil, fmt.Errorf("asking who owns %s: %w", name, err)
	}
	f.owner, f.seq = owner, call.ResponseSequence
	return f, nil
}

// ownerChange reads sig as news of name's owner. It says whether sig was
// such news (true even when it was stale), and whether the owner changed.
func (f *follower) ownerChange(sig *dbus.Signal) (news, changed bool) {
	if sig.Name != busName+".NameOwnerChanged" {
		return false, false
	}
	var name, old, owner string
	if sig.Sender != busName || sig.Path != busPath || dbus.Store(sig.Body, &name, &old, &owner) != nil || name != f.name {
		return true, false // someone else's, or forged by a peer: not the bus's word
	}
	if sig.Sequence <= f.seq {
		return true, false
	}
	f.seq = sig.Sequence
	changed = owner != f.owner
	f.owner = owner
	return true, changed
}

// fromOwner says whether sig was sent by name's current owner on path with
// member iface.member.
func (f *follower) fromOwner(sig *dbus.Signal, path dbus.ObjectPath, member string) bool {
	return sig.Name == member && sig.Path == path && f.owner != "" && sig.Sender == f.owner
}

// call calls method on name's current owner, bounded by callTimeout.
func (f *follower) call(ctx context.Context, path dbus.ObjectPath, method string, args ...any) *dbus.Call {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return f.conn.Object(f.owner, path).CallWithContext(cctx, method, dbus.FlagNoAutoStart, args...)
}

// close stops following: no more signals, and the rules are removed.
func (f *follower) close() {
	f.conn.RemoveSignal(f.signals)
	if !f.conn.Connected() {
		return // the bus dropped the rules with the connection
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	for _, m := range f.matches {
		if err := f.conn.RemoveMatchSignalContext(ctx, m...); err != nil {
			f.log.Debug("could not remove a match rule", "err", err)
		}
	}
}
