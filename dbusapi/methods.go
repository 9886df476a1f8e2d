package dbusapi

import (
	"fmt"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/service"
)

// methods is exported as org.antidrift.Session1. Every exported method of
// this type is a D-Bus method, so it has nothing else. Each checks the
// caller's user and then hands the call to the core, which decides.
type methods struct{ s *Server }

func (m *methods) Plan(msg dbus.Message) *dbus.Error {
	return m.do(msg, m.s.svc.Plan)
}

func (m *methods) CancelPlan(msg dbus.Message) *dbus.Error {
	return m.do(msg, m.s.svc.CancelPlan)
}

func (m *methods) Start(msg dbus.Message, nextAction, successCondition string, timeboxSecs uint64, enforcement string, allowed []string) (string, *dbus.Error) {
	if err := m.s.gate(&msg); err != nil {
		return "", err
	}
	id, err := m.s.svc.Start(nextAction, successCondition, timeboxSecs, enforcement, allowed)
	return id, m.s.replyError(&msg, err)
}

// Coach waits for the model on this call's own goroutine (godbus serves
// each call on its own), off the core's lock: every other call answers
// meanwhile.
func (m *methods) Coach(msg dbus.Message, intention, taskRef string) (string, string, uint64, []string, string, *dbus.Error) {
	if err := m.s.gate(&msg); err != nil {
		return "", "", 0, []string{}, "", err
	}
	p, err := m.s.svc.Coach(intention, taskRef)
	if err != nil {
		return "", "", 0, []string{}, "", m.s.replyError(&msg, err)
	}
	return p.NextAction, p.SuccessCondition, p.TimeboxSecs, nonNil(p.Allowed), p.Why, nil
}

func (m *methods) Complete(msg dbus.Message) *dbus.Error {
	return m.do(msg, m.s.svc.Complete)
}

func (m *methods) Abandon(msg dbus.Message, reason string) *dbus.Error {
	return m.do(msg, func() error { return m.s.svc.Abandon(reason) })
}

func (m *methods) Extend(msg dbus.Message, secs uint64) *dbus.Error {
	return m.do(msg, func() error { return m.s.svc.Extend(secs) })
}

func (m *methods) End(msg dbus.Message) (string, *dbus.Error) {
	if err := m.s.gate(&msg); err != nil {
		return "", err
	}
	hash, err := m.s.svc.End()
	return hash, m.s.replyError(&msg, err)
}

func (m *methods) Refocus(msg dbus.Message) *dbus.Error {
	return m.do(msg, m.s.svc.Refocus)
}

func (m *methods) Allow(msg dbus.Message, class string) *dbus.Error {
	return m.do(msg, func() error { return m.s.svc.Allow(class) })
}

func (m *methods) SetEnforcement(msg dbus.Message, level string) *dbus.Error {
	return m.do(msg, func() error { return m.s.svc.SetEnforcement(level) })
}

func (m *methods) SetQuiet(msg dbus.Message, quiet bool) *dbus.Error {
	return m.do(msg, func() error { return m.s.svc.SetQuiet(quiet) })
}

func (m *methods) BreakGlass(msg dbus.Message, reason string) (uint64, *dbus.Error) {
	if err := m.s.gate(&msg); err != nil {
		return 0, err
	}
	wait, err := m.s.svc.BreakGlass(reason)
	return wait, m.s.replyError(&msg, err)
}

func (m *methods) VerifyAudit(msg dbus.Message) (bool, uint32, string, *dbus.Error) {
	if err := m.s.gate(&msg); err != nil {
		return false, 0, "", err
	}
	r, err := m.s.svc.VerifyAudit()
	return r.OK, r.Entries, r.Problem, m.s.replyError(&msg, err)
}

func (m *methods) History(msg dbus.Message, limit uint32) ([]map[string]dbus.Variant, *dbus.Error) {
	if err := m.s.gate(&msg); err != nil {
		return nil, err
	}
	h, err := m.s.svc.History(limit)
	if err != nil {
		return nil, m.s.replyError(&msg, err)
	}
	out := make([]map[string]dbus.Variant, len(h))
	for i, s := range h {
		out[i] = historyEntry(s)
	}
	return out, nil
}

// Report is a thin call into the core, which checks the range and the
// permission table and has the report package build the JSON.
func (m *methods) Report(msg dbus.Message, sinceUnix, untilUnix int64) (string, *dbus.Error) {
	if err := m.s.gate(&msg); err != nil {
		return "", err
	}
	doc, err := m.s.svc.Report(sinceUnix, untilUnix)
	return doc, m.s.replyError(&msg, err)
}

// ReportDevice is Report narrowed to one machine sharing sync_dir: a
// method of its own, because a method's signature is its contract.
func (m *methods) ReportDevice(msg dbus.Message, sinceUnix, untilUnix int64, device string) (string, *dbus.Error) {
	if err := m.s.gate(&msg); err != nil {
		return "", err
	}
	doc, err := m.s.svc.ReportDevice(sinceUnix, untilUnix, device)
	return doc, m.s.replyError(&msg, err)
}

// historyEntry is one History item; the keys are documented in docs/dbus-api.md.
func historyEntry(s service.Summary) map[string]dbus.Variant {
	e := map[string]dbus.Variant{
		"seq":               dbus.MakeVariant(uint32(s.Seq)),
		"session_id":        dbus.MakeVariant(s.SessionID),
		"next_action":       dbus.MakeVariant(s.NextAction),
		"success_condition": dbus.MakeVariant(s.SuccessCondition),
		"outcome":           dbus.MakeVariant(string(s.Outcome)),
		"enforcement":       dbus.MakeVariant(string(s.Enforcement)),
		"hash":              dbus.MakeVariant(s.Hash),
		"started_unix":      dbus.MakeVariant(s.StartedUnix),
		"ended_unix":        dbus.MakeVariant(s.EndedUnix),
		"switch_count":      dbus.MakeVariant(s.SwitchCount),
		"drift_seconds":     dbus.MakeVariant(s.DriftSeconds),
		"away_seconds":      dbus.MakeVariant(s.AwaySeconds),
	}
	if t := s.Task; t != nil {
		e["task_ref"] = dbus.MakeVariant(t.Source + ":" + t.ID)
		e["task_result"] = dbus.MakeVariant(t.Result)
	}
	return e
}

// do runs a call that returns only an error, after the caller check.
func (m *methods) do(msg dbus.Message, call func() error) *dbus.Error {
	if err := m.s.gate(&msg); err != nil {
		return err
	}
	return m.s.replyError(&msg, call())
}

// propertiesObject is exported as org.freedesktop.DBus.Properties. It is
// written here rather than with godbus's prop package because prop emits
// one PropertiesChanged per property, and clients are promised one signal
// per state change.
type propertiesObject struct{ s *Server }

func (p *propertiesObject) Get(msg dbus.Message, iface, name string) (dbus.Variant, *dbus.Error) {
	if err := p.s.gate(&msg); err != nil {
		return dbus.Variant{}, err
	}
	if err := checkInterface(iface); err != nil {
		return dbus.Variant{}, err
	}
	v, ok := p.s.props.get(p.s.svc.View)[name]
	if !ok {
		return dbus.Variant{}, dbus.NewError("org.freedesktop.DBus.Error.UnknownProperty", []any{fmt.Sprintf("org.antidrift.Session1 has no property %s", service.Quote(name))})
	}
	return v, nil
}

func (p *propertiesObject) GetAll(msg dbus.Message, iface string) (map[string]dbus.Variant, *dbus.Error) {
	if err := p.s.gate(&msg); err != nil {
		return nil, err
	}
	if err := checkInterface(iface); err != nil {
		return nil, err
	}
	return p.s.props.get(p.s.svc.View), nil
}

func (p *propertiesObject) Set(msg dbus.Message, iface, name string, _ dbus.Variant) *dbus.Error {
	if err := p.s.gate(&msg); err != nil {
		return err
	}
	if err := checkInterface(iface); err != nil {
		return err
	}
	return dbus.NewError("org.freedesktop.DBus.Error.PropertyReadOnly", []any{fmt.Sprintf("property %s is read-only: change the session with the methods of org.antidrift.Session1", service.Quote(name))})
}

func checkInterface(iface string) *dbus.Error {
	if iface != Interface && iface != "" {
		return dbus.NewError("org.freedesktop.DBus.Error.UnknownInterface", []any{fmt.Sprintf("this object has properties only on %s, not %s", Interface, service.Quote(iface))})
	}
	return nil
}

// ReviewProposal is one proposal as the bus carries it: (number, kind,
// change, reason).
type ReviewProposal struct {
	Number uint32
	Kind   string
	Change string
	Reason string
}

// ReviewProposals lists the changes the session in review argues for.
func (m *methods) ReviewProposals(msg dbus.Message) ([]ReviewProposal, *dbus.Error) {
	if err := m.s.gate(&msg); err != nil {
		return nil, err
	}
	list, err := m.s.svc.ReviewProposals()
	out := make([]ReviewProposal, len(list))
	for i, p := range list {
		out[i] = ReviewProposal{p.Number, p.Kind, p.Change, p.Reason}
	}
	return out, m.s.replyError(&msg, err)
}

// ApplyProposal writes one proposal to the rules file antidrift owns.
func (m *methods) ApplyProposal(msg dbus.Message, number uint32) (string, *dbus.Error) {
	if err := m.s.gate(&msg); err != nil {
		return "", err
	}
	applied, err := m.s.svc.ApplyProposal(number)
	return applied, m.s.replyError(&msg, err)
}
