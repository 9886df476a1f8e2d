// Package busname follows who owns a well-known name on a D-Bus bus: the
// compositor's (org.kde.KWin, org.gnome.Shell), the screen saver's,
// logind's, the notification server's. Everything antidrift believes from
// the bus it believes from a name's owner at that moment, so every source
// of evidence and every watcher learns owners here, the same way.
//
// Two things make that harder than it looks. Any peer can send a signal
// named NameOwnerChanged straight to us: only the bus's own counts. And
// godbus hands signals to channels (to goroutines of its own when a channel
// is full) and method calls to goroutines of their own, so news can arrive
// out of order: what an Owner knows carries the sequence number of the
// message it was learnt from, and older news never undoes newer.
package busname

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/godbus/dbus/v5"
)

// The bus itself, which alone may say who owns a name.
const (
	Bus     = "org.freedesktop.DBus"
	BusPath = dbus.ObjectPath("/org/freedesktop/DBus")

	nameOwnerChanged = Bus + ".NameOwnerChanged"
	noOwner          = "org.freedesktop.DBus.Error.NameHasNoOwner"
)

// CallTimeout bounds each call a Follower makes to the bus.
const CallTimeout = 2 * time.Second

// signalBuffer is the size of a follower's signal channel. godbus never
// blocks on a full one (it hands the signal to a goroutine of its own, out
// of order); every Owner keeps the sequence number of its news, so late old
// news cannot undo newer, and the buffer just keeps that rare.
const signalBuffer = 64

// LogForeignSignal is what a Follower logs when it drops a NameOwnerChanged
// that the bus did not send, with the attributes "signal" and "sender".
const LogForeignSignal = "ignoring a signal not sent by the service's owner"

// Owner is a well-known name and who owns it, as far as its follower knows.
type Owner struct {
	Name   string
	Unique string        // the owner's unique name; "" while nobody owns Name
	Seq    dbus.Sequence // of the message Unique was learnt from
}

// Learn records that unique owns the name (nobody, when ""), as learnt from
// the message with sequence seq, unless something newer is known. It says
// whether the owner changed.
func (o *Owner) Learn(unique string, seq dbus.Sequence) (changed bool) {
	if seq <= o.Seq {
		return false
	}
	o.Seq = seq
	if unique == o.Unique {
		return false
	}
	o.Unique = unique
	return true
}

// Sent says whether sig was sent by the name's current owner.
func (o *Owner) Sent(sig *dbus.Signal) bool {
	return o.Unique != "" && sig.Sender == o.Unique
}

// Ask asks the bus who owns name now: its unique name, "" when nobody does,
// and the sequence number of the bus's answer.
func Ask(ctx context.Context, conn *dbus.Conn, name string) (unique string, seq dbus.Sequence, err error) {
	call := conn.BusObject().CallWithContext(ctx, Bus+".GetNameOwner", 0, name)
	err = call.Store(&unique)
	if IsError(err, noOwner) {
		unique, err = "", nil
	}
	return unique, call.ResponseSequence, err
}

// OwnerChangedMatch selects the bus's NameOwnerChanged signals about name.
func OwnerChangedMatch(name string) []dbus.MatchOption {
	return []dbus.MatchOption{
		dbus.WithMatchSender(Bus),
		dbus.WithMatchObjectPath(BusPath),
		dbus.WithMatchInterface(Bus),
		dbus.WithMatchMember("NameOwnerChanged"),
		dbus.WithMatchArg(0, name),
	}
}

// IsError says whether err is the D-Bus error name.
func IsError(err error, name string) bool {
	var e dbus.Error
	if errors.As(err, &e) {
		return e.Name == name
	}
	var pe *dbus.Error
	return errors.As(err, &pe) && pe != nil && pe.Name == name
}

// Follower follows the owners of some well-known names on one connection,
// and gathers the signals of the match rules its user subscribes to. One
// goroutine, its user's, reads Signals and hands each to OwnerChange first;
// the Follower itself has no goroutine and no lock.
type Follower struct {
	conn *dbus.Conn
	log  *slog.Logger
	// Signals receives every signal the connection receives: those of
	// the follower's rules, and also other subscriptions' and ones sent to
	// us directly by any peer. It is closed when the connection is.
	Signals chan *dbus.Signal
	owners  []*Owner
	matches [][]dbus.MatchOption
}

// New starts gathering conn's signals. Nothing is followed until Follow or
// Subscribe adds a rule; Close ends it.
func New(conn *dbus.Conn, log *slog.Logger) *Follower {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &Follower{conn: conn, log: log, Signals: make(chan *dbus.Signal, signalBuffer)}
	// Registered before any rule is added, so nothing the bus sends once a
	// rule is in place is missed.
	conn.Signal(f.Signals)
	return f
}

// Follow starts following name's owner: NameOwnerChanged from then on,
// and who owns it now, asked of the bus. The Owner it returns is kept up
// to date by OwnerChange.
func (f *Follower) Follow(ctx context.Context, name string) (*Owner, error) {
	if err := f.Subscribe(ctx, OwnerChangedMatch(name)...); err != nil {
		return nil, fmt.Errorf("following the owner of %s: %w", name, err)
	}
	o := &Owner{Name: name}
	if err := f.Refresh(ctx, o); err != nil {
		return nil, fmt.Errorf("asking who owns %s: %w", name, err)
	}
	f.owners = append(f.owners, o)
	return o, nil
}

// Refresh asks the bus who owns o's name now, and learns the answer. It
// says nothing of whether that changed: the caller that doubts looks.
func (f *Follower) Refresh(ctx context.Context, o *Owner) error {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	unique, seq, err := Ask(ctx, f.conn, o.Name)
	if err != nil {
		return err
	}
	o.Learn(unique, seq)
	return nil
}

// Subscribe adds a match rule, removed again by Close.
func (f *Follower) Subscribe(ctx context.Context, rule ...dbus.MatchOption) error {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	if err := f.conn.AddMatchSignalContext(ctx, rule...); err != nil {
		return err
	}
	f.matches = append(f.matches, rule)
	return nil
}

// OwnerChange reads sig as the bus's news of a followed name's owner. news
// says sig was a NameOwnerChanged (the caller need look no further, even
// when it was stale, forged or about another name); o is the followed name
// whose owner changed, nil when none did.
func (f *Follower) OwnerChange(sig *dbus.Signal) (o *Owner, news bool) {
	if sig.Name != nameOwnerChanged {
		return nil, false
	}
	name, _, unique, ok := ownerNews(sig, f.log)
	if !ok {
		return nil, true
	}
	for _, o := range f.owners {
		if o.Name == name && o.Learn(unique, sig.Sequence) {
			return o, true
		}
	}
	return nil, true
}

// Close stops following: no more signals reach Signals, and the rules are
// removed from the bus.
func (f *Follower) Close() {
	f.conn.RemoveSignal(f.Signals)
	if !f.conn.Connected() {
		return // the bus dropped the rules with the connection
	}
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	for _, m := range f.matches {
		if err := f.conn.RemoveMatchSignalContext(ctx, m...); err != nil {
			f.log.Debug("could not remove a match rule", "err", err)
		}
	}
	f.matches = nil
}
