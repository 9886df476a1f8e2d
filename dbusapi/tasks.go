package dbusapi

import (
	"context"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/service"
)

// task is one row of ListTasks: (ref, source, title, due_unix, priority,
// short id).
type task struct {
	Ref      string
	Source   string
	Title    string
	Due      int64
	Priority uint32
	Short    string
}

// taskFailure is one source that could not list: (source, why).
type taskFailure struct {
	Source string
	Why    string
}

func (m *methods) ListTasks(msg dbus.Message) ([]task, []taskFailure, *dbus.Error) {
	if err := m.s.gate(&msg); err != nil {
		return nil, nil, err
	}
	if err := m.s.svc.Permitted(service.MethodListTasks); err != nil {
		return nil, nil, m.s.replyError(&msg, err)
	}
	items, failures := m.s.svc.ListTasks(context.Background())
	out := make([]task, len(items))
	for i, it := range items {
		var due int64
		if !it.Due.IsZero() {
			due = it.Due.Unix()
		}
		out[i] = task{Ref: it.Ref(), Source: it.Source, Title: it.Title, Due: due, Priority: uint32(it.Priority), Short: it.Short}
	}
	fails := make([]taskFailure, len(failures))
	for i, f := range failures {
		fails[i] = taskFailure(f)
	}
	return out, fails, nil
}

func (m *methods) StartTask(msg dbus.Message, ref, successCondition string, timeboxSecs uint64, enforcement string, allowed []string) (string, *dbus.Error) {
	if err := m.s.gate(&msg); err != nil {
		return "", err
	}
	id, err := m.s.svc.StartTask(context.Background(), ref, successCondition, timeboxSecs, enforcement, allowed)
	return id, m.s.replyError(&msg, err)
}

func (m *methods) CompleteKeepTask(msg dbus.Message) *dbus.Error {
	return m.do(msg, m.s.svc.CompleteKeepTask)
}

func (m *methods) FollowTask(msg dbus.Message, ref, event, title, version string, timeboxSecs uint64) (string, *dbus.Error) {
	if err := m.s.gate(&msg); err != nil {
		return "", err
	}
	said, err := m.s.svc.FollowTask(ref, event, title, version, timeboxSecs)
	return said, m.s.replyError(&msg, err)
}
