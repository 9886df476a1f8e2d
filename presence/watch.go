package presence

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/busname"
)

// watch is what both watchers share: a follower of the watched names on
// the connection, one goroutine that handles signals and the answers of
// queries in turn (so source state needs no lock), and coalesced reports.
type watch struct {
	conn   *dbus.Conn
	log    *slog.Logger
	source string
	report func(Event)
	follow *busname.Follower

	results  chan func() // answers of queries, applied in the loop
	ctx      context.Context
	cancel   context.CancelFunc // called by stop
	queries  sync.WaitGroup
	started  bool // the loop runs; set before the watcher is returned
	loopDone chan struct{}
	stopOnce sync.Once

	away map[string]bool // reason → what was last reported; only the loop touches it
}

func newWatch(conn *dbus.Conn, log *slog.Logger, source string, report func(Event)) *watch {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if report == nil {
		report = func(Event) {}
	}
	log = log.With("source", source)
	w := &watch{
		conn:     conn,
		log:      log,
		source:   source,
		report:   report,
		follow:   busname.New(conn, log),
		results:  make(chan func()),
		loopDone: make(chan struct{}),
		away:     map[string]bool{},
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	return w
}

// start runs the loop, handing it every signal the connection receives.
func (w *watch) start(handle func(*dbus.Signal)) {
	w.started = true
	go func() {
		defer close(w.loopDone)
		for {
			select {
			case <-w.ctx.Done():
				return
			case sig, ok := <-w.follow.Signals:
				if !ok {
					w.log.Debug("the bus connection was closed; no more presence events")
					return
				}
				if sig != nil {
					handle(sig)
				}
			case apply := <-w.results:
				apply()
			}
		}
	}()
}

// stop ends the watch: once it returns, report is not called again. It is
// safe to call more than once (and on a watcher whose setup failed).
func (w *watch) stop() {
	w.stopOnce.Do(func() {
		w.cancel()
		if w.started {
			<-w.loopDone
		}
		w.queries.Wait()
		w.follow.Close()
	})
}

// query runs ask on a goroutine of its own, bounded by busname.CallTimeout
// and cancelled by stop, and has the loop run the function it returns (if
// any). ask must only use what it captured, never the watcher's state; the
// returned function runs in the loop and may.
func (w *watch) query(ask func(ctx context.Context) (apply func())) {
	w.queries.Add(1)
	go func() {
		defer w.queries.Done()
		ctx, cancel := context.WithTimeout(w.ctx, busname.CallTimeout)
		apply := ask(ctx)
		cancel()
		if apply == nil {
			return
		}
		select {
		case w.results <- apply:
		case <-w.ctx.Done():
		}
	}()
}

// emit reports (reason, away) unless it was the last thing reported for
// reason. Before any report, every reason counts as "not away".
func (w *watch) emit(reason string, away bool) {
	if w.away[reason] == away {
		return
	}
	w.away[reason] = away
	w.log.Debug("presence changed", "reason", reason, "away", away)
	w.report(Event{Reason: reason, Away: away, Source: w.source})
}

// fromOwner says whether sig was sent by o's current owner, logging it if
// not: anyone on the bus can send a signal of the service's name to us.
func (w *watch) fromOwner(sig *dbus.Signal, o *busname.Owner) bool {
	if o.Sent(sig) {
		return true
	}
	w.log.Warn(busname.LogForeignSignal, "signal", sig.Name, "sender", sig.Sender, "owner", o.Unique)
	return false
}

// ownersBool reads sig, which must come from o's current owner and carry
// a single boolean; anything else is logged and ignored (ok is false).
func (w *watch) ownersBool(sig *dbus.Signal, o *busname.Owner) (value, ok bool) {
	if !w.fromOwner(sig, o) {
		return false, false
	}
	if value, ok = oneBool(sig.Body); !ok {
		w.log.Debug(logMalformedSignal, "signal", sig.Name, "sender", sig.Sender, "body", fmt.Sprint(sig.Body))
	}
	return value, ok
}

// oneBool returns the argument of a signal or reply whose body must be a
// single boolean.
func oneBool(body []any) (value, ok bool) {
	if len(body) != 1 {
		return false, false
	}
	value, ok = body[0].(bool)
	return value, ok
}

// boolState is a boolean some service told us, with the sequence number of
// the message it came in, so that older news never overwrites newer.
type boolState struct {
	on  bool
	seq dbus.Sequence
}

// set records v, learnt from the message with sequence seq, unless we
// already know something newer. It says whether it did.
func (s *boolState) set(v bool, seq dbus.Sequence) bool {
	if seq <= s.seq {
		return false
	}
	s.on, s.seq = v, seq
	return true
}
