package main

import "github.com/godbus/dbus/v5"

// blockMessage tells the extension to replace tab TabID's page (the id
// its report gave) with its own: what the person committed to and when it
// ends. Site is for the extension's page to show, never to find the tab.
type blockMessage struct {
	Type         string `json:"type"` // "block"
	TabID        int64  `json:"tab_id"`
	Site         string `json:"site"`
	NextAction   string `json:"next_action"`
	DoneWhen     string `json:"done_when"`
	DeadlineUnix int64  `json:"deadline_unix"`
}

// restoreMessage tells the extension the session is over: put the pages
// it blocked back.
type restoreMessage struct {
	Type string `json:"type"` // "restore"
}

// relayed is the message for the extension that sig, from the daemon,
// asks for, if it is one for this browser and comes from owner (the
// daemon's connection).
func relayed(browser string, sig *dbus.Signal, owner string) (any, bool) {
	if owner == "" || sig.Sender != owner {
		return nil, false
	}
	switch sig.Name {
	case evidenceAPI + ".BlockTab":
		var m blockMessage
		var b string
		if err := dbus.Store(sig.Body, &b, &m.TabID, &m.Site, &m.NextAction, &m.DoneWhen, &m.DeadlineUnix); err != nil || b != browser {
			return nil, false
		}
		m.Type = "block"
		return m, true
	case evidenceAPI + ".RestoreTabs":
		return restoreMessage{Type: "restore"}, true
	}
	return nil, false
}
