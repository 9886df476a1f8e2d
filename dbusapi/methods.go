package dbusapi

import (
	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/service"
)

// methods is exported as org.antidrift.Session1. Every exported method of
// this type is a D-Bus method, so it has nothing else. Each checks the
// caller's user and then hands the call to the core, which decides.
type methods struct{ s *Server }

func (m *methods) Plan(from dbus.Sender) *dbus.Error {
	return m.do(from, m.s.svc.Plan)
}

func (m *methods) CancelPlan(from dbus.Sender) *dbus.Error {
	return m.do(from, m.s.svc.CancelPlan)
}

func (m *methods) Start(from dbus.Sender, nextAction, successCondition string, timeboxSecs uint64, enforcement string, allowed []string) (string, *dbus.Error) {
	if err := m.s.peers.check(from); err != nil {
		return "", err
	}
	id, err := m.s.svc.Start(nextAction, successCondition, timeboxSecs, enforcement, allowed)
	return id, dbusError(err)
}

func (m *methods) Complete(from dbus.Sender) *dbus.Error {
	return m.do(from, m.s.svc.Complete)
}

func (m *methods) Abandon(from dbus.Sender, reason string) *dbus.Error {
	return m.do(from, func() error { return m.s.svc.Abandon(reason) })
}

func (m *methods) Extend(from dbus.Sender, secs uint64) *dbus.Error {
	return m.do(from, func() error { return m.s.svc.Extend(secs) })
}

func (m *methods) End(from dbus.Sender) (string, *dbus.Error) {
	if err := m.s.peers.check(from); err != nil {
		return "", err
	}
	hash, err := m.s.svc.End()
	return hash, dbusError(err)
}

func (m *methods) Refocus(from dbus.Sender) *dbus.Error {
	return m.do(from, m.s.svc.Refocus)
}

func (m *methods) Allow(from dbus.Sender, class string) *dbus.Error {
	return m.do(from, func() error { return m.s.svc.Allow(class) })
}

func (m *methods) SetEnforcement(from dbus.Sender, level string) *dbus.Error {
	return m.do(from, func() error { return m.s.svc.SetEnforcement(level) })
}

func (m *methods) BreakGlass(from dbus.Sender, reason string) (uint64, *dbus.Error) {
	if err := m.s.peers.check(from); err != nil {
		return 0, err
	}
	wait, err := m.s.svc.BreakGlass(reason)
	return wait, dbusError(err)
}

func (m *methods) VerifyAudit(from dbus.Sender) (bool, uint32, string, *dbus.Error) {
	if err := m.s.peers.check(from); err != nil {
		return false, 0, "", err
	}
	r, err := m.s.svc.VerifyAudit()
	return r.OK, r.Entries, r.Problem, dbusError(err)
}

func (m *methods) History(from dbus.Sender, limit uint32) ([]map[string]dbus.Variant, *dbus.Error) {
	if err := m.s.peers.check(from); err != nil {
		return nil, err
	}
	h, err := m.s.svc.History(limit)
	if err != nil {
		return nil, dbusError(err)
	}
	out := make([]map[string]dbus.Variant, len(h))
	for i, s := range h {
		out[i] = historyEntry(s)
	}
	return out, nil
}

// historyEntry is one History item; the keys are documented in README.
func historyEntry(s service.Summary) map[string]dbus.Variant {
	return map[string]dbus.Variant{
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
}

// do runs a call that returns only an error, after the caller check.
func (m *methods) do(from dbus.Sender, call func() error) *dbus.Error {
	if err := m.s.peers.check(from); err != nil {
		return err
	}
	return dbusError(call())
}

// propertiesObject is exported as org.freedesktop.DBus.Properties. It is
// written here rather than with godbus's prop package because prop emits
// one PropertiesChanged per property, and clients are promised one signal
// per state change.
type propertiesObject struct{ s *Server }

func (p *propertiesObject) Get(from dbus.Sender, iface, name string) (dbus.Variant, *dbus.Error) {
	if err := p.s.peers.check(from); err != nil {
		return dbus.Variant{}, err
	}
	if err := checkInterface(iface); err != nil {
		return dbus.Variant{}, err
	}
	v, ok := properties(p.s.svc.View())[name]
	if !ok {
		return dbus.Variant{}, dbus.NewError("org.freedesktop.DBus.Error.UnknownProperty", []any{"org.antidrift.Session1 has no property " + name})
	}
	return v, nil
}

func (p *propertiesObject) GetAll(from dbus.Sender, iface string) (map[string]dbus.Variant, *dbus.Error) {
	if err := p.s.peers.check(from); err != nil {
		return nil, err
	}
	if err := checkInterface(iface); err != nil {
		return nil, err
	}
	return properties(p.s.svc.View()), nil
}

func (p *propertiesObject) Set(from dbus.Sender, iface, name string, _ dbus.Variant) *dbus.Error {
	if err := p.s.peers.check(from); err != nil {
		return err
	}
	if err := checkInterface(iface); err != nil {
		return err
	}
	return dbus.NewError("org.freedesktop.DBus.Error.PropertyReadOnly", []any{"property " + name + " is read-only: change the session with the methods of org.antidrift.Session1"})
}

func checkInterface(iface string) *dbus.Error {
	if iface != Interface && iface != "" {
		return dbus.NewError("org.freedesktop.DBus.Error.UnknownInterface", []any{"this object has properties only on " + Interface + ", not " + iface})
	}
	return nil
}
